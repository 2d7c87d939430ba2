// Unary math and activations: the ones graphjit has directly, and the ones that are
// exact compositions of its ops (Relu, LeakyRelu, HardSigmoid, Clip, ...). An activation
// that would need a function graphjit lacks (erf, cos, ...) is not registered, so refused.
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "onnx/op_helpers.h"
#include "onnx/ops.h"

namespace graphjit::onnx {
namespace {

using ir::DType;
using ir::OpCode;
using ir::SymExpr;
using ir::ValueId;

constexpr double kInf = std::numeric_limits<double>::infinity();

template <OpCode kOp>
absl::Status Unary(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  if (kOp == OpCode::kNeg) {
    const FoldFn fold = [](absl::Span<const SymExpr> x) -> std::optional<SymExpr> { return -x[0]; };
    if (TryFoldElementwise(ctx, fold)) return absl::OkStatus();
  }
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  return ctx.SetOut(0, ctx.Op(kOp, {x}));
}

// The float activations below take their input and return the output node.
using Activation = ValueId (*)(Context& ctx, ValueId x);

template <Activation kFn>
absl::Status FloatActivation(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  if (!ir::IsFloat(ctx.type(x).dtype)) {
    return ctx.Unimplemented(
        absl::StrCat(ctx.node().op_type(), " of ", ir::DTypeName(ctx.type(x).dtype)));
  }
  return ctx.SetOut(0, kFn(ctx, x));
}

ValueId Mul(Context& ctx, ValueId a, ValueId b) { return ctx.Op(OpCode::kMul, {a, b}); }
ValueId Add(Context& ctx, ValueId a, ValueId b) { return ctx.Op(OpCode::kAdd, {a, b}); }
ValueId Sub(Context& ctx, ValueId a, ValueId b) { return ctx.Op(OpCode::kSub, {a, b}); }
ValueId S(Context& ctx, double v, ValueId like) { return ctx.ScalarLike(v, like); }
ValueId Clamp01(Context& ctx, ValueId x) {
  x = ctx.Op(OpCode::kMinimum, {x, S(ctx, 1, x)});
  return ctx.Op(OpCode::kMaximum, {x, S(ctx, 0, x)});
}
// exp(x) - 1 where x < 0, else x: the negative branch of Elu, Selu and Celu.
ValueId NegativeBranch(Context& ctx, ValueId x, ValueId negative) {
  return ctx.Op(OpCode::kWhere, {ctx.Op(OpCode::kLt, {x, S(ctx, 0, x)}), negative, x});
}

ValueId Ceil(Context& ctx, ValueId x) {
  return ctx.Op(OpCode::kNeg, {ctx.Op(OpCode::kFloor, {ctx.Op(OpCode::kNeg, {x})})});
}
ValueId Reciprocal(Context& ctx, ValueId x) { return ctx.Op(OpCode::kDiv, {S(ctx, 1, x), x}); }
ValueId LeakyRelu(Context& ctx, ValueId x) {
  ValueId scaled = Mul(ctx, x, S(ctx, ctx.AttrFloat("alpha", 0.01f), x));
  return ctx.Op(OpCode::kWhere, {ctx.Op(OpCode::kLt, {x, S(ctx, 0, x)}), scaled, x});
}
ValueId ThresholdedRelu(Context& ctx, ValueId x) {
  ValueId above = ctx.Op(OpCode::kGt, {x, S(ctx, ctx.AttrFloat("alpha", 1.0f), x)});
  return ctx.Op(OpCode::kWhere, {above, x, S(ctx, 0, x)});
}
ValueId Elu(Context& ctx, ValueId x) {
  ValueId em1 = Sub(ctx, ctx.Op(OpCode::kExp, {x}), S(ctx, 1, x));
  return NegativeBranch(ctx, x, Mul(ctx, em1, S(ctx, ctx.AttrFloat("alpha", 1.0f), x)));
}
ValueId Selu(Context& ctx, ValueId x) {
  const float alpha = ctx.AttrFloat("alpha", 1.67326319217681884765625f);
  const float gamma = ctx.AttrFloat("gamma", 1.05070102214813232421875f);
  ValueId em1 = Sub(ctx, ctx.Op(OpCode::kExp, {x}), S(ctx, 1, x));
  ValueId branch = NegativeBranch(ctx, x, Mul(ctx, em1, S(ctx, alpha, x)));
  return Mul(ctx, branch, S(ctx, gamma, x));
}
ValueId Celu(Context& ctx, ValueId x) {
  const float alpha = ctx.AttrFloat("alpha", 1.0f);
  ValueId e = ctx.Op(OpCode::kExp, {ctx.Op(OpCode::kDiv, {x, S(ctx, alpha, x)})});
  ValueId negative = Mul(ctx, Sub(ctx, e, S(ctx, 1, x)), S(ctx, alpha, x));
  return NegativeBranch(ctx, x, negative);
}
ValueId HardSigmoid(Context& ctx, ValueId x) {
  ValueId lin = Add(ctx, Mul(ctx, x, S(ctx, ctx.AttrFloat("alpha", 0.2f), x)),
                    S(ctx, ctx.AttrFloat("beta", 0.5f), x));
  return Clamp01(ctx, lin);
}
ValueId HardSwish(Context& ctx, ValueId x) {
  ValueId lin = Add(ctx, Mul(ctx, x, S(ctx, 1.0 / 6.0, x)), S(ctx, 0.5, x));
  return Mul(ctx, x, Clamp01(ctx, lin));
}
ValueId Softplus(Context& ctx, ValueId x) {
  return ctx.Op(OpCode::kLog, {Add(ctx, ctx.Op(OpCode::kExp, {x}), S(ctx, 1, x))});
}
ValueId Softsign(Context& ctx, ValueId x) {
  return ctx.Op(OpCode::kDiv, {x, Add(ctx, S(ctx, 1, x), ctx.Op(OpCode::kAbs, {x}))});
}

// Round half to even from floor: d = x - floor(x) is exact wherever it decides (x >= -1:
// Sterbenz; above, floor(x) and x share an exponent), and a tie picks the even neighbour.
ValueId Round(Context& ctx, ValueId x) {
  ValueId f = ctx.Op(OpCode::kFloor, {x});
  ValueId up = Add(ctx, f, S(ctx, 1, x));
  ValueId d = Sub(ctx, x, f);
  ValueId half = S(ctx, 0.5, x);
  ValueId f_even =
      ctx.Op(OpCode::kEq,
             {Sub(ctx, f, Mul(ctx, S(ctx, 2, x), ctx.Op(OpCode::kFloor, {Mul(ctx, f, half)}))),
              S(ctx, 0, x)});
  ValueId tie = ctx.Op(OpCode::kWhere, {f_even, f, up});
  ValueId below = ctx.Op(OpCode::kWhere, {ctx.Op(OpCode::kLt, {d, half}), f, tie});
  return ctx.Op(OpCode::kWhere, {ctx.Op(OpCode::kGt, {d, half}), up, below});
}
ValueId Shrink(Context& ctx, ValueId x) {
  const float lambd = ctx.AttrFloat("lambd", 0.5f), bias = ctx.AttrFloat("bias", 0.0f);
  ValueId low = ctx.Op(OpCode::kLt, {x, S(ctx, -lambd, x)});
  ValueId high = ctx.Op(OpCode::kGt, {x, S(ctx, lambd, x)});
  ValueId inner = ctx.Op(OpCode::kWhere, {high, Sub(ctx, x, S(ctx, bias, x)), S(ctx, 0, x)});
  return ctx.Op(OpCode::kWhere, {low, Add(ctx, x, S(ctx, bias, x)), inner});
}

absl::Status Relu(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  return ctx.SetOut(0, ctx.Op(OpCode::kMaximum, {x, S(ctx, 0, x)}));
}

absl::Status PRelu(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId slope, ctx.InNode(1));
  ValueId negative = ctx.Op(OpCode::kLt, {x, S(ctx, 0, x)});
  return ctx.SetOut(0, ctx.Op(OpCode::kWhere, {negative, Mul(ctx, x, slope), x}));
}

absl::Status Sign(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  // x * 0 keeps a NaN a NaN (numpy's sign) and is 0 elsewhere in the last branch.
  ValueId neg = ctx.Op(OpCode::kWhere, {ctx.Op(OpCode::kLt, {x, S(ctx, 0, x)}), S(ctx, -1, x),
                                        Mul(ctx, x, S(ctx, 0, x))});
  return ctx.SetOut(
      0, ctx.Op(OpCode::kWhere, {ctx.Op(OpCode::kGt, {x, S(ctx, 0, x)}), S(ctx, 1, x), neg}));
}

absl::Status IsNaN(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  return ctx.SetOut(0, ctx.Op(OpCode::kNe, {x, x}));
}

absl::Status IsInf(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  const bool pos = ctx.AttrInt("detect_positive", 1) != 0;
  const bool neg = ctx.AttrInt("detect_negative", 1) != 0;
  // x < -inf: false everywhere (NaN too), in x's shape, to or the detections into.
  ValueId out = ctx.Op(OpCode::kLt, {x, S(ctx, -kInf, x)});
  if (pos) out = ctx.Op(OpCode::kMaximum, {out, ctx.Op(OpCode::kEq, {x, S(ctx, kInf, x)})});
  if (neg) out = ctx.Op(OpCode::kMaximum, {out, ctx.Op(OpCode::kEq, {x, S(ctx, -kInf, x)})});
  return ctx.SetOut(0, out);
}

absl::Status Clip(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  std::optional<ValueId> lo, hi;
  if (ctx.opset() < 11) {
    if (ctx.Attr("min")) lo = S(ctx, ctx.AttrFloat("min", 0), x);
    if (ctx.Attr("max")) hi = S(ctx, ctx.AttrFloat("max", 0), x);
  } else {
    if (ctx.HasInput(1)) {
      GJ_ASSIGN_OR_RETURN(lo, ctx.InNode(1));
    }
    if (ctx.HasInput(2)) {
      GJ_ASSIGN_OR_RETURN(hi, ctx.InNode(2));
    }
  }
  if (lo) x = ctx.Op(OpCode::kMaximum, {x, *lo});
  if (hi) x = ctx.Op(OpCode::kMinimum, {x, *hi});
  return ctx.SetOut(0, x);
}

absl::Status Identity(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(const Value* v, ctx.In(0));
  ctx.SetOutValue(0, *v);
  return absl::OkStatus();
}

}  // namespace

void AddActivationOps(OpTable* t) {
  (*t)["Abs"] = Unary<OpCode::kAbs>;
  (*t)["Neg"] = Unary<OpCode::kNeg>;
  (*t)["Exp"] = Unary<OpCode::kExp>;
  (*t)["Log"] = Unary<OpCode::kLog>;
  (*t)["Sqrt"] = Unary<OpCode::kSqrt>;
  (*t)["Tanh"] = Unary<OpCode::kTanh>;
  (*t)["Sigmoid"] = Unary<OpCode::kSigmoid>;
  (*t)["Sin"] = Unary<OpCode::kSin>;
  (*t)["Erf"] = Unary<OpCode::kErf>;
  (*t)["Cos"] = Unary<OpCode::kCos>;
  (*t)["Tan"] = Unary<OpCode::kTan>;
  (*t)["Asin"] = Unary<OpCode::kAsin>;
  (*t)["Acos"] = Unary<OpCode::kAcos>;
  (*t)["Atan"] = Unary<OpCode::kAtan>;
  (*t)["Sinh"] = Unary<OpCode::kSinh>;
  (*t)["Cosh"] = Unary<OpCode::kCosh>;
  (*t)["Asinh"] = Unary<OpCode::kAsinh>;
  (*t)["Acosh"] = Unary<OpCode::kAcosh>;
  (*t)["Atanh"] = Unary<OpCode::kAtanh>;
  (*t)["Floor"] = Unary<OpCode::kFloor>;
  (*t)["Ceil"] = FloatActivation<Ceil>;
  (*t)["Reciprocal"] = FloatActivation<Reciprocal>;
  (*t)["Round"] = FloatActivation<Round>;
  (*t)["Shrink"] = FloatActivation<Shrink>;
  (*t)["Relu"] = Relu;
  (*t)["LeakyRelu"] = FloatActivation<LeakyRelu>;
  (*t)["ThresholdedRelu"] = FloatActivation<ThresholdedRelu>;
  (*t)["Elu"] = FloatActivation<Elu>;
  (*t)["Selu"] = FloatActivation<Selu>;
  (*t)["Celu"] = FloatActivation<Celu>;
  (*t)["HardSigmoid"] = FloatActivation<HardSigmoid>;
  (*t)["HardSwish"] = FloatActivation<HardSwish>;
  (*t)["Softplus"] = FloatActivation<Softplus>;
  (*t)["Softsign"] = FloatActivation<Softsign>;
  (*t)["PRelu"] = PRelu;
  (*t)["Sign"] = Sign;
  (*t)["IsNaN"] = IsNaN;
  (*t)["IsInf"] = IsInf;
  (*t)["Clip"] = Clip;
  (*t)["Identity"] = Identity;
}

}  // namespace graphjit::onnx
