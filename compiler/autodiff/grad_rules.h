// Private to compiler/autodiff: the vector-Jacobian product of every op, and the small
// graph-building vocabulary the rules are written in.
#ifndef GRAPHJIT_COMPILER_AUTODIFF_GRAD_RULES_H_
#define GRAPHJIT_COMPILER_AUTODIFF_GRAD_RULES_H_

#include <initializer_list>
#include <vector>

#include "ir/builder.h"
#include "ir/graph.h"

namespace graphjit::compiler::autodiff_internal {

using ir::ValueId;

// Appends nodes to the gradient graph. An op that fails to type-check records the first
// error in the builder (reported when the graph is built) and yields kInvalidValue, on
// which later ops fail quietly, so rules need not check after each op.
class GradEmitter {
 public:
  explicit GradEmitter(ir::GraphBuilder* builder) : b_(builder) {}

  ValueId Emit(ir::OpCode op, std::initializer_list<ValueId> operands, ir::Attrs attrs = {});
  ValueId Emit(ir::OpCode op, const std::vector<ValueId>& operands, ir::Attrs attrs = {});
  // A copy (emitting may reallocate the node list); f32[] for an invalid value.
  ir::ValueType type(ValueId v) const;
  ir::Shape shape(ValueId v) const { return type(v).shape; }

  ValueId Scalar(double value, ir::DType dtype);
  ValueId Full(double value, const ir::ValueType& type);
  // `n` as a scalar of `dtype`; a symbolic n is counted at run time (a sum of ones).
  ValueId Count(const ir::SymExpr& n, ir::DType dtype);

  ValueId Add(ValueId a, ValueId b) { return Emit(ir::OpCode::kAdd, {a, b}); }
  ValueId Sub(ValueId a, ValueId b) { return Emit(ir::OpCode::kSub, {a, b}); }
  ValueId Mul(ValueId a, ValueId b) { return Emit(ir::OpCode::kMul, {a, b}); }
  ValueId Div(ValueId a, ValueId b) { return Emit(ir::OpCode::kDiv, {a, b}); }
  ValueId Neg(ValueId x) { return Emit(ir::OpCode::kNeg, {x}); }
  // x * c, x + c and c - x with c a scalar of x's dtype.
  ValueId Scale(ValueId x, double c);
  ValueId AddScalar(ValueId x, double c);
  ValueId ScalarMinus(double c, ValueId x);
  ValueId Unary(ir::OpCode op, ValueId x) { return Emit(op, {x}); }
  ValueId Compare(ir::OpCode op, ValueId a, ValueId b) { return Emit(op, {a, b}); }
  ValueId Where(ValueId c, ValueId a, ValueId b) { return Emit(ir::OpCode::kWhere, {c, a, b}); }
  ValueId Cast(ValueId x, ir::DType dtype);
  ValueId Matmul(ValueId a, ValueId b) { return Emit(ir::OpCode::kMatmul, {a, b}); }

  ValueId ReduceSum(ValueId x, int64_t axis, bool keepdim);
  ValueId ReduceMean(ValueId x, int64_t axis, bool keepdim);
  ValueId Reshape(ValueId x, ir::Shape shape);
  ValueId Expand(ValueId x, ir::Shape shape);
  ValueId Transpose(ValueId x, std::vector<int64_t> perm);
  ValueId TransposeLast2(ValueId x);
  ValueId Slice(ValueId x, int64_t axis, ir::SymExpr start, ir::SymExpr end);
  ValueId Concat(const std::vector<ValueId>& parts, int64_t axis);

  // Sums `g` over the dims that broadcasting added or stretched, giving `shape` (the
  // gradient of an operand that was broadcast to g's shape).
  ValueId SumToShape(ValueId g, const ir::Shape& shape);

 private:
  ir::GraphBuilder* b_;
};

// The gradients of node `id` of `forward` with respect to its operands, given `g`, the
// gradient of its result. The emitter's graph holds `forward`'s nodes at the same ids.
// Entry i is kInvalidValue where `wanted[i]` is false or operand i carries no gradient
// (indices, targets, conditions, comparisons, casts from or to integers).
std::vector<ValueId> OperandGradients(GradEmitter& e, const ir::Graph& forward, ValueId id,
                                      ValueId g, const std::vector<bool>& wanted);

}  // namespace graphjit::compiler::autodiff_internal

#endif  // GRAPHJIT_COMPILER_AUTODIFF_GRAD_RULES_H_
