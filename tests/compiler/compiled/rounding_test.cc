// Compiled pointwise code rounds every product before adding it, as the interpreter does:
// no FMA contraction outside the sums that may reorder anyway. Contracting x * x -
// max(x * x) subtracts the rounded max from the exact product; where the product's
// rounding error is large (x = 3e9 in f32: up to 2.7e11) the row's largest logit got
// exp(-2e11) = 0 instead of exp(0) = 1, so a cross_entropy came out -inf and a softmax
// NaN. Found by the differential fuzzer (corpus/differential/
// cross_entropy_of_contracted_square.bin). Ordinary magnitudes run too.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "compiler/compiled/compiled_graph.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/interpreter.h"
#include "tests/compiler/compiled/expect_close.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using runtime::TensorMap;

constexpr char kGraph[] = R"(graph square_logits {
  %x = input {name="x"} : DT[2, 3]
  %t = input {name="t"} : i64[2]
  %y = mul(%x, %x) : DT[2, 3]
  %ce = cross_entropy(%y, %t) : DT[]
  %sm = softmax(%y) {axis=-1} : DT[2, 3]
  return %ce, %sm
})";

void ExpectCompiledEqualsInterpreted(const char* dtype, double big) {
  SCOPED_TRACE(absl::StrCat(dtype, " x up to ", big));
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(absl::StrReplaceAll(kGraph, {{"DT", dtype}}));
  ASSERT_TRUE(g.ok()) << g.status();
  const ir::DType dt = std::string(dtype) == "f32" ? ir::DType::kF32 : ir::DType::kF64;
  TensorMap in = {{"x", *Tensor::FromDoubles(dt, {2, 3}, {big, 0.543, -0.342, 1.0, -2.0, 3.0})},
                  {"t", *Tensor::FromDoubles(ir::DType::kI64, {2}, {2, 0})}};
  absl::StatusOr<std::vector<Tensor>> want = runtime::Interpret(*g, in, {});
  ASSERT_TRUE(want.ok()) << want.status();
  CompileGraphOptions options;
  options.env = &CompileEnv::MemoryOnly();
  absl::StatusOr<std::unique_ptr<CompiledGraph>> cg = CompiledGraph::Compile(*g, {}, options);
  ASSERT_TRUE(cg.ok()) << cg.status();
  absl::StatusOr<std::vector<Tensor>> got = (*cg)->Run(in);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 2u);
  const double tol = dt == ir::DType::kF32 ? 1e-5 : 1e-12;
  // The interpreter's answers are finite here, so the compiled ones must be too.
  for (size_t o = 0; o < 2; ++o) {
    ExpectFiniteAndClose((*want)[o], (*got)[o], tol, absl::StrCat("output ", o, " "));
  }
}

TEST(Rounding, SquaredLogitsAtHugeMagnitudes) {
  ExpectCompiledEqualsInterpreted("f32", 3e9);   // x * x = 9e18, rounded by up to 2.7e11
  ExpectCompiledEqualsInterpreted("f64", 3e17);  // x * x = 9e34, rounded by up to 6e18
}

TEST(Rounding, SquaredLogitsAtOrdinaryMagnitudes) {
  ExpectCompiledEqualsInterpreted("f32", 1.5);
  ExpectCompiledEqualsInterpreted("f64", 1.5);
}

}  // namespace
}  // namespace graphjit::compiler
