#include "compiler/passes/winograd_convolutions.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pass_test_util.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using testing::RunPassOnText;

// An imported 3 x 3 convolution as the importer writes it: the input padded by one on each
// side (zeros concatenated), its windows, the weights' product and the image reshape.
struct ConvSpec {
  int64_t n = 1, c = 16, k = 64, h = 9, w = 44;
  std::string dtype = "f32";
  int64_t stride = 1, dilation = 1;
};

std::string ConvText(const ConvSpec& s) {
  const std::string t = s.dtype;
  const int64_t hp = s.h + 2, wp = s.w + 2;
  const int64_t oh = (hp - 2 * s.dilation - 1) / s.stride + 1;
  const int64_t ow = (wp - 2 * s.dilation - 1) / s.stride + 1;
  const std::string lead = absl::StrCat(s.n, ", 1");
  const std::string x = absl::StrCat(s.n, ", ", s.c, ", ");
  return absl::StrCat("graph conv {\n", "  %0 = input {name=\"x\"} : ", t, "[", x, s.h, ", ", s.w,
                      "]\n", "  %1 = full {value=0.0} : ", t, "[", x, "1, ", s.w, "]\n",
                      "  %2 = concat(%1, %0, %1) {axis=2} : ", t, "[", x, hp, ", ", s.w, "]\n",
                      "  %3 = full {value=0.0} : ", t, "[", x, hp, ", 1]\n",
                      "  %4 = concat(%3, %2, %3) {axis=3} : ", t, "[", x, hp, ", ", wp, "]\n",
                      "  %5 = window(%4) {dilations=[", s.dilation, ", ", s.dilation,
                      "], kernel=[3, 3], strides=[", s.stride, ", ", s.stride, "]} : ", t, "[", x,
                      "3, 3, ", oh, ", ", ow, "]\n", "  %6 = reshape(%5) {shape=[", lead, ", ",
                      s.c * 9, ", ", oh * ow, "]} : ", t, "[", lead, ", ", s.c * 9, ", ", oh * ow,
                      "]\n", "  %7 = param {name=\"w\"} : ", t, "[1, ", s.k, ", ", s.c * 9, "]\n",
                      "  %8 = matmul(%7, %6) : ", t, "[", lead, ", ", s.k, ", ", oh * ow, "]\n",
                      "  %9 = reshape(%8) {shape=[", s.n, ", ", s.k, ", ", oh, ", ", ow, "]} : ", t,
                      "[", s.n, ", ", s.k, ", ", oh, ", ", ow, "]\n", "  return %9\n}\n");
}

// Values of `shape` that differ from element to element (no symmetry hides a mix-up).
Tensor Values(ir::DType dtype, std::vector<int64_t> shape, double scale, int seed) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  std::vector<double> v(count);
  for (int64_t i = 0; i < count; ++i) v[i] = scale * std::sin(0.37 * static_cast<double>(i) + seed);
  return *Tensor::FromDoubles(dtype, shape, v);
}

PassContext ContextFor(const ConvSpec& s) {
  PassContext ctx;
  ctx.tile_vector_bytes = 64;
  const ir::DType dtype = s.dtype == "f64" ? ir::DType::kF64 : ir::DType::kF32;
  ctx.params["w"] = Values(dtype, {1, s.k, s.c * 9}, 0.2, 1);
  return ctx;
}

// The rewritten graph computes the convolution: max |difference| / max |direct| on an input.
double RelativeDifference(const ConvSpec& s, const std::string& before, const std::string& after,
                          const PassContext& ctx) {
  const ir::DType dtype = s.dtype == "f64" ? ir::DType::kF64 : ir::DType::kF32;
  runtime::TensorMap in = {{"x", Values(dtype, {s.n, s.c, s.h, s.w}, 1.0, 7)}};
  absl::StatusOr<std::vector<Tensor>> want =
      runtime::Interpret(*ir::ParseGraph(before), in, ctx.params);
  absl::StatusOr<std::vector<Tensor>> got =
      runtime::Interpret(*ir::ParseGraph(after), in, ctx.params);
  EXPECT_TRUE(want.ok() && got.ok()) << want.status() << got.status();
  if (!want.ok() || !got.ok()) return 1;
  EXPECT_EQ((*got)[0].shape(), (*want)[0].shape());
  double scale = 0;
  for (double v : (*want)[0].ToDoubles()) scale = std::max(scale, std::abs(v));
  return runtime::MaxAbsDiff((*want)[0], (*got)[0]) / scale;
}

// The pass on `s`'s convolution with `ctx`: the result's text, and whether it changed.
std::string Rewrite(const ConvSpec& s, PassContext* ctx, bool* changed) {
  absl::StatusOr<std::string> out =
      RunPassOnText("winograd_convolutions", ConvText(s), ctx, changed);
  EXPECT_TRUE(out.ok()) << out.status() << "\n" << ConvText(s);
  return out.ok() ? *out : "";
}

// Rows 9 (not a multiple of 4: three zero rows below, sliced off after) and columns 44;
// the transformed weights are G g per kernel column: row 0 is g's first row / 4 and row 5
// its last, exactly.
TEST(WinogradConvolutions, ThreeByThreeConvolutionComputesRowsInTilesOfFour) {
  const ConvSpec s;
  PassContext ctx = ContextFor(s);
  bool changed = false;
  const std::string out = Rewrite(s, &ctx, &changed);
  EXPECT_TRUE(changed);
  EXPECT_TRUE(absl::StrContains(out, "kernel=[6, 1], strides=[4, 1]")) << out;
  EXPECT_TRUE(absl::StrContains(out, "full {value=0.0} : f32[1, 16, 3, 46]")) << out;
  EXPECT_TRUE(absl::StrContains(out, "param {name=\"winograd(w)\"} : f32[6, 1, 64, 48]")) << out;
  ASSERT_TRUE(ctx.params.contains("winograd(w)"));
  const std::vector<double> w = ctx.params.at("w").ToDoubles();
  const std::vector<double> u = ctx.params.at("winograd(w)").ToDoubles();
  ASSERT_EQ(u.size(), 6u * 64 * 48);
  for (int k = 0; k < 64; ++k) {
    for (int c = 0; c < 16; ++c) {
      for (int kw = 0; kw < 3; ++kw) {
        const int col = c * 3 + kw, first = (k * 16 + c) * 9 + kw;
        EXPECT_EQ(u[k * 48 + col], static_cast<float>(w[first] / 4));
        EXPECT_EQ(u[(5 * 64 + k) * 48 + col], w[first + 6]);
      }
    }
  }
  EXPECT_LT(RelativeDifference(s, ConvText(s), out, ctx), 1e-5);
}

// Images in a batch, a side that is a multiple of 4, and f64 (whose sums agree to ~1e-15).
TEST(WinogradConvolutions, BatchesAndDoublesAgreeWithTheDirectProduct) {
  for (const ConvSpec& s : {ConvSpec{.n = 3, .h = 8, .w = 24},
                            ConvSpec{.c = 17, .k = 65, .h = 13, .w = 33, .dtype = "f64"}}) {
    SCOPED_TRACE(ConvText(s));
    PassContext ctx = ContextFor(s);
    bool changed = false;
    const std::string out = Rewrite(s, &ctx, &changed);
    EXPECT_TRUE(changed);
    EXPECT_LT(RelativeDifference(s, ConvText(s), out, ctx), s.dtype == "f64" ? 1e-13 : 1e-5);
  }
}

// Must not fire: strides or dilations other than 1, too few channels, rows, columns or
// columns per transformed weight, weights not known now, weights that change (training),
// products that do not run as tiles.
TEST(WinogradConvolutions, LeavesOtherConvolutionsAlone) {
  struct Case {
    const char* why;
    ConvSpec spec;
  };
  const Case cases[] = {
      {"stride 2", ConvSpec{.h = 17, .w = 17, .stride = 2}},
      {"dilation 2", ConvSpec{.h = 11, .w = 11, .dilation = 2}},
      {"8 input channels", ConvSpec{.c = 8}},
      {"8 output channels", ConvSpec{.k = 8}},
      {"32 output channels (densenet's)", ConvSpec{.k = 32}},
      {"7 rows", ConvSpec{.h = 7, .w = 100}},
      {"7 columns", ConvSpec{.h = 80, .w = 7}},
      {"2 tile rows of 15 columns", ConvSpec{.h = 8, .w = 15}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.why);
    PassContext ctx = ContextFor(c.spec);
    bool changed = true;
    Rewrite(c.spec, &ctx, &changed);
    EXPECT_FALSE(changed);
  }
  const ConvSpec s;
  PassContext unknown = ContextFor(s);
  unknown.params.clear();
  PassContext training = ContextFor(s);
  training.params_are_constant = false;
  PassContext blas = ContextFor(s);
  blas.tile_vector_bytes = 0;
  for (PassContext* ctx : {&unknown, &training, &blas}) {
    bool changed = true;
    Rewrite(s, ctx, &changed);
    EXPECT_FALSE(changed);
    EXPECT_FALSE(ctx->params.contains("winograd(w)"));
  }
}

}  // namespace
}  // namespace graphjit::compiler
