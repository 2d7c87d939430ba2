// Inputs, compiles and bit-for-bit comparisons the compiled-code tests share.
#ifndef GRAPHJIT_TESTS_COMPILER_COMPILED_TEST_TENSORS_H_
#define GRAPHJIT_TESTS_COMPILER_COMPILED_TEST_TENSORS_H_

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "compiler/compiled/compiled_graph.h"
#include "gtest/gtest.h"
#include "runtime/interpreter.h"
#include "runtime/tensor.h"

namespace graphjit::compiler {

// sin(0.37 i + phase) over the elements of `shape`: values in [-1, 1] without patterns a
// wrong index could hide behind.
inline runtime::Tensor Wave(ir::DType dtype, std::vector<int64_t> shape, double phase) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(0.37 * i + phase);
  return *runtime::Tensor::FromDoubles(dtype, shape, v);
}

// Same dtype, size and bytes.
inline bool SameBits(const runtime::Tensor& a, const runtime::Tensor& b) {
  return a.dtype() == b.dtype() && a.nbytes() == b.nbytes() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

// `g` compiled in memory only on `threads` threads, every parallel loop split however
// small (uneven splits on tiny shapes); null, with a test failure, if it does not compile.
inline std::unique_ptr<CompiledGraph> CompileOnThreads(const ir::Graph& g,
                                                       const runtime::TensorMap& params,
                                                       int threads = 1) {
  CompileGraphOptions options;
  options.threads = threads;
  options.min_parallel_work = 0;
  options.env = &CompileEnv::MemoryOnly();
  absl::StatusOr<std::unique_ptr<CompiledGraph>> cg = CompiledGraph::Compile(g, params, options);
  EXPECT_TRUE(cg.ok()) << cg.status();
  return cg.ok() ? *std::move(cg) : nullptr;
}

// `cg` run on `in` gives the interpreter's outputs of `g` with `params`: the same shapes,
// values within `tolerance` (products may sum in another order than the interpreter's:
// close, not bitwise).
inline void ExpectSameAsInterpreter(const CompiledGraph& cg, const ir::Graph& g,
                                    const runtime::TensorMap& in, const runtime::TensorMap& params,
                                    double tolerance = 1e-5) {
  absl::StatusOr<std::vector<runtime::Tensor>> want = runtime::Interpret(g, in, params);
  absl::StatusOr<std::vector<runtime::Tensor>> got = cg.Run(in);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), want->size());
  for (size_t k = 0; k < got->size(); ++k) {
    EXPECT_EQ((*got)[k].shape(), (*want)[k].shape()) << "output " << k;
    EXPECT_LE(runtime::MaxAbsDiff((*got)[k], (*want)[k]), tolerance) << "output " << k;
  }
}

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_TESTS_COMPILER_COMPILED_TEST_TENSORS_H_
