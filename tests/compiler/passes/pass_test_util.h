// Helpers for pass tests: textual IR in, a pass, textual IR out.
#ifndef GRAPHJIT_TESTS_COMPILER_PASSES_PASS_TEST_UTIL_H_
#define GRAPHJIT_TESTS_COMPILER_PASSES_PASS_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/passes/pipeline.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "runtime/tensor.h"

namespace graphjit::compiler::testing {

// Parses `text`, runs the named built-in pass (with `ctx`), verifies and prints the result.
inline absl::StatusOr<std::string> RunPassOnText(const std::string& pass_name,
                                                 const std::string& text,
                                                 PassContext* ctx = nullptr,
                                                 bool* changed = nullptr) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  if (!g.ok()) return g.status();
  absl::StatusOr<Pass> pass = GetPass(pass_name);
  if (!pass.ok()) return pass.status();
  PassContext local;
  absl::StatusOr<bool> c = pass->run(&*g, ctx != nullptr ? ctx : &local);
  if (!c.ok()) return c.status();
  if (changed != nullptr) *changed = *c;
  if (absl::Status s = ir::VerifyGraph(*g); !s.ok()) return s;
  return ir::PrintGraph(*g);
}

// An f32 weight of `shape` with distinct values, so a packed or transposed copy that mixes
// up rows shows.
inline runtime::Tensor Weight(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = 0.01 * static_cast<double>(i % 97) - 0.3;
  return *runtime::Tensor::FromDoubles(ir::DType::kF32, shape, v);
}

}  // namespace graphjit::compiler::testing

#endif  // GRAPHJIT_TESTS_COMPILER_PASSES_PASS_TEST_UTIL_H_
