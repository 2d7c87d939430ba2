// Layout ops: Transpose, Concat, Slice, Gather, Split, Tile, DepthToSpace, SpaceToDepth,
// and the masks Trilu and EyeLike. Index arithmetic on known values (shape vectors) is
// folded; the rest becomes graphjit's transpose, concat, slice, gather and reshape.
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
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

// Bounds at or beyond this mean "to the end" (ONNX exporters write INT64_MAX or INT32_MAX).
constexpr int64_t kHugeBound = int64_t{1} << 31;

// Calls `fn` with every index of `dims` in row-major order (none if a dim is 0).
template <typename Fn>
void ForEachIndex(const std::vector<int64_t>& dims, Fn fn) {
  for (int64_t d : dims) {
    if (d <= 0) return;
  }
  std::vector<int64_t> at(dims.size(), 0);
  while (true) {
    fn(at);
    int a = static_cast<int>(dims.size()) - 1;
    while (a >= 0 && ++at[a] == dims[a]) at[a--] = 0;
    if (a < 0) return;
  }
}

absl::Status Transpose(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(const Value* in, ctx.In(0));
  const int rank = static_cast<int>(in->shape.size());
  std::vector<int64_t> perm;
  if (std::optional<std::vector<int64_t>> p = ctx.AttrInts("perm")) {
    perm = *p;
  } else {
    for (int d = rank - 1; d >= 0; --d) perm.push_back(d);
  }
  // Known integers (a pad list's [2, 4] view) are permuted at import.
  std::optional<std::vector<SymExpr>> known = KnownGrid(*in);
  if (known && in->id == ir::kInvalidValue && static_cast<int>(perm.size()) == rank) {
    const std::vector<int64_t> dims = ConstDims(*in);
    std::vector<int64_t> out_dims, strides(rank, 1);
    for (int a = rank - 2; a >= 0; --a) strides[a] = strides[a + 1] * dims[a + 1];
    std::vector<bool> seen(rank, false);
    for (int64_t p : perm) {
      if (p < 0 || p >= rank || seen[p]) {
        return ctx.Invalid("perm must name each axis of the input once");
      }
      seen[p] = true;
      out_dims.push_back(dims[p]);
    }
    std::vector<SymExpr> out;
    ForEachIndex(out_dims, [&](const std::vector<int64_t>& at) {
      int64_t flat = 0;
      for (int a = 0; a < rank; ++a) flat += at[a] * strides[perm[a]];
      out.push_back((*known)[flat]);
    });
    ctx.SetOutInts(0, in->elem_type, std::move(out_dims), std::move(out));
    return absl::OkStatus();
  }
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  return ctx.SetOut(0, onnx::Transpose(ctx, x, perm));
}

absl::Status Concat(Context& ctx) {
  // Known integers are folded: shape vectors, and index grids of any rank (swin's
  // attention-mask coordinates are concatenated along the last axis).
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(1, 1 << 20));
  std::vector<std::vector<SymExpr>> known_parts;
  std::vector<std::vector<int64_t>> part_dims;
  int32_t elem = 0;
  bool all_known = true;
  for (int i = 0; i < ctx.num_inputs() && all_known; ++i) {
    GJ_ASSIGN_OR_RETURN(const Value* v, ctx.In(i));
    std::optional<std::vector<SymExpr>> known = KnownGrid(*v);
    all_known = known.has_value() && !v->shape.empty();
    if (!all_known) break;
    known_parts.push_back(*std::move(known));
    part_dims.push_back(ConstDims(*v));
    elem = v->elem_type;
  }
  if (all_known) {
    const int rank = static_cast<int>(part_dims[0].size());
    GJ_ASSIGN_OR_RETURN(int axis, NormAxis(ctx, ctx.AttrInt("axis", 0), rank));
    std::vector<int64_t> out_dims = part_dims[0];
    out_dims[axis] = 0;
    for (const std::vector<int64_t>& d : part_dims) {
      if (static_cast<int>(d.size()) != rank) return ctx.Invalid("inputs differ in rank");
      for (int a = 0; a < rank; ++a) {
        if (a != axis && d[a] != part_dims[0][a]) return ctx.Invalid("inputs differ in shape");
      }
      out_dims[axis] += d[axis];
    }
    // Row-major: for each index of the axes before `axis`, each part's block in turn.
    int64_t outer = 1, inner = 1;
    for (int a = 0; a < axis; ++a) outer *= out_dims[a];
    for (int a = axis + 1; a < rank; ++a) inner *= out_dims[a];
    std::vector<SymExpr> folded;
    for (int64_t o = 0; o < outer; ++o) {
      for (size_t p = 0; p < known_parts.size(); ++p) {
        const int64_t block = part_dims[p][axis] * inner;
        folded.insert(folded.end(), known_parts[p].begin() + o * block,
                      known_parts[p].begin() + (o + 1) * block);
      }
    }
    ctx.SetOutInts(0, elem, std::move(out_dims), std::move(folded));
    return absl::OkStatus();
  }
  std::vector<ValueId> parts;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(i));
    parts.push_back(x);
  }
  GJ_ASSIGN_OR_RETURN(int axis, NormAxis(ctx, ctx.AttrInt("axis", 0), ctx.type(parts[0]).rank()));
  if (parts.size() == 1) return ctx.SetOut(0, parts[0]);
  return ctx.SetOut(0, ctx.Op(OpCode::kConcat, parts, {{"axis", int64_t{axis}}}));
}

// One axis of a Slice, normalized as ONNX clamps it.
struct AxisSlice {
  int axis;
  SymExpr start, end;            // step 1
  std::vector<int64_t> indices;  // other steps: the indices taken, in order
  bool stepped = false;
};

absl::StatusOr<AxisSlice> NormalizeSlice(const Context& ctx, int axis, const SymExpr& dim,
                                         SymExpr start, SymExpr end, int64_t step) {
  AxisSlice s{axis, 0, 0, {}, step != 1};
  std::optional<int64_t> d = dim.AsConstant(), b = start.AsConstant(), e = end.AsConstant();
  if (step == 0) return ctx.Invalid("a slice step of 0");
  if (step == 1) {
    // On a symbolic dim a constant bound is taken as in range (x[:, 1:] is [N, W-1], not
    // [N, W-min(W, 1)]): a dim too small for it fails the slice's bounds check when the
    // symbols are bound, rather than giving another shape.
    auto clamp = [&](const SymExpr& v) -> SymExpr {
      std::optional<int64_t> c = v.AsConstant();
      if (!c) return v;  // a symbolic bound (from a shape) is taken as in range too
      if (*c >= kHugeBound) return dim;
      if (*c <= -kHugeBound) return 0;
      if (*c < 0) return d ? SymExpr(std::max<int64_t>(*d + *c, 0)) : dim + *c;
      return d ? SymExpr(std::min(*c, *d)) : SymExpr(*c);
    };
    s.start = clamp(start);
    s.end = clamp(end);
    std::optional<int64_t> len = (s.end - s.start).AsConstant();
    if (len && *len < 0) s.end = s.start;
    return s;
  }
  if (!d || !b || !e) {
    return ctx.Unimplemented("a slice with a step other than 1 on a symbolic dim or bound");
  }
  if (*d > kMaxIndexVector) return ctx.Unimplemented("a stepped slice of a huge dim");
  int64_t lo = *b, hi = *e;
  if (step > 0) {
    lo = std::clamp<int64_t>(lo < 0 ? lo + *d : lo, 0, *d);
    hi = std::clamp<int64_t>(hi < 0 ? hi + *d : hi, 0, *d);
    for (int64_t i = lo; i < hi; i += step) s.indices.push_back(i);
  } else {
    lo = std::clamp<int64_t>(lo < 0 ? lo + *d : lo, -1, *d - 1);
    hi = hi < -*d ? -1 : std::clamp<int64_t>(hi < 0 ? hi + *d : hi, -1, *d - 1);
    for (int64_t i = lo; i > hi; i += step) s.indices.push_back(i);
  }
  return s;
}

absl::Status Slice(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(const Value* in, ctx.In(0));
  const int rank = static_cast<int>(in->shape.size());
  std::vector<SymExpr> starts, ends;
  std::vector<int64_t> axes, steps;
  if (ctx.opset() < 10) {
    for (int64_t v : ctx.AttrInts("starts").value_or(std::vector<int64_t>{})) starts.push_back(v);
    for (int64_t v : ctx.AttrInts("ends").value_or(std::vector<int64_t>{})) ends.push_back(v);
    axes = ctx.AttrInts("axes").value_or(std::vector<int64_t>{});
  } else {
    GJ_ASSIGN_OR_RETURN(starts, ctx.InInts(1));
    GJ_ASSIGN_OR_RETURN(ends, ctx.InInts(2));
    if (ctx.HasInput(3)) {
      GJ_ASSIGN_OR_RETURN(axes, ctx.InConstInts(3));
    }
    if (ctx.HasInput(4)) {
      GJ_ASSIGN_OR_RETURN(steps, ctx.InConstInts(4));
    }
  }
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return ctx.Invalid("starts, ends, axes and steps differ in length");
  }
  std::vector<AxisSlice> slices;
  for (size_t i = 0; i < starts.size(); ++i) {
    GJ_ASSIGN_OR_RETURN(int axis, NormAxis(ctx, axes[i], rank));
    GJ_ASSIGN_OR_RETURN(AxisSlice s,
                        NormalizeSlice(ctx, axis, in->shape[axis], starts[i], ends[i], steps[i]));
    slices.push_back(std::move(s));
  }
  std::optional<std::vector<SymExpr>> known = KnownGrid(*in);
  const bool const_bounds = std::all_of(slices.begin(), slices.end(), [](const AxisSlice& s) {
    return s.stepped || (s.start.IsConstant() && s.end.IsConstant());
  });
  if (known && in->id == ir::kInvalidValue && const_bounds) {
    // Known integers of any rank (torch's pad lists go through a [4, 2] view reversed
    // by a step -1 slice): each axis keeps its listed indices, all of an unsliced one.
    const std::vector<int64_t> dims = ConstDims(*in);
    std::vector<std::vector<int64_t>> keep(rank);
    for (int a = 0; a < rank; ++a) {
      for (int64_t i = 0; i < dims[a]; ++i) keep[a].push_back(i);
    }
    for (const AxisSlice& s : slices) {
      if (s.stepped) {
        keep[s.axis] = s.indices;
      } else {
        keep[s.axis].clear();
        for (int64_t i = *s.start.AsConstant(); i < *s.end.AsConstant(); ++i) {
          keep[s.axis].push_back(i);
        }
      }
    }
    std::vector<int64_t> out_dims;
    for (const auto& k : keep) out_dims.push_back(static_cast<int64_t>(k.size()));
    std::vector<SymExpr> out;
    ForEachIndex(out_dims, [&](const std::vector<int64_t>& at) {
      int64_t flat = 0;
      for (int a = 0; a < rank; ++a) flat = flat * dims[a] + keep[a][at[a]];
      out.push_back((*known)[flat]);
    });
    ctx.SetOutInts(0, in->elem_type, std::move(out_dims), std::move(out));
    return absl::OkStatus();
  }
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  for (const AxisSlice& s : slices) {
    if (s.stepped) {
      x = TakeAlongAxis(ctx, x, s.axis, s.indices);
    } else if (s.start != 0 || s.end != ctx.type(x).shape[s.axis]) {
      x = ctx.Op(OpCode::kSlice, {x},
                 {{"axis", int64_t{s.axis}}, {"start", s.start}, {"end", s.end}});
    }
    GJ_RETURN_IF_ERROR(ctx.BuilderStatus());
  }
  return ctx.SetOut(0, x);
}

absl::Status Gather(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(const Value* data, ctx.In(0));
  GJ_ASSIGN_OR_RETURN(const Value* idx, ctx.In(1));
  const int rank = static_cast<int>(data->shape.size());
  GJ_ASSIGN_OR_RETURN(int axis, NormAxis(ctx, ctx.AttrInt("axis", 0), rank));
  const SymExpr& dim = data->shape[axis];
  std::optional<std::vector<SymExpr>> known_idx = Context::KnownInts(*idx);
  std::optional<std::vector<int64_t>> const_idx;
  if (known_idx) {
    const_idx.emplace();
    for (const SymExpr& e : *known_idx) {
      std::optional<int64_t> c = e.AsConstant();
      if (!c) {
        const_idx.reset();
        break;
      }
      if (*c < 0) {
        if (!dim.IsConstant()) return ctx.Unimplemented("a negative index into a symbolic dim");
        *c += *dim.AsConstant();
      }
      if (*c < 0 || (dim.IsConstant() && *c >= *dim.AsConstant())) {
        return ctx.Invalid(
            absl::StrCat("index ", e.ToString(), " is out of range for dim ", dim.ToString()));
      }
      const_idx->push_back(*c);
    }
  }
  // Picking from a shape vector folds.
  std::optional<std::vector<SymExpr>> known_data = Context::KnownInts(*data);
  if (known_data && const_idx && rank == 1 && data->id == ir::kInvalidValue) {
    std::vector<SymExpr> out;
    for (int64_t i : *const_idx) out.push_back((*known_data)[i]);
    ctx.SetOutInts(0, data->elem_type, ConstDims(*idx), std::move(out));
    return absl::OkStatus();
  }
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  ValueId indices;
  if (const_idx) {
    std::vector<double> v(const_idx->begin(), const_idx->end());
    indices = ctx.Op(OpCode::kConstant, {},
                     {{"value", std::move(v)}, {"dtype", DType::kI64}, {"shape", idx->shape}});
  } else {
    GJ_ASSIGN_OR_RETURN(indices, ctx.InIndexNode(1));
    // Negative indices count from the end (a symbolic dim's length read as a value).
    ValueId zero = ctx.b().Scalar(0, DType::kI64);
    ValueId length = dim.IsConstant()
                         ? ctx.b().Scalar(*dim.AsConstant(), DType::kI64)
                         : ctx.Op(OpCode::kReshape, {ctx.DimValue(dim)}, {{"shape", Shape{}}});
    ValueId wrapped = ctx.Op(OpCode::kAdd, {indices, length});
    indices = ctx.Op(OpCode::kWhere, {ctx.Op(OpCode::kLt, {indices, zero}), wrapped, indices});
  }
  std::vector<int64_t> to_front = {axis};
  for (int d = 0; d < rank; ++d) {
    if (d != axis) to_front.push_back(d);
  }
  ValueId gathered = ctx.Op(OpCode::kGather, {onnx::Transpose(ctx, x, to_front), indices});
  // gathered is [idx dims (k), data dims before axis, data dims after]; ONNX wants
  // [before, idx dims, after].
  const int k = static_cast<int>(idx->shape.size());
  std::vector<int64_t> perm;
  for (int d = 0; d < axis; ++d) perm.push_back(k + d);
  for (int d = 0; d < k; ++d) perm.push_back(d);
  for (int d = k + axis; d < k + rank - 1; ++d) perm.push_back(d);
  return ctx.SetOut(0, onnx::Transpose(ctx, gathered, perm));
}

absl::Status Split(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(const Value* in, ctx.In(0));
  GJ_ASSIGN_OR_RETURN(int axis,
                      NormAxis(ctx, ctx.AttrInt("axis", 0), static_cast<int>(in->shape.size())));
  const SymExpr& dim = in->shape[axis];
  std::vector<SymExpr> sizes;
  if (ctx.opset() < 13 && ctx.Attr("split")) {
    const std::vector<int64_t> split = *ctx.AttrInts("split");
    for (int64_t s : split) sizes.push_back(s);
  } else if (ctx.opset() >= 13 && ctx.HasInput(1)) {
    GJ_ASSIGN_OR_RETURN(sizes, ctx.InInts(1));
  } else {
    const int n = ctx.num_outputs();
    std::optional<SymExpr> part = ExactDiv(dim, n);
    if (!part) {
      return ctx.Invalid(
          absl::StrCat("dim ", dim.ToString(), " does not split into ", n, " parts"));
    }
    sizes.assign(n, *part);
  }
  if (static_cast<int>(sizes.size()) != ctx.num_outputs()) {
    return ctx.Invalid("the split sizes do not match the outputs");
  }
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  SymExpr start = 0;
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    SymExpr end = start + sizes[i];
    ValueId part =
        ctx.Op(OpCode::kSlice, {x}, {{"axis", int64_t{axis}}, {"start", start}, {"end", end}});
    GJ_RETURN_IF_ERROR(ctx.SetOut(i, part));
    start = end;
  }
  return absl::OkStatus();
}

absl::Status Tile(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, ctx.InConstInts(1));
  const Shape shape = ctx.type(x).shape;
  if (repeats.size() != shape.size()) return ctx.Invalid("repeats must have one entry per dim");
  // [d0, d1] -> [1, d0, 1, d1] -> expand [r0, d0, r1, d1] -> [r0*d0, r1*d1].
  Shape spread, expanded, tiled;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (repeats[d] < 0) return ctx.Invalid("a negative repeat");
    spread.insert(spread.end(), {1, shape[d]});
    expanded.insert(expanded.end(), {repeats[d], shape[d]});
    tiled.push_back(shape[d] * repeats[d]);
  }
  ValueId y = Reshape(ctx, x, spread);
  y = ctx.Op(OpCode::kExpand, {y}, {{"shape", expanded}});
  return ctx.SetOut(0, Reshape(ctx, y, tiled));
}

// DepthToSpace (both modes) and SpaceToDepth: a reshape, a transpose and a reshape.
template <bool kToSpace>
absl::Status BlockRearrange(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  const Shape s = ctx.type(x).shape;
  if (s.size() != 4) return ctx.Invalid("input must be 4-D");
  const int64_t b = ctx.AttrInt("blocksize", 0);
  if (b <= 0) return ctx.Invalid("blocksize must be positive");
  const SymExpr n = s[0], c = s[1], h = s[2], w = s[3];
  if (kToSpace) {
    const SymExpr cb = SymExpr::FloorDiv(c, b * b);
    if (cb * (b * b) != c) return ctx.Invalid("channels not divisible by blocksize^2");
    const bool crd = ctx.AttrString("mode", "DCR") == "CRD";
    ValueId y = crd ? Reshape(ctx, x, {n, cb, b, b, h, w}) : Reshape(ctx, x, {n, b, b, cb, h, w});
    y = onnx::Transpose(
        ctx, y,
        crd ? std::vector<int64_t>{0, 1, 4, 2, 5, 3} : std::vector<int64_t>{0, 3, 4, 1, 5, 2});
    return ctx.SetOut(0, Reshape(ctx, y, {n, cb, h * b, w * b}));
  }
  const SymExpr hb = SymExpr::FloorDiv(h, b), wb = SymExpr::FloorDiv(w, b);
  if (hb * b != h || wb * b != w) return ctx.Invalid("spatial dims not divisible by blocksize");
  ValueId y = Reshape(ctx, x, {n, c, hb, b, wb, b});
  y = onnx::Transpose(ctx, y, {0, 3, 5, 1, 2, 4});
  return ctx.SetOut(0, Reshape(ctx, y, {n, c * b * b, hb, wb}));
}

// j - i over the last two dims of `shape`, as i64 [N, M].
ValueId ColumnMinusRow(Context& ctx, const SymExpr& rows, const SymExpr& cols) {
  ValueId i = ctx.Op(OpCode::kIota, {},
                     {{"axis", int64_t{0}}, {"dtype", DType::kI64}, {"shape", Shape{rows, cols}}});
  ValueId j = ctx.Op(OpCode::kIota, {},
                     {{"axis", int64_t{1}}, {"dtype", DType::kI64}, {"shape", Shape{rows, cols}}});
  return ctx.Op(OpCode::kSub, {j, i});
}

absl::Status Trilu(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  int64_t k = 0;
  if (ctx.HasInput(1)) {
    GJ_ASSIGN_OR_RETURN(std::vector<int64_t> ks, ctx.InConstInts(1));
    if (ks.size() != 1) return ctx.Invalid("k must be a scalar");
    k = ks[0];
  }
  const Shape& s = ctx.type(x).shape;
  if (s.size() < 2) return ctx.Invalid("input must have rank >= 2");
  ValueId diff = ColumnMinusRow(ctx, s[s.size() - 2], s[s.size() - 1]);
  const bool upper = ctx.AttrInt("upper", 1) != 0;
  ValueId keep = ctx.Op(upper ? OpCode::kGe : OpCode::kLe, {diff, ctx.b().Scalar(k, DType::kI64)});
  return ctx.SetOut(0, ctx.Op(OpCode::kWhere, {keep, x, ctx.ScalarLike(0, x)}));
}

absl::Status EyeLike(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(const Value* in, ctx.In(0));
  if (in->shape.size() != 2) return ctx.Invalid("input must be 2-D");
  const int32_t elem = static_cast<int32_t>(ctx.AttrInt("dtype", in->elem_type));
  std::optional<DType> dtype = DTypeOfElem(elem);
  if (!dtype) return ctx.Unimplemented(absl::StrCat("output type ", ElemTypeName(elem)));
  ValueId diff = ColumnMinusRow(ctx, in->shape[0], in->shape[1]);
  ValueId on = ctx.Op(OpCode::kEq, {diff, ctx.b().Scalar(ctx.AttrInt("k", 0), DType::kI64)});
  return ctx.SetOut(0, ctx.Op(OpCode::kCast, {on}, {{"dtype", *dtype}}), elem);
}

}  // namespace

void AddLayoutOps(OpTable* t) {
  (*t)["Transpose"] = Transpose;
  (*t)["Concat"] = Concat;
  (*t)["Slice"] = Slice;
  (*t)["Gather"] = Gather;
  (*t)["Split"] = Split;
  (*t)["Tile"] = Tile;
  (*t)["DepthToSpace"] = BlockRearrange<true>;
  (*t)["SpaceToDepth"] = BlockRearrange<false>;
  (*t)["Trilu"] = Trilu;
  (*t)["EyeLike"] = EyeLike;
}

}  // namespace graphjit::onnx
