#include "compiler/passes/orient_products.h"

#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "pass_test_util.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using testing::RunPassOnText;

// W [g, M, K] with distinct values, so a transposed copy that mixes up rows shows.
Tensor Weight(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = 0.01 * static_cast<double>(i % 97) - 0.3;
  return *Tensor::FromDoubles(ir::DType::kF32, shape, v);
}

// A convolution's product in the last stage of a CNN: 64 channels, 3 x 3 x 32 window
// elements, 5 positions (the pass needs M N K >= 4096: 64 * 5 * 288).
const char kConvProduct[] = R"(graph g {
  %0 = input {name="x"} : f32[1, 1, 288, 5]
  %1 = param {name="W"} : f32[1, 64, 288]
  %2 = matmul(%1, %0) : f32[1, 1, 64, 5]
  %3 = tanh(%2) : f32[1, 1, 64, 5]
  return %3
})";

TEST(OrientProducts, NarrowProductOfKnownWeightsRunsTheOtherWayRound) {
  PassContext ctx;
  ctx.tile_products = true;
  ctx.params["W"] = Weight({1, 64, 288});
  absl::StatusOr<std::string> out = RunPassOnText("orient_products", kConvProduct, &ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"gir(graph g {
  %0 = input {name="x"} : f32[1, 1, 288, 5]
  %1 = param {name="W"} : f32[1, 64, 288]
  %2 = param {name="transposed(W)"} : f32[1, 288, 64]
  %3 = transpose(%0) {perm=[0, 1, 3, 2]} : f32[1, 1, 5, 288]
  %4 = matmul(%3, %2) : f32[1, 1, 5, 64]
  %5 = transpose(%4) {perm=[0, 1, 3, 2]} : f32[1, 1, 64, 5]
  %6 = tanh(%5) : f32[1, 1, 64, 5]
  return %6
}
)gir");
  const std::vector<double> w = ctx.params.at("W").ToDoubles();
  const std::vector<double> wt = ctx.params.at("transposed(W)").ToDoubles();
  for (int m = 0; m < 64; ++m) {
    for (int k = 0; k < 288; ++k) ASSERT_EQ(wt[k * 64 + m], w[m * 288 + k]) << m << " " << k;
  }
  std::vector<double> xs(288 * 5);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.5 - 0.003 * static_cast<double>(i % 211);
  runtime::TensorMap in = {{"x", *Tensor::FromDoubles(ir::DType::kF32, {1, 1, 288, 5}, xs)}};
  auto before = runtime::Interpret(*ir::ParseGraph(kConvProduct), in, ctx.params);
  auto after = runtime::Interpret(*ir::ParseGraph(*out), in, ctx.params);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_LT(runtime::MaxAbsDiff((*before)[0], (*after)[0]), 1e-5);
}

// With the tiles' vector width known, the weights are packed into their panels (two
// vectors of rows: 32 f32 at 64-byte vectors), zero past M, and read back as W^T.
TEST(OrientProducts, WeightsArePackedIntoTheTilesPanels) {
  PassContext ctx;
  ctx.tile_products = true;
  ctx.tile_vector_bytes = 64;
  ctx.params["W"] = Weight({1, 40, 288});
  const std::string text = absl::StrReplaceAll(kConvProduct, {{"64", "40"}});
  absl::StatusOr<std::string> out = RunPassOnText("orient_products", text, &ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"gir(graph g {
  %0 = input {name="x"} : f32[1, 1, 288, 5]
  %1 = param {name="W"} : f32[1, 40, 288]
  %2 = param {name="panels32(W)"} : f32[1, 2, 288, 32]
  %3 = transpose(%2) {perm=[0, 2, 1, 3]} : f32[1, 288, 2, 32]
  %4 = reshape(%3) {shape=[1, 288, 64]} : f32[1, 288, 64]
  %5 = slice(%4) {axis=-1, end=40, start=0} : f32[1, 288, 40]
  %6 = transpose(%0) {perm=[0, 1, 3, 2]} : f32[1, 1, 5, 288]
  %7 = matmul(%6, %5) : f32[1, 1, 5, 40]
  %8 = transpose(%7) {perm=[0, 1, 3, 2]} : f32[1, 1, 40, 5]
  %9 = tanh(%8) : f32[1, 1, 40, 5]
  return %9
}
)gir");
  const std::vector<double> w = ctx.params.at("W").ToDoubles();
  const std::vector<double> packed = ctx.params.at("panels32(W)").ToDoubles();
  ASSERT_EQ(packed.size(), 2u * 288 * 32);
  for (int p = 0; p < 2; ++p) {
    for (int k = 0; k < 288; ++k) {
      for (int j = 0; j < 32; ++j) {
        const int row = p * 32 + j;
        ASSERT_EQ(packed[(p * 288 + k) * 32 + j], row < 40 ? w[row * 288 + k] : 0.0)
            << p << " " << k << " " << j;
      }
    }
  }
  std::vector<double> xs(288 * 5);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.5 - 0.003 * static_cast<double>(i % 211);
  runtime::TensorMap in = {{"x", *Tensor::FromDoubles(ir::DType::kF32, {1, 1, 288, 5}, xs)}};
  auto before = runtime::Interpret(*ir::ParseGraph(text), in, ctx.params);
  auto after = runtime::Interpret(*ir::ParseGraph(*out), in, ctx.params);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_LT(runtime::MaxAbsDiff((*before)[0], (*after)[0]), 1e-5);
}

TEST(OrientProducts, DoesNotFire) {
  struct Case {
    const char* why;
    const char* text;
    bool params_are_constant = true;
    bool tile_products = true;
  };
  const Case cases[] = {
      {"as wide as it is tall", R"(graph g {
  %0 = input {name="x"} : f32[288, 64]
  %1 = param {name="W"} : f32[64, 288]
  %2 = matmul(%1, %0) : f32[64, 64]
  return %2
})"},
      {"a matrix-vector product", R"(graph g {
  %0 = input {name="x"} : f32[288, 1]
  %1 = param {name="W"} : f32[64, 288]
  %2 = matmul(%1, %0) : f32[64, 1]
  return %2
})"},
      {"too small to be a large product", R"(graph g {
  %0 = input {name="x"} : f32[8, 2]
  %1 = param {name="W"} : f32[64, 8]
  %2 = matmul(%1, %0) : f32[64, 2]
  return %2
})"},
      {"the weights are the rhs", R"(graph g {
  %0 = input {name="x"} : f32[5, 64]
  %1 = param {name="W"} : f32[64, 288]
  %2 = matmul(%0, %1) : f32[5, 288]
  return %2
})"},
      {"a symbolic column count", R"(graph g {
  %0 = input {name="x"} : f32[288, S]
  %1 = param {name="W"} : f32[64, 288]
  %2 = matmul(%1, %0) : f32[64, S]
  return %2
})"},
      {"weights that may change (training)", R"(graph g {
  %0 = input {name="x"} : f32[288, 5]
  %1 = param {name="W"} : f32[64, 288]
  %2 = matmul(%1, %0) : f32[64, 5]
  return %2
})",
       false},
      {"products that go to OpenBLAS", R"(graph g {
  %0 = input {name="x"} : f32[288, 5]
  %1 = param {name="W"} : f32[64, 288]
  %2 = matmul(%1, %0) : f32[64, 5]
  return %2
})",
       true, false},
      {"no value for the parameter", R"(graph g {
  %0 = input {name="x"} : f32[288, 5]
  %1 = param {name="V"} : f32[64, 288]
  %2 = matmul(%1, %0) : f32[64, 5]
  return %2
})"},
  };
  for (const Case& c : cases) {
    PassContext ctx;
    ctx.params["W"] = Weight({64, 288});
    ctx.params_are_constant = c.params_are_constant;
    ctx.tile_products = c.tile_products;
    bool changed = true;
    absl::StatusOr<std::string> out = RunPassOnText("orient_products", c.text, &ctx, &changed);
    ASSERT_TRUE(out.ok()) << c.why << ": " << out.status();
    EXPECT_FALSE(changed) << c.why;
    EXPECT_EQ(*out, ir::PrintGraph(*ir::ParseGraph(c.text))) << c.why;
    EXPECT_FALSE(ctx.params.contains("transposed(W)")) << c.why;
  }
}

}  // namespace
}  // namespace graphjit::compiler
