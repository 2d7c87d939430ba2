// fold_channel_affine: an imported BatchNormalization's chain folds into one multiply and
// add, and into the weight of the matmul before it (rows: an im2col Conv; columns: a Gemm).
#include "compiler/passes/fold_channel_affine.h"

#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pass_test_util.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using testing::RunPassOnText;

// The interpreter's results of `before` and `after` on `inputs` agree to `tolerance`.
void ExpectSameResults(const std::string& before, const std::string& after,
                       const runtime::TensorMap& inputs, const PassContext& ctx, double tolerance) {
  auto a = runtime::Interpret(*ir::ParseGraph(before), inputs, ctx.params);
  auto b = runtime::Interpret(*ir::ParseGraph(after), inputs, ctx.params);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i) {
    std::vector<double> x = (*a)[i].ToDoubles(), y = (*b)[i].ToDoubles();
    ASSERT_EQ(x.size(), y.size());
    for (size_t j = 0; j < x.size(); ++j) EXPECT_NEAR(x[j], y[j], tolerance) << "output " << i;
  }
}

Tensor Iota(std::vector<int64_t> shape, double scale, double offset) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = scale * static_cast<double>(i % 7) + offset;
  return *Tensor::FromDoubles(ir::DType::kF64, shape, v);
}

// A Conv as imported (im2col patches times the weight, reshaped to NCHW), then the
// chain a BatchNormalization leaves after constant folding.
const char kConvBatchNorm[] = R"(graph g {
  %0 = input {name="p"} : f64[N, 1, 6, 8]
  %1 = param {name="w"} : f64[1, 3, 6]
  %2 = matmul(%1, %0) : f64[N, 1, 3, 8]
  %3 = reshape(%2) {shape=[N, 3, 2, 4]} : f64[N, 3, 2, 4]
  %4 = constant {value=[0.5, -1.0, 2.0]} : f64[3, 1, 1]
  %5 = sub(%3, %4) : f64[N, 3, 2, 4]
  %6 = constant {value=[2.0, 0.25, -3.0]} : f64[3, 1, 1]
  %7 = mul(%6, %5) : f64[N, 3, 2, 4]
  %8 = constant {value=[4.0, 0.5, 8.0]} : f64[3, 1, 1]
  %9 = div(%7, %8) : f64[N, 3, 2, 4]
  %10 = constant {value=[1.0, 0.0, -2.0]} : f64[3, 1, 1]
  %11 = add(%9, %10) : f64[N, 3, 2, 4]
  return %11
})";

TEST(FoldChannelAffine, FoldsABatchNormIntoTheConvWeight) {
  PassContext ctx;
  ctx.params["w"] = Iota({1, 3, 6}, 0.5, -1.0);
  absl::StatusOr<std::string> out = RunPassOnText("fold_channel_affine", kConvBatchNorm, &ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  // a = scale / std = [0.5, 0.5, -0.375]; b = bias - mean * a = [0.75, 0.5, -1.25].
  EXPECT_EQ(*out, R"(graph g {
  %0 = input {name="p"} : f64[N, 1, 6, 8]
  %1 = param {name="w"} : f64[1, 3, 6]
  %2 = matmul(%1, %0) : f64[N, 1, 3, 8]
  %3 = reshape(%2) {shape=[N, 3, 2, 4]} : f64[N, 3, 2, 4]
  %4 = constant {value=[0.5, -1.0, 2.0]} : f64[3, 1, 1]
  %5 = sub(%3, %4) : f64[N, 3, 2, 4]
  %6 = constant {value=[2.0, 0.25, -3.0]} : f64[3, 1, 1]
  %7 = mul(%6, %5) : f64[N, 3, 2, 4]
  %8 = constant {value=[4.0, 0.5, 8.0]} : f64[3, 1, 1]
  %9 = div(%7, %8) : f64[N, 3, 2, 4]
  %10 = constant {value=[1.0, 0.0, -2.0]} : f64[3, 1, 1]
  %11 = param {name="w.affine11"} : f64[1, 3, 6]
  %12 = matmul(%11, %0) : f64[N, 1, 3, 8]
  %13 = reshape(%12) {shape=[N, 3, 2, 4]} : f64[N, 3, 2, 4]
  %14 = constant {value=[0.75, 0.5, -1.25]} : f64[3, 1, 1]
  %15 = add(%13, %14) : f64[N, 3, 2, 4]
  return %15
}
)");
  runtime::TensorMap in = {{"p", Iota({2, 1, 6, 8}, 0.25, -0.5)}};
  ExpectSameResults(kConvBatchNorm, *out, in, ctx, 1e-12);
}

// A Gemm (x @ W) with the channels along the last axis, then scale and shift.
const char kGemmScaleShift[] = R"(graph g {
  %0 = input {name="x"} : f64[B, 4]
  %1 = param {name="W"} : f64[4, 3]
  %2 = matmul(%0, %1) : f64[B, 3]
  %3 = constant {value=[2.0, -1.0, 0.5]} : f64[3]
  %4 = mul(%2, %3) : f64[B, 3]
  %5 = constant {value=[1.0, 2.0, 3.0]} : f64[3]
  %6 = add(%5, %4) : f64[B, 3]
  return %6
})";

TEST(FoldChannelAffine, FoldsIntoTheColumnsOfAGemmWeight) {
  PassContext ctx;
  ctx.params["W"] = Iota({4, 3}, 1.0, -2.0);
  absl::StatusOr<std::string> out = RunPassOnText("fold_channel_affine", kGemmScaleShift, &ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NE(out->find("%6 = param {name=\"W.affine6\"} : f64[4, 3]\n  %7 = matmul(%0, %6)"),
            std::string::npos)
      << *out;
  std::vector<double> w = ctx.params.at("W").ToDoubles();
  std::vector<double> scaled = ctx.params.at("W.affine6").ToDoubles();
  const double a[] = {2.0, -1.0, 0.5};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(scaled[i], w[i] * a[i % 3]);
  runtime::TensorMap in = {{"x", Iota({5, 4}, 0.5, -1.0)}};
  ExpectSameResults(kGemmScaleShift, *out, in, ctx, 1e-12);
}

TEST(FoldChannelAffine, CollapsesAChainWithoutAMatmulIntoOneMultiplyAndAdd) {
  const std::string text = R"(graph g {
  %0 = input {name="x"} : f64[2, 3, 4]
  %1 = constant {value=[1.0, 2.0, 3.0]} : f64[3, 1]
  %2 = sub(%1, %0) : f64[2, 3, 4]
  %3 = constant {value=[0.5]} : f64[]
  %4 = mul(%2, %3) : f64[2, 3, 4]
  %5 = add(%4, %1) : f64[2, 3, 4]
  %6 = tanh(%5) : f64[2, 3, 4]
  return %6
})";
  PassContext ctx;
  absl::StatusOr<std::string> out = RunPassOnText("fold_channel_affine", text, &ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  // (k - x) * 0.5 + k = x * -0.5 + 1.5 k, per row; the multiplier is one value.
  EXPECT_NE(out->find("  %5 = constant {value=[-0.5]} : f64[]\n"
                      "  %6 = mul(%0, %5) : f64[2, 3, 4]\n"
                      "  %7 = constant {value=[1.5, 3.0, 4.5]} : f64[3, 1]\n"
                      "  %8 = add(%6, %7) : f64[2, 3, 4]\n"
                      "  %9 = tanh(%8) : f64[2, 3, 4]\n"),
            std::string::npos)
      << *out;
  runtime::TensorMap in = {{"x", Iota({2, 3, 4}, 0.3, -1.0)}};
  ExpectSameResults(text, *out, in, ctx, 1e-12);
}

TEST(FoldChannelAffine, DoesNotFire) {
  for (const char* text : {
           // one step without a matmul to fold into: nothing to gain
           R"(graph g {
  %0 = input {name="x"} : f64[2, 3]
  %1 = constant {value=[1.0, 2.0, 3.0]} : f64[3]
  %2 = mul(%0, %1) : f64[2, 3]
  return %2
})",
           // two steps that stay two (a multiply and an add): nothing to gain
           R"(graph g {
  %0 = input {name="x"} : f64[2, 3]
  %1 = constant {value=[1.0, 2.0, 3.0]} : f64[3]
  %2 = mul(%0, %1) : f64[2, 3]
  %3 = add(%2, %1) : f64[2, 3]
  return %3
})",
           // the intermediate value is also an output
           R"(graph g {
  %0 = input {name="x"} : f64[2, 3]
  %1 = constant {value=[1.0, 2.0, 3.0]} : f64[3]
  %2 = mul(%0, %1) : f64[2, 3]
  %3 = add(%2, %1) : f64[2, 3]
  return %3, %2
})",
           // known / value is not affine in value
           R"(graph g {
  %0 = input {name="x"} : f64[2, 3]
  %1 = constant {value=[1.0, 2.0, 3.0]} : f64[3]
  %2 = div(%1, %0) : f64[2, 3]
  %3 = add(%2, %1) : f64[2, 3]
  return %3
})",
           // the known operand varies along two axes
           R"(graph g {
  %0 = input {name="x"} : f64[2, 3]
  %1 = constant {value=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]} : f64[2, 3]
  %2 = mul(%0, %1) : f64[2, 3]
  %3 = add(%2, %1) : f64[2, 3]
  return %3
})",
           // a division by zero (x / 0 is +-inf, or NaN, per element)
           R"(graph g {
  %0 = input {name="x"} : f64[2, 3]
  %1 = constant {value=[1.0, 0.0, 3.0]} : f64[3]
  %2 = div(%0, %1) : f64[2, 3]
  %3 = constant {value=[2.0]} : f64[]
  %4 = mul(%2, %3) : f64[2, 3]
  return %4
})",
           // an infinite scale
           R"(graph g {
  %0 = input {name="x"} : f64[2, 3]
  %1 = constant {value=[1.0, inf, 3.0]} : f64[3]
  %2 = mul(%0, %1) : f64[2, 3]
  %3 = add(%2, %1) : f64[2, 3]
  %4 = sub(%3, %1) : f64[2, 3]
  return %4
})",
           // the steps vary along different axes
           R"(graph g {
  %0 = input {name="x"} : f64[2, 3]
  %1 = constant {value=[1.0, 2.0, 3.0]} : f64[3]
  %2 = mul(%0, %1) : f64[2, 3]
  %3 = constant {value=[1.0, 2.0]} : f64[2, 1]
  %4 = add(%2, %3) : f64[2, 3]
  return %4
})",
           // the value broadcasts (it does not have the result's type)
           R"(graph g {
  %0 = input {name="x"} : f64[3]
  %1 = constant {value=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]} : f64[2, 3]
  %2 = constant {value=[1.0, 2.0]} : f64[2, 1]
  %3 = mul(%0, %2) : f64[2, 3]
  %4 = add(%3, %1) : f64[2, 3]
  return %4
})",
       }) {
    PassContext ctx;
    bool changed = true;
    absl::StatusOr<std::string> out = RunPassOnText("fold_channel_affine", text, &ctx, &changed);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_FALSE(changed) << text << "\n->\n" << *out;
  }
}

TEST(FoldChannelAffine, DoesNotFireOnChannelsAlongASymbolicAxis) {
  // A param [S] (values for S = 3 only) scales a value [S]: a constant of 3 channels would
  // not type against f32[S], so the chain stays (the fuzzer's graph: gelu_tanh of a param).
  PassContext ctx;
  ctx.params["p"] = Iota({3}, 0.5, 1.0);
  bool changed = true;
  absl::StatusOr<std::string> out = RunPassOnText("fold_channel_affine", R"(graph g {
  %0 = input {name="x"} : f64[S]
  %1 = param {name="p"} : f64[S]
  %2 = mul(%0, %1) : f64[S]
  %3 = add(%1, %2) : f64[S]
  %4 = constant {value=[2.0]} : f64[]
  %5 = mul(%4, %3) : f64[S]
  return %5
})",
                                                  &ctx, &changed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(changed) << *out;
}

TEST(FoldChannelAffine, LeavesAMatmulWithAnotherUseAlone) {
  // The product is also an output: scaling its weight would change that output, so the
  // chain collapses but stays after the matmul.
  std::string text = kConvBatchNorm;
  text.replace(text.find("return %11"), 10, "return %11, %3");
  PassContext ctx;
  ctx.params["w"] = Iota({1, 3, 6}, 0.5, -1.0);
  absl::StatusOr<std::string> out = RunPassOnText("fold_channel_affine", text, &ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->find("w.affine"), std::string::npos) << *out;
  EXPECT_NE(out->find("= mul(%3, %11)"), std::string::npos) << *out;
  runtime::TensorMap in = {{"p", Iota({2, 1, 6, 8}, 0.25, -0.5)}};
  ExpectSameResults(text, *out, in, ctx, 1e-12);
}

// Random chains over x: f64[2, 3, 4] (or a matmul W @ p of that shape): 1-4 steps of add
// / sub / mul / div by constants along one axis or none, in random operand order. The
// folded graph must compute what the chain did, to rounding.
TEST(FoldChannelAffine, RandomChainsKeepTheirValues) {
  std::mt19937 rng(20261203);
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  const char* const kOps[] = {"add", "sub", "mul", "div"};
  // A known operand's shape (broadcast against [2, 3, 4]) and its number of values.
  const std::pair<const char*, int> kShapes[] = {
      {"[]", 1}, {"[3, 1]", 3}, {"[4]", 4}, {"[1, 3, 1]", 3}, {"[2, 1, 1]", 2}};
  int fired = 0, folded_into_weight = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const bool matmul = trial % 2 == 1;
    std::string text = "graph g {\n";
    int next = 0;
    std::string value;
    if (matmul) {
      text +=
          "  %0 = input {name=\"p\"} : f64[2, 5, 4]\n  %1 = param {name=\"w\"} : f64[3, 5]\n"
          "  %2 = matmul(%1, %0) : f64[2, 3, 4]\n";
      next = 3;
      value = "%2";
    } else {
      text += "  %0 = input {name=\"x\"} : f64[2, 3, 4]\n";
      next = 1;
      value = "%0";
    }
    const int steps = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < steps; ++k) {
      const std::string op = kOps[rng() % 4];
      const auto& [shape, count] = kShapes[rng() % 5];
      std::string values;
      for (int i = 0; i < count; ++i) {
        double v = uniform(0.25, 2.0) * (rng() % 2 == 0 ? 1 : -1);
        absl::StrAppend(&values, i > 0 ? ", " : "", v);
      }
      const std::string known = absl::StrCat("%", next++);
      absl::StrAppend(&text, "  ", known, " = constant {value=[", values, "]} : f64", shape, "\n");
      const bool known_first = op != "div" && rng() % 2 == 0;
      absl::StrAppend(&text, "  %", next, " = ", op, "(", known_first ? known : value, ", ",
                      known_first ? value : known, ") : f64[2, 3, 4]\n");
      value = absl::StrCat("%", next++);
    }
    absl::StrAppend(&text, "  return ", value, "\n}\n");
    PassContext ctx;
    std::vector<double> w(15);
    for (double& v : w) v = uniform(-1.0, 1.0);
    ctx.params["w"] = *Tensor::FromDoubles(ir::DType::kF64, {3, 5}, w);
    bool changed = false;
    absl::StatusOr<std::string> out = RunPassOnText("fold_channel_affine", text, &ctx, &changed);
    ASSERT_TRUE(out.ok()) << out.status() << "\n" << text;
    fired += changed;
    folded_into_weight += out->find("w.affine") != std::string::npos;
    runtime::TensorMap in = {
        {matmul ? "p" : "x",
         Iota(matmul ? std::vector<int64_t>{2, 5, 4} : std::vector<int64_t>{2, 3, 4}, 0.37, -1.1)}};
    auto a = runtime::Interpret(*ir::ParseGraph(text), in, ctx.params);
    auto b = runtime::Interpret(*ir::ParseGraph(*out), in, ctx.params);
    ASSERT_TRUE(a.ok() && b.ok()) << text;
    std::vector<double> x = (*a)[0].ToDoubles(), y = (*b)[0].ToDoubles();
    for (size_t j = 0; j < x.size(); ++j) {
      ASSERT_NEAR(x[j], y[j], 1e-12 * (1 + std::abs(x[j]))) << text << "\n->\n" << *out;
    }
  }
  // The trials exercise both rewrites, not only the cases where nothing fires.
  EXPECT_GT(fired, 40);
  EXPECT_GT(folded_into_weight, 20);
}

TEST(FoldChannelAffine, NeedsConstantParams) {
  PassContext ctx;
  ctx.params_are_constant = false;
  ctx.params["w"] = Iota({1, 3, 6}, 0.5, -1.0);
  bool changed = true;
  ASSERT_TRUE(RunPassOnText("fold_channel_affine", kConvBatchNorm, &ctx, &changed).ok());
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace graphjit::compiler
