// Neural-network ops that are graphjit ops or exact compositions of them: MatMul, Gemm,
// Softmax / LogSoftmax / Hardmax, the normalizations (inference only), global pooling,
// Dropout (inference) and OneHot. Each composition follows the ONNX reference's order of
// operations, so f32 results round the way the reference's do.
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

absl::Status MatMul(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId a, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId b, ctx.InNode(1));
  if (!ir::IsFloat(ctx.type(a).dtype)) return ctx.Unimplemented("MatMul of integers");
  // numpy promotes 1-D operands to matrices and drops the added dim afterwards.
  const bool a_vec = ctx.type(a).rank() == 1, b_vec = ctx.type(b).rank() == 1;
  if (a_vec) a = Reshape(ctx, a, {1, ctx.type(a).shape[0]});
  if (b_vec) b = Reshape(ctx, b, {ctx.type(b).shape[0], 1});
  ValueId y = ctx.Op(OpCode::kMatmul, {a, b});
  GJ_RETURN_IF_ERROR(ctx.BuilderStatus());
  Shape shape = ctx.type(y).shape;
  if (b_vec) shape.erase(shape.end() - 1);
  if (a_vec) shape.erase(shape.end() - (b_vec ? 1 : 2));
  return ctx.SetOut(0, Reshape(ctx, y, shape));
}

absl::Status Gemm(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId a, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId b, ctx.InNode(1));
  if (!ir::IsFloat(ctx.type(a).dtype)) return ctx.Unimplemented("Gemm of integers");
  if (ctx.AttrInt("transA", 0)) a = onnx::Transpose(ctx, a, {1, 0});
  if (ctx.AttrInt("transB", 0)) b = onnx::Transpose(ctx, b, {1, 0});
  const float alpha = ctx.AttrFloat("alpha", 1.0f), beta = ctx.AttrFloat("beta", 1.0f);
  ValueId y = ctx.Op(OpCode::kMatmul, {a, b});
  if (alpha != 1.0f) y = ctx.Op(OpCode::kMul, {y, ctx.ScalarLike(alpha, y)});
  if (ctx.HasInput(2)) {
    GJ_ASSIGN_OR_RETURN(ValueId c, ctx.InNode(2));
    if (beta != 1.0f) c = ctx.Op(OpCode::kMul, {c, ctx.ScalarLike(beta, c)});
    y = ctx.Op(OpCode::kAdd, {y, c});
  }
  return ctx.SetOut(0, y);
}

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

template <SoftmaxKind kKind>
absl::Status SoftmaxFamily(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  const Shape shape = ctx.type(x).shape;
  const int rank = static_cast<int>(shape.size());
  const bool legacy = ctx.opset() < 13;  // before 13: over dims [axis, rank) as one
  GJ_ASSIGN_OR_RETURN(int axis, NormAxis(ctx, ctx.AttrInt("axis", legacy ? 1 : -1), rank));
  ValueId in = x;
  int over = axis;
  if (legacy) {
    in = Reshape(ctx, x, {DimProduct(shape, 0, axis), DimProduct(shape, axis, rank)});
    over = 1;
  }
  ValueId y;
  const ir::Attrs keep = {{"axis", int64_t{over}}, {"keepdim", true}};
  switch (kKind) {
    case SoftmaxKind::kSoftmax:
      if (!ir::IsFloat(ctx.type(x).dtype)) return ctx.Unimplemented("Softmax of integers");
      y = ctx.Op(OpCode::kSoftmax, {in}, {{"axis", int64_t{over}}});
      break;
    case SoftmaxKind::kLogSoftmax: {
      if (!ir::IsFloat(ctx.type(x).dtype)) return ctx.Unimplemented("LogSoftmax of integers");
      ValueId shifted = ctx.Op(OpCode::kSub, {in, ctx.Op(OpCode::kReduceMax, {in}, keep)});
      ValueId sum = ctx.Op(OpCode::kReduceSum, {ctx.Op(OpCode::kExp, {shifted})}, keep);
      y = ctx.Op(OpCode::kSub, {shifted, ctx.Op(OpCode::kLog, {sum})});
      break;
    }
    case SoftmaxKind::kHardmax: {
      // 1 at the first maximum along the axis, 0 elsewhere.
      ValueId arg = ctx.Op(OpCode::kArgMax, {in}, keep);
      GJ_RETURN_IF_ERROR(ctx.BuilderStatus());
      ValueId iota =
          ctx.Op(OpCode::kIota, {},
                 {{"axis", int64_t{over}}, {"dtype", DType::kI64}, {"shape", ctx.type(in).shape}});
      y = ctx.Op(OpCode::kCast, {ctx.Op(OpCode::kEq, {iota, arg})}, {{"dtype", ctx.type(x).dtype}});
      break;
    }
  }
  return ctx.SetOut(0, Reshape(ctx, y, shape));
}

absl::Status LayerNormalization(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId scale, ctx.InNode(1));
  if (!ir::IsFloat(ctx.type(x).dtype)) return ctx.Unimplemented("LayerNormalization of integers");
  const Shape shape = ctx.type(x).shape;
  const int rank = static_cast<int>(shape.size());
  GJ_ASSIGN_OR_RETURN(int axis, NormAxis(ctx, ctx.AttrInt("axis", -1), rank));
  // The normalized dims as one, so each statistic is one reduction (as the reference).
  Shape rows(shape.begin(), shape.begin() + axis);
  Shape flat = rows;
  flat.push_back(DimProduct(shape, axis, rank));
  Shape stats = rows;
  stats.resize(rank, 1);
  const ir::Attrs keep = {{"axis", int64_t{axis}}, {"keepdim", true}};
  ValueId xm = Reshape(ctx, x, flat);
  ValueId mean = ctx.Op(OpCode::kReduceMean, {xm}, keep);
  ValueId diff = ctx.Op(OpCode::kSub, {xm, mean});
  ValueId var = ctx.Op(OpCode::kReduceMean, {ctx.Op(OpCode::kMul, {diff, diff})}, keep);
  ValueId eps = ctx.ScalarLike(ctx.AttrFloat("epsilon", 1e-5f), x);
  ValueId inv_std =
      ctx.Op(OpCode::kDiv,
             {ctx.ScalarLike(1, x), ctx.Op(OpCode::kSqrt, {ctx.Op(OpCode::kAdd, {var, eps})})});
  ValueId y = Reshape(ctx, ctx.Op(OpCode::kMul, {diff, inv_std}), shape);
  y = ctx.Op(OpCode::kMul, {y, scale});
  if (ctx.HasInput(2)) {
    GJ_ASSIGN_OR_RETURN(ValueId bias, ctx.InNode(2));
    y = ctx.Op(OpCode::kAdd, {y, bias});
  }
  GJ_RETURN_IF_ERROR(ctx.SetOut(0, y));
  if (ctx.WantsOutput(1)) GJ_RETURN_IF_ERROR(ctx.SetOut(1, Reshape(ctx, mean, stats)));
  if (ctx.WantsOutput(2)) GJ_RETURN_IF_ERROR(ctx.SetOut(2, Reshape(ctx, inv_std, stats)));
  return absl::OkStatus();
}

// A per-channel vector [C] as [C, 1, ..., 1] against an [N, C, ...] input of `rank`.
absl::StatusOr<ValueId> PerChannel(Context& ctx, ValueId v, int rank) {
  if (ctx.type(v).rank() != 1) return ctx.Invalid("scale, bias, mean and var must be 1-D");
  Shape s = {ctx.type(v).shape[0]};
  s.resize(rank - 1, 1);
  return Reshape(ctx, v, s);
}

// scale * (x - mean) / sqrt(var + eps) + bias, in the reference's order.
ValueId Normalize(Context& ctx, ValueId x, ValueId scale, ValueId bias, ValueId mean, ValueId var) {
  ValueId eps = ctx.ScalarLike(ctx.AttrFloat("epsilon", 1e-5f), x);
  ValueId num = ctx.Op(OpCode::kMul, {scale, ctx.Op(OpCode::kSub, {x, mean})});
  ValueId den = ctx.Op(OpCode::kSqrt, {ctx.Op(OpCode::kAdd, {var, eps})});
  return ctx.Op(OpCode::kAdd, {ctx.Op(OpCode::kDiv, {num, den}), bias});
}

absl::Status BatchNormalization(Context& ctx) {
  if (ctx.AttrInt("training_mode", 0) != 0 || ctx.WantsOutput(1) || ctx.WantsOutput(2)) {
    return ctx.Unimplemented("training-mode BatchNormalization (running statistics)");
  }
  if (ctx.opset() < 9 && ctx.AttrInt("spatial", 1) == 0) {
    return ctx.Unimplemented("BatchNormalization with spatial=0");
  }
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  const int rank = ctx.type(x).rank();
  if (rank < 2) return ctx.Invalid("input must have rank >= 2");
  std::vector<ValueId> p;
  for (int i = 1; i <= 4; ++i) {
    GJ_ASSIGN_OR_RETURN(ValueId v, ctx.InNode(i));
    GJ_ASSIGN_OR_RETURN(ValueId channel, PerChannel(ctx, v, rank));
    p.push_back(channel);
  }
  return ctx.SetOut(0, Normalize(ctx, x, p[0], p[1], p[2], p[3]));
}

absl::Status InstanceNormalization(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId scale, ctx.InNode(1));
  GJ_ASSIGN_OR_RETURN(ValueId bias, ctx.InNode(2));
  const Shape shape = ctx.type(x).shape;
  const int rank = static_cast<int>(shape.size());
  if (rank < 3) return ctx.Invalid("input must have rank >= 3");
  const ir::Attrs keep = {{"axis", int64_t{2}}, {"keepdim", true}};
  ValueId xm = Reshape(ctx, x, {shape[0], shape[1], DimProduct(shape, 2, rank)});
  ValueId mean = ctx.Op(OpCode::kReduceMean, {xm}, keep);
  ValueId diff = ctx.Op(OpCode::kSub, {xm, mean});
  ValueId var = ctx.Op(OpCode::kReduceMean, {ctx.Op(OpCode::kMul, {diff, diff})}, keep);
  Shape stats = {shape[0], shape[1]};
  stats.resize(rank, 1);
  GJ_ASSIGN_OR_RETURN(ValueId scale_c, PerChannel(ctx, scale, rank));
  GJ_ASSIGN_OR_RETURN(ValueId bias_c, PerChannel(ctx, bias, rank));
  ValueId y =
      Normalize(ctx, x, scale_c, bias_c, Reshape(ctx, mean, stats), Reshape(ctx, var, stats));
  return ctx.SetOut(0, y);
}

template <OpCode kOp>
absl::Status GlobalPool(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  const Shape shape = ctx.type(x).shape;
  const int rank = static_cast<int>(shape.size());
  if (rank < 3) return ctx.Invalid("input must have rank >= 3");
  ValueId flat = Reshape(ctx, x, {shape[0], shape[1], DimProduct(shape, 2, rank)});
  ValueId pooled = ctx.Op(kOp, {flat}, {{"axis", int64_t{2}}, {"keepdim", true}});
  Shape out = {shape[0], shape[1]};
  out.resize(rank, 1);
  return ctx.SetOut(0, Reshape(ctx, pooled, out));
}

// (x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9) over `axes`, as the reference.
absl::Status MeanVarianceNormalization(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  if (!ir::IsFloat(ctx.type(x).dtype)) return ctx.Unimplemented("integers");
  GJ_ASSIGN_OR_RETURN(std::vector<int> axes,
                      NormAxes(ctx, ctx.AttrInts("axes").value_or(std::vector<int64_t>{0, 2, 3}),
                               ctx.type(x).rank()));
  ValueId mean = ReduceAxes(ctx, OpCode::kReduceMean, x, axes, true);
  ValueId mean_sq = ReduceAxes(ctx, OpCode::kReduceMean, ctx.Op(OpCode::kMul, {x, x}), axes, true);
  ValueId var = ctx.Op(OpCode::kSub, {mean_sq, ctx.Op(OpCode::kMul, {mean, mean})});
  ValueId den = ctx.Op(OpCode::kAdd, {ctx.Op(OpCode::kSqrt, {var}), ctx.ScalarLike(1e-9, x)});
  return ctx.SetOut(0, ctx.Op(OpCode::kDiv, {ctx.Op(OpCode::kSub, {x, mean}), den}));
}

// x / (bias + alpha / size * sum of x^2 over a window of channels) ^ beta: the window
// sum as shifted slices of the zero-padded squares.
absl::Status Lrn(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  if (!ir::IsFloat(ctx.type(x).dtype)) return ctx.Unimplemented("integers");
  const Shape shape = ctx.type(x).shape;
  const int64_t size = ctx.AttrInt("size", 0);
  if (size <= 0 || shape.size() < 2) return ctx.Invalid("size must be positive, rank >= 2");
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;  // floor and ceil of (size-1)/2
  ValueId sq = ctx.Op(OpCode::kMul, {x, x});
  std::vector<ValueId> parts;
  Shape pad = shape;
  if (lo > 0) {
    pad[1] = lo;
    parts.push_back(
        ctx.Op(OpCode::kFull, {}, {{"value", 0.0}, {"dtype", ctx.type(x).dtype}, {"shape", pad}}));
  }
  parts.push_back(sq);
  if (hi > 0) {
    pad[1] = hi;
    parts.push_back(
        ctx.Op(OpCode::kFull, {}, {{"value", 0.0}, {"dtype", ctx.type(x).dtype}, {"shape", pad}}));
  }
  ValueId padded = parts.size() == 1 ? sq : ctx.Op(OpCode::kConcat, parts, {{"axis", int64_t{1}}});
  ValueId sum = ir::kInvalidValue;
  for (int64_t k = 0; k < size; ++k) {
    ValueId window = ctx.Op(OpCode::kSlice, {padded},
                            {{"axis", int64_t{1}}, {"start", SymExpr(k)}, {"end", shape[1] + k}});
    sum = k == 0 ? window : ctx.Op(OpCode::kAdd, {sum, window});
  }
  const double alpha = ctx.AttrFloat("alpha", 1e-4f), beta = ctx.AttrFloat("beta", 0.75f);
  const double bias = ctx.AttrFloat("bias", 1.0f);
  ValueId scaled = ctx.Op(OpCode::kMul, {ctx.ScalarLike(alpha / size, x), sum});
  ValueId base = ctx.Op(OpCode::kAdd, {ctx.ScalarLike(bias, x), scaled});
  ValueId den = ctx.Op(OpCode::kPow, {base, ctx.ScalarLike(beta, x)});
  return ctx.SetOut(0, ctx.Op(OpCode::kDiv, {x, den}));
}

absl::Status Dropout(Context& ctx) {
  bool training = false;
  if (ctx.opset() >= 12 && ctx.HasInput(2)) {
    GJ_ASSIGN_OR_RETURN(std::vector<SymExpr> t, ctx.InInts(2));
    training = t.size() == 1 && t[0].AsConstant() != 0;
  }
  if (training && ctx.HasInput(1)) {
    // Training mode with ratio 0 drops nothing: the identity (torch's F.dropout(x, p=0.0)
    // defaults to training=True, and torchvision's swin_t exports it so).
    absl::StatusOr<std::vector<double>> ratio = ctx.InConstDoubles(1);
    if (ratio.ok() && ratio->size() == 1 && (*ratio)[0] == 0.0) training = false;
  }
  if (training) return ctx.Unimplemented("training-mode Dropout (random)");
  GJ_ASSIGN_OR_RETURN(const Value* in, ctx.In(0));
  ctx.SetOutValue(0, *in);
  if (ctx.WantsOutput(1)) {
    // Inference keeps every element.
    return ctx.SetOut(1, ctx.Op(OpCode::kFull, {},
                                {{"value", 1.0}, {"dtype", DType::kBool}, {"shape", in->shape}}));
  }
  return absl::OkStatus();
}

absl::Status OneHot(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(const Value* idx_v, ctx.In(0));
  GJ_ASSIGN_OR_RETURN(ValueId idx,
                      IsIntegerElem(idx_v->elem_type) ? ctx.InIndexNode(0) : ctx.InNode(0));
  if (ctx.type(idx).dtype != DType::kI64) {
    idx = ctx.Op(OpCode::kCast, {idx}, {{"dtype", DType::kI64}});
  }
  GJ_ASSIGN_OR_RETURN(std::vector<double> depth_values, ctx.InConstDoubles(1));
  if (depth_values.size() != 1) return ctx.Invalid("depth must have one element");
  const double depth_value = depth_values[0];
  if (!(depth_value >= 1 && depth_value < 1e9)) return ctx.Invalid("depth must be positive");
  const int64_t depth = static_cast<int64_t>(depth_value);
  GJ_ASSIGN_OR_RETURN(const Value* values_v, ctx.In(2));
  const int32_t values_elem = values_v->elem_type;
  GJ_ASSIGN_OR_RETURN(ValueId values, ctx.InNode(2));
  const int rank = ctx.type(idx).rank() + 1;
  GJ_ASSIGN_OR_RETURN(int axis, NormAxis(ctx, ctx.AttrInt("axis", -1), rank));
  // Negative indices count from the end of the depth.
  ValueId zero = ctx.b().Scalar(0, DType::kI64);
  ValueId wrapped = ctx.Op(OpCode::kAdd, {idx, ctx.b().Scalar(depth, DType::kI64)});
  idx = ctx.Op(OpCode::kWhere, {ctx.Op(OpCode::kLt, {idx, zero}), wrapped, idx});
  Shape spread = ctx.type(idx).shape;
  spread.insert(spread.begin() + axis, 1);
  Shape along(rank, 1);
  along[axis] = depth;
  ValueId iota = ctx.Op(OpCode::kIota, {},
                        {{"axis", int64_t{axis}}, {"dtype", DType::kI64}, {"shape", along}});
  ValueId hot = ctx.Op(OpCode::kEq, {Reshape(ctx, idx, spread), iota});
  auto pick = [&](int64_t i) {
    ValueId s = ctx.Op(OpCode::kSlice, {values},
                       {{"axis", int64_t{0}}, {"start", SymExpr(i)}, {"end", SymExpr(i + 1)}});
    return Reshape(ctx, s, {});
  };
  return ctx.SetOut(0, ctx.Op(OpCode::kWhere, {hot, pick(1), pick(0)}), values_elem);
}

}  // namespace

void AddNnOps(OpTable* t) {
  (*t)["MatMul"] = MatMul;
  (*t)["Gemm"] = Gemm;
  (*t)["Softmax"] = SoftmaxFamily<SoftmaxKind::kSoftmax>;
  (*t)["LogSoftmax"] = SoftmaxFamily<SoftmaxKind::kLogSoftmax>;
  (*t)["Hardmax"] = SoftmaxFamily<SoftmaxKind::kHardmax>;
  (*t)["LayerNormalization"] = LayerNormalization;
  (*t)["BatchNormalization"] = BatchNormalization;
  (*t)["InstanceNormalization"] = InstanceNormalization;
  (*t)["GlobalAveragePool"] = GlobalPool<OpCode::kReduceMean>;
  (*t)["GlobalMaxPool"] = GlobalPool<OpCode::kReduceMax>;
  (*t)["MeanVarianceNormalization"] = MeanVarianceNormalization;
  (*t)["LRN"] = Lrn;
  (*t)["Dropout"] = Dropout;
  (*t)["OneHot"] = OneHot;
}

}  // namespace graphjit::onnx
