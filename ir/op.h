// Op codes and per-op facts, generated from the one op list in ir/ops.def.
#ifndef GRAPHJIT_IR_OP_H_
#define GRAPHJIT_IR_OP_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/attrs.h"
#include "ir/dtype.h"
#include "ir/sym_expr.h"

namespace graphjit::ir {

enum class OpCode : uint8_t {
#define GJ_OP(name, ...) k##name,
#include "ir/ops.def"
#undef GJ_OP
};

inline constexpr int kNumOps = 0
#define GJ_OP(...) +1
#include "ir/ops.def"
#undef GJ_OP
    ;

// The columns of ops.def after the shape rule, as constexpr facts (see ops.def).
enum class OpLowering : uint8_t {
  kSource,
  kPointwise,
  kIndex,
  kKernel,
  kComposite,
  kIndexComposite,
  kRegion,
  kRuntime
};
enum class FlopClass : uint8_t { kFree, kMatmul };

namespace op_internal {
struct OpFacts {
  OpLowering lowering;
  FlopClass flops;
  bool has_gradient;
};
inline constexpr bool kGrad_Rule = true;
inline constexpr bool kGrad_None = false;
inline constexpr OpFacts kFacts[] = {
#define GJ_OP(name, spelling, min_arity, max_arity, schema, rule, lowering, scalar, flops, grad) \
  {OpLowering::k##lowering, FlopClass::k##flops, kGrad_##grad},
#include "ir/ops.def"
#undef GJ_OP
};
static_assert(sizeof(kFacts) / sizeof(kFacts[0]) == kNumOps);
}  // namespace op_internal

constexpr OpLowering LoweringOf(OpCode op) {
  return op_internal::kFacts[static_cast<int>(op)].lowering;
}
constexpr FlopClass FlopClassOf(OpCode op) {
  return op_internal::kFacts[static_cast<int>(op)].flops;
}
// Whether a gradient flows through the op (compiler/autodiff has its rule).
constexpr bool HasGradient(OpCode op) {
  return op_internal::kFacts[static_cast<int>(op)].has_gradient;
}
// Ops without operands: input, param, constant, full, iota.
constexpr bool IsSourceOp(OpCode op) { return LoweringOf(op) == OpLowering::kSource; }
// Ops run by their eager kernel between compiled pieces (ops.def's Runtime ops: nonzero,
// compress, top_k, ...).
constexpr bool IsRuntimeOp(OpCode op) { return LoweringOf(op) == OpLowering::kRuntime; }

// The dtype and shape of a value.
struct ValueType {
  DType dtype = DType::kF32;
  Shape shape;
  int rank() const { return static_cast<int>(shape.size()); }
  friend bool operator==(const ValueType& a, const ValueType& b) {
    return a.dtype == b.dtype && a.shape == b.shape;
  }
};
// `f64[2, S, 16]`.
std::string TypeToString(const ValueType& type);

// Infers the result type from operand types and attributes; InvalidArgument says which
// rule failed (the caller adds which node).
using ShapeRule = absl::StatusOr<ValueType> (*)(OpCode op, absl::Span<const ValueType> in,
                                                const Attrs& attrs);

struct AttrSpec {
  std::string name;
  AttrKind kind;
  bool optional = false;
};

struct OpInfo {
  OpCode code;
  std::string spelling;
  int min_arity;
  int max_arity;  // -1: variadic
  std::vector<AttrSpec> attrs;
  ShapeRule shape_rule;
};

const OpInfo& GetOpInfo(OpCode op);
inline absl::string_view OpName(OpCode op) { return GetOpInfo(op).spelling; }
std::optional<OpCode> OpFromName(absl::string_view spelling);

// Checks arity and that `attrs` match the op's schema exactly (names, kinds, required).
absl::Status CheckOperandsAndAttrs(OpCode op, int num_operands, const Attrs& attrs);
// CheckOperandsAndAttrs, then the op's shape rule.
absl::StatusOr<ValueType> InferType(OpCode op, absl::Span<const ValueType> in, const Attrs& attrs);

// Normalizes a possibly negative axis for a rank; InvalidArgument if out of range.
absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank, absl::string_view what);

// Numpy broadcasting of two shapes on symbolic dims: equal dims, or one of them the
// constant 1. A symbol is assumed not to be 1 (0/1 specialization), so `S` vs `4` fails.
absl::StatusOr<Shape> BroadcastShapes(const Shape& a, const Shape& b);

}  // namespace graphjit::ir

#endif  // GRAPHJIT_IR_OP_H_
