// Shape computations and the ops that consume them: Shape, Size, Constant,
// ConstantOfShape, Range, Reshape, Flatten, Squeeze, Unsqueeze, Expand. Whatever is known
// at import (every dim is a SymExpr) is folded, so the graph keeps no shape ops and stays
// symbolic in the dynamic dims.
#include <algorithm>
#include <cmath>

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

std::vector<int64_t> Dims(const Shape& s) {
  std::vector<int64_t> out;
  for (const SymExpr& d : s) out.push_back(d.AsConstant().value_or(-1));
  return out;
}
bool IsConstShape(const Shape& s) {
  return std::all_of(s.begin(), s.end(), [](const SymExpr& d) { return d.IsConstant(); });
}

// Output 0 is input 0 with another shape: folded if the input is known, else a reshape.
absl::Status ReshapeTo(Context& ctx, Shape shape) {
  GJ_ASSIGN_OR_RETURN(const Value* in, ctx.In(0));
  if (ir::NumElements(shape) != ir::NumElements(in->shape)) {
    return ctx.Invalid(absl::StrCat("cannot reshape ", ir::ShapeToString(in->shape), " to ",
                                    ir::ShapeToString(shape)));
  }
  if (IsConstShape(shape) && in->id == ir::kInvalidValue) {
    if (in->ints) {
      ctx.SetOutInts(0, in->elem_type, Dims(shape), *in->ints);
      return absl::OkStatus();
    }
    // A reshaped constant is a constant (a weight stays a param), sharing the buffer.
    Value v = *in;
    GJ_ASSIGN_OR_RETURN(runtime::Tensor t, in->constant->Reshape(Dims(shape)));
    v.constant = std::move(t);
    v.shape = std::move(shape);
    ctx.SetOutValue(0, std::move(v));
    return absl::OkStatus();
  }
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  return ctx.SetOut(0, Reshape(ctx, x, std::move(shape)));
}

absl::Status ShapeOp(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(const Value* in, ctx.In(0));
  const int rank = static_cast<int>(in->shape.size());
  int64_t start = ctx.AttrInt("start", 0), end = ctx.AttrInt("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  std::vector<SymExpr> dims(in->shape.begin() + start, in->shape.begin() + end);
  const int64_t n = static_cast<int64_t>(dims.size());
  ctx.SetOutInts(0, pb::TensorProto::INT64, {n}, std::move(dims));
  return absl::OkStatus();
}

absl::Status Size(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(const Value* in, ctx.In(0));
  ctx.SetOutInts(0, pb::TensorProto::INT64, {}, {ir::NumElements(in->shape)});
  return absl::OkStatus();
}

absl::Status Constant(Context& ctx) {
  Value v;
  runtime::Tensor t;
  if (const pb::AttributeProto* a = ctx.Attr("value")) {
    absl::StatusOr<runtime::Tensor> made =
        TensorFromProto(a->t(), absl::StrCat(ctx.NodeLabel(), ": value"), &v.elem_type);
    if (!made.ok()) return made.status();
    t = *std::move(made);
  } else if (const pb::AttributeProto* a = ctx.Attr("value_float")) {
    t = runtime::Tensor::Scalar(DType::kF32, a->f());
    v.elem_type = pb::TensorProto::FLOAT;
  } else if (const pb::AttributeProto* a = ctx.Attr("value_int")) {
    t = runtime::Tensor::Scalar(DType::kI64, 0);
    t.data<int64_t>()[0] = a->i();
    v.elem_type = pb::TensorProto::INT64;
  } else if (const pb::AttributeProto* a = ctx.Attr("value_floats")) {
    std::vector<float> f(a->floats().begin(), a->floats().end());
    GJ_ASSIGN_OR_RETURN(t, runtime::Tensor::FromVector<float>({static_cast<int64_t>(f.size())}, f));
    v.elem_type = pb::TensorProto::FLOAT;
  } else if (const pb::AttributeProto* a = ctx.Attr("value_ints")) {
    std::vector<int64_t> i(a->ints().begin(), a->ints().end());
    GJ_ASSIGN_OR_RETURN(t,
                        runtime::Tensor::FromVector<int64_t>({static_cast<int64_t>(i.size())}, i));
    v.elem_type = pb::TensorProto::INT64;
  } else {
    return ctx.Unimplemented("a Constant other than a dense tensor, float(s) or int(s)");
  }
  v.shape = ir::ConstShape(t.shape());
  v.constant = std::move(t);
  ctx.SetOutValue(0, std::move(v));
  return absl::OkStatus();
}

absl::Status ConstantOfShape(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(std::vector<SymExpr> dims, ctx.InInts(0));
  int32_t elem = pb::TensorProto::FLOAT;
  double value = 0;
  if (const pb::AttributeProto* a = ctx.Attr("value")) {
    GJ_ASSIGN_OR_RETURN(runtime::Tensor t, TensorFromProto(a->t(), ctx.NodeLabel(), &elem));
    if (t.numel() != 1) return ctx.Invalid("value must have one element");
    value = t.ValueAt(0);
  }
  Shape shape(dims.begin(), dims.end());
  for (const SymExpr& d : shape) {
    if (d.AsConstant().value_or(0) < 0) return ctx.Invalid("a negative dim in the shape");
  }
  if (IsConstShape(shape) && (IsIntegerElem(elem) || elem == pb::TensorProto::BOOL) &&
      ir::NumElements(shape).AsConstant().value_or(0) <= 4096) {
    const int64_t n = *ir::NumElements(shape).AsConstant();
    ctx.SetOutInts(0, elem, Dims(shape),
                   std::vector<SymExpr>(n, SymExpr(static_cast<int64_t>(value))));
    return absl::OkStatus();
  }
  std::optional<DType> dtype = DTypeOfElem(elem);
  if (!dtype) return ctx.Unimplemented(absl::StrCat("a value of type ", ElemTypeName(elem)));
  return ctx.SetOut(
      0, ctx.Op(OpCode::kFull, {}, {{"value", value}, {"dtype", *dtype}, {"shape", shape}}), elem);
}

absl::Status Range(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(const Value* start_v, ctx.In(0));
  if (IsIntegerElem(start_v->elem_type)) {
    GJ_ASSIGN_OR_RETURN(std::vector<SymExpr> start, ctx.InInts(0));
    GJ_ASSIGN_OR_RETURN(std::vector<SymExpr> limit, ctx.InInts(1));
    GJ_ASSIGN_OR_RETURN(std::vector<int64_t> delta, ctx.InConstInts(2));
    if (start.size() != 1 || limit.size() != 1 || delta.size() != 1 || delta[0] == 0) {
      return ctx.Invalid("start, limit and delta must be scalars, delta not 0");
    }
    const int64_t d = delta[0];
    // ceil((limit - start) / delta), at least 0.
    SymExpr n =
        SymExpr::Max(SymExpr::FloorDiv(limit[0] - start[0] + (d > 0 ? d - 1 : d + 1), d), 0);
    std::optional<int64_t> count = n.AsConstant();
    if (count && *count <= 4096 && start[0].IsConstant()) {
      std::vector<SymExpr> values;
      for (int64_t i = 0; i < *count; ++i) values.push_back(start[0] + i * d);
      ctx.SetOutInts(0, start_v->elem_type, {*count}, std::move(values));
      return absl::OkStatus();
    }
    if (start_v->elem_type != pb::TensorProto::INT64) {
      return ctx.Unimplemented("a symbolic Range of a type other than INT64");
    }
    ValueId iota = ctx.Op(OpCode::kIota, {},
                          {{"axis", int64_t{0}}, {"dtype", DType::kI64}, {"shape", Shape{n}}});
    GJ_ASSIGN_OR_RETURN(ValueId s, ctx.InNode(0));
    ValueId scaled = ctx.Op(OpCode::kMul, {iota, ctx.b().Scalar(d, DType::kI64)});
    return ctx.SetOut(0, ctx.Op(OpCode::kAdd, {scaled, s}));
  }
  // Floats: start + i * delta, with the count from constant bounds.
  for (int i = 0; i < 3; ++i) {
    GJ_ASSIGN_OR_RETURN(const Value* v, ctx.In(i));
    if (!v->constant || v->constant->numel() != 1) {
      // Computed from a model input (a window's size, cast and divided): name it, so the
      // model is specialized on its value (onnx/specialize.h) and the bounds fold.
      const std::string input = ctx.DataInputBehind(ctx.node().input(i));
      if (!input.empty()) {
        return ctx.Unimplemented(
            absl::StrCat("a float Range's bounds depend on tensor data: input '", input,
                         "' must be known at import"));
      }
      return ctx.Unimplemented("a float Range whose bounds depend on tensor data");
    }
  }
  const double start = (*ctx.In(0))->constant->ValueAt(0);
  const double limit = (*ctx.In(1))->constant->ValueAt(0);
  const double delta = (*ctx.In(2))->constant->ValueAt(0);
  const double count = std::ceil((limit - start) / delta);
  if (!(count < 1e15)) return ctx.Invalid("the Range's bounds give no finite count");
  const int64_t n = std::max<int64_t>(static_cast<int64_t>(count), 0);
  GJ_ASSIGN_OR_RETURN(ValueId s, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId d, ctx.InNode(2));
  ValueId iota = ctx.Op(OpCode::kIota, {},
                        {{"axis", int64_t{0}}, {"dtype", ctx.type(s).dtype}, {"shape", Shape{n}}});
  return ctx.SetOut(0, ctx.Op(OpCode::kAdd, {ctx.Op(OpCode::kMul, {iota, d}), s}));
}

absl::Status ReshapeOp(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(const Value* in, ctx.In(0));
  GJ_ASSIGN_OR_RETURN(std::vector<SymExpr> target, ctx.InInts(1));
  const bool allowzero = ctx.AttrInt("allowzero", 0) != 0;
  Shape shape;
  int infer = -1;
  SymExpr known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    SymExpr d = target[i];
    std::optional<int64_t> c = d.AsConstant();
    if (c == 0 && !allowzero) {
      if (i >= in->shape.size()) return ctx.Invalid("a 0 in the shape beyond the input's rank");
      d = in->shape[i];
    } else if (c == -1) {
      if (infer >= 0) return ctx.Invalid("more than one -1 in the shape");
      infer = static_cast<int>(i);
    } else if (c && *c < -1) {
      return ctx.Invalid(absl::StrCat("dim ", *c, " in the shape"));
    }
    shape.push_back(d);
    if (static_cast<int>(i) != infer) known = known * d;
  }
  if (infer >= 0) {
    const SymExpr total = ir::NumElements(in->shape);
    std::optional<SymExpr> inferred = ExactDiv(total, known);
    if (!inferred) {
      return ctx.Unimplemented(absl::StrCat("cannot infer the -1 of the shape: ", total.ToString(),
                                            " elements over ", known.ToString()));
    }
    shape[infer] = *inferred;
  }
  return ReshapeTo(ctx, std::move(shape));
}

absl::Status Flatten(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(const Value* in, ctx.In(0));
  const int rank = static_cast<int>(in->shape.size());
  int64_t axis = ctx.AttrInt("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return ctx.Invalid(absl::StrCat("axis out of range"));
  const int a = static_cast<int>(axis);
  return ReshapeTo(ctx, {DimProduct(in->shape, 0, a), DimProduct(in->shape, a, rank)});
}

// Axes from the attribute (before opset 13) or the optional input 1.
absl::StatusOr<std::optional<std::vector<int64_t>>> AxesArg(Context& ctx) {
  if (ctx.opset() < 13) return ctx.AttrInts("axes");
  if (!ctx.HasInput(1)) return std::optional<std::vector<int64_t>>();
  GJ_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ctx.InConstInts(1));
  return std::optional<std::vector<int64_t>>(std::move(axes));
}

absl::Status Squeeze(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(const Value* in, ctx.In(0));
  const int rank = static_cast<int>(in->shape.size());
  GJ_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes_arg, AxesArg(ctx));
  std::vector<int> axes;
  if (axes_arg) {
    GJ_ASSIGN_OR_RETURN(axes, NormAxes(ctx, *axes_arg, rank));
  } else {
    for (int d = 0; d < rank; ++d) {
      if (in->shape[d].AsConstant() == 1) axes.push_back(d);
    }
  }
  Shape shape;
  for (int d = 0; d < rank; ++d) {
    if (!std::binary_search(axes.begin(), axes.end(), d)) {
      shape.push_back(in->shape[d]);
    } else if (in->shape[d].AsConstant() != 1) {
      return ctx.Invalid(
          absl::StrCat("cannot squeeze dim ", d, " of ", ir::ShapeToString(in->shape)));
    }
  }
  return ReshapeTo(ctx, std::move(shape));
}

absl::Status Unsqueeze(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(const Value* in, ctx.In(0));
  GJ_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes_arg, AxesArg(ctx));
  if (!axes_arg) return ctx.Invalid("Unsqueeze needs axes");
  const int out_rank = static_cast<int>(in->shape.size() + axes_arg->size());
  GJ_ASSIGN_OR_RETURN(std::vector<int> axes, NormAxes(ctx, *axes_arg, out_rank));
  if (axes.size() != axes_arg->size()) return ctx.Invalid("repeated axes");
  Shape shape;
  size_t next = 0;
  for (int d = 0; d < out_rank; ++d) {
    if (std::binary_search(axes.begin(), axes.end(), d)) {
      shape.push_back(1);
    } else {
      shape.push_back(in->shape[next++]);
    }
  }
  return ReshapeTo(ctx, std::move(shape));
}

absl::Status Expand(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(std::vector<SymExpr> target, ctx.InInts(1));
  // Known integers broadcast to a constant shape stay known (index grids).
  GJ_ASSIGN_OR_RETURN(const Value* in, ctx.In(0));
  if (std::optional<std::vector<SymExpr>> known = KnownGrid(*in)) {
    absl::StatusOr<Shape> shape = ir::BroadcastShapes(in->shape, target);
    if (!shape.ok()) return ctx.Invalid(shape.status().message());
    if (IsConstShape(*shape) && ir::NumElements(*shape).AsConstant().value_or(0) <= 4096) {
      const std::vector<int64_t> out_dims = Dims(*shape), in_dims = ConstDims(*in);
      const size_t rank = out_dims.size(), offset = rank - in_dims.size();
      std::vector<SymExpr> out;
      std::vector<int64_t> at(rank, 0);
      const int64_t count = *ir::NumElements(*shape).AsConstant();
      for (int64_t i = 0; i < count; ++i) {
        int64_t flat = 0;
        for (size_t a = offset; a < rank; ++a) {
          const int64_t d = in_dims[a - offset];
          flat = flat * d + (d == 1 ? 0 : at[a]);
        }
        out.push_back((*known)[flat]);
        for (int a = static_cast<int>(rank) - 1; a >= 0 && ++at[a] == out_dims[a]; --a) at[a] = 0;
      }
      ctx.SetOutInts(0, in->elem_type, out_dims, std::move(out));
      return absl::OkStatus();
    }
  }
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  // ONNX broadcasts both ways: a target dim of 1 keeps the input's dim.
  absl::StatusOr<Shape> shape = ir::BroadcastShapes(ctx.type(x).shape, target);
  if (!shape.ok()) return ctx.Invalid(shape.status().message());
  if (*shape == ctx.type(x).shape) return ctx.SetOut(0, x);
  return ctx.SetOut(0, ctx.Op(OpCode::kExpand, {x}, {{"shape", *shape}}));
}

}  // namespace

void AddShapeOps(OpTable* t) {
  (*t)["Shape"] = ShapeOp;
  (*t)["Size"] = Size;
  (*t)["Constant"] = Constant;
  (*t)["ConstantOfShape"] = ConstantOfShape;
  (*t)["Range"] = Range;
  (*t)["Reshape"] = ReshapeOp;
  (*t)["Flatten"] = Flatten;
  (*t)["Squeeze"] = Squeeze;
  (*t)["Unsqueeze"] = Unsqueeze;
  (*t)["Expand"] = Expand;
}

}  // namespace graphjit::onnx
