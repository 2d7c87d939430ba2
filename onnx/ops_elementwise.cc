// Binary, comparison, logic, variadic, Where and Cast ops: numpy broadcasting maps onto
// graphjit's; known integer inputs (shape arithmetic) are folded instead of emitted.
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "ir/sym_bounds.h"
#include "onnx/op_helpers.h"
#include "onnx/ops.h"

namespace graphjit::onnx {
namespace {

using ir::DType;
using ir::OpCode;
using ir::SymExpr;
using ir::ValueId;
using Args = absl::Span<const SymExpr>;

std::optional<SymExpr> Decided(bool b) { return SymExpr(b ? 1 : 0); }

// ONNX integer Div truncates toward zero; on dims (never negative) that is floor division.
std::optional<SymExpr> FoldDiv(Args x) {
  std::optional<int64_t> a = x[0].AsConstant(), b = x[1].AsConstant();
  if (b && *b == 0) return std::nullopt;
  if (a && b) {
    if (*b == -1) return SymExpr(runtime::WrapNeg(*a));
    return SymExpr(*a / *b);
  }
  return SymExpr::FloorDiv(x[0], x[1]);
}

// Truncating integer division from graphjit's flooring one: q + 1 where the remainder is
// non-zero and the signs differ.
ValueId TruncDiv(Context& ctx, ValueId a, ValueId b) {
  ValueId q = ctx.Op(OpCode::kDiv, {a, b});
  ValueId r = ctx.Op(OpCode::kSub, {a, ctx.Op(OpCode::kMul, {q, b})});
  ValueId zero = ctx.ScalarLike(0, a);
  ValueId inexact = ctx.Op(OpCode::kNe, {r, zero});
  ValueId signs_differ =
      ctx.Op(OpCode::kNe, {ctx.Op(OpCode::kLt, {a, zero}), ctx.Op(OpCode::kLt, {b, zero})});
  ValueId adjust = ctx.Op(OpCode::kMinimum, {inexact, signs_differ});  // and
  return ctx.Op(OpCode::kAdd, {q, ctx.Op(OpCode::kCast, {adjust}, {{"dtype", DType::kI64}})});
}

template <OpCode kOp>
absl::Status Arith(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  const FoldFn fold = [](Args x) -> std::optional<SymExpr> {
    switch (kOp) {
      case OpCode::kAdd:
        return x[0] + x[1];
      case OpCode::kSub:
        return x[0] - x[1];
      case OpCode::kMul:
        return x[0] * x[1];
      default:
        return FoldDiv(x);
    }
  };
  if (TryFoldElementwise(ctx, fold)) return absl::OkStatus();
  GJ_ASSIGN_OR_RETURN(ValueId a, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId b, ctx.InNode(1));
  if (kOp == OpCode::kDiv && ctx.type(a).dtype == DType::kI64) {
    return ctx.SetOut(0, TruncDiv(ctx, a, b));
  }
  return ctx.SetOut(0, ctx.Op(kOp, {a, b}));
}

absl::Status Mod(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  const bool fmod = ctx.AttrInt("fmod", 0) != 0;
  const FoldFn fold = [fmod](Args x) -> std::optional<SymExpr> {
    std::optional<int64_t> a = x[0].AsConstant(), b = x[1].AsConstant();
    if (b && *b == 0) return std::nullopt;
    if (a && b) return SymExpr(fmod ? (*b == -1 ? 0 : *a % *b) : runtime::FloorModI64(*a, *b));
    if (fmod) return std::nullopt;
    return SymExpr::Mod(x[0], x[1]);
  };
  if (TryFoldElementwise(ctx, fold)) return absl::OkStatus();
  GJ_ASSIGN_OR_RETURN(ValueId a, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId b, ctx.InNode(1));
  if (ctx.type(a).dtype != DType::kI64) {
    return ctx.Unimplemented("Mod of floats (C fmod) has no exact graphjit form");
  }
  ValueId q = fmod ? TruncDiv(ctx, a, b) : ctx.Op(OpCode::kDiv, {a, b});
  return ctx.SetOut(0, ctx.Op(OpCode::kSub, {a, ctx.Op(OpCode::kMul, {q, b})}));
}

absl::Status Pow(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  GJ_ASSIGN_OR_RETURN(ValueId a, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId b, ctx.InNode(1));
  const DType base = ctx.type(a).dtype;
  if (!ir::IsFloat(base)) return ctx.Unimplemented("Pow of an integer base");
  // ONNX lets the exponent have another type; converting it to the base's is exact for
  // the integers and the f32/f64 pairs the tests use.
  if (ctx.type(b).dtype != base) b = ctx.Op(OpCode::kCast, {b}, {{"dtype", base}});
  return ctx.SetOut(0, ctx.Op(OpCode::kPow, {a, b}));
}

template <OpCode kOp>
absl::Status Compare(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  const FoldFn fold = [](Args x) -> std::optional<SymExpr> {
    // Decided by the range of a - b over dims (symbols >= 0): N == -1 is false for a dim
    // N, as `expand(n, -1, -1)` exports ask (ir/sym_bounds.h).
    std::optional<bool> decided;
    switch (kOp) {
      case OpCode::kEq:
        decided = ir::ProvablyEqual(x[0], x[1]);
        break;
      case OpCode::kLt:
        decided = ir::ProvablyLess(x[0], x[1]);
        break;
      case OpCode::kLe:
        if (std::optional<bool> gt = ir::ProvablyLess(x[1], x[0])) decided = !*gt;
        break;
      case OpCode::kGt:
        decided = ir::ProvablyLess(x[1], x[0]);
        break;
      default:
        if (std::optional<bool> lt = ir::ProvablyLess(x[0], x[1])) decided = !*lt;
        break;
    }
    if (!decided) return std::nullopt;
    return Decided(*decided);
  };
  if (TryFoldElementwise(ctx, fold, pb::TensorProto::BOOL)) return absl::OkStatus();
  GJ_ASSIGN_OR_RETURN(ValueId a, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId b, ctx.InNode(1));
  return ctx.SetOut(0, ctx.Op(kOp, {a, b}));
}

// And, Or, Xor on bools are minimum, maximum and ne.
template <OpCode kOp>
absl::Status Logic(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  const FoldFn fold = [](Args x) -> std::optional<SymExpr> {
    std::optional<int64_t> a = x[0].AsConstant(), b = x[1].AsConstant();
    if (!a || !b) return std::nullopt;
    switch (kOp) {
      case OpCode::kMinimum:
        return Decided(*a && *b);
      case OpCode::kMaximum:
        return Decided(*a || *b);
      default:
        return Decided((*a != 0) != (*b != 0));
    }
  };
  if (TryFoldElementwise(ctx, fold, pb::TensorProto::BOOL)) return absl::OkStatus();
  GJ_ASSIGN_OR_RETURN(ValueId a, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId b, ctx.InNode(1));
  if (ctx.type(a).dtype != DType::kBool) return ctx.Invalid("operands must be BOOL");
  return ctx.SetOut(0, ctx.Op(kOp, {a, b}));
}

absl::Status Not(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  const FoldFn fold = [](Args x) -> std::optional<SymExpr> {
    std::optional<int64_t> a = x[0].AsConstant();
    if (!a) return std::nullopt;
    return Decided(*a == 0);
  };
  if (TryFoldElementwise(ctx, fold, pb::TensorProto::BOOL)) return absl::OkStatus();
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  return ctx.SetOut(0, ctx.Op(OpCode::kEq, {x, ctx.b().Scalar(0, DType::kBool)}));
}

// Max, Min, Sum, Mean: variadic, folded left to right.
template <OpCode kOp, bool kMean = false>
absl::Status Variadic(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(1, 1 << 20));
  if (!kMean && kOp != OpCode::kAdd) {
    const FoldFn fold = [](Args x) -> std::optional<SymExpr> {
      SymExpr r = x[0];
      for (size_t i = 1; i < x.size(); ++i) {
        r = kOp == OpCode::kMaximum ? SymExpr::Max(r, x[i]) : SymExpr::Min(r, x[i]);
      }
      return r;
    };
    if (TryFoldElementwise(ctx, fold)) return absl::OkStatus();
  }
  GJ_ASSIGN_OR_RETURN(ValueId acc, ctx.InNode(0));
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(i));
    acc = ctx.Op(kOp, {acc, x});
  }
  if (kMean) {
    acc = ctx.Op(OpCode::kDiv, {acc, ctx.ScalarLike(ctx.num_inputs(), acc)});
  }
  return ctx.SetOut(0, acc);
}

absl::Status Where(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(3, 3));
  const FoldFn fold = [](Args x) -> std::optional<SymExpr> {
    std::optional<int64_t> c = x[0].AsConstant();
    if (!c) return std::nullopt;
    return *c ? x[1] : x[2];
  };
  GJ_ASSIGN_OR_RETURN(const Value* a, ctx.In(1));
  if (TryFoldElementwise(ctx, fold, a->elem_type)) return absl::OkStatus();
  GJ_ASSIGN_OR_RETURN(ValueId c, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(1));
  GJ_ASSIGN_OR_RETURN(ValueId y, ctx.InNode(2));
  return ctx.SetOut(0, ctx.Op(OpCode::kWhere, {c, x, y}));
}

absl::Status CastTo(Context& ctx, int32_t to) {
  GJ_ASSIGN_OR_RETURN(const Value* in, ctx.In(0));
  std::optional<std::vector<SymExpr>> known = Context::KnownInts(*in);
  if (known && (IsIntegerElem(in->elem_type) || in->elem_type == pb::TensorProto::BOOL)) {
    if (IsIntegerElem(to)) {
      // Shape values cast between integer types (int32 <-> int64): the same numbers.
      ctx.SetOutInts(0, to, ConstDims(*in), *std::move(known));
      return absl::OkStatus();
    }
    if (to == pb::TensorProto::BOOL) {
      std::vector<SymExpr> out;
      for (const SymExpr& e : *known) {
        std::optional<int64_t> c = e.AsConstant();
        if (!c) break;
        out.push_back(*c != 0 ? 1 : 0);
      }
      if (out.size() == known->size()) {
        ctx.SetOutInts(0, to, ConstDims(*in), std::move(out));
        return absl::OkStatus();
      }
    }
  }
  std::optional<DType> dtype = DTypeOfElem(to);
  if (!dtype) {
    return ctx.Unimplemented(
        absl::StrCat("cast to ", ElemTypeName(to), " (graphjit has ", kGraphElemTypes, ")"));
  }
  // Integers of other types are constants or folded values, held as i64.
  GJ_ASSIGN_OR_RETURN(ValueId x, IsIntegerElem(in->elem_type) ? ctx.InIndexNode(0) : ctx.InNode(0));
  if (ctx.type(x).dtype == *dtype) return ctx.SetOut(0, x, to);
  return ctx.SetOut(0, ctx.Op(OpCode::kCast, {x}, {{"dtype", *dtype}}), to);
}

absl::Status Cast(Context& ctx) {
  const pb::AttributeProto* to = ctx.Attr("to");
  if (to == nullptr) return ctx.Invalid("Cast needs the attribute 'to'");
  return CastTo(ctx, static_cast<int32_t>(to->i()));
}

absl::Status CastLike(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(const Value* like, ctx.In(1));
  return CastTo(ctx, like->elem_type);
}

}  // namespace

void AddElementwiseOps(OpTable* t) {
  (*t)["Add"] = Arith<OpCode::kAdd>;
  (*t)["Sub"] = Arith<OpCode::kSub>;
  (*t)["Mul"] = Arith<OpCode::kMul>;
  (*t)["Div"] = Arith<OpCode::kDiv>;
  (*t)["Mod"] = Mod;
  (*t)["Pow"] = Pow;
  (*t)["Equal"] = Compare<OpCode::kEq>;
  (*t)["Less"] = Compare<OpCode::kLt>;
  (*t)["LessOrEqual"] = Compare<OpCode::kLe>;
  (*t)["Greater"] = Compare<OpCode::kGt>;
  (*t)["GreaterOrEqual"] = Compare<OpCode::kGe>;
  (*t)["And"] = Logic<OpCode::kMinimum>;
  (*t)["Or"] = Logic<OpCode::kMaximum>;
  (*t)["Xor"] = Logic<OpCode::kNe>;
  (*t)["Not"] = Not;
  (*t)["Max"] = Variadic<OpCode::kMaximum>;
  (*t)["Min"] = Variadic<OpCode::kMinimum>;
  (*t)["Sum"] = Variadic<OpCode::kAdd>;
  (*t)["Mean"] = Variadic<OpCode::kAdd, true>;
  (*t)["Where"] = Where;
  (*t)["Cast"] = Cast;
  (*t)["CastLike"] = CastLike;
}

}  // namespace graphjit::onnx
