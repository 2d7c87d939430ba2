#include "compiler/passes/concat_weights.h"

#include "gtest/gtest.h"
#include "pass_test_util.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using testing::RunPassOnText;

PassContext Weights() {
  PassContext ctx;
  std::vector<double> W(12), V(8), U(4);
  for (size_t i = 0; i < W.size(); ++i) W[i] = 0.25 * static_cast<double>(i) - 1.0;
  for (size_t i = 0; i < V.size(); ++i) V[i] = 1.0 / (1.0 + static_cast<double>(i));
  for (size_t i = 0; i < U.size(); ++i) U[i] = -2.0 + static_cast<double>(i);
  ctx.params["W"] = *Tensor::FromDoubles(ir::DType::kF64, {4, 3}, W);
  ctx.params["V"] = *Tensor::FromDoubles(ir::DType::kF64, {4, 2}, V);
  ctx.params["U"] = *Tensor::FromDoubles(ir::DType::kF64, {4, 1}, U);
  return ctx;
}

// q / k / v style: three projections of one value, another op in between.
const char kThreeProjections[] = R"(graph g {
  %0 = input {name="x"} : f64[2, 4]
  %1 = param {name="W"} : f64[4, 3]
  %2 = param {name="V"} : f64[4, 2]
  %3 = param {name="U"} : f64[4, 1]
  %4 = matmul(%0, %1) : f64[2, 3]
  %5 = exp(%4) : f64[2, 3]
  %6 = matmul(%0, %2) : f64[2, 2]
  %7 = matmul(%0, %3) : f64[2, 1]
  return %5, %6, %7
})";

TEST(ConcatWeights, ProjectionsOfOneValueBecomeOneMatmul) {
  PassContext ctx = Weights();
  absl::StatusOr<std::string> out = RunPassOnText("concat_weights", kThreeProjections, &ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"gir(graph g {
  %0 = input {name="x"} : f64[2, 4]
  %1 = param {name="W"} : f64[4, 3]
  %2 = param {name="V"} : f64[4, 2]
  %3 = param {name="U"} : f64[4, 1]
  %4 = param {name="concat(W,V,U)"} : f64[4, 6]
  %5 = matmul(%0, %4) : f64[2, 6]
  %6 = slice(%5) {axis=-1, end=3, start=0} : f64[2, 3]
  %7 = slice(%5) {axis=-1, end=5, start=3} : f64[2, 2]
  %8 = slice(%5) {axis=-1, end=6, start=5} : f64[2, 1]
  %9 = exp(%6) : f64[2, 3]
  return %9, %7, %8
}
)gir");
  // Row k of the new weight is row k of W, V and U in turn.
  const std::vector<double> cat = ctx.params.at("concat(W,V,U)").ToDoubles();
  const std::vector<double> W = ctx.params.at("W").ToDoubles(), V = ctx.params.at("V").ToDoubles(),
                            U = ctx.params.at("U").ToDoubles();
  for (int k = 0; k < 4; ++k) {
    for (int j = 0; j < 3; ++j) EXPECT_EQ(cat[k * 6 + j], W[k * 3 + j]);
    for (int j = 0; j < 2; ++j) EXPECT_EQ(cat[k * 6 + 3 + j], V[k * 2 + j]);
    EXPECT_EQ(cat[k * 6 + 5], U[k]);
  }
  // Each output element is the same sum of the same products as before (the interpreter's
  // BLAS may order it differently for another width: within rounding).
  runtime::TensorMap in = {
      {"x", *Tensor::FromDoubles(ir::DType::kF64, {2, 4}, {1, -2, 3, 0.5, 0.1, 0.2, -0.7, 9})}};
  auto before = runtime::Interpret(*ir::ParseGraph(kThreeProjections), in, ctx.params);
  auto after = runtime::Interpret(*ir::ParseGraph(*out), in, ctx.params);
  ASSERT_TRUE(before.ok() && after.ok());
  for (int i = 0; i < 3; ++i) EXPECT_LT(runtime::MaxAbsDiff((*before)[i], (*after)[i]), 1e-14) << i;
}

TEST(ConcatWeights, DoesNotFireWithoutTwoKnownWeightsOfOneValue) {
  const std::vector<std::string> cases = {
      // different lhs values
      R"(graph g {
  %0 = input {name="x"} : f64[2, 4]
  %1 = input {name="y"} : f64[2, 4]
  %2 = param {name="W"} : f64[4, 3]
  %3 = param {name="V"} : f64[4, 2]
  %4 = matmul(%0, %2) : f64[2, 3]
  %5 = matmul(%1, %3) : f64[2, 2]
  return %4, %5
})",
      // one weight is an input, not a known parameter
      R"(graph g {
  %0 = input {name="x"} : f64[2, 4]
  %1 = input {name="w"} : f64[4, 3]
  %2 = param {name="V"} : f64[4, 2]
  %3 = matmul(%0, %1) : f64[2, 3]
  %4 = matmul(%0, %2) : f64[2, 2]
  return %3, %4
})",
      // the same weight twice (nothing to put side by side)
      R"(graph g {
  %0 = input {name="x"} : f64[2, 4]
  %1 = param {name="W"} : f64[4, 3]
  %2 = matmul(%0, %1) : f64[2, 3]
  %3 = matmul(%0, %1) : f64[2, 3]
  return %2, %3
})",
      // a parameter missing from the map (its value is not known)
      R"(graph g {
  %0 = input {name="x"} : f64[2, 4]
  %1 = param {name="W"} : f64[4, 3]
  %2 = param {name="missing"} : f64[4, 2]
  %3 = matmul(%0, %1) : f64[2, 3]
  %4 = matmul(%0, %2) : f64[2, 2]
  return %3, %4
})",
  };
  for (const std::string& text : cases) {
    SCOPED_TRACE(text);
    PassContext ctx = Weights();
    bool changed = true;
    absl::StatusOr<std::string> out = RunPassOnText("concat_weights", text, &ctx, &changed);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_FALSE(changed);
    EXPECT_EQ(ctx.params.size(), 3u);
  }
}

TEST(ConcatWeights, LeavesTrainableWeightsAlone) {
  PassContext ctx = Weights();
  ctx.params_are_constant = false;
  bool changed = true;
  absl::StatusOr<std::string> out =
      RunPassOnText("concat_weights", kThreeProjections, &ctx, &changed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace graphjit::compiler
