// Reductions over several axes (one graphjit reduction per axis), ArgMax / ArgMin,
// CumSum and TopK. ReduceProd has no graphjit op: over axes of known length it is the product of
// the axis's slices, multiplied in order.
#include <algorithm>

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

enum class Reduction { kSum, kMean, kMax, kMin, kL1, kL2, kSumSquare, kLogSum, kLogSumExp, kProd };

// The longest axis ReduceProd multiplies out slice by slice (a node per slice).
constexpr int64_t kMaxProdTerms = 64;

// x's product over `axes` (each of constant length, at most kMaxProdTerms): per axis the
// slices along it multiplied in order, the axis then of size 1; without keepdims the
// reduced axes are dropped at the end.
absl::StatusOr<ValueId> ProdAxes(Context& ctx, ValueId x, const std::vector<int>& axes,
                                 bool keepdims) {
  Shape shape = ctx.type(x).shape;
  for (int axis : axes) {
    std::optional<int64_t> n = shape[axis].AsConstant();
    if (!n) return ctx.Unimplemented("ReduceProd over a symbolic axis");
    if (*n < 1 || *n > kMaxProdTerms) {
      return ctx.Unimplemented(absl::StrCat("ReduceProd over an axis of ", *n, " elements (1 to ",
                                            kMaxProdTerms, " multiply out)"));
    }
    ValueId product = ir::kInvalidValue;
    for (int64_t i = 0; i < *n; ++i) {
      ValueId slice =
          ctx.Op(OpCode::kSlice, {x},
                 {{"axis", int64_t{axis}}, {"start", SymExpr(i)}, {"end", SymExpr(i + 1)}});
      product = i == 0 ? slice : ctx.Op(OpCode::kMul, {product, slice});
    }
    x = product;
    shape[axis] = SymExpr(1);
  }
  if (keepdims) return x;
  Shape kept;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) kept.push_back(shape[d]);
  }
  return ctx.Op(OpCode::kReshape, {x}, {{"shape", kept}});
}

template <Reduction kR>
absl::Status Reduce(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  const int rank = ctx.type(x).rank();
  const bool keepdims = ctx.AttrInt("keepdims", 1) != 0;
  std::optional<std::vector<int64_t>> axes_arg;
  // ReduceSum takes its axes as an input from opset 13, the others from opset 18.
  if (kR == Reduction::kSum && ctx.opset() >= 13) {
    if (ctx.HasInput(1)) {
      GJ_ASSIGN_OR_RETURN(axes_arg, ctx.InConstInts(1));
    }
  } else {
    axes_arg = ctx.AttrInts("axes");
  }
  if (!axes_arg || axes_arg->empty()) {
    if (ctx.AttrInt("noop_with_empty_axes", 0) != 0) return ctx.SetOut(0, x);
    axes_arg.emplace();
    for (int d = 0; d < rank; ++d) axes_arg->push_back(d);
  }
  GJ_ASSIGN_OR_RETURN(std::vector<int> axes, NormAxes(ctx, *axes_arg, rank));
  const DType dtype = ctx.type(x).dtype;
  if (dtype == DType::kBool) return ctx.Unimplemented("a reduction of BOOL");
  const bool is_float = ir::IsFloat(dtype);
  switch (kR) {
    case Reduction::kSum:
      return ctx.SetOut(0, ReduceAxes(ctx, OpCode::kReduceSum, x, axes, keepdims));
    case Reduction::kMean:
      if (!is_float) return ctx.Unimplemented("ReduceMean of integers (it truncates)");
      return ctx.SetOut(0, ReduceAxes(ctx, OpCode::kReduceMean, x, axes, keepdims));
    case Reduction::kMax:
      return ctx.SetOut(0, ReduceAxes(ctx, OpCode::kReduceMax, x, axes, keepdims));
    case Reduction::kMin: {
      // min(x) = -max(-x), exact (the i64 minimum aside, where negation wraps).
      ValueId neg = ctx.Op(OpCode::kNeg, {x});
      return ctx.SetOut(
          0, ctx.Op(OpCode::kNeg, {ReduceAxes(ctx, OpCode::kReduceMax, neg, axes, keepdims)}));
    }
    case Reduction::kL1:
      return ctx.SetOut(
          0, ReduceAxes(ctx, OpCode::kReduceSum, ctx.Op(OpCode::kAbs, {x}), axes, keepdims));
    case Reduction::kSumSquare:
    case Reduction::kL2: {
      ValueId sq =
          ReduceAxes(ctx, OpCode::kReduceSum, ctx.Op(OpCode::kMul, {x, x}), axes, keepdims);
      if (kR == Reduction::kSumSquare) return ctx.SetOut(0, sq);
      if (!is_float) return ctx.Unimplemented("ReduceL2 of integers");
      return ctx.SetOut(0, ctx.Op(OpCode::kSqrt, {sq}));
    }
    case Reduction::kProd: {
      GJ_ASSIGN_OR_RETURN(ValueId product, ProdAxes(ctx, x, axes, keepdims));
      return ctx.SetOut(0, product);
    }
    case Reduction::kLogSum:
    case Reduction::kLogSumExp: {
      if (!is_float) return ctx.Unimplemented("a log reduction of integers");
      ValueId in = kR == Reduction::kLogSumExp ? ctx.Op(OpCode::kExp, {x}) : x;
      return ctx.SetOut(
          0, ctx.Op(OpCode::kLog, {ReduceAxes(ctx, OpCode::kReduceSum, in, axes, keepdims)}));
    }
  }
  return absl::OkStatus();
}

// The indices 0..n-1 backwards: flips an axis of constant size.
std::vector<int64_t> Reversed(int64_t n) {
  std::vector<int64_t> r;
  for (int64_t i = n - 1; i >= 0; --i) r.push_back(i);
  return r;
}

template <OpCode kOp>
absl::Status ArgReduce(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(int axis, NormAxis(ctx, ctx.AttrInt("axis", 0), ctx.type(x).rank()));
  const bool keepdims = ctx.AttrInt("keepdims", 1) != 0;
  if (ctx.AttrInt("select_last_index", 0) == 0) {
    return ctx.SetOut(0, ctx.Op(kOp, {x}, {{"axis", int64_t{axis}}, {"keepdim", keepdims}}),
                      pb::TensorProto::INT64);
  }
  // The last extreme is the first one of the reversed axis, counted from the end.
  std::optional<int64_t> n = ctx.type(x).shape[axis].AsConstant();
  if (!n || *n > kMaxIndexVector) return ctx.Unimplemented("select_last_index on a symbolic axis");
  ValueId flipped = TakeAlongAxis(ctx, x, axis, Reversed(*n));
  ValueId first = ctx.Op(kOp, {flipped}, {{"axis", int64_t{axis}}, {"keepdim", keepdims}});
  return ctx.SetOut(0, ctx.Op(OpCode::kSub, {ctx.b().Scalar(*n - 1, DType::kI64), first}),
                    pb::TensorProto::INT64);
}

// TopK: `top_k` for the values and `top_k_indices` for the indices (each output only if
// wanted); K (an input from opset 10, else the attribute k) must be known at import, a
// model input being specialized on its value. `sorted=0` allows any order: the sorted one.
absl::Status TopK(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(int axis, NormAxis(ctx, ctx.AttrInt("axis", -1), ctx.type(x).rank()));
  SymExpr k = ctx.AttrInt("k", -1);
  if (ctx.opset() >= 10) {
    GJ_ASSIGN_OR_RETURN(std::vector<SymExpr> ks, ctx.InInts(1));
    if (ks.size() != 1) return ctx.Invalid("K must hold one value");
    k = ks[0];
  }
  if (std::optional<int64_t> c = k.AsConstant(); c && *c < 0) {
    return ctx.Invalid(absl::StrCat("K=", *c, " is negative"));
  }
  ir::Attrs attrs{{"k", k}, {"axis", int64_t{axis}}, {"largest", ctx.AttrInt("largest", 1) != 0}};
  if (ctx.WantsOutput(0)) GJ_RETURN_IF_ERROR(ctx.SetOut(0, ctx.Op(OpCode::kTopK, {x}, attrs)));
  if (ctx.WantsOutput(1)) {
    GJ_RETURN_IF_ERROR(
        ctx.SetOut(1, ctx.Op(OpCode::kTopKIndices, {x}, attrs), pb::TensorProto::INT64));
  }
  return absl::OkStatus();
}

absl::Status CumSum(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(std::vector<int64_t> axis_arg, ctx.InConstInts(1));
  if (axis_arg.size() != 1) return ctx.Invalid("axis must be a scalar");
  const Shape shape = ctx.type(x).shape;
  GJ_ASSIGN_OR_RETURN(int axis, NormAxis(ctx, axis_arg[0], static_cast<int>(shape.size())));
  const bool reverse = ctx.AttrInt("reverse", 0) != 0;
  const bool exclusive = ctx.AttrInt("exclusive", 0) != 0;
  std::optional<int64_t> n = shape[axis].AsConstant();
  if (reverse && (!n || *n > kMaxIndexVector)) {
    return ctx.Unimplemented("a reverse CumSum on a symbolic axis");
  }
  if (reverse) x = TakeAlongAxis(ctx, x, axis, Reversed(*n));
  if (exclusive) {
    // [0, x_0, x_0 + x_1, ...]: the inclusive sums of x shifted by one.
    Shape one = shape;
    one[axis] = 1;
    ValueId zeros =
        ctx.Op(OpCode::kFull, {}, {{"value", 0.0}, {"dtype", ctx.type(x).dtype}, {"shape", one}});
    ValueId head =
        ctx.Op(OpCode::kSlice, {x},
               {{"axis", int64_t{axis}}, {"start", SymExpr(0)}, {"end", shape[axis] - 1}});
    x = ctx.Op(OpCode::kConcat, {zeros, head}, {{"axis", int64_t{axis}}});
  }
  ValueId y = ctx.Op(OpCode::kCumSum, {x}, {{"axis", int64_t{axis}}});
  if (reverse) y = TakeAlongAxis(ctx, y, axis, Reversed(*n));
  return ctx.SetOut(0, y);
}

}  // namespace

void AddReduceOps(OpTable* t) {
  (*t)["ReduceSum"] = Reduce<Reduction::kSum>;
  (*t)["ReduceMean"] = Reduce<Reduction::kMean>;
  (*t)["ReduceMax"] = Reduce<Reduction::kMax>;
  (*t)["ReduceMin"] = Reduce<Reduction::kMin>;
  (*t)["ReduceL1"] = Reduce<Reduction::kL1>;
  (*t)["ReduceL2"] = Reduce<Reduction::kL2>;
  (*t)["ReduceSumSquare"] = Reduce<Reduction::kSumSquare>;
  (*t)["ReduceLogSum"] = Reduce<Reduction::kLogSum>;
  (*t)["ReduceLogSumExp"] = Reduce<Reduction::kLogSumExp>;
  (*t)["ReduceProd"] = Reduce<Reduction::kProd>;
  (*t)["ArgMax"] = ArgReduce<OpCode::kArgMax>;
  (*t)["ArgMin"] = ArgReduce<OpCode::kArgMin>;
  (*t)["CumSum"] = CumSum;
  (*t)["TopK"] = TopK;
}

}  // namespace graphjit::onnx
