// GradEmitter: the graph-building vocabulary of the gradient rules.
#include <numeric>

#include "compiler/autodiff/grad_rules.h"

namespace graphjit::compiler::autodiff_internal {

using ir::Attrs;
using ir::OpCode;

ValueId GradEmitter::Emit(OpCode op, std::initializer_list<ValueId> operands, Attrs attrs) {
  return b_->Add(op, operands, std::move(attrs));
}

ValueId GradEmitter::Emit(OpCode op, const std::vector<ValueId>& operands, Attrs attrs) {
  return b_->Add(op, operands, std::move(attrs));
}

ir::ValueType GradEmitter::type(ValueId v) const {
  if (v < 0 || v >= b_->graph().num_nodes()) return ir::ValueType{};
  return b_->type(v);
}

ValueId GradEmitter::Scalar(double value, ir::DType dtype) { return b_->Scalar(value, dtype); }

ValueId GradEmitter::Full(double value, const ir::ValueType& t) {
  return Emit(OpCode::kFull, {}, Attrs{{"value", value}, {"dtype", t.dtype}, {"shape", t.shape}});
}

ValueId GradEmitter::Count(const ir::SymExpr& n, ir::DType dtype) {
  if (std::optional<int64_t> c = n.AsConstant()) return Scalar(static_cast<double>(*c), dtype);
  return ReduceSum(Full(1.0, ir::ValueType{dtype, {n}}), 0, false);
}

ValueId GradEmitter::Scale(ValueId x, double c) { return Mul(x, Scalar(c, type(x).dtype)); }
ValueId GradEmitter::AddScalar(ValueId x, double c) { return Add(x, Scalar(c, type(x).dtype)); }
ValueId GradEmitter::ScalarMinus(double c, ValueId x) { return Sub(Scalar(c, type(x).dtype), x); }

ValueId GradEmitter::Cast(ValueId x, ir::DType dtype) {
  return Emit(OpCode::kCast, {x}, Attrs{{"dtype", dtype}});
}

ValueId GradEmitter::ReduceSum(ValueId x, int64_t axis, bool keepdim) {
  return Emit(OpCode::kReduceSum, {x}, Attrs{{"axis", axis}, {"keepdim", keepdim}});
}

ValueId GradEmitter::ReduceMean(ValueId x, int64_t axis, bool keepdim) {
  return Emit(OpCode::kReduceMean, {x}, Attrs{{"axis", axis}, {"keepdim", keepdim}});
}

ValueId GradEmitter::Reshape(ValueId x, ir::Shape shape) {
  if (type(x).shape == shape) return x;
  return Emit(OpCode::kReshape, {x}, Attrs{{"shape", std::move(shape)}});
}

ValueId GradEmitter::Expand(ValueId x, ir::Shape shape) {
  if (type(x).shape == shape) return x;
  return Emit(OpCode::kExpand, {x}, Attrs{{"shape", std::move(shape)}});
}

ValueId GradEmitter::Transpose(ValueId x, std::vector<int64_t> perm) {
  return Emit(OpCode::kTranspose, {x}, Attrs{{"perm", std::move(perm)}});
}

ValueId GradEmitter::TransposeLast2(ValueId x) {
  std::vector<int64_t> perm(type(x).rank());
  std::iota(perm.begin(), perm.end(), 0);
  if (perm.size() >= 2) std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return Transpose(x, std::move(perm));
}

ValueId GradEmitter::Slice(ValueId x, int64_t axis, ir::SymExpr start, ir::SymExpr end) {
  return Emit(OpCode::kSlice, {x},
              Attrs{{"axis", axis}, {"start", std::move(start)}, {"end", std::move(end)}});
}

ValueId GradEmitter::Concat(const std::vector<ValueId>& parts, int64_t axis) {
  if (parts.size() == 1) return parts[0];
  return Emit(OpCode::kConcat, parts, Attrs{{"axis", axis}});
}

ValueId GradEmitter::SumToShape(ValueId g, const ir::Shape& shape) {
  const ir::Shape from = type(g).shape;
  if (from == shape || from.size() < shape.size()) return g;
  const int64_t extra = static_cast<int64_t>(from.size() - shape.size());
  ValueId r = g;
  for (int64_t i = 0; i < extra; ++i) r = ReduceSum(r, 0, false);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d].AsConstant() == 1 && from[d + extra].AsConstant() != 1) {
      r = ReduceSum(r, static_cast<int64_t>(d), true);
    }
  }
  return r;
}

}  // namespace graphjit::compiler::autodiff_internal
