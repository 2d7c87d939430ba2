// Convolution and pooling as graphjit ops: padding (concat with a fill), `window` (the
// sliding windows as an index rewrite, no copy), then a matmul against the reshaped
// weights (Conv) or a reduction over the window (MaxPool, AveragePool). Lowering fuses
// the window into the matmul's or the reduction's loads, or materializes it (im2col) when
// the product goes to BLAS.
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status_macros.h"
#include "onnx/op_helpers.h"
#include "onnx/ops.h"

namespace graphjit::onnx {
namespace {

using ir::DType;
using ir::OpCode;
using ir::Shape;
using ir::SymExpr;
using ir::ValueId;

// The windows of one conv or pool node over x's spatial dims (all but the first two).
struct WindowSpec {
  std::vector<int64_t> kernel, strides, dilations;
  std::vector<int64_t> pad_begin, pad_end;  // explicit or auto_pad padding
  std::vector<int64_t> ceil_extra;          // more padding at the end for ceil_mode
};

// Reads kernel_shape (or `kernel` from the weights), strides, dilations, pads / auto_pad
// and ceil_mode, checked against x's spatial rank. SAME padding and ceil_mode need the
// padded dims' sizes, so they are Unimplemented on a symbolic dim unless the padding
// does not depend on it (stride 1).
absl::StatusOr<WindowSpec> ReadWindowSpec(const Context& ctx, const Shape& x,
                                          std::vector<int64_t> kernel, bool ceil_mode) {
  const int k = static_cast<int>(x.size()) - 2;
  if (k < 1) return ctx.Invalid(absl::StrCat("input must have rank >= 3, got rank ", x.size()));
  if (std::optional<std::vector<int64_t>> ks = ctx.AttrInts("kernel_shape")) {
    if (!kernel.empty() && *ks != kernel) {
      return ctx.Invalid(absl::StrCat("kernel_shape [", absl::StrJoin(*ks, ", "),
                                      "] does not match the weights' [",
                                      absl::StrJoin(kernel, ", "), "]"));
    }
    kernel = *ks;
  }
  WindowSpec w;
  w.kernel = kernel;
  w.strides = ctx.AttrInts("strides").value_or(std::vector<int64_t>(k, 1));
  w.dilations = ctx.AttrInts("dilations").value_or(std::vector<int64_t>(k, 1));
  std::vector<int64_t> pads = ctx.AttrInts("pads").value_or(std::vector<int64_t>(2 * k, 0));
  if (static_cast<int>(w.kernel.size()) != k || static_cast<int>(w.strides.size()) != k ||
      static_cast<int>(w.dilations.size()) != k || static_cast<int>(pads.size()) != 2 * k) {
    return ctx.Invalid(absl::StrCat("kernel_shape, strides and dilations need ", k,
                                    " entries and pads ", 2 * k, " for an input of rank ",
                                    x.size()));
  }
  for (int i = 0; i < k; ++i) {
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1 || pads[i] < 0 ||
        pads[i + k] < 0) {
      return ctx.Invalid(absl::StrCat("spatial dim ", i, ": kernel ", w.kernel[i], ", stride ",
                                      w.strides[i], ", dilation ", w.dilations[i], ", pads ",
                                      pads[i], " and ", pads[i + k],
                                      " (kernel, stride and dilation >= 1, pads >= 0)"));
    }
  }
  w.pad_begin.assign(pads.begin(), pads.begin() + k);
  w.pad_end.assign(pads.begin() + k, pads.end());
  w.ceil_extra.assign(k, 0);
  const std::string auto_pad = ctx.AttrString("auto_pad", "NOTSET");
  if (auto_pad == "VALID") {
    std::fill(w.pad_begin.begin(), w.pad_begin.end(), 0);
    std::fill(w.pad_end.begin(), w.pad_end.end(), 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int i = 0; i < k; ++i) {
      const int64_t span = w.dilations[i] * (w.kernel[i] - 1) + 1;
      int64_t total = span - 1;
      if (w.strides[i] != 1) {
        std::optional<int64_t> n = x[2 + i].AsConstant();
        if (!n) {
          return ctx.Unimplemented(absl::StrCat(auto_pad, " padding with stride ", w.strides[i],
                                                " of the symbolic dim ", x[2 + i].ToString()));
        }
        const int64_t out = (*n + w.strides[i] - 1) / w.strides[i];
        total = std::max<int64_t>(0, (out - 1) * w.strides[i] + span - *n);
      }
      const int64_t small = total / 2, large = total - small;
      w.pad_begin[i] = auto_pad == "SAME_UPPER" ? small : large;
      w.pad_end[i] = auto_pad == "SAME_UPPER" ? large : small;
    }
  } else if (auto_pad != "NOTSET") {
    return ctx.Invalid(absl::StrCat("auto_pad '", auto_pad,
                                    "' (expected NOTSET, SAME_UPPER, SAME_LOWER or VALID)"));
  }
  for (int i = 0; i < k; ++i) {
    const int64_t span = w.dilations[i] * (w.kernel[i] - 1) + 1;
    const SymExpr padded = x[2 + i] + w.pad_begin[i] + w.pad_end[i];
    if (std::optional<int64_t> n = padded.AsConstant(); n && *n < span) {
      return ctx.Invalid(absl::StrCat("spatial dim ", i, " (", x[2 + i].ToString(), " padded to ",
                                      *n, ") is shorter than the window's span ", span));
    }
    if (!ceil_mode || w.strides[i] == 1) continue;
    std::optional<int64_t> n = padded.AsConstant();
    if (!n) {
      return ctx.Unimplemented(absl::StrCat("ceil_mode over the symbolic dim ", x[2 + i].ToString(),
                                            " with stride ", w.strides[i]));
    }
    // ceil((n - span) / s) + 1 windows; the last one may start past the padded end, which
    // ONNX does not allow: then it is dropped.
    int64_t out = (*n - span + w.strides[i] - 1) / w.strides[i] + 1;
    if ((out - 1) * w.strides[i] >= x[2 + i].AsConstant().value_or(0) + w.pad_begin[i]) --out;
    w.ceil_extra[i] = std::max<int64_t>(0, (out - 1) * w.strides[i] + span - *n);
  }
  return w;
}

// x with `begin` / `end` elements of `value` around each spatial dim.
ValueId PadSpatial(Context& ctx, ValueId x, const std::vector<int64_t>& begin,
                   const std::vector<int64_t>& end, double value) {
  for (size_t i = 0; i < begin.size(); ++i) {
    x = PadWithConstant(ctx, x, static_cast<int>(2 + i), begin[i], end[i], value);
  }
  return x;
}

// window(x) over the spatial dims: [n, c, k.., o..].
ValueId Windows(Context& ctx, ValueId x, const WindowSpec& w) {
  return ctx.Op(OpCode::kWindow, {x},
                {{"kernel", w.kernel}, {"strides", w.strides}, {"dilations", w.dilations}});
}

bool IsIdentityWindow(const WindowSpec& w) {
  for (size_t i = 0; i < w.kernel.size(); ++i) {
    if (w.kernel[i] != 1 || w.strides[i] != 1 || w.pad_begin[i] != 0 || w.pad_end[i] != 0) {
      return false;
    }
  }
  return true;
}

std::vector<int64_t> Plus(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out = a;
  for (size_t i = 0; i < a.size(); ++i) out[i] += b[i];
  return out;
}

// y + the node's bias input (if any) over the channel dim of [n, m, o..].
absl::StatusOr<ValueId> AddBias(Context& ctx, ValueId y, int64_t m, int k) {
  if (!ctx.HasInput(2)) return y;
  GJ_ASSIGN_OR_RETURN(ValueId b, ctx.InNode(2));
  if (ctx.type(b).shape != Shape{m}) {
    return ctx.Invalid(absl::StrCat("bias of shape ", ir::ShapeToString(ctx.type(b).shape),
                                    " (expected [", m, "])"));
  }
  Shape bs = {m};
  bs.resize(1 + k, 1);
  return ctx.Op(OpCode::kAdd, {y, Reshape(ctx, b, bs)});
}

// The window's elements of x as one axis: [n, c, |k|, o..].
ValueId FlatWindows(Context& ctx, ValueId x, const WindowSpec& w) {
  ValueId win = Windows(ctx, x, w);
  if (!ctx.BuilderStatus().ok()) return win;  // SetOut reports the error
  const Shape s = ctx.type(win).shape;
  const int k = static_cast<int>(w.kernel.size());
  Shape flat = {s[0], s[1], DimProduct(s, 2, 2 + k)};
  flat.insert(flat.end(), s.end() - k, s.end());
  return Reshape(ctx, win, flat);
}

// The number of elements in one window (the kernel's volume).
int64_t WindowSize(const WindowSpec& w) {
  int64_t size = 1;
  for (int64_t d : w.kernel) size *= d;
  return size;
}

// Each element of the window of `windows` (window(x) under `w`: [n, c, k.., o..]) as a
// value of the output's shape [n, c, o..], in row-major window order. Small windows are
// computed as elementwise ops of these taps: the loop innermost then runs along an
// output row (contiguous, vectorizable), where a reduction over the window would run
// innermost over the few window elements, one output at a time.
std::vector<ValueId> Taps(Context& ctx, ValueId windows, const WindowSpec& w) {
  const std::vector<int64_t>& kernel = w.kernel;
  const int k = static_cast<int>(kernel.size());
  const Shape win_shape = ctx.type(windows).shape;
  Shape out_shape = {win_shape[0], win_shape[1]};
  out_shape.insert(out_shape.end(), win_shape.end() - k, win_shape.end());
  std::vector<ValueId> taps;
  for (int64_t j = 0, size = WindowSize(w); j < size; ++j) {
    ValueId tap = windows;
    for (int i = k - 1, rest = static_cast<int>(j); i >= 0; rest /= kernel[i], --i) {
      const int64_t at = rest % kernel[i];
      tap = ctx.Op(OpCode::kSlice, {tap},
                   {{"axis", int64_t{2 + i}}, {"start", SymExpr(at)}, {"end", SymExpr(at + 1)}});
    }
    taps.push_back(Reshape(ctx, tap, out_shape));
  }
  return taps;
}

// `terms` combined by `op` pairwise, not in a chain: a chain of 49 multiply-adds (a 7 x 7
// depthwise convolution) is one dependency of 49 latencies per output vector, which
// out-of-order execution overlaps only a few vectors deep; pairwise it is 6 deep. A 3 x 3
// max pool's maximums (each a dependent sequence of six instructions on AVX-512, NaN
// winning) 4 deep instead of 8: 64 channels of 111 x 111 at stride 2 194 -> 155 us, of
// 28 x 28 at stride 1 41 -> 23 us (one thread, alternating runs).
ValueId Pairwise(Context& ctx, OpCode op, std::vector<ValueId> terms) {
  while (terms.size() > 1) {
    std::vector<ValueId> next;
    for (size_t i = 0; i + 1 < terms.size(); i += 2) {
      next.push_back(ctx.Op(op, {terms[i], terms[i + 1]}));
    }
    if (terms.size() % 2 == 1) next.push_back(terms.back());
    terms = std::move(next);
  }
  return terms[0];
}

// The most window elements a pool computes as elementwise ops of its taps (3 x 3 and
// 2 x 2 pools: a 3 x 3 / 2 max pool over 64 x 112 x 112 took 2.4 ms as a reduction over
// the window, one output at a time); larger windows (global pools) stay reductions.
constexpr int64_t kMaxPoolTaps = 16;

// Conv: y[n, m, o..] = sum over c in m's group and the window of x_padded * w, + b.
// The convolution of x [n, c, d..] (padded as `w` says) with weights `wt`
// [m, c/group, k..] under `w`'s strides and dilations: y [n, m, o..], without bias.
absl::StatusOr<ValueId> EmitConv(Context& ctx, ValueId x, ValueId wt, const WindowSpec& w,
                                 int64_t group, int64_t m, int64_t cg) {
  const Shape xs = ctx.type(x).shape;
  const std::vector<int64_t>& kernel = w.kernel;
  const int k = static_cast<int>(kernel.size());
  const int64_t window_size = WindowSize(w);
  // Depthwise (one filter per channel): the sum over the window of each position's
  // shifted input times its weight, as elementwise ops over the output, so the loop
  // innermost runs along the output row (contiguous, vectorizable) rather than a matmul
  // of one row per channel over flattened positions.
  if (cg == 1 && m == group) {
    ValueId windows = Windows(ctx, PadSpatial(ctx, x, w.pad_begin, w.pad_end, 0.0), w);
    ValueId wflat = Reshape(ctx, wt, {m, window_size});
    GJ_RETURN_IF_ERROR(ctx.BuilderStatus());
    Shape w_shape = {m};
    w_shape.resize(1 + k, 1);
    std::vector<ValueId> taps = Taps(ctx, windows, w);
    std::vector<ValueId> terms;
    for (int64_t j = 0; j < window_size; ++j) {
      ValueId wj = ctx.Op(OpCode::kSlice, {wflat},
                          {{"axis", int64_t{1}}, {"start", SymExpr(j)}, {"end", SymExpr(j + 1)}});
      terms.push_back(ctx.Op(OpCode::kMul, {taps[j], Reshape(ctx, wj, w_shape)}));
    }
    return Pairwise(ctx, OpCode::kAdd, std::move(terms));
  }
  ValueId patches = x;
  if (!IsIdentityWindow(w)) {
    patches = Windows(ctx, PadSpatial(ctx, x, w.pad_begin, w.pad_end, 0.0), w);
  }
  GJ_RETURN_IF_ERROR(ctx.BuilderStatus());
  // [n, c, k.., o..] -> [n, group, c/group * |k|, |o|]: c splits into (group, c/group)
  // and (c/group, k..) are adjacent, so this is a reshape, not a transpose.
  const Shape ps = ctx.type(patches).shape;
  Shape out_spatial(ps.end() - k, ps.end());
  const SymExpr positions =
      DimProduct(ps, static_cast<int>(ps.size()) - k, static_cast<int>(ps.size()));
  patches = Reshape(ctx, patches, {xs[0], group, cg * window_size, positions});
  ValueId wm = Reshape(ctx, wt, {group, m / group, cg * window_size});
  ValueId y = ctx.Op(OpCode::kMatmul, {wm, patches});  // [n, group, m/group, |o|]
  Shape ys = {xs[0], m};
  ys.insert(ys.end(), out_spatial.begin(), out_spatial.end());
  return Reshape(ctx, y, ys);
}

// The constant dims [2, rank) of `shape` (a weight's kernel size), or Unimplemented.
absl::StatusOr<std::vector<int64_t>> KernelDims(const Context& ctx, const Shape& shape) {
  std::vector<int64_t> kernel;
  for (size_t i = 2; i < shape.size(); ++i) {
    std::optional<int64_t> d = shape[i].AsConstant();
    if (!d) return ctx.Unimplemented("weights with a symbolic kernel size");
    kernel.push_back(*d);
  }
  return kernel;
}

absl::Status Conv(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(2, 3));
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId wt, ctx.InNode(1));
  if (!ir::IsFloat(ctx.type(x).dtype)) return ctx.Unimplemented("Conv of integers");
  const Shape xs = ctx.type(x).shape, ws = ctx.type(wt).shape;
  if (ws.size() != xs.size()) {
    return ctx.Invalid(absl::StrCat("weights of rank ", ws.size(), " for an input of rank ",
                                    xs.size(), " (expected [M, C/group, k..])"));
  }
  GJ_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, KernelDims(ctx, ws));
  GJ_ASSIGN_OR_RETURN(WindowSpec w, ReadWindowSpec(ctx, xs, kernel, /*ceil_mode=*/false));
  const int64_t group = ctx.AttrInt("group", 1);
  std::optional<int64_t> m = ws[0].AsConstant(), cg = ws[1].AsConstant();
  if (!m || !cg) return ctx.Unimplemented("Conv weights with symbolic channel counts");
  if (group < 1 || *m % group != 0 || SymExpr(*cg * group) != xs[1]) {
    return ctx.Invalid(absl::StrCat(
        "group ", group, " with weights [", *m, ", ", *cg, ", ..] and ", xs[1].ToString(),
        " input channels (expected channels = group * ", *cg, " and ", *m, " divisible by group)"));
  }
  GJ_ASSIGN_OR_RETURN(ValueId y, EmitConv(ctx, x, wt, w, group, *m, *cg));
  GJ_ASSIGN_OR_RETURN(y, AddBias(ctx, y, *m, static_cast<int>(kernel.size())));
  return ctx.SetOut(0, y);
}

// x with `n` zeros between neighbours along dim `axis` (length l -> (l - 1) * (n + 1) + 1).
ValueId Spread(Context& ctx, ValueId x, int axis, int64_t n) {
  if (n == 0 || !ctx.BuilderStatus().ok()) return x;
  Shape s = ctx.type(x).shape, split = s;
  split.insert(split.begin() + axis + 1, 1);
  ValueId column = Reshape(ctx, x, split);
  ValueId spread = PadWithConstant(ctx, column, axis + 1, 0, n, 0.0);
  const SymExpr length = s[axis];
  s[axis] = length * (n + 1);
  return ctx.Op(
      OpCode::kSlice, {Reshape(ctx, spread, s)},
      {{"axis", int64_t{axis}}, {"start", SymExpr(0)}, {"end", (length - 1) * (n + 1) + 1}});
}

// A ConvTranspose whose windows do not overlap (strides equal to the kernel, dilations 1,
// one group): each input pixel writes its own k.. block of the output, so the output is a
// product of the weights [M * k.., C] by the pixels [N, C, P], rearranged block by block
// (a depth-to-space), then output_padding's zeros and the pads' crop: a quarter of the
// multiply-adds of the spread convolution at 2 x 2 / 2 (three of four spread elements are
// zeros) and no spread buffer. U-Net and FPN decoders and the PP-OCRv4 detector's head
// upsample so.
absl::StatusOr<ValueId> ConvTransposeAsProduct(Context& ctx, ValueId x, ValueId wt, int64_t m,
                                               const std::vector<int64_t>& kernel,
                                               const std::vector<int64_t>& pads,
                                               const std::vector<int64_t>& out_pad) {
  const Shape xs = ctx.type(x).shape;
  const int k = static_cast<int>(kernel.size());
  int64_t block = 1;
  for (int64_t e : kernel) block *= e;
  // [C, M, k..] -> [M, k.., C] -> [M * |k|, C]
  std::vector<int64_t> to_rows = {1};
  for (int i = 0; i < k; ++i) to_rows.push_back(2 + i);
  to_rows.push_back(0);
  const ValueId rows = Reshape(ctx, onnx::Transpose(ctx, wt, to_rows), {m * block, xs[1]});
  SymExpr pixels = 1;
  for (int i = 0; i < k; ++i) pixels = pixels * xs[2 + i];
  const ValueId flat = Reshape(ctx, x, {xs[0], xs[1], pixels});
  // [N, M * |k|, P] -> [N, M, k.., i..] -> [N, M, i_0, k_0, i_1, k_1, ..] -> [N, M, o..]
  Shape blocks = {xs[0], m};
  blocks.insert(blocks.end(), kernel.begin(), kernel.end());
  blocks.insert(blocks.end(), xs.begin() + 2, xs.end());
  std::vector<int64_t> interleave = {0, 1};
  Shape out = {xs[0], m};
  for (int i = 0; i < k; ++i) {
    interleave.push_back(2 + k + i);
    interleave.push_back(2 + i);
    out.push_back(xs[2 + i] * kernel[i]);
  }
  const ValueId product = ctx.Op(OpCode::kMatmul, {rows, flat});
  ValueId y = Reshape(ctx, onnx::Transpose(ctx, Reshape(ctx, product, blocks), interleave), out);
  y = PadSpatial(ctx, y, std::vector<int64_t>(k, 0), out_pad, 0.0);
  GJ_RETURN_IF_ERROR(ctx.BuilderStatus());  // the crop reads y's shape
  for (int i = 0; i < k; ++i) {
    if (pads[i] == 0 && pads[k + i] == 0) continue;
    const SymExpr len = ctx.type(y).shape[2 + i];
    y = ctx.Op(OpCode::kSlice, {y},
               {{"axis", int64_t{2 + i}}, {"start", SymExpr(pads[i])}, {"end", len - pads[k + i]}});
  }
  return AddBias(ctx, y, m, k);
}

// ConvTranspose, the gradient of Conv: the input spread by the strides (zeros between its
// elements), padded by span - 1 - pads (cropped where that is negative) plus the
// output_padding at the end, then convolved (stride 1, the same dilations) with the
// weights' in and out channels swapped per group and their windows flipped.
absl::Status ConvTranspose(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(2, 3));
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId wt, ctx.InNode(1));
  if (!ir::IsFloat(ctx.type(x).dtype)) return ctx.Unimplemented("ConvTranspose of integers");
  const Shape xs = ctx.type(x).shape, ws = ctx.type(wt).shape;
  const int k = static_cast<int>(xs.size()) - 2;
  if (ws.size() != xs.size() || k < 1) {
    return ctx.Invalid(absl::StrCat("weights of rank ", ws.size(), " for an input of rank ",
                                    xs.size(), " (expected [C, M/group, k..], rank >= 3)"));
  }
  GJ_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, KernelDims(ctx, ws));
  const std::string auto_pad = ctx.AttrString("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER") {
    return ctx.Invalid(absl::StrCat("auto_pad '", auto_pad,
                                    "' (expected NOTSET, VALID, SAME_UPPER or SAME_LOWER)"));
  }
  const int64_t group = ctx.AttrInt("group", 1);
  std::optional<int64_t> c = ws[0].AsConstant(), mg = ws[1].AsConstant();
  if (!c || !mg) return ctx.Unimplemented("ConvTranspose weights with symbolic channel counts");
  if (group < 1 || *c % group != 0 || SymExpr(*c) != xs[1]) {
    return ctx.Invalid(absl::StrCat("group ", group, " with weights [", *c, ", ", *mg, ", ..] and ",
                                    xs[1].ToString(), " input channels (expected channels = ", *c,
                                    ", divisible by group)"));
  }
  if (std::optional<std::vector<int64_t>> ks = ctx.AttrInts("kernel_shape"); ks && *ks != kernel) {
    return ctx.Invalid("kernel_shape does not match the weights");
  }
  const std::vector<int64_t> strides = ctx.AttrInts("strides").value_or(std::vector<int64_t>(k, 1));
  const std::vector<int64_t> dilations =
      ctx.AttrInts("dilations").value_or(std::vector<int64_t>(k, 1));
  std::vector<int64_t> pads = ctx.AttrInts("pads").value_or(std::vector<int64_t>(2 * k, 0));
  const std::vector<int64_t> out_pad =
      ctx.AttrInts("output_padding").value_or(std::vector<int64_t>(k, 0));
  if (static_cast<int>(strides.size()) != k || static_cast<int>(dilations.size()) != k ||
      static_cast<int>(pads.size()) != 2 * k || static_cast<int>(out_pad.size()) != k) {
    return ctx.Invalid(absl::StrCat("strides, dilations and output_padding need ", k,
                                    " entries and pads ", 2 * k));
  }
  std::optional<std::vector<int64_t>> shape = ctx.AttrInts("output_shape");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (auto_pad == "VALID") pads.assign(2 * k, 0);
  if (shape || same) {
    // The pads that give this output (SAME: in * stride): total = stride (in - 1) +
    // output_padding + span - out, split as ONNX's reference does (the larger half at the
    // end; at the start for SAME_LOWER).
    if (shape && static_cast<int>(shape->size()) != k)
      return ctx.Invalid("output_shape needs one entry per spatial dim");
    for (int i = 0; i < k; ++i) {
      std::optional<int64_t> in = xs[2 + i].AsConstant();
      if (!in) return ctx.Unimplemented("output_shape or SAME padding with a symbolic input dim");
      const int64_t out = shape ? (*shape)[i] : *in * strides[i];
      const int64_t span = dilations[i] * (kernel[i] - 1) + 1;
      const int64_t total = strides[i] * (*in - 1) + out_pad[i] + span - out;
      const bool lower = !shape && auto_pad == "SAME_LOWER";
      pads[i] = lower ? total - total / 2 : total / 2;
      pads[i + k] = lower ? total / 2 : total - total / 2;
    }
  }
  for (int i = 0; i < k; ++i) {
    if (strides[i] < 1 || dilations[i] < 1 || kernel[i] < 1 || out_pad[i] < 0) {
      return ctx.Invalid(absl::StrCat("spatial dim ", i,
                                      ": stride, dilation and kernel >= 1, "
                                      "output_padding >= 0"));
    }
  }
  for (int i = 0; i < k; ++i) {
    if (strides[i] > kMaxIndexVector || kernel[i] > kMaxIndexVector ||
        dilations[i] > kMaxIndexVector) {
      return ctx.Invalid(absl::StrCat("spatial dim ", i, ": stride, kernel or dilation over 2^24"));
    }
  }
  bool disjoint = group == 1;
  for (int i = 0; i < k; ++i) {
    disjoint = disjoint && strides[i] == kernel[i] && dilations[i] == 1 && pads[i] >= 0 &&
               pads[k + i] >= 0;
  }
  if (disjoint) {
    GJ_ASSIGN_OR_RETURN(ValueId y, ConvTransposeAsProduct(ctx, x, wt, *mg, kernel, pads, out_pad));
    return ctx.SetOut(0, y);
  }
  for (int i = 0; i < k; ++i) x = Spread(ctx, x, 2 + i, strides[i] - 1);
  GJ_RETURN_IF_ERROR(ctx.BuilderStatus());  // the shapes below are read from x
  WindowSpec w;
  w.kernel = kernel;
  w.strides.assign(k, 1);
  w.dilations = dilations;
  w.pad_begin.assign(k, 0);
  w.pad_end.assign(k, 0);
  for (int i = 0; i < k; ++i) {
    const int64_t span = dilations[i] * (kernel[i] - 1) + 1;
    const int64_t before = span - 1 - pads[i], after = span - 1 - pads[i + k] + out_pad[i];
    // Negative padding crops (a crop past the dim fails the builder: stop before reading).
    GJ_RETURN_IF_ERROR(ctx.BuilderStatus());
    const SymExpr len = ctx.type(x).shape[2 + i];
    if (before < 0 || after < 0) {
      x = ctx.Op(OpCode::kSlice, {x},
                 {{"axis", int64_t{2 + i}},
                  {"start", SymExpr(std::max<int64_t>(0, -before))},
                  {"end", after < 0 ? len + after : len}});
    }
    w.pad_begin[i] = std::max<int64_t>(0, before);
    w.pad_end[i] = std::max<int64_t>(0, after);
  }
  // [c, m/group, k..] -> [group, c/group, m/group, k..] -> [group, m/group, c/group, k..]
  // -> [m, c/group, k..], each window reversed.
  const int64_t cg = *c / group, m = *mg * group;
  Shape split = {group, cg, *mg};
  split.insert(split.end(), kernel.begin(), kernel.end());
  std::vector<int64_t> perm = {0, 2, 1};
  for (int i = 0; i < k; ++i) perm.push_back(3 + i);
  Shape swapped = {m, cg};
  swapped.insert(swapped.end(), kernel.begin(), kernel.end());
  ValueId wc = Reshape(ctx, onnx::Transpose(ctx, Reshape(ctx, wt, split), perm), swapped);
  GJ_RETURN_IF_ERROR(ctx.BuilderStatus());  // TakeAlongAxis reads wc's shape
  for (int i = 0; i < k; ++i) {
    std::vector<int64_t> reversed(kernel[i]);
    for (int64_t j = 0; j < kernel[i]; ++j) reversed[j] = kernel[i] - 1 - j;
    if (kernel[i] > 1) wc = TakeAlongAxis(ctx, wc, 2 + i, reversed);
  }
  GJ_RETURN_IF_ERROR(ctx.BuilderStatus());
  GJ_ASSIGN_OR_RETURN(ValueId y, EmitConv(ctx, x, wc, w, group, m, cg));
  GJ_ASSIGN_OR_RETURN(y, AddBias(ctx, y, m, k));
  return ctx.SetOut(0, y);
}

absl::Status MaxPool(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  if (ctx.WantsOutput(1)) return ctx.Unimplemented("MaxPool's Indices output");
  if (!ir::IsFloat(ctx.type(x).dtype)) return ctx.Unimplemented("MaxPool of integers");
  if (ctx.AttrInt("storage_order", 0) != 0) return ctx.Unimplemented("storage_order 1");
  GJ_ASSIGN_OR_RETURN(WindowSpec w,
                      ReadWindowSpec(ctx, ctx.type(x).shape, {}, ctx.AttrInt("ceil_mode", 0) != 0));
  // -inf never wins a max (a window always holds one element of x), so padding is exact.
  x = PadSpatial(ctx, x, w.pad_begin, Plus(w.pad_end, w.ceil_extra),
                 -std::numeric_limits<double>::infinity());
  if (WindowSize(w) <= kMaxPoolTaps) {
    ValueId windows = Windows(ctx, x, w);
    GJ_RETURN_IF_ERROR(ctx.BuilderStatus());
    return ctx.SetOut(0, Pairwise(ctx, OpCode::kMaximum, Taps(ctx, windows, w)));
  }
  ValueId flat = FlatWindows(ctx, x, w);
  return ctx.SetOut(0,
                    ctx.Op(OpCode::kReduceMax, {flat}, {{"axis", int64_t{2}}, {"keepdim", false}}));
}

absl::Status AveragePool(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  if (!ir::IsFloat(ctx.type(x).dtype)) return ctx.Unimplemented("AveragePool of integers");
  const Shape xs = ctx.type(x).shape;
  GJ_ASSIGN_OR_RETURN(WindowSpec w, ReadWindowSpec(ctx, xs, {}, ctx.AttrInt("ceil_mode", 0) != 0));
  const bool include_pad = ctx.AttrInt("count_include_pad", 0) != 0;
  bool padded = false;
  for (size_t i = 0; i < w.kernel.size(); ++i) {
    padded |= w.pad_begin[i] + w.pad_end[i] + w.ceil_extra[i] != 0;
  }
  const ir::Attrs over_window = {{"axis", int64_t{2}}, {"keepdim", false}};
  ValueId xp = PadSpatial(ctx, x, w.pad_begin, Plus(w.pad_end, w.ceil_extra), 0.0);
  // A small window's sum as its taps added pairwise, as MaxPool's: elementwise ops along
  // the output row, where a reduction over the window runs one output at a time (densenet's
  // 2 x 2 / 2 pools over 128 channels of 56 x 56: 243 us, ONNX Runtime's 23).
  const bool taps = WindowSize(w) <= kMaxPoolTaps;
  if (!padded && !taps) {
    return ctx.SetOut(0, ctx.Op(OpCode::kReduceMean, {FlatWindows(ctx, xp, w)}, over_window));
  }
  ValueId sum = taps ? Pairwise(ctx, OpCode::kAdd, Taps(ctx, Windows(ctx, xp, w), w))
                     : ctx.Op(OpCode::kReduceSum, {FlatWindows(ctx, xp, w)}, over_window);
  if (!padded) {
    return ctx.SetOut(
        0, ctx.Op(OpCode::kDiv, {sum, ctx.ScalarLike(static_cast<double>(WindowSize(w)), x)}));
  }
  // Divide by the elements each window covers: x's, plus the explicit pads when
  // count_include_pad, never ceil_mode's extra ones. A window of ones padded alike counts.
  Shape ones_shape(xs.size(), 1);
  for (size_t i = 2; i < xs.size(); ++i) {
    ones_shape[i] = include_pad ? xs[i] + w.pad_begin[i - 2] + w.pad_end[i - 2] : xs[i];
  }
  ValueId ones = ctx.Op(OpCode::kFull, {},
                        {{"value", 1.0}, {"dtype", ctx.type(x).dtype}, {"shape", ones_shape}});
  std::vector<int64_t> no_pads(w.kernel.size(), 0);
  ValueId counted = include_pad
                        ? PadSpatial(ctx, ones, no_pads, w.ceil_extra, 0.0)
                        : PadSpatial(ctx, ones, w.pad_begin, Plus(w.pad_end, w.ceil_extra), 0.0);
  ValueId count = ctx.Op(OpCode::kReduceSum, {FlatWindows(ctx, counted, w)}, over_window);
  return ctx.SetOut(0, ctx.Op(OpCode::kDiv, {sum, count}));
}

}  // namespace

void AddConvOps(OpTable* t) {
  (*t)["Conv"] = Conv;
  (*t)["ConvTranspose"] = ConvTranspose;
  (*t)["MaxPool"] = MaxPool;
  (*t)["AveragePool"] = AveragePool;
}

}  // namespace graphjit::onnx
