#include "compiler/passes/winograd_convolutions.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/passes/rewriter.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

using ir::OpCode;

// F(4, 3): 4 outputs of a 3-tap filter from 6 inputs (Lavin and Gray, "Fast Algorithms
// for Convolutional Neural Networks", 2015): y = AT [(G g) * (BT d)].
constexpr int kRows = 4;               // output rows per tile
constexpr int kAlpha = kRows + 3 - 1;  // input rows per tile, products per tile
constexpr double kBT[kAlpha][kAlpha] = {
    {4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
    {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1},
};
constexpr double kG[kAlpha][3] = {
    {1.0 / 4, 0, 0},
    {-1.0 / 6, -1.0 / 6, -1.0 / 6},
    {-1.0 / 6, 1.0 / 6, -1.0 / 6},
    {1.0 / 24, 1.0 / 12, 1.0 / 6},
    {1.0 / 24, -1.0 / 12, 1.0 / 6},
    {0, 0, 1},
};
constexpr double kAT[kRows][kAlpha] = {
    {1, 1, 1, 1, 1, 0},
    {0, 1, -1, 2, -2, 0},
    {0, 1, 1, 4, 4, 0},
    {0, 1, -1, 8, -8, 1},
};

// Below these the transforms cost more than the multiplies saved (resnet18 and the
// hand-built layers of tests/compiler/passes/winograd_convolutions_test.cc).
constexpr int64_t kMinChannels = 16;  // input channels
constexpr int64_t kMinSide = 8;
// The input transform costs per input channel and position, the multiplies saved per
// input and output channel: with few output channels the transforms cost more than the
// halved product saves (densenet121's 128 -> 32 at 56 x 56: 0.54 ms of input transforms,
// 2.0 ms product and 0.37 ms output transform against 1.5 ms direct).
constexpr int64_t kMinOutputChannels = 64;
// The transformed weights are twice the direct ones (6 rows per 3 taps), so each must serve
// enough columns (tile rows x width x images) to pay for streaming it: resnet50's 14 x 14
// convolutions (56 columns, 256 channels, 4.7 MB transformed) measured ~10% faster, its
// 7 x 7 ones (14 columns, 512 channels, 18.9 MB) no faster.
constexpr int64_t kMinColumns = 32;

// A convolution the pass rewrites: y = matmul(w, reshape(window(p))).
struct Conv {
  ValueId w, p;
  int64_t n, c, k, oh, ow;
};

bool AllOnes(const std::vector<int64_t>& dims) {
  for (int64_t d : dims) {
    if (d != 1) return false;
  }
  return true;
}

std::optional<Conv> Match(const ir::Graph& g, ValueId id, const PassContext& ctx) {
  const ir::Node& m = g.node(id);
  if (m.op != OpCode::kMatmul) return std::nullopt;
  if (m.type.dtype != ir::DType::kF32 && m.type.dtype != ir::DType::kF64) return std::nullopt;
  if (g.node(m.operands[0]).type.dtype != m.type.dtype) return std::nullopt;
  const std::optional<std::vector<int64_t>> ws = KnownParamDims(g, m.operands[0], ctx);
  if (!ws || ws->size() < 2) return std::nullopt;
  ValueId rhs = m.operands[1];
  const std::optional<std::vector<int64_t>> rs = ConstantDims(g.type(rhs).shape);
  while (g.node(rhs).op == OpCode::kReshape) rhs = g.node(rhs).operands[0];
  const ir::Node& win = g.node(rhs);
  if (win.op != OpCode::kWindow || !rs || rs->size() < 2) return std::nullopt;
  using Ints = std::vector<int64_t>;
  if (win.attrs.Get<Ints>("kernel") != Ints{3, 3} || win.attrs.Get<Ints>("strides") != Ints{1, 1} ||
      win.attrs.Get<Ints>("dilations") != Ints{1, 1}) {
    return std::nullopt;
  }
  const ValueId p = win.operands[0];
  std::optional<std::vector<int64_t>> ps = ConstantDims(g.type(p).shape);
  if (!ps || ps->size() != 4) return std::nullopt;
  Conv conv{.w = m.operands[0],
            .p = p,
            .n = (*ps)[0],
            .c = (*ps)[1],
            .k = (*ws)[ws->size() - 2],
            .oh = (*ps)[2] - 2,
            .ow = (*ps)[3] - 2};
  // The weights' rows are the output channels, their columns (c, kh, kw) as the patches'
  // rows; the patches' batch dims hold the images.
  if (!AllOnes(Ints(ws->begin(), ws->end() - 2)) || ws->back() != conv.c * 9) return std::nullopt;
  const Ints lead(rs->begin(), rs->end() - 2);
  int64_t images = 1;
  for (int64_t d : lead) images *= d;
  if (images != conv.n || (*rs)[rs->size() - 2] != conv.c * 9 || rs->back() != conv.oh * conv.ow) {
    return std::nullopt;
  }
  const int64_t columns = (conv.oh + kRows - 1) / kRows * conv.ow * conv.n;
  if (conv.k < kMinOutputChannels || conv.c < kMinChannels || conv.oh < kMinSide ||
      conv.ow < kMinSide || columns < kMinColumns) {
    return std::nullopt;
  }
  return conv;
}

bool Applies(const ir::Graph& g, ValueId id, const PassContext& ctx) {
  return Match(g, id, ctx).has_value();
}

// U[x, 0, k, c * 3 + kw] = sum_kh G[x, kh] w[k, c * 9 + kh * 3 + kw], in double.
absl::StatusOr<runtime::Tensor> TransformWeights(const runtime::Tensor& w, const Conv& conv) {
  const int64_t count = conv.k * conv.c * 9;
  std::vector<double> g(count);
  for (int64_t i = 0; i < count; ++i) {
    g[i] = w.dtype() == ir::DType::kF32 ? static_cast<const float*>(w.raw_data())[i]
                                        : static_cast<const double*>(w.raw_data())[i];
  }
  const int64_t cols = conv.c * 3;
  std::vector<double> u(kAlpha * conv.k * cols);
  for (int x = 0; x < kAlpha; ++x) {
    for (int64_t k = 0; k < conv.k; ++k) {
      for (int64_t c = 0; c < conv.c; ++c) {
        for (int kw = 0; kw < 3; ++kw) {
          double sum = 0;
          for (int kh = 0; kh < 3; ++kh) sum += kG[x][kh] * g[(k * conv.c + c) * 9 + kh * 3 + kw];
          u[(x * conv.k + k) * cols + c * 3 + kw] = sum;
        }
      }
    }
  }
  return runtime::Tensor::FromDoubles(w.dtype(), {kAlpha, 1, conv.k, cols}, u);
}

// sum_i coefs[i] * values[i] over the nonzero coefficients, with adds and subtracts where
// a coefficient is +-1.
ValueId Combine(GraphRewriter* rw, absl::Span<const double> coefs,
                const std::vector<ValueId>& values, ir::DType dtype) {
  ValueId acc = ir::kInvalidValue;
  for (size_t i = 0; i < values.size(); ++i) {
    const double c = coefs[i];
    if (c == 0) continue;
    const double mag = c < 0 ? -c : c;
    const ValueId term =
        mag == 1 ? values[i] : rw->Emit(OpCode::kMul, {values[i], rw->Scalar(mag, dtype)});
    if (acc == ir::kInvalidValue) {
      acc = c < 0 ? rw->Emit(OpCode::kNeg, {term}) : term;
    } else {
      acc = rw->Emit(c < 0 ? OpCode::kSub : OpCode::kAdd, {acc, term});
    }
  }
  return acc;
}

// Rows [index, index + 1) of `v` along `axis`, reshaped to `shape`.
ValueId Row(GraphRewriter* rw, ValueId v, int64_t axis, int64_t index, ir::Shape shape) {
  const ValueId s = rw->Emit(
      OpCode::kSlice, {v},
      ir::Attrs{{"axis", axis}, {"start", ir::SymExpr(index)}, {"end", ir::SymExpr(index + 1)}});
  return rw->Emit(OpCode::kReshape, {s}, ir::Attrs{{"shape", std::move(shape)}});
}

absl::StatusOr<ValueId> Rewrite(GraphRewriter* rw, const ir::Node& m, const Conv& conv,
                                PassContext* ctx) {
  using D = ir::SymExpr;
  const ir::DType dtype = m.type.dtype;
  const ir::Graph& g = rw->source();
  const std::string& w_name = g.node(conv.w).name();
  const std::string u_name = absl::StrCat("winograd(", w_name, ")");
  if (!ctx->params.contains(u_name)) {
    GJ_ASSIGN_OR_RETURN(ctx->params[u_name], TransformWeights(ctx->params.at(w_name), conv));
  }
  const int64_t tiles = (conv.oh + kRows - 1) / kRows, wp = conv.ow + 2;
  // Zero rows below the image so that every tile has its 6 input rows.
  ValueId p = rw->Get(conv.p);
  if (const int64_t extra = tiles * kRows - conv.oh; extra > 0) {
    const ValueId zeros =
        rw->Emit(OpCode::kFull, std::vector<ValueId>{},
                 ir::Attrs{{"value", 0.0},
                           {"dtype", dtype},
                           {"shape", ir::Shape{D(conv.n), D(conv.c), D(extra), D(wp)}}});
    p = rw->Emit(OpCode::kConcat, {p, zeros}, ir::Attrs{{"axis", int64_t{2}}});
  }
  const ValueId d = rw->Emit(OpCode::kWindow, {p},
                             ir::Attrs{{"kernel", std::vector<int64_t>{kAlpha, 1}},
                                       {"strides", std::vector<int64_t>{kRows, 1}},
                                       {"dilations", std::vector<int64_t>{1, 1}}});
  std::vector<ValueId> rows;
  for (int a = 0; a < kAlpha; ++a) {
    rows.push_back(Row(rw, d, 2, a, {D(conv.n), D(conv.c), D(tiles), D(wp)}));
  }
  std::vector<ValueId> parts;
  for (int x = 0; x < kAlpha; ++x) {
    const ValueId v = Combine(rw, kBT[x], rows, dtype);
    parts.push_back(
        rw->Emit(OpCode::kReshape, {v},
                 ir::Attrs{{"shape", ir::Shape{D(1), D(conv.n), D(conv.c), D(tiles), D(wp)}}}));
  }
  const ValueId v = rw->Emit(OpCode::kConcat, parts, ir::Attrs{{"axis", int64_t{0}}});
  const ValueId patches = rw->Emit(OpCode::kWindow, {v},
                                   ir::Attrs{{"kernel", std::vector<int64_t>{1, 3}},
                                             {"strides", std::vector<int64_t>{1, 1}},
                                             {"dilations", std::vector<int64_t>{1, 1}}});
  const int64_t columns = tiles * conv.ow;
  const ValueId b =
      rw->Emit(OpCode::kReshape, {patches},
               ir::Attrs{{"shape", ir::Shape{D(kAlpha), D(conv.n), D(conv.c * 3), D(columns)}}});
  const ValueId u =
      rw->Emit(OpCode::kParam, std::vector<ValueId>{},
               ir::Attrs{{"name", u_name},
                         {"dtype", dtype},
                         {"shape", ir::Shape{D(kAlpha), D(1), D(conv.k), D(conv.c * 3)}}});
  const ValueId product = rw->Emit(OpCode::kMatmul, {u, b});
  std::vector<ValueId> sums;
  for (int x = 0; x < kAlpha; ++x) {
    sums.push_back(Row(rw, product, 0, x, {D(conv.n), D(conv.k), D(tiles), D(1), D(conv.ow)}));
  }
  std::vector<ValueId> outs;
  for (int r = 0; r < kRows; ++r) outs.push_back(Combine(rw, kAT[r], sums, dtype));
  ValueId y = rw->Emit(OpCode::kConcat, outs, ir::Attrs{{"axis", int64_t{3}}});
  y = rw->Emit(OpCode::kReshape, {y},
               ir::Attrs{{"shape", ir::Shape{D(conv.n), D(conv.k), D(tiles * kRows), D(conv.ow)}}});
  if (tiles * kRows != conv.oh) {
    y = rw->Emit(OpCode::kSlice, {y},
                 ir::Attrs{{"axis", int64_t{2}}, {"start", D(0)}, {"end", D(conv.oh)}});
  }
  return rw->Emit(OpCode::kReshape, {y}, ir::Attrs{{"shape", m.type.shape}});
}

}  // namespace

absl::StatusOr<bool> WinogradConvolutions(ir::Graph* graph, PassContext* ctx) {
  if (!ctx->params_are_constant || ctx->tile_vector_bytes <= 0) return false;
  const ir::Graph& g = *graph;
  bool any = false;
  for (ValueId id = 0; id < g.num_nodes() && !any; ++id) any = Applies(g, id, *ctx);
  if (!any) return false;
  GraphRewriter rw(g);
  for (ValueId id = 0; id < g.num_nodes(); ++id) {
    std::optional<Conv> conv = Match(g, id, *ctx);
    if (!conv) {
      rw.Copy(id);
      continue;
    }
    GJ_ASSIGN_OR_RETURN(const ValueId y, Rewrite(&rw, g.node(id), *conv, ctx));
    rw.Map(id, y);
  }
  GJ_ASSIGN_OR_RETURN(*graph, std::move(rw).Finish());
  return true;
}

}  // namespace graphjit::compiler
