// Shape rules of the Runtime ops (ir/ops.def): the data-dependent ops, whose result has a
// dim named by the symbol they define, the checks of such dims, top_k and unique.
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "ir/shape_rules.h"
#include "ir/shape_rules_internal.h"
#include "ir/status_macros.h"

namespace graphjit::ir {

using shape_rules_internal::Error;
using shape_rules_internal::RequireNonNegativeDims;

namespace {

// The unbacked symbol a data-dependent op defines (its `symbol` attribute).
absl::StatusOr<SymExpr> DefinedSymbol(OpCode op, const Attrs& attrs) {
  const std::string& name = attrs.Get<std::string>("symbol");
  if (!IsSymbolName(name)) {
    return Error(op,
                 absl::StrCat("symbol '", name, "' is not a symbol name ([A-Za-z_][A-Za-z0-9_]*)"));
  }
  return SymExpr::Symbol(name);
}

// x's type with the symbol the op defines at its `axis` (compress's kept slices, unique's
// distinct ones).
absl::StatusOr<ValueType> CountAtAxis(OpCode op, const ValueType& x, const Attrs& attrs) {
  GJ_ASSIGN_OR_RETURN(SymExpr count, DefinedSymbol(op, attrs));
  GJ_ASSIGN_OR_RETURN(int axis, NormalizeAxis(attrs.GetInt("axis"), x.rank(), OpName(op)));
  ValueType t = x;
  t.shape[axis] = count;
  return t;
}

}  // namespace

absl::StatusOr<ValueType> NonZeroRule(OpCode op, absl::Span<const ValueType> in,
                                      const Attrs& attrs) {
  GJ_ASSIGN_OR_RETURN(SymExpr count, DefinedSymbol(op, attrs));
  if (in[0].rank() < 1) {
    return Error(op, absl::StrCat("operand must have rank >= 1, got ", TypeToString(in[0])));
  }
  return ValueType{DType::kI64, {SymExpr(in[0].rank()), count}};
}

absl::StatusOr<ValueType> CompressRule(OpCode op, absl::Span<const ValueType> in,
                                       const Attrs& attrs) {
  if (in[1].dtype != DType::kBool || in[1].rank() != 1) {
    return Error(op, absl::StrCat("condition must be bool of rank 1, got ", TypeToString(in[1])));
  }
  return CountAtAxis(op, in[0], attrs);
}

absl::StatusOr<ValueType> NonMaxSuppressionRule(OpCode op, absl::Span<const ValueType> in,
                                                const Attrs& attrs) {
  GJ_ASSIGN_OR_RETURN(SymExpr count, DefinedSymbol(op, attrs));
  const ValueType& boxes = in[0];
  const ValueType& scores = in[1];
  if (boxes.dtype != DType::kF32 || boxes.rank() != 3 || boxes.shape[2] != SymExpr(4)) {
    return Error(op, absl::StrCat("boxes must be f32 [B, N, 4], got ", TypeToString(boxes)));
  }
  if (scores.dtype != DType::kF32 || scores.rank() != 3 || scores.shape[0] != boxes.shape[0] ||
      scores.shape[2] != boxes.shape[1]) {
    return Error(op, absl::StrCat("scores must be f32 [B, C, N] for boxes ", TypeToString(boxes),
                                  ", got ", TypeToString(scores)));
  }
  if (attrs.GetInt("max_per_class") < 0) {
    return Error(op, absl::StrCat("max_per_class=", attrs.GetInt("max_per_class"), " is negative"));
  }
  const int64_t center = attrs.GetInt("center_point_box");
  if (center != 0 && center != 1) {
    return Error(op, absl::StrCat("center_point_box must be 0 or 1, got ", center));
  }
  return ValueType{DType::kI64, {count, SymExpr(3)}};
}

absl::StatusOr<ValueType> AssertDimRule(OpCode op, absl::Span<const ValueType> in,
                                        const Attrs& attrs) {
  GJ_ASSIGN_OR_RETURN(int axis, NormalizeAxis(attrs.GetInt("axis"), in[0].rank(), OpName(op)));
  ValueType t = in[0];
  t.shape[axis] = attrs.GetDim("dim");
  GJ_RETURN_IF_ERROR(RequireNonNegativeDims(op, t.shape));
  return t;
}

absl::StatusOr<ValueType> TopKRule(OpCode op, absl::Span<const ValueType> in, const Attrs& attrs) {
  if (in[0].dtype == DType::kBool) return Error(op, "operand must be numeric, got bool");
  GJ_ASSIGN_OR_RETURN(int axis, NormalizeAxis(attrs.GetInt("axis"), in[0].rank(), OpName(op)));
  const SymExpr& k = attrs.GetDim("k");
  std::optional<int64_t> kc = k.AsConstant(), dim = in[0].shape[axis].AsConstant();
  if (kc && dim && *kc > *dim) {
    return Error(op, absl::StrCat("k=", *kc, " is more than axis ", axis, " of ",
                                  TypeToString(in[0]), " holds"));
  }
  ValueType t = in[0];
  t.shape[axis] = k;
  if (op == OpCode::kTopKIndices) t.dtype = DType::kI64;
  GJ_RETURN_IF_ERROR(RequireNonNegativeDims(op, t.shape));
  return t;
}

absl::StatusOr<ValueType> FactorDimRule(OpCode op, absl::Span<const ValueType> in,
                                        const Attrs& attrs) {
  GJ_ASSIGN_OR_RETURN(SymExpr q, DefinedSymbol(op, attrs));
  GJ_ASSIGN_OR_RETURN(int axis, NormalizeAxis(attrs.GetInt("axis"), in[0].rank(), OpName(op)));
  const int64_t factor = attrs.GetInt("factor");
  if (factor < 1) return Error(op, absl::StrCat("factor=", factor, " is not positive"));
  ValueType t = in[0];
  if (std::optional<int64_t> d = t.shape[axis].AsConstant()) {
    if (*d % factor != 0) {
      return Error(op, absl::StrCat("dim ", axis, " of ", TypeToString(in[0]),
                                    " is not a multiple of ", factor));
    }
    return t;
  }
  t.shape[axis] = q * factor;
  return t;
}

absl::StatusOr<ValueType> UniqueRule(OpCode op, absl::Span<const ValueType> in,
                                     const Attrs& attrs) {
  return CountAtAxis(op, in[0], attrs);
}

absl::StatusOr<ValueType> UniquePartRule(OpCode op, absl::Span<const ValueType> in,
                                         const Attrs& attrs) {
  const ValueType& x = in[0];
  const ValueType& values = in[1];
  GJ_ASSIGN_OR_RETURN(int axis, NormalizeAxis(attrs.GetInt("axis"), x.rank(), OpName(op)));
  bool like = values.dtype == x.dtype && values.rank() == x.rank();
  for (int a = 0; like && a < x.rank(); ++a) like = a == axis || values.shape[a] == x.shape[a];
  if (!like) {
    return Error(op, absl::StrCat("values ", TypeToString(values), " are not a unique of ",
                                  TypeToString(x), " along axis ", axis));
  }
  const SymExpr& n = op == OpCode::kUniqueInverse ? x.shape[axis] : values.shape[axis];
  return ValueType{DType::kI64, {n}};
}

}  // namespace graphjit::ir
