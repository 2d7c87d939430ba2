// Index ops without a graphjit op of their own, as exact compositions: GatherElements
// (a one-hot select and a max over the gathered axis), Pad (concat with a fill, or
// gathers of constant indices for the edge and reflect modes), and on indices known at
// import ScatterND and ScatterElements (a gather of the updates and a select, or
// scatter_add), GatherND and ReverseSequence (gathers of constant rows).
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
      // A model input names itself (specialized on its value, onnx/specialize.h).
      GJ_ASSIGN_OR_RETURN(std::vector<double> v, ctx.InConstDoubles(2));
      if (v.size() != 1) return ctx.Invalid("the pad value must be a scalar");
      value = v[0];
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

// table [rows, width] with update u (a row of `flat` [n, width]) written to row row_of[u]
// (constants in [0, rows)) by the node's `reduction`: none, each row its last update (a
// gather of the updates by a constant map, selected by a constant mask); add: scatter_add;
// mul, max, min: the row combined with its updates in order, one round per repeat of a
// row. ScatterND and ScatterElements on indices known at import.
absl::StatusOr<ValueId> ScatterRows(Context& ctx, const char* op, ValueId table, int64_t rows,
                                    ValueId flat, const std::vector<int64_t>& row_of) {
  const std::string reduction = ctx.AttrString("reduction", "none");
  const int64_t n = static_cast<int64_t>(row_of.size());
  ValueId out;
  if (reduction == "add") {
    out = ctx.Op(OpCode::kScatterAdd, {table, ConstI64(ctx, row_of), flat});
  } else {
    if (reduction != "none" && reduction != "mul" && reduction != "max" && reduction != "min") {
      return ctx.Unimplemented(absl::StrCat(op, " reduction '", reduction, "'"));
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
  return out;
}

// The constant dims `from` .. `to` of `shape`, or nullopt if one is symbolic.
std::optional<std::vector<int64_t>> ConstantDims(const Shape& shape, size_t from, size_t to) {
  std::vector<int64_t> out;
  for (size_t d = from; d < to; ++d) {
    std::optional<int64_t> c = shape[d].AsConstant();
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

// `i` (negative counts from the end) in [0, size), or InvalidArgument naming it.
absl::StatusOr<int64_t> InBounds(const Context& ctx, int64_t i, int64_t size, int64_t dim) {
  const int64_t j = i < 0 ? i + size : i;
  if (j < 0 || j >= size) {
    return ctx.Invalid(
        absl::StrCat("index ", i, " out of bounds for dim ", dim, " of size ", size));
  }
  return j;
}

// The flat row of each k-tuple of `indices` in dims `lead` (row-major; the tuple's entry
// d indexes lead[d], which is the data's dim first_dim + d), bounds checked.
absl::StatusOr<std::vector<int64_t>> RowsOfTuples(const Context& ctx,
                                                  const std::vector<int64_t>& indices,
                                                  const std::vector<int64_t>& lead,
                                                  int64_t first_dim) {
  const int64_t k = static_cast<int64_t>(lead.size());
  std::vector<int64_t> rows(indices.size() / k);
  for (size_t t = 0; t < rows.size(); ++t) {
    int64_t r = 0;
    for (int64_t d = 0; d < k; ++d) {
      GJ_ASSIGN_OR_RETURN(const int64_t i,
                          InBounds(ctx, indices[t * k + d], lead[d], first_dim + d));
      r = r * lead[d] + i;
    }
    rows[t] = r;
  }
  return rows;
}

// ScatterND(data, indices [..., k], updates) with the indices known at import (swin's
// attention mask is built by a loop of them): data viewed as [rows, rest] over its first
// k dims, updates as [n, rest], scattered by ScatterRows.
absl::Status ScatterND(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(3, 3));
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
  std::optional<std::vector<int64_t>> lead = ConstantDims(ds, 0, k);
  if (!lead) return ctx.Unimplemented("ScatterND into a symbolic leading dim");
  int64_t rows = 1;
  for (int64_t d : *lead) rows *= d;
  const int64_t n = static_cast<int64_t>(indices.size()) / k;
  const Shape rest(ds.begin() + k, ds.end());
  const SymExpr width = ir::NumElements(rest);
  // The row each update goes to (negative indices count from the end).
  GJ_ASSIGN_OR_RETURN(const std::vector<int64_t> row_of, RowsOfTuples(ctx, indices, *lead, 0));
  ValueId table = ctx.Op(OpCode::kReshape, {data}, {{"shape", Shape{rows, width}}});
  ValueId flat = ctx.Op(OpCode::kReshape, {updates}, {{"shape", Shape{n, width}}});
  GJ_ASSIGN_OR_RETURN(ValueId out, ScatterRows(ctx, "ScatterND", table, rows, flat, row_of));
  return ctx.SetOut(0, ctx.Op(OpCode::kReshape, {out}, {{"shape", ds}}));
}

// GatherND(data, indices [..., k]) with batch_dims b, the indices known at import: data
// viewed as [B * rows, rest] (B the batch dims' product, rows its next k dims'), a gather
// of constant rows, reshaped to indices' dims but the last, then rest.
absl::Status GatherND(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  GJ_ASSIGN_OR_RETURN(const Value* idx_v, ctx.In(1));
  GJ_ASSIGN_OR_RETURN(std::vector<int64_t> indices, ctx.InConstInts(1));
  GJ_ASSIGN_OR_RETURN(ValueId data, ctx.InNode(0));
  const Shape ds = ctx.type(data).shape;
  const std::vector<int64_t> is = ConstDims(*idx_v);
  const int64_t b = ctx.AttrInt("batch_dims", 0);
  if (is.empty()) return ctx.Invalid("indices must have rank >= 1");
  const int64_t k = is.back();
  const int64_t rank = static_cast<int64_t>(ds.size());
  if (b < 0 || b >= static_cast<int64_t>(is.size()) || k < 1 || b + k > rank) {
    return ctx.Invalid(absl::StrCat("batch_dims ", b, " and the indices' last dim ", k,
                                    " do not fit data of rank ", rank, " and indices of rank ",
                                    is.size()));
  }
  std::optional<std::vector<int64_t>> lead = ConstantDims(ds, 0, b + k);
  if (!lead) return ctx.Unimplemented("GatherND over symbolic dims");
  int64_t batches = 1, rows = 1;
  for (int64_t d = 0; d < b; ++d) {
    if ((*lead)[d] != is[d]) return ctx.Invalid("the batch dims of data and indices differ");
    batches *= (*lead)[d];
  }
  for (int64_t d = b; d < b + k; ++d) rows *= (*lead)[d];
  const int64_t n = static_cast<int64_t>(indices.size()) / k;  // tuples, batches * per batch
  GJ_ASSIGN_OR_RETURN(
      std::vector<int64_t> take,
      RowsOfTuples(ctx, indices, std::vector<int64_t>(lead->begin() + b, lead->end()), b));
  for (int64_t t = 0; t < n; ++t) take[t] += t / (n / batches) * rows;  // its batch's rows
  const Shape rest(ds.begin() + b + k, ds.end());
  ValueId table =
      ctx.Op(OpCode::kReshape, {data}, {{"shape", Shape{batches * rows, ir::NumElements(rest)}}});
  ValueId picked = ctx.Op(OpCode::kGather, {table, ConstI64(ctx, take)});
  Shape out;
  for (size_t d = 0; d + 1 < is.size(); ++d) out.push_back(is[d]);
  out.insert(out.end(), rest.begin(), rest.end());
  return ctx.SetOut(0, ctx.Op(OpCode::kReshape, {picked}, {{"shape", out}}));
}

// ScatterElements(data, indices, updates) along `axis`, the indices known at import: data
// viewed as [numel, 1]; update at position p of indices goes to p with its axis coordinate
// replaced by indices[p] (ScatterRows).
absl::Status ScatterElements(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(3, 3));
  GJ_ASSIGN_OR_RETURN(const Value* idx_v, ctx.In(1));
  GJ_ASSIGN_OR_RETURN(std::vector<int64_t> indices, ctx.InConstInts(1));
  GJ_ASSIGN_OR_RETURN(ValueId data, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId updates, ctx.InNode(2));
  const Shape ds = ctx.type(data).shape;
  const int rank = static_cast<int>(ds.size());
  const std::vector<int64_t> is = ConstDims(*idx_v);
  GJ_ASSIGN_OR_RETURN(const int axis, NormAxis(ctx, ctx.AttrInt("axis", 0), rank));
  std::optional<std::vector<int64_t>> dims = ConstantDims(ds, 0, ds.size());
  if (!dims) return ctx.Unimplemented("ScatterElements into symbolic dims");
  if (static_cast<int>(is.size()) != rank ||
      ctx.type(updates).shape != Shape(is.begin(), is.end())) {
    return ctx.Invalid("indices and updates must have one shape, of data's rank");
  }
  for (int d = 0; d < rank; ++d) {
    if (is[d] > (*dims)[d]) return ctx.Invalid("indices larger than data in a dim");
  }
  int64_t numel = 1;
  for (int64_t d : *dims) numel *= d;
  const int64_t n = static_cast<int64_t>(indices.size());
  std::vector<int64_t> row_of(n);
  for (int64_t p = 0; p < n; ++p) {
    int64_t rest = p, flat = 0, stride = 1;
    for (int d = rank - 1; d >= 0; --d) {  // p's coordinates, last dim first
      int64_t c = rest % is[d];
      rest /= is[d];
      if (d == axis) {
        GJ_ASSIGN_OR_RETURN(c, InBounds(ctx, indices[p], (*dims)[d], d));
      }
      flat += c * stride;
      stride *= (*dims)[d];
    }
    row_of[p] = flat;
  }
  ValueId table = ctx.Op(OpCode::kReshape, {data}, {{"shape", Shape{numel, 1}}});
  ValueId flat = ctx.Op(OpCode::kReshape, {updates}, {{"shape", Shape{n, 1}}});
  GJ_ASSIGN_OR_RETURN(ValueId out, ScatterRows(ctx, "ScatterElements", table, numel, flat, row_of));
  return ctx.SetOut(0, ctx.Op(OpCode::kReshape, {out}, {{"shape", ds}}));
}

// ReverseSequence(input, sequence_lens) with the lengths known at import: each batch
// entry's first sequence_lens[b] time steps reversed, the rest kept: a gather of constant
// rows of input viewed as [dim0 * dim1, rest] (time and batch are its first two dims).
absl::Status ReverseSequence(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  GJ_ASSIGN_OR_RETURN(std::vector<int64_t> lens, ctx.InConstInts(1));
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  const Shape xs = ctx.type(x).shape;
  const int64_t time_axis = ctx.AttrInt("time_axis", 0), batch_axis = ctx.AttrInt("batch_axis", 1);
  if (xs.size() < 2 || time_axis + batch_axis != 1 || time_axis < 0 || batch_axis < 0) {
    return ctx.Invalid("time_axis and batch_axis must be 0 and 1 (either way) of rank >= 2");
  }
  std::optional<std::vector<int64_t>> dims = ConstantDims(xs, 0, 2);
  if (!dims) return ctx.Unimplemented("ReverseSequence over symbolic time or batch");
  const int64_t steps = (*dims)[time_axis], batch = (*dims)[batch_axis];
  if (static_cast<int64_t>(lens.size()) != batch) {
    return ctx.Invalid(
        absl::StrCat("sequence_lens has ", lens.size(), " entries for a batch of ", batch));
  }
  std::vector<int64_t> take((*dims)[0] * (*dims)[1]);
  for (int64_t b = 0; b < batch; ++b) {
    if (lens[b] < 0 || lens[b] > steps) {
      return ctx.Invalid(
          absl::StrCat("sequence_lens[", b, "] = ", lens[b], " outside [0, ", steps, "]"));
    }
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
      auto row = [&](int64_t step) { return time_axis == 0 ? step * batch + b : b * steps + step; };
      take[row(t)] = row(from);
    }
  }
  const Shape rest(xs.begin() + 2, xs.end());
  ValueId table = ctx.Op(OpCode::kReshape, {x},
                         {{"shape", Shape{(*dims)[0] * (*dims)[1], ir::NumElements(rest)}}});
  ValueId picked = ctx.Op(OpCode::kGather, {table, ConstI64(ctx, take)});
  return ctx.SetOut(0, ctx.Op(OpCode::kReshape, {picked}, {{"shape", xs}}));
}

}  // namespace

void AddIndexOps(OpTable* t) {
  (*t)["GatherElements"] = GatherElements;
  (*t)["ScatterND"] = ScatterND;
  (*t)["ScatterElements"] = ScatterElements;
  (*t)["GatherND"] = GatherND;
  (*t)["ReverseSequence"] = ReverseSequence;
  (*t)["Pad"] = Pad;
}

}  // namespace graphjit::onnx
