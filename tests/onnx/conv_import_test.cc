// Conv, MaxPool and AveragePool at import: results against direct loops written here
// (grouped, strided, dilated, padded, with a symbolic width), small pools as their taps (a
// max pool's maximums as a tree), and the refusals that name the node and what was
// expected.
#include <cmath>
#include <limits>
#include <random>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "onnx/import.h"
#include "runtime/interpreter.h"
#include "tests/onnx/model_builder.h"

namespace graphjit::onnx {
namespace {

using testing::F32Tensor;
using ::testing::HasSubstr;
using testing::ModelBuilder;
using testing::SetInt;
using testing::SetInts;
using testing::SetString;

constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;

std::vector<float> RandomFloats(int64_t n, std::mt19937_64& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> v(n);
  for (float& e : v) e = normal(rng);
  return v;
}

// NCHW tensors, row-major.
struct Image {
  int64_t n, c, h, w;
  std::vector<float> v;
  float at(int64_t a, int64_t b, int64_t y, int64_t x) const {
    return v[((a * c + b) * h + y) * w + x];
  }
};

std::vector<double> RunModel(const ModelBuilder& m, const Image& x) {
  absl::StatusOr<ImportedModel> model = ImportFromBytes(m.Bytes(), "conv.onnx");
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return {};
  runtime::TensorMap in = {
      {"x", *runtime::Tensor::FromDoubles(ir::DType::kF32, {x.n, x.c, x.h, x.w},
                                          std::vector<double>(x.v.begin(), x.v.end()))}};
  absl::StatusOr<std::vector<runtime::Tensor>> out =
      runtime::Interpret(model->graph, in, model->params, {{"W", x.w}});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0].ToDoubles() : std::vector<double>{};
}

// Grouped (group 2 of 2 channels each) and depthwise (a filter per channel, which the
// importer lowers as a product and a sum over the window instead of a matmul).
class GroupedConv : public ::testing::TestWithParam<std::pair<int64_t, int64_t>> {};

INSTANTIATE_TEST_SUITE_P(OnnxConv, GroupedConv,
                         ::testing::Values(std::pair<int64_t, int64_t>{2, 6},
                                           std::pair<int64_t, int64_t>{4, 4}));

TEST_P(GroupedConv, StridedDilatedPaddedConvMatchesLoops) {
  std::mt19937_64 rng(7);
  const auto [group, m_out] = GetParam();
  const int64_t c = 4, kh = 3, kw = 2, sh = 2, sw = 1, dh = 1, dw = 2;
  const int64_t pt = 1, pl = 2, pb = 0, pr = 1;
  Image x{2, c, 7, 9, {}};
  x.v = RandomFloats(x.n * c * x.h * x.w, rng);
  std::vector<float> wt = RandomFloats(m_out * (c / group) * kh * kw, rng);
  std::vector<float> bias = RandomFloats(m_out, rng);
  ModelBuilder m;
  m.Input("x", kF32, {int64_t{2}, c, int64_t{7}, std::string("W")}).Output("y", kF32);
  m.Initializer(F32Tensor("w", {m_out, c / group, kh, kw}, wt));
  m.Initializer(F32Tensor("b", {m_out}, bias));
  ::onnx::NodeProto* conv = m.Node("Conv", {"x", "w", "b"}, {"y"}, "conv");
  SetInt(conv, "group", group);
  SetInts(conv, "strides", {sh, sw});
  SetInts(conv, "dilations", {dh, dw});
  SetInts(conv, "pads", {pt, pl, pb, pr});
  std::vector<double> got = RunModel(m, x);
  const int64_t oh = (x.h + pt + pb - dh * (kh - 1) - 1) / sh + 1;
  const int64_t ow = (x.w + pl + pr - dw * (kw - 1) - 1) / sw + 1;
  ASSERT_EQ(got.size(), static_cast<size_t>(x.n * m_out * oh * ow));
  const int64_t cg = c / group, mg = m_out / group;
  for (int64_t n = 0; n < x.n; ++n) {
    for (int64_t mo = 0; mo < m_out; ++mo) {
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t xo = 0; xo < ow; ++xo) {
          double want = bias[mo];
          for (int64_t ci = 0; ci < cg; ++ci) {
            for (int64_t i = 0; i < kh; ++i) {
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t yy = y * sh + i * dh - pt, xx = xo * sw + j * dw - pl;
                if (yy < 0 || yy >= x.h || xx < 0 || xx >= x.w) continue;
                want += static_cast<double>(x.at(n, (mo / mg) * cg + ci, yy, xx)) *
                        wt[((mo * cg + ci) * kh + i) * kw + j];
              }
            }
          }
          EXPECT_NEAR(got[((n * m_out + mo) * oh + y) * ow + xo], want, 1e-4)
              << n << " " << mo << " " << y << " " << xo;
        }
      }
    }
  }
}

// ConvTranspose against its definition (each input pixel adds w[c, m] times itself to the
// block at its position times the stride, the pads cropped from the full output): strides
// equal to the kernel (no overlap: imported as a product rearranged block by block), with
// pads and output_padding and a symbolic width, and an overlapping one (the spread
// convolution) for comparison.
TEST(OnnxConv, ConvTransposeMatchesLoops) {
  struct Case {
    int64_t kh, kw, sh, sw, pt, pl, pb, pr, oph, opw;
  };
  for (const Case& t : {Case{2, 2, 2, 2, 0, 0, 0, 0, 0, 0}, Case{2, 3, 2, 3, 1, 0, 0, 2, 1, 0},
                        Case{3, 3, 2, 2, 1, 1, 1, 1, 1, 1}}) {
    SCOPED_TRACE(::testing::Message()
                 << "kernel " << t.kh << "x" << t.kw << " strides " << t.sh << "x" << t.sw);
    std::mt19937_64 rng(11);
    const int64_t c = 3, m_out = 5;
    Image x{2, c, 4, 5, {}};
    x.v = RandomFloats(x.n * c * x.h * x.w, rng);
    std::vector<float> wt = RandomFloats(c * m_out * t.kh * t.kw, rng);
    std::vector<float> bias = RandomFloats(m_out, rng);
    ModelBuilder m;
    m.Input("x", kF32, {int64_t{2}, c, int64_t{4}, std::string("W")}).Output("y", kF32);
    m.Initializer(F32Tensor("w", {c, m_out, t.kh, t.kw}, wt));
    m.Initializer(F32Tensor("b", {m_out}, bias));
    ::onnx::NodeProto* node = m.Node("ConvTranspose", {"x", "w", "b"}, {"y"}, "up");
    SetInts(node, "strides", {t.sh, t.sw});
    SetInts(node, "pads", {t.pt, t.pl, t.pb, t.pr});
    SetInts(node, "output_padding", {t.oph, t.opw});
    const int64_t full_h = (x.h - 1) * t.sh + t.kh + t.oph,
                  full_w = (x.w - 1) * t.sw + t.kw + t.opw;
    const int64_t oh = full_h - t.pt - t.pb, ow = full_w - t.pl - t.pr;
    std::vector<double> want(x.n * m_out * oh * ow);
    for (int64_t n = 0; n < x.n; ++n) {
      for (int64_t o = 0; o < m_out; ++o) {
        for (int64_t i = 0; i < oh * ow; ++i) want[(n * m_out + o) * oh * ow + i] = bias[o];
        for (int64_t ch = 0; ch < c; ++ch) {
          for (int64_t i = 0; i < x.h; ++i) {
            for (int64_t j = 0; j < x.w; ++j) {
              for (int64_t a = 0; a < t.kh; ++a) {
                for (int64_t b = 0; b < t.kw; ++b) {
                  const int64_t yy = i * t.sh + a - t.pt, xx = j * t.sw + b - t.pl;
                  if (yy < 0 || yy >= oh || xx < 0 || xx >= ow) continue;
                  want[((n * m_out + o) * oh + yy) * ow + xx] +=
                      double{x.at(n, ch, i, j)} * wt[((ch * m_out + o) * t.kh + a) * t.kw + b];
                }
              }
            }
          }
        }
      }
    }
    const std::vector<double> got = RunModel(m, x);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << i;
    // No overlap: a product, no spread input and no windows.
    absl::StatusOr<ImportedModel> model = ImportFromBytes(m.Bytes(), "conv.onnx");
    ASSERT_TRUE(model.ok()) << model.status();
    const bool disjoint = t.kh == t.sh && t.kw == t.sw;
    EXPECT_EQ(absl::StrContains(ir::PrintGraph(model->graph), "window("), !disjoint);
  }
}

TEST(OnnxConv, PoolsMatchLoops) {
  std::mt19937_64 rng(8);
  Image x{1, 2, 5, 6, {}};
  x.v = RandomFloats(x.n * x.c * x.h * x.w, rng);
  const int64_t k = 3, s = 2, p = 1;
  for (const std::string op : {"MaxPool", "AveragePool"}) {
    for (int64_t include_pad : {0, 1}) {
      SCOPED_TRACE(absl::StrCat(op, " count_include_pad=", include_pad));
      ModelBuilder m;
      m.Input("x", kF32, {int64_t{1}, int64_t{2}, int64_t{5}, std::string("W")}).Output("y", kF32);
      ::onnx::NodeProto* pool = m.Node(op, {"x"}, {"y"}, "pool");
      SetInts(pool, "kernel_shape", {k, k});
      SetInts(pool, "strides", {s, s});
      SetInts(pool, "pads", {p, p, p, p});
      if (op == "AveragePool") SetInt(pool, "count_include_pad", include_pad);
      std::vector<double> got = RunModel(m, x);
      const int64_t oh = (x.h + 2 * p - k) / s + 1, ow = (x.w + 2 * p - k) / s + 1;
      ASSERT_EQ(got.size(), static_cast<size_t>(x.c * oh * ow));
      for (int64_t c = 0; c < x.c; ++c) {
        for (int64_t y = 0; y < oh; ++y) {
          for (int64_t xo = 0; xo < ow; ++xo) {
            double best = -std::numeric_limits<double>::infinity(), sum = 0;
            int count = 0;
            for (int64_t i = 0; i < k; ++i) {
              for (int64_t j = 0; j < k; ++j) {
                const int64_t yy = y * s + i - p, xx = xo * s + j - p;
                if (yy < 0 || yy >= x.h || xx < 0 || xx >= x.w) continue;
                best = std::max<double>(best, x.at(0, c, yy, xx));
                sum += x.at(0, c, yy, xx);
                ++count;
              }
            }
            const double want = op == "MaxPool" ? best : sum / (include_pad ? k * k : count);
            EXPECT_NEAR(got[(c * oh + y) * ow + xo], want, 1e-5) << c << " " << y << " " << xo;
          }
        }
      }
    }
  }
}

// A 3 x 3 max pool is a tree of maximums (depth 4, not a chain of 8: each maximum is a
// dependent sequence of instructions where NaN must win), and a NaN in a window still
// makes that window's output NaN.
TEST(OnnxConv, MaxPoolIsATreeOfMaximumsInWhichNaNWins) {
  ModelBuilder m;
  m.Input("x", kF32, {int64_t{1}, int64_t{1}, int64_t{4}, int64_t{5}}).Output("y", kF32);
  SetInts(m.Node("MaxPool", {"x"}, {"y"}, "pool"), "kernel_shape", {3, 3});
  absl::StatusOr<ImportedModel> model = ImportFromBytes(m.Bytes(), "pool.onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  const ir::Graph& g = model->graph;
  std::vector<int> depth(g.num_nodes(), 0);
  int deepest = 0, maximums = 0;
  for (ir::ValueId id = 0; id < g.num_nodes(); ++id) {
    if (g.node(id).op != ir::OpCode::kMaximum) continue;
    ++maximums;
    for (ir::ValueId v : g.node(id).operands) depth[id] = std::max(depth[id], depth[v] + 1);
    deepest = std::max(deepest, depth[id]);
  }
  EXPECT_EQ(maximums, 8) << ir::PrintGraph(g);
  EXPECT_EQ(deepest, 4) << ir::PrintGraph(g);
  std::vector<double> x(20);
  for (int i = 0; i < 20; ++i) x[i] = std::sin(1.3 * i);
  x[5 * 1 + 4] = std::numeric_limits<double>::quiet_NaN();  // row 1, column 4
  absl::StatusOr<std::vector<runtime::Tensor>> out = runtime::Interpret(
      g, {{"x", *runtime::Tensor::FromDoubles(ir::DType::kF32, {1, 1, 4, 5}, x)}}, model->params);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> y = (*out)[0].ToDoubles();
  ASSERT_EQ(y.size(), 6u);  // 2 x 3
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 3; ++c) {
      const bool holds_nan = c == 2;  // windows over columns 2-4 (rows 0-2 and 1-3)
      EXPECT_EQ(std::isnan(y[r * 3 + c]), holds_nan) << r << ", " << c;
    }
  }
}

// An unpadded average pool of a small window (densenet's 2 x 2 / 2) is its taps added and
// divided, no reduction; a 5 x 5 window (25 taps) stays a mean over the window. Both
// match direct loops.
TEST(OnnxConv, SmallAveragePoolsAreTheirTapsSummed) {
  std::mt19937_64 rng(9);
  Image x{1, 3, 6, 10, {}};
  x.v = RandomFloats(x.n * x.c * x.h * x.w, rng);
  for (const int64_t k : {2, 5}) {
    SCOPED_TRACE(absl::StrCat("kernel ", k));
    const int64_t s = k == 2 ? 2 : 1;
    ModelBuilder m;
    m.Input("x", kF32, {int64_t{1}, int64_t{3}, int64_t{6}, std::string("W")}).Output("y", kF32);
    ::onnx::NodeProto* pool = m.Node("AveragePool", {"x"}, {"y"}, "pool");
    SetInts(pool, "kernel_shape", {k, k});
    SetInts(pool, "strides", {s, s});
    absl::StatusOr<ImportedModel> model = ImportFromBytes(m.Bytes(), "pool.onnx");
    ASSERT_TRUE(model.ok()) << model.status();
    bool reduces = false;
    for (ir::ValueId id = 0; id < model->graph.num_nodes(); ++id) {
      const ir::OpCode op = model->graph.node(id).op;
      reduces |= op == ir::OpCode::kReduceMean || op == ir::OpCode::kReduceSum;
    }
    EXPECT_EQ(reduces, k == 5) << ir::PrintGraph(model->graph);
    std::vector<double> got = RunModel(m, x);
    const int64_t oh = (x.h - k) / s + 1, ow = (x.w - k) / s + 1;
    ASSERT_EQ(got.size(), static_cast<size_t>(x.c * oh * ow));
    for (int64_t c = 0; c < x.c; ++c) {
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t xo = 0; xo < ow; ++xo) {
          double sum = 0;
          for (int64_t i = 0; i < k; ++i) {
            for (int64_t j = 0; j < k; ++j) sum += x.at(0, c, y * s + i, xo * s + j);
          }
          EXPECT_NEAR(got[(c * oh + y) * ow + xo], sum / (k * k), 1e-6) << c << " " << y;
        }
      }
    }
  }
}

absl::Status ImportStatus(const ModelBuilder& m) {
  return ImportFromBytes(m.Bytes(), "bad.onnx").status();
}

TEST(OnnxConv, BadAttributesAreRefusedNamingTheNode) {
  auto conv_model = [](int64_t weight_channels) {
    ModelBuilder m;
    m.Input("x", kF32, {int64_t{1}, int64_t{4}, int64_t{5}, std::string("W")}).Output("y", kF32);
    m.Initializer(
        F32Tensor("w", {4, weight_channels, 1, 1}, std::vector<float>(4 * weight_channels)));
    return m;
  };
  {
    ModelBuilder m = conv_model(2);
    SetInt(m.Node("Conv", {"x", "w"}, {"y"}, "c1"), "group", 3);
    absl::Status s = ImportStatus(m);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("node 'c1' (Conv)"));
    EXPECT_THAT(s.message(), HasSubstr("group 3"));
  }
  {
    ModelBuilder m = conv_model(4);
    SetString(m.Node("Conv", {"x", "w"}, {"y"}, "c2"), "auto_pad", "SOMETIMES");
    absl::Status s = ImportStatus(m);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("auto_pad 'SOMETIMES'"));
  }
  {
    ModelBuilder m = conv_model(4);
    SetString(m.Node("ConvTranspose", {"x", "w"}, {"y"}, "t1"), "auto_pad", "SOMETIMES");
    absl::Status s = ImportStatus(m);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("node 't1' (ConvTranspose)"));
    EXPECT_THAT(s.message(), HasSubstr("auto_pad 'SOMETIMES'"));
  }
  {
    ModelBuilder m = conv_model(4);  // SAME needs the input's size: W is symbolic
    SetString(m.Node("ConvTranspose", {"x", "w"}, {"y"}, "t2"), "auto_pad", "SAME_LOWER");
    absl::Status s = ImportStatus(m);
    EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
    EXPECT_THAT(s.message(), HasSubstr("SAME padding with a symbolic input dim"));
  }
  {
    ModelBuilder m = conv_model(4);
    ::onnx::NodeProto* n = m.Node("Conv", {"x", "w"}, {"y"}, "c3");
    SetString(n, "auto_pad", "SAME_UPPER");
    SetInts(n, "strides", {2, 2});
    absl::Status s = ImportStatus(m);
    EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
    EXPECT_THAT(s.message(), HasSubstr("symbolic dim W"));
  }
  {
    ModelBuilder m = conv_model(4);
    SetInts(m.Node("Conv", {"x", "w"}, {"y"}, "c4"), "kernel_shape", {3, 3});
    absl::Status s = ImportStatus(m);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("does not match the weights' [1, 1]"));
  }
  {
    ModelBuilder m;
    m.Input("x", kF32, {int64_t{1}, int64_t{1}, int64_t{2}, int64_t{2}}).Output("y", kF32);
    SetInts(m.Node("MaxPool", {"x"}, {"y"}, "p1"), "kernel_shape", {3, 3});
    absl::Status s = ImportStatus(m);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("node 'p1' (MaxPool)"));
    EXPECT_THAT(s.message(), HasSubstr("shorter than the window's span 3"));
  }
  {
    ModelBuilder m;
    m.Input("x", kF32, {int64_t{1}, int64_t{1}, int64_t{4}, int64_t{4}}).Output("y", kF32);
    m.Output("i", ::onnx::TensorProto::INT64);
    SetInts(m.Node("MaxPool", {"x"}, {"y", "i"}, "p2"), "kernel_shape", {2, 2});
    absl::Status s = ImportStatus(m);
    EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
    EXPECT_THAT(s.message(), HasSubstr("Indices"));
  }
}

}  // namespace
}  // namespace graphjit::onnx
