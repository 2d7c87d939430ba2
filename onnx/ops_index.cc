// Index ops without a graphjit op of their own, as exact compositions: GatherElements
// (a one-hot select and a max over the gathered axis), Pad (concat with a fill, or
// gathers of constant indices for the edge and reflect modes) and ScatterND (on indices
// known at import: a gather of the updates and a select, or scatter_add).
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

// out[i] = data[i with i_axis replaced by idx[i]]. Every output element selects exactly
// one data element with a where and takes the max over the axis against the identity of
// max (-inf, or the smallest i64), so the value is exact (NaN and -0 included). It costs
// the output's size times the axis length, which suits the small gathers of losses.
absl::Status GatherElements(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId data, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId idx, ctx.InIndexNode(1));
  const Shape ds = ctx.type(data).shape, is = ctx.type(idx).shape;
  const int rank = static_cast<int>(ds.size());
  if (static_cast<int>(is.size()) != rank) return ctx.Invalid("indices must have the data's rank");
  GJ_ASSIGN_OR_RETURN(int axis, NormAxis(ctx, ctx.AttrInt("axis", 0), rank));
  const DType dtype = ctx.type(data).dtype;
  if (dtype == DType::kBool) return ctx.Unimplemented("GatherElements of BOOL");
  std::optional<int64_t> s = ds[axis].AsConstant();
  if (!s) return ctx.Unimplemented("GatherElements along a symbolic axis");
  // The data's other dims cut to the indices' (ONNX lets them be larger).
  for (int d = 0; d < rank; ++d) {
    if (d != axis && ds[d] != is[d]) {
      data = ctx.Op(OpCode::kSlice, {data},
                    {{"axis", int64_t{d}}, {"start", SymExpr(0)}, {"end", is[d]}});
    }
  }
  ValueId zero = ctx.b().Scalar(0, DType::kI64);
  ValueId wrapped = ctx.Op(OpCode::kAdd, {idx, ctx.b().Scalar(*s, DType::kI64)});
  idx = ctx.Op(OpCode::kWhere, {ctx.Op(OpCode::kLt, {idx, zero}), wrapped, idx});
  GJ_RETURN_IF_ERROR(ctx.BuilderStatus());  // the shapes below are read from these
  // [.., m, 1, ..] indices against [.., 1, s, ..] data and an iota over the new axis.
  Shape idx_u = is, data_u = ctx.type(data).shape, iota_shape(rank + 1, 1);
  idx_u.insert(idx_u.begin() + axis + 1, 1);
  data_u.insert(data_u.begin() + axis, 1);
  iota_shape[axis + 1] = *s;
  ValueId iota =
      ctx.Op(OpCode::kIota, {},
             {{"axis", int64_t{axis + 1}}, {"dtype", DType::kI64}, {"shape", iota_shape}});
  ValueId hit = ctx.Op(OpCode::kEq, {Reshape(ctx, idx, idx_u), iota});
  const double fill = dtype == DType::kI64
                          ? static_cast<double>(std::numeric_limits<int64_t>::min())
                          : -std::numeric_limits<double>::infinity();
  ValueId picked =
      ctx.Op(OpCode::kWhere, {hit, Reshape(ctx, data, data_u), ctx.b().Scalar(fill, dtype)});
  return ctx.SetOut(
      0, ctx.Op(OpCode::kReduceMax, {picked}, {{"axis", int64_t{axis + 1}}, {"keepdim", false}}));
}

// The source index of each padded position along an axis of size n (edge: clamp;
// reflect: mirror without repeating the border).
std::optional<std::vector<int64_t>> PadIndices(const std::string& mode, int64_t n, int64_t before,
                                               int64_t after) {
  if (n == 0 || n + before + after > kMaxIndexVector ||
      (mode == "reflect" && (n == 1 || before >= n || after >= n))) {
    return std::nullopt;
  }
  std::vector<int64_t> out;
  for (int64_t i = -before; i < n + after; ++i) {
    int64_t j = i;
    if (mode == "edge") {
      j = std::clamp<int64_t>(i, 0, n - 1);
    } else if (i < 0) {
      j = -i;
    } else if (i >= n) {
      j = 2 * (n - 1) - i;
    }
    out.push_back(j);
  }
  return out;
}

absl::Status Pad(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  const int rank = ctx.type(x).rank();
  std::vector<int64_t> pads;
  double value = 0;
  if (ctx.opset() < 11) {
    pads = ctx.AttrInts("pads").value_or(std::vector<int64_t>{});
    value = ctx.AttrFloat("value", 0);
  } else {
    GJ_ASSIGN_OR_RETURN(pads, ctx.InConstInts(1));
    if (ctx.HasInput(2)) {
      GJ_ASSIGN_OR_RETURN(const Value* v, ctx.In(2));
      if (!v->constant || v->constant->numel() != 1) {
        return ctx.Unimplemented("a pad value that depends on tensor data");
      }
      value = v->constant->ValueAt(0);
    }
  }
  if (static_cast<int>(pads.size()) != 2 * rank)
    return ctx.Invalid("pads must have 2 * rank entries");
  const std::string mode = ctx.AttrString("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect") {
    return ctx.Unimplemented(absl::StrCat("pad mode '", mode, "'"));
  }
  for (int d = 0; d < rank; ++d) {
    GJ_RETURN_IF_ERROR(ctx.BuilderStatus());
    int64_t before = pads[d], after = pads[d + rank];
    const SymExpr dim = ctx.type(x).shape[d];
    // Negative pads crop.
    if (before < 0 || after < 0) {
      SymExpr start = before < 0 ? SymExpr(-before) : SymExpr(0);
      SymExpr end = after < 0 ? dim + after : dim;
      x = ctx.Op(OpCode::kSlice, {x}, {{"axis", int64_t{d}}, {"start", start}, {"end", end}});
      before = std::max<int64_t>(before, 0);
      after = std::max<int64_t>(after, 0);
    }
    if (before == 0 && after == 0) continue;
    GJ_RETURN_IF_ERROR(ctx.BuilderStatus());
    if (mode == "constant") {
      x = PadWithConstant(ctx, x, d, before, after, value);
      continue;
    }
    std::optional<int64_t> n = ctx.type(x).shape[d].AsConstant();
    std::optional<std::vector<int64_t>> indices =
        n ? PadIndices(mode, *n, before, after) : std::nullopt;
    if (!indices) {
      return ctx.Unimplemented(absl::StrCat("'", mode, "' padding of dim ", d, " (",
                                            ctx.type(x).shape[d].ToString(), ") by ", before,
                                            " and ", after));
    }
    x = TakeAlongAxis(ctx, x, d, *indices);
  }
  return ctx.SetOut(0, x);
}

// ScatterND(data, indices [..., k], updates) with the indices known at import (swin's
// attention mask is built by a loop of them): data viewed as [rows, rest] over its first
// k dims, updates as [n, rest]. reduction none: each row takes its last update (a gather
// of the updates by a constant map, selected by a constant mask); add: scatter_add; mul,
// max, min: the row combined with its updates in order, one round per repeat of a row.
absl::Status ScatterND(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(3, 3));
  const std::string reduction = ctx.AttrString("reduction", "none");
  GJ_ASSIGN_OR_RETURN(const Value* idx_v, ctx.In(1));
  GJ_ASSIGN_OR_RETURN(std::vector<int64_t> indices, ctx.InConstInts(1));
  GJ_ASSIGN_OR_RETURN(ValueId data, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId updates, ctx.InNode(2));
  const Shape ds = ctx.type(data).shape;
  const std::vector<int64_t> is = ConstDims(*idx_v);
  if (is.empty()) return ctx.Invalid("indices must have rank >= 1");
  const int64_t k = is.back();
  if (k < 1 || k > static_cast<int64_t>(ds.size())) {
    return ctx.Invalid(
        absl::StrCat("the indices' last dim ", k, " must be in [1, data rank ", ds.size(), "]"));
  }
  std::vector<int64_t> lead;
  int64_t rows = 1;
  for (int64_t d = 0; d < k; ++d) {
    std::optional<int64_t> c = ds[d].AsConstant();
    if (!c) return ctx.Unimplemented("ScatterND into a symbolic leading dim");
    lead.push_back(*c);
    rows *= *c;
  }
  const int64_t n = static_cast<int64_t>(indices.size()) / k;
  const Shape rest(ds.begin() + k, ds.end());
  const SymExpr width = ir::NumElements(rest);
  // The row each update goes to, bounds checked (negative indices count from the end).
  std::vector<int64_t> row_of(n);
  for (int64_t u = 0; u < n; ++u) {
    int64_t r = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t i = indices[u * k + d];
      if (i < 0) i += lead[d];
      if (i < 0 || i >= lead[d]) {
        return ctx.Invalid(absl::StrCat("index ", indices[u * k + d], " out of bounds for dim ", d,
                                        " of size ", lead[d]));
      }
      r = r * lead[d] + i;
    }
    row_of[u] = r;
  }
  ValueId table = ctx.Op(OpCode::kReshape, {data}, {{"shape", Shape{rows, width}}});
  ValueId flat = ctx.Op(OpCode::kReshape, {updates}, {{"shape", Shape{n, width}}});
  ValueId out;
  if (reduction == "add") {
    out = ctx.Op(OpCode::kScatterAdd, {table, ConstI64(ctx, row_of), flat});
  } else {
    if (reduction != "none" && reduction != "mul" && reduction != "max" && reduction != "min") {
      return ctx.Unimplemented(absl::StrCat("ScatterND reduction '", reduction, "'"));
    }
    // Rounds in which no row repeats: round j takes each row's j-th update, so a reduction
    // applies a row's updates in order; `none` keeps one round, each row's last update.
    std::vector<std::vector<int64_t>> rounds;
    std::vector<int64_t> seen(rows, 0);
    for (int64_t u = 0; u < n; ++u) {
      const int64_t j = reduction == "none" ? 0 : seen[row_of[u]]++;
      if (j == static_cast<int64_t>(rounds.size())) rounds.emplace_back(rows, -1);
      rounds[j][row_of[u]] = u;
    }
    out = table;
    for (const std::vector<int64_t>& source : rounds) {
      std::vector<double> mask(rows);
      std::vector<int64_t> take(rows);
      for (int64_t r = 0; r < rows; ++r) {
        mask[r] = source[r] >= 0 ? 1 : 0;
        take[r] = std::max<int64_t>(source[r], 0);
      }
      ValueId picked = ctx.Op(OpCode::kGather, {flat, ConstI64(ctx, take)});  // [rows, width]
      if (reduction == "mul") picked = ctx.Op(OpCode::kMul, {out, picked});
      if (reduction == "max") picked = ctx.Op(OpCode::kMaximum, {out, picked});
      if (reduction == "min") picked = ctx.Op(OpCode::kMinimum, {out, picked});
      ValueId keep =
          ctx.Op(OpCode::kConstant, {},
                 {{"value", std::move(mask)}, {"dtype", DType::kBool}, {"shape", Shape{rows, 1}}});
      out = ctx.Op(OpCode::kWhere, {keep, picked, out});
    }
  }
  return ctx.SetOut(0, ctx.Op(OpCode::kReshape, {out}, {{"shape", ds}}));
}

}  // namespace

void AddIndexOps(OpTable* t) {
  (*t)["GatherElements"] = GatherElements;
  (*t)["ScatterND"] = ScatterND;
  (*t)["Pad"] = Pad;
}

}  // namespace graphjit::onnx
