// The loss ops NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, in the ONNX
// reference's order of operations: the target's log-probability is picked by a one-hot
// select (as GatherElements), weighted, and reduced.
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

// loss for log-probabilities `input` [N, C, d..] and `target` [N, d..] (i64); `weight`
// [C] or kInvalidValue. Attributes ignore_index and reduction come from the node.
absl::StatusOr<ValueId> NllLoss(Context& ctx, ValueId input, ValueId target, ValueId weight) {
  const Shape in = ctx.type(input).shape;
  if (in.size() < 2 || ctx.type(target).rank() + 1 != static_cast<int>(in.size())) {
    return ctx.Invalid("input must be [N, C, ...] and target [N, ...]");
  }
  if (!ir::IsFloat(ctx.type(input).dtype)) return ctx.Unimplemented("integer inputs");
  const std::string reduction = ctx.AttrString("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none") {
    return ctx.Invalid(absl::StrCat("reduction '", reduction, "'"));
  }
  const DType dtype = ctx.type(input).dtype;
  const bool has_ignore = ctx.Attr("ignore_index") != nullptr;
  ValueId zero_i = ctx.b().Scalar(0, DType::kI64);
  ValueId ignored = ir::kInvalidValue;
  if (has_ignore) {
    ignored =
        ctx.Op(OpCode::kEq, {target, ctx.b().Scalar(ctx.AttrInt("ignore_index", 0), DType::kI64)});
    target = ctx.Op(OpCode::kWhere, {ignored, zero_i, target});  // any class: weight 0
  }
  GJ_RETURN_IF_ERROR(ctx.BuilderStatus());
  // -input[n, target[n, d..], d..], by a one-hot select over C and a max.
  Shape t_u = ctx.type(target).shape;
  t_u.insert(t_u.begin() + 1, 1);
  Shape along(in.size(), 1);
  along[1] = in[1];
  ValueId iota =
      ctx.Op(OpCode::kIota, {}, {{"axis", int64_t{1}}, {"dtype", DType::kI64}, {"shape", along}});
  ValueId hit = ctx.Op(OpCode::kEq, {Reshape(ctx, target, t_u), iota});
  ValueId picked =
      ctx.Op(OpCode::kWhere,
             {hit, input, ctx.b().Scalar(-std::numeric_limits<double>::infinity(), dtype)});
  ValueId loss =
      ctx.Op(OpCode::kNeg,
             {ctx.Op(OpCode::kReduceMax, {picked}, {{"axis", int64_t{1}}, {"keepdim", false}})});
  ValueId zero = ctx.b().Scalar(0, dtype);
  if (has_ignore) loss = ctx.Op(OpCode::kWhere, {ignored, zero, loss});
  ValueId gathered_weight = ir::kInvalidValue;
  if (weight != ir::kInvalidValue) {
    gathered_weight = ctx.Op(OpCode::kGather, {weight, target});
    if (has_ignore) gathered_weight = ctx.Op(OpCode::kWhere, {ignored, zero, gathered_weight});
  } else if (has_ignore) {
    gathered_weight = ctx.Op(OpCode::kWhere, {ignored, zero, ctx.b().Scalar(1, dtype)});
  }
  GJ_RETURN_IF_ERROR(ctx.BuilderStatus());
  std::vector<int> all;
  for (int d = 0; d < ctx.type(loss).rank(); ++d) all.push_back(d);
  if (gathered_weight != ir::kInvalidValue) {
    loss = ctx.Op(OpCode::kMul, {gathered_weight, loss});
    if (reduction == "mean") {
      ValueId total = ReduceAxes(ctx, OpCode::kReduceSum, loss, all, false);
      ValueId weights = ReduceAxes(ctx, OpCode::kReduceSum, gathered_weight, all, false);
      return ctx.Op(OpCode::kDiv, {total, weights});
    }
  }
  if (reduction == "mean") {
    // One mean over every element, as numpy's.
    ValueId flat = Reshape(ctx, loss, {ir::NumElements(ctx.type(loss).shape)});
    return ctx.Op(OpCode::kReduceMean, {flat}, {{"axis", int64_t{0}}, {"keepdim", false}});
  }
  if (reduction == "sum") return ReduceAxes(ctx, OpCode::kReduceSum, loss, all, false);
  return loss;
}

absl::Status NegativeLogLikelihoodLoss(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId input, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId target, ctx.InIndexNode(1));
  ValueId weight = ir::kInvalidValue;
  if (ctx.HasInput(2)) {
    GJ_ASSIGN_OR_RETURN(weight, ctx.InNode(2));
  }
  GJ_ASSIGN_OR_RETURN(ValueId loss, NllLoss(ctx, input, target, weight));
  return ctx.SetOut(0, loss);
}

absl::Status SoftmaxCrossEntropyLoss(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId scores, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId labels, ctx.InIndexNode(1));
  ValueId weight = ir::kInvalidValue;
  if (ctx.HasInput(2)) {
    GJ_ASSIGN_OR_RETURN(weight, ctx.InNode(2));
  }
  if (!ir::IsFloat(ctx.type(scores).dtype)) return ctx.Unimplemented("integer scores");
  // log(softmax): the reference's log(exp(x - max) / sum), not a fused log-softmax.
  ValueId log_prob =
      ctx.Op(OpCode::kLog, {ctx.Op(OpCode::kSoftmax, {scores}, {{"axis", int64_t{1}}})});
  GJ_ASSIGN_OR_RETURN(ValueId loss, NllLoss(ctx, log_prob, labels, weight));
  GJ_RETURN_IF_ERROR(ctx.SetOut(0, loss));
  if (ctx.WantsOutput(1)) return ctx.SetOut(1, log_prob);
  return absl::OkStatus();
}

}  // namespace

void AddLossOps(OpTable* t) {
  (*t)["NegativeLogLikelihoodLoss"] = NegativeLogLikelihoodLoss;
  (*t)["SoftmaxCrossEntropyLoss"] = SoftmaxCrossEntropyLoss;
}

}  // namespace graphjit::onnx
