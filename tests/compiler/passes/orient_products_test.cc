#include "compiler/passes/orient_products.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "pass_test_util.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using testing::RunPassOnText;
using testing::Weight;

// A convolution's product in the last stage of a CNN: 64 channels, 3 x 3 x 32 window
// elements, 2 x 2 = 4 positions (the pass needs M N K >= 4096: 64 * 4 * 288).
const char kConvProduct[] = R"(graph g {
  %0 = input {name="x"} : f32[1, 32, 4, 4]
  %1 = window(%0) {dilations=[1, 1], kernel=[3, 3], strides=[1, 1]} : f32[1, 32, 3, 3, 2, 2]
  %2 = reshape(%1) {shape=[1, 1, 288, 4]} : f32[1, 1, 288, 4]
  %3 = param {name="W"} : f32[1, 64, 288]
  %4 = matmul(%3, %2) : f32[1, 1, 64, 4]
  %5 = tanh(%4) : f32[1, 1, 64, 4]
  return %5
})";

// x [K, N] as 1 x 1 windows of an input [1, K, 1, N] (what a 1 x 1 convolution's patches
// would be), for the cases that must not fire for another reason.
std::string AsWindows(const std::string& k, const std::string& n) {
  return absl::StrCat("  %0 = input {name=\"x\"} : f32[1, ", k, ", 1, ", n,
                      "]\n  %9 = window(%0) {dilations=[1, 1], kernel=[1, 1], strides=[1, 1]} : "
                      "f32[1, ",
                      k, ", 1, 1, 1, ", n, "]\n");
}

// Panel p, row k, lane j of `panels` holds row p * 32 + j, column k of W [1, m, 288]
// (zero past m), and the rewritten graph `out` computes what `text` does on an x of
// `x_shape`.
void ExpectPanelsOfW(const PassContext& ctx, const std::string& text, const std::string& out, int m,
                     const std::vector<int64_t>& x_shape = {1, 32, 4, 4}) {
  const std::vector<double> w = ctx.params.at("W").ToDoubles();
  const std::vector<double> packed = ctx.params.at("panels32(W)").ToDoubles();
  const int panels = (m + 31) / 32;
  ASSERT_EQ(packed.size(), static_cast<size_t>(panels) * 288 * 32);
  for (int p = 0; p < panels; ++p) {
    for (int k = 0; k < 288; ++k) {
      for (int j = 0; j < 32; ++j) {
        const int row = p * 32 + j;
        ASSERT_EQ(packed[(p * 288 + k) * 32 + j], row < m ? w[row * 288 + k] : 0.0)
            << p << " " << k << " " << j;
      }
    }
  }
  int64_t size = 1;
  for (int64_t d : x_shape) size *= d;
  std::vector<double> xs(size);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.5 - 0.003 * static_cast<double>(i % 211);
  runtime::TensorMap in = {{"x", *Tensor::FromDoubles(ir::DType::kF32, x_shape, xs)}};
  auto before = runtime::Interpret(*ir::ParseGraph(text), in, ctx.params);
  auto after = runtime::Interpret(*ir::ParseGraph(out), in, ctx.params);
  ASSERT_TRUE(before.ok() && after.ok());
  // The two products sum in different orders in OpenBLAS (which kernels, AVX2 or AVX-512,
  // moves the rounding: 1.3e-5 apart with OPENBLAS_CORETYPE=Haswell).
  EXPECT_LT(runtime::MaxAbsDiff((*before)[0], (*after)[0]), 1e-4);
}

// orient_products on `text` with 64-byte vectors and W of `w_shape` in `ctx`.
absl::StatusOr<std::string> Orient(const std::string& text, std::vector<int64_t> w_shape,
                                   PassContext* ctx) {
  ctx->tile_vector_bytes = 64;
  ctx->params["W"] = Weight(std::move(w_shape));
  return RunPassOnText("orient_products", text, ctx);
}

// The weights are packed into the tiles' panels (two vectors of rows: 32 f32 at 64-byte
// vectors) and read back as W^T; 64 rows fill two panels, no slice.
TEST(OrientProducts, NarrowProductOfKnownWeightsRunsTheOtherWayRound) {
  PassContext ctx;
  absl::StatusOr<std::string> out = Orient(kConvProduct, {1, 64, 288}, &ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"gir(graph g {
  %0 = input {name="x"} : f32[1, 32, 4, 4]
  %1 = window(%0) {dilations=[1, 1], kernel=[3, 3], strides=[1, 1]} : f32[1, 32, 3, 3, 2, 2]
  %2 = reshape(%1) {shape=[1, 1, 288, 4]} : f32[1, 1, 288, 4]
  %3 = param {name="W"} : f32[1, 64, 288]
  %4 = param {name="panels32(W)"} : f32[1, 2, 288, 32]
  %5 = transpose(%4) {perm=[0, 2, 1, 3]} : f32[1, 288, 2, 32]
  %6 = reshape(%5) {shape=[1, 288, 64]} : f32[1, 288, 64]
  %7 = transpose(%2) {perm=[0, 1, 3, 2]} : f32[1, 1, 4, 288]
  %8 = matmul(%7, %6) : f32[1, 1, 4, 64]
  %9 = transpose(%8) {perm=[0, 1, 3, 2]} : f32[1, 1, 64, 4]
  %10 = tanh(%9) : f32[1, 1, 64, 4]
  return %10
}
)gir");
  ExpectPanelsOfW(ctx, kConvProduct, *out, 64);
}

// 40 rows: the second panel is zero past row 40, and a slice keeps W^T's 40 columns.
TEST(OrientProducts, WeightsArePackedIntoTheTilesPanels) {
  PassContext ctx;
  const std::string text = absl::StrReplaceAll(kConvProduct, {{"64", "40"}});
  absl::StatusOr<std::string> out = Orient(text, {1, 40, 288}, &ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"gir(graph g {
  %0 = input {name="x"} : f32[1, 32, 4, 4]
  %1 = window(%0) {dilations=[1, 1], kernel=[3, 3], strides=[1, 1]} : f32[1, 32, 3, 3, 2, 2]
  %2 = reshape(%1) {shape=[1, 1, 288, 4]} : f32[1, 1, 288, 4]
  %3 = param {name="W"} : f32[1, 40, 288]
  %4 = param {name="panels32(W)"} : f32[1, 2, 288, 32]
  %5 = transpose(%4) {perm=[0, 2, 1, 3]} : f32[1, 288, 2, 32]
  %6 = reshape(%5) {shape=[1, 288, 64]} : f32[1, 288, 64]
  %7 = slice(%6) {axis=-1, end=40, start=0} : f32[1, 288, 40]
  %8 = transpose(%2) {perm=[0, 1, 3, 2]} : f32[1, 1, 4, 288]
  %9 = matmul(%8, %7) : f32[1, 1, 4, 40]
  %10 = transpose(%9) {perm=[0, 1, 3, 2]} : f32[1, 1, 40, 4]
  %11 = tanh(%10) : f32[1, 1, 40, 4]
  return %11
}
)gir");
  ExpectPanelsOfW(ctx, text, *out, 40);
}

TEST(OrientProducts, DoesNotFire) {
  struct Case {
    const char* why;
    std::string text;
    bool params_are_constant = true;
    int tile_vector_bytes = 64;
  };
  // matmul(W [m, 288], windows [288, n]) with W named `w_name`.
  auto product = [](const std::string& m, const std::string& n, const char* w_name = "W") {
    return absl::StrCat("graph g {\n", AsWindows("288", n), "  %1 = reshape(%9) {shape=[288, ", n,
                        "]} : f32[288, ", n, "]\n  %2 = param {name=\"", w_name, "\"} : f32[", m,
                        ", 288]\n  %3 = matmul(%2, %1) : f32[", m, ", ", n, "]\n  return %3\n}\n");
  };
  const Case cases[] = {
      {"as wide as it is tall", product("64", "64")},
      {"a matrix-vector product", product("64", "1")},
      {"a symbolic column count", product("64", "S")},
      {"weights that may change (training)", product("64", "5"), false},
      {"products that go to OpenBLAS", product("64", "5"), true, false},
      {"no value for the parameter", product("64", "5", "V")},
      {"too small to be a large product", R"(graph g {
  %0 = input {name="x"} : f32[1, 8, 1, 2]
  %9 = window(%0) {dilations=[1, 1], kernel=[1, 1], strides=[1, 1]} : f32[1, 8, 1, 1, 1, 2]
  %1 = reshape(%9) {shape=[8, 2]} : f32[8, 2]
  %2 = param {name="W"} : f32[64, 8]
  %3 = matmul(%2, %1) : f32[64, 2]
  return %3
})"},
      {"the weights are the rhs", R"(graph g {
  %0 = input {name="x"} : f32[5, 64]
  %1 = param {name="W"} : f32[64, 288]
  %2 = matmul(%0, %1) : f32[5, 288]
  return %2
})"},
      {"an activation, not windows, with 65 columns (a 1 x 1 convolution's input)",
       R"(graph g {
  %0 = input {name="x"} : f32[288, 65]
  %1 = param {name="W"} : f32[128, 288]
  %2 = matmul(%1, %0) : f32[128, 65]
  return %2
})"},
  };
  for (const Case& c : cases) {
    PassContext ctx;
    ctx.params["W"] = Weight({64, 288});
    if (absl::StrContains(c.text, "f32[64, 8]")) ctx.params["W"] = Weight({64, 8});
    if (absl::StrContains(c.text, "f32[128, 288]")) ctx.params["W"] = Weight({128, 288});
    ctx.params_are_constant = c.params_are_constant;
    ctx.tile_vector_bytes = c.tile_vector_bytes;
    bool changed = true;
    absl::StatusOr<std::string> out = RunPassOnText("orient_products", c.text, &ctx, &changed);
    ASSERT_TRUE(out.ok()) << c.why << ": " << out.status();
    EXPECT_FALSE(changed) << c.why;
    EXPECT_EQ(*out, ir::PrintGraph(*ir::ParseGraph(c.text))) << c.why;
    EXPECT_FALSE(ctx.params.contains("panels32(W)")) << c.why;
  }
  // The same product as the second-to-last case, as windows, does fire (so each case
  // above fails for its own reason).
  PassContext ctx;
  ctx.params["W"] = Weight({64, 288});
  ctx.tile_vector_bytes = 64;
  bool changed = false;
  ASSERT_TRUE(RunPassOnText("orient_products", product("64", "5"), &ctx, &changed).ok());
  EXPECT_TRUE(changed);
}

// A 1 x 1 convolution over a 7 x 7 map: its activation (not windows) has 49 columns, few
// enough to run turned, its weights packed as a window product's are; the product
// computes what it did.
TEST(OrientProducts, ActivationWithFewColumnsRunsTheOtherWayRound) {
  const char kPointwiseConv[] = R"(graph g {
  %0 = input {name="x"} : f32[1, 288, 49]
  %1 = param {name="W"} : f32[1, 64, 288]
  %2 = matmul(%1, %0) : f32[1, 64, 49]
  return %2
})";
  PassContext ctx;
  absl::StatusOr<std::string> out = Orient(kPointwiseConv, {1, 64, 288}, &ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"gir(graph g {
  %0 = input {name="x"} : f32[1, 288, 49]
  %1 = param {name="W"} : f32[1, 64, 288]
  %2 = param {name="panels32(W)"} : f32[1, 2, 288, 32]
  %3 = transpose(%2) {perm=[0, 2, 1, 3]} : f32[1, 288, 2, 32]
  %4 = reshape(%3) {shape=[1, 288, 64]} : f32[1, 288, 64]
  %5 = transpose(%0) {perm=[0, 2, 1]} : f32[1, 49, 288]
  %6 = matmul(%5, %4) : f32[1, 49, 64]
  %7 = transpose(%6) {perm=[0, 2, 1]} : f32[1, 64, 49]
  return %7
}
)gir");
  ExpectPanelsOfW(ctx, kPointwiseConv, *out, 64, {1, 288, 49});
}

}  // namespace
}  // namespace graphjit::compiler
