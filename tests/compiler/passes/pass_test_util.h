// Helpers for pass tests: textual IR in, a pass, textual IR out.
#ifndef GRAPHJIT_TESTS_COMPILER_PASSES_PASS_TEST_UTIL_H_
#define GRAPHJIT_TESTS_COMPILER_PASSES_PASS_TEST_UTIL_H_

#include <string>

#include "absl/status/statusor.h"
#include "compiler/passes/pipeline.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

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

}  // namespace graphjit::compiler::testing

#endif  // GRAPHJIT_TESTS_COMPILER_PASSES_PASS_TEST_UTIL_H_
