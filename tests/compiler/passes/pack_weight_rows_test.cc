#include "compiler/passes/pack_weight_rows.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pass_test_util.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using testing::RunPassOnText;
using testing::Weight;

// W [m, 64] @ x [64, n]: a 1 x 1 convolution's product.
std::string Product(const std::string& m, const std::string& n, const char* w_name = "W") {
  return absl::StrCat("graph g {\n  %0 = input {name=\"x\"} : f32[64, ", n,
                      "]\n  %1 = param {name=\"", w_name, "\"} : f32[", m,
                      ", 64]\n  %2 = matmul(%1, %0) : f32[", m, ", ", n, "]\n  return %2\n}\n");
}

// The tiles' rows for every product: 12, as for AVX-512's 12 x 2 tile.
int TwelveRows(int64_t, int64_t, int64_t) { return 12; }

// 20 rows in panels of 12: the second panel is zero past row 20, the slice keeps W's 20
// rows, and the rewritten graph computes exactly what the original does.
TEST(PackWeightRows, WeightsOfAProductsLhsArePackedIntoPanelsOfTheTilesRows) {
  PassContext ctx;
  ctx.params["W"] = Weight({20, 64});
  ctx.tile_rows = TwelveRows;
  const std::string text = Product("20", "50");
  absl::StatusOr<std::string> out = RunPassOnText("pack_weight_rows", text, &ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"gir(graph g {
  %0 = input {name="x"} : f32[64, 50]
  %1 = param {name="W"} : f32[20, 64]
  %2 = param {name="panels12(W)"} : f32[2, 64, 12]
  %3 = transpose(%2) {perm=[0, 2, 1]} : f32[2, 12, 64]
  %4 = reshape(%3) {shape=[24, 64]} : f32[24, 64]
  %5 = slice(%4) {axis=-2, end=20, start=0} : f32[20, 64]
  %6 = matmul(%5, %0) : f32[20, 50]
  return %6
}
)gir");
  const std::vector<double> w = ctx.params.at("W").ToDoubles();
  const std::vector<double> packed = ctx.params.at("panels12(W)").ToDoubles();
  ASSERT_EQ(packed.size(), 2u * 64 * 12);
  for (int p = 0; p < 2; ++p) {
    for (int k = 0; k < 64; ++k) {
      for (int j = 0; j < 12; ++j) {
        const int row = p * 12 + j;
        ASSERT_EQ(packed[(p * 64 + k) * 12 + j], row < 20 ? w[row * 64 + k] : 0.0)
            << p << " " << k << " " << j;
      }
    }
  }
  std::vector<double> xs(64 * 50);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.5 - 0.003 * static_cast<double>(i % 211);
  runtime::TensorMap in = {{"x", *Tensor::FromDoubles(ir::DType::kF32, {64, 50}, xs)}};
  auto before = runtime::Interpret(*ir::ParseGraph(text), in, ctx.params);
  auto after = runtime::Interpret(*ir::ParseGraph(*out), in, ctx.params);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(runtime::MaxAbsDiff((*before)[0], (*after)[0]), 0.0);
}

TEST(PackWeightRows, DoesNotFire) {
  struct Case {
    const char* why;
    std::string text;
    bool params_are_constant = true;
    bool tiles = true;  // ctx.tile_rows set
  };
  const Case cases[] = {
      {"weights that may change (training)", Product("20", "50"), false},
      {"products that go to OpenBLAS", Product("20", "50"), true, false},
      {"no value for the parameter", Product("20", "50", "V")},
      {"a matrix-vector product", Product("20", "1")},
      {"fewer rows than a tile", Product("11", "50")},
      {"one panel's rows (lowering drops a panel dim of 1)", Product("12", "50")},
      {"a transposed x, which OpenBLAS reads in place", R"(graph g {
  %0 = input {name="x"} : f32[50, 64]
  %1 = transpose(%0) {perm=[1, 0]} : f32[64, 50]
  %2 = param {name="W"} : f32[20, 64]
  %3 = matmul(%2, %1) : f32[20, 50]
  return %3
})"},
      {"too small to be a large product", Product("20", "3")},
      {"the weights are the rhs", R"(graph g {
  %0 = input {name="x"} : f32[50, 20]
  %1 = param {name="W"} : f32[20, 64]
  %2 = matmul(%0, %1) : f32[50, 64]
  return %2
})"},
      {"the weights on both sides", R"(graph g {
  %0 = param {name="W"} : f32[64, 64]
  %1 = matmul(%0, %0) : f32[64, 64]
  return %1
})"},
      {"a depth of 1", R"(graph g {
  %0 = input {name="x"} : f32[1, 500]
  %1 = param {name="W"} : f32[20, 1]
  %2 = matmul(%1, %0) : f32[20, 500]
  return %2
})"},
  };
  for (const Case& c : cases) {
    PassContext ctx;
    ctx.params["W"] = Weight({20, 64});
    if (absl::StrContains(c.text, "f32[11, 64]")) ctx.params["W"] = Weight({11, 64});
    if (absl::StrContains(c.text, "f32[12, 64]")) ctx.params["W"] = Weight({12, 64});
    if (absl::StrContains(c.text, "f32[64, 64]")) ctx.params["W"] = Weight({64, 64});
    if (absl::StrContains(c.text, "f32[20, 1]")) ctx.params["W"] = Weight({20, 1});
    ctx.params_are_constant = c.params_are_constant;
    if (c.tiles) ctx.tile_rows = TwelveRows;
    bool changed = true;
    absl::StatusOr<std::string> out = RunPassOnText("pack_weight_rows", c.text, &ctx, &changed);
    ASSERT_TRUE(out.ok()) << c.why << ": " << out.status();
    EXPECT_FALSE(changed) << c.why;
    EXPECT_EQ(*out, ir::PrintGraph(*ir::ParseGraph(c.text))) << c.why;
    EXPECT_FALSE(ctx.params.contains("panels12(W)")) << c.why;
  }
  // The first case with constant weights and tiles fires (so each fails for its reason).
  PassContext ctx;
  ctx.params["W"] = Weight({20, 64});
  ctx.tile_rows = TwelveRows;
  bool changed = false;
  ASSERT_TRUE(RunPassOnText("pack_weight_rows", Product("20", "50"), &ctx, &changed).ok());
  EXPECT_TRUE(changed);
}

// A convolution's windows (through the reshape to a matrix) are an x as any other.
TEST(PackWeightRows, AConvolutionsWeightsArePacked) {
  PassContext ctx;
  ctx.params["W"] = Weight({20, 64});
  ctx.tile_rows = TwelveRows;
  bool changed = false;
  absl::StatusOr<std::string> out = RunPassOnText("pack_weight_rows", R"(graph g {
  %0 = input {name="x"} : f32[1, 64, 1, 50]
  %1 = window(%0) {dilations=[1, 1], kernel=[1, 1], strides=[1, 1]} : f32[1, 64, 1, 1, 1, 50]
  %2 = reshape(%1) {shape=[64, 50]} : f32[64, 50]
  %3 = param {name="W"} : f32[20, 64]
  %4 = matmul(%3, %2) : f32[20, 50]
  return %4
})",
                                                  &ctx, &changed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(changed);
  EXPECT_TRUE(absl::StrContains(*out, "param {name=\"panels12(W)\"} : f32[2, 64, 12]")) << *out;
}

}  // namespace
}  // namespace graphjit::compiler
