#include "compiler/passes/fold_norm_weight.h"

#include "gtest/gtest.h"
#include "pass_test_util.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using testing::RunPassOnText;

PassContext Weights() {
  PassContext ctx;
  ctx.params["w"] = *Tensor::FromDoubles(ir::DType::kF64, {4}, {0.5, 2.0, -1.0, 3.0});
  std::vector<double> W(12), V(8);
  for (size_t i = 0; i < W.size(); ++i) W[i] = 0.25 * static_cast<double>(i) - 1.0;
  for (size_t i = 0; i < V.size(); ++i) V[i] = 1.0 / (1.0 + static_cast<double>(i));
  ctx.params["W"] = *Tensor::FromDoubles(ir::DType::kF64, {4, 3}, W);
  ctx.params["V"] = *Tensor::FromDoubles(ir::DType::kF64, {4, 2}, V);
  return ctx;
}

const char kTwoProjections[] = R"(graph g {
  %0 = input {name="x"} : f64[1, 4]
  %1 = param {name="w"} : f64[4]
  %2 = param {name="W"} : f64[4, 3]
  %3 = param {name="V"} : f64[4, 2]
  %4 = mul(%0, %1) : f64[1, 4]
  %5 = matmul(%4, %2) : f64[1, 3]
  %6 = matmul(%4, %3) : f64[1, 2]
  return %5, %6
})";

TEST(FoldNormWeight, MovesTheWeightIntoEveryProjection) {
  PassContext ctx = Weights();
  absl::StatusOr<std::string> out = RunPassOnText("fold_norm_weight", kTwoProjections, &ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"(graph g {
  %0 = input {name="x"} : f64[1, 4]
  %1 = param {name="w"} : f64[4]
  %2 = param {name="W"} : f64[4, 3]
  %3 = param {name="V"} : f64[4, 2]
  %4 = mul(%0, %1) : f64[1, 4]
  %5 = param {name="W.scaled.w"} : f64[4, 3]
  %6 = matmul(%0, %5) : f64[1, 3]
  %7 = param {name="V.scaled.w"} : f64[4, 2]
  %8 = matmul(%0, %7) : f64[1, 2]
  return %6, %8
}
)");
  // diag(w) W, row by row.
  std::vector<double> scaled = ctx.params.at("W.scaled.w").ToDoubles();
  std::vector<double> w = ctx.params.at("w").ToDoubles(), W = ctx.params.at("W").ToDoubles();
  for (int k = 0; k < 4; ++k) {
    for (int j = 0; j < 3; ++j) EXPECT_EQ(scaled[k * 3 + j], w[k] * W[k * 3 + j]);
  }
  // And the results agree with the unfolded graph.
  runtime::TensorMap in = {{"x", *Tensor::FromDoubles(ir::DType::kF64, {1, 4}, {1, -2, 3, 0.5})}};
  auto before = runtime::Interpret(*ir::ParseGraph(kTwoProjections), in, ctx.params);
  auto after = runtime::Interpret(*ir::ParseGraph(*out), in, ctx.params);
  ASSERT_TRUE(before.ok() && after.ok());
  for (int i = 0; i < 2; ++i) {
    std::vector<double> a = (*before)[i].ToDoubles(), b = (*after)[i].ToDoubles();
    for (size_t j = 0; j < a.size(); ++j) EXPECT_NEAR(a[j], b[j], 1e-14);
  }
}

TEST(FoldNormWeight, DoesNotFireWhenTheScaledValueHasAnotherUse) {
  for (const std::string extra : {
           // also feeds a non-matmul
           "  %7 = add(%4, %0) : f64[1, 4]\n  return %5, %6, %7\n}\n",
           // is itself a graph output
           "  return %5, %6, %4\n}\n",
       }) {
    std::string text = std::string(kTwoProjections);
    text = text.substr(0, text.find("  return")) + extra;
    PassContext ctx = Weights();
    bool changed = true;
    absl::StatusOr<std::string> out = RunPassOnText("fold_norm_weight", text, &ctx, &changed);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_FALSE(changed);
    EXPECT_EQ(*out, text);
    EXPECT_FALSE(ctx.params.contains("W.scaled.w"));
  }
}

TEST(FoldNormWeight, DoesNotFireWhenWeightsMayChange) {
  PassContext ctx = Weights();
  ctx.params_are_constant = false;
  bool changed = true;
  absl::StatusOr<std::string> out =
      RunPassOnText("fold_norm_weight", kTwoProjections, &ctx, &changed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace graphjit::compiler
