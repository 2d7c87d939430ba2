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
  const Shape s = ctx.type(win).shape;
  const int k = static_cast<int>(w.kernel.size());
  Shape flat = {s[0], s[1], DimProduct(s, 2, 2 + k)};
  flat.insert(flat.end(), s.end() - k, s.end());
  return Reshape(ctx, win, flat);
}

// Conv: y[n, m, o..] = sum over c in m's group and the window of x_padded * w, + b.
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
  std::vector<int64_t> kernel;
  for (size_t i = 2; i < ws.size(); ++i) {
    std::optional<int64_t> d = ws[i].AsConstant();
    if (!d) return ctx.Unimplemented("Conv weights with a symbolic kernel size");
    kernel.push_back(*d);
  }
  GJ_ASSIGN_OR_RETURN(WindowSpec w, ReadWindowSpec(ctx, xs, kernel, /*ceil_mode=*/false));
  const int64_t group = ctx.AttrInt("group", 1);
  std::optional<int64_t> m = ws[0].AsConstant(), cg = ws[1].AsConstant();
  if (!m || !cg) return ctx.Unimplemented("Conv weights with symbolic channel counts");
  if (group < 1 || *m % group != 0 || SymExpr(*cg * group) != xs[1]) {
    return ctx.Invalid(absl::StrCat(
        "group ", group, " with weights [", *m, ", ", *cg, ", ..] and ", xs[1].ToString(),
        " input channels (expected channels = group * ", *cg, " and ", *m, " divisible by group)"));
  }
  const int k = static_cast<int>(kernel.size());
  int64_t window_size = 1;
  for (int64_t d : kernel) window_size *= d;
  // Depthwise (one filter per channel): the sum over the window of each position's
  // shifted input times its weight, as elementwise ops over the output, so the loop
  // innermost runs along the output row (contiguous, vectorizable) rather than a matmul
  // of one row per channel over flattened positions.
  if (*cg == 1 && *m == group) {
    ValueId windows = Windows(ctx, PadSpatial(ctx, x, w.pad_begin, w.pad_end, 0.0), w);
    ValueId wflat = Reshape(ctx, wt, {*m, window_size});
    GJ_RETURN_IF_ERROR(ctx.BuilderStatus());
    const Shape win_shape = ctx.type(windows).shape;
    Shape out_shape = {win_shape[0], win_shape[1]};
    out_shape.insert(out_shape.end(), win_shape.end() - k, win_shape.end());
    Shape w_shape = {*m};
    w_shape.resize(1 + k, 1);
    ValueId sum = ir::kInvalidValue;
    for (int64_t j = 0; j < window_size; ++j) {
      ValueId tap = windows;
      for (int i = k - 1, rest = static_cast<int>(j); i >= 0; rest /= kernel[i], --i) {
        const int64_t at = rest % kernel[i];
        tap = ctx.Op(OpCode::kSlice, {tap},
                     {{"axis", int64_t{2 + i}}, {"start", SymExpr(at)}, {"end", SymExpr(at + 1)}});
      }
      ValueId wj = ctx.Op(OpCode::kSlice, {wflat},
                          {{"axis", int64_t{1}}, {"start", SymExpr(j)}, {"end", SymExpr(j + 1)}});
      ValueId term =
          ctx.Op(OpCode::kMul, {Reshape(ctx, tap, out_shape), Reshape(ctx, wj, w_shape)});
      sum = sum == ir::kInvalidValue ? term : ctx.Op(OpCode::kAdd, {sum, term});
    }
    GJ_ASSIGN_OR_RETURN(ValueId y, AddBias(ctx, sum, *m, k));
    return ctx.SetOut(0, y);
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
  patches = Reshape(ctx, patches, {xs[0], group, *cg * window_size, positions});
  ValueId wm = Reshape(ctx, wt, {group, *m / group, *cg * window_size});
  ValueId y = ctx.Op(OpCode::kMatmul, {wm, patches});  // [n, group, m/group, |o|]
  Shape ys = {xs[0], *m};
  ys.insert(ys.end(), out_spatial.begin(), out_spatial.end());
  GJ_ASSIGN_OR_RETURN(y, AddBias(ctx, Reshape(ctx, y, ys), *m, k));
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
  if (!padded)
    return ctx.SetOut(0, ctx.Op(OpCode::kReduceMean, {FlatWindows(ctx, xp, w)}, over_window));
  // Divide by the elements each window covers: x's, plus the explicit pads when
  // count_include_pad, never ceil_mode's extra ones. A window of ones padded alike counts.
  ValueId sum = ctx.Op(OpCode::kReduceSum, {FlatWindows(ctx, xp, w)}, over_window);
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
  (*t)["MaxPool"] = MaxPool;
  (*t)["AveragePool"] = AveragePool;
}

}  // namespace graphjit::onnx
