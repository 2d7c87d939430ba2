#include "frontend/ops.h"

#include "absl/status/status.h"

namespace graphjit::frontend {
namespace {

using ir::Attrs;
using ir::OpCode;

// The context of the first operand that has one (an op on only invalid values has none,
// and returns an invalid value: the error that made them invalid is already recorded).
Context* ContextOf(std::initializer_list<const Value*> values) {
  for (const Value* v : values) {
    if (v->context() != nullptr) return v->context();
  }
  return nullptr;
}

Value Emit(OpCode op, std::initializer_list<Value> operands, Attrs attrs = {}) {
  Context* ctx = nullptr;
  for (const Value& v : operands) {
    if (ctx == nullptr) ctx = v.context();
  }
  if (ctx == nullptr) return Value();
  return ctx->Emit(op, absl::Span<const Value>(operands.begin(), operands.size()),
                   std::move(attrs));
}

}  // namespace

Value Scalar(const Value& like, double value) {
  Context* ctx = ContextOf({&like});
  if (ctx == nullptr) return Value();
  return ctx->Emit(
      OpCode::kConstant, {},
      Attrs{
          {"value", std::vector<double>{value}}, {"dtype", like.dtype()}, {"shape", ir::Shape{}}});
}

Value Iota(Context& ctx, ir::Shape shape, int64_t axis, ir::DType dtype) {
  return ctx.Emit(OpCode::kIota, {},
                  Attrs{{"axis", axis}, {"dtype", dtype}, {"shape", std::move(shape)}});
}

Value Add(const Value& a, const Value& b) { return Emit(OpCode::kAdd, {a, b}); }
Value Sub(const Value& a, const Value& b) { return Emit(OpCode::kSub, {a, b}); }
Value Mul(const Value& a, const Value& b) { return Emit(OpCode::kMul, {a, b}); }
Value Div(const Value& a, const Value& b) { return Emit(OpCode::kDiv, {a, b}); }
Value Pow(const Value& a, const Value& b) { return Emit(OpCode::kPow, {a, b}); }
Value Maximum(const Value& a, const Value& b) { return Emit(OpCode::kMaximum, {a, b}); }
Value Minimum(const Value& a, const Value& b) { return Emit(OpCode::kMinimum, {a, b}); }
Value Compare(OpCode op, const Value& a, const Value& b) { return Emit(op, {a, b}); }
Value Where(const Value& cond, const Value& a, const Value& b) {
  return Emit(OpCode::kWhere, {cond, a, b});
}
Value Unary(OpCode op, const Value& x) { return Emit(op, {x}); }
Value Cast(const Value& x, ir::DType dtype) {
  return Emit(OpCode::kCast, {x}, Attrs{{"dtype", dtype}});
}

Value Matmul(const Value& a, const Value& b) { return Emit(OpCode::kMatmul, {a, b}); }

Value Transpose(const Value& x, std::vector<int64_t> perm) {
  return Emit(OpCode::kTranspose, {x}, Attrs{{"perm", std::move(perm)}});
}

Value TransposeLast2(const Value& x) {
  std::vector<int64_t> perm(x.rank());
  for (int i = 0; i < x.rank(); ++i) perm[i] = i;
  if (x.rank() >= 2) std::swap(perm[x.rank() - 1], perm[x.rank() - 2]);
  return Transpose(x, std::move(perm));
}

Value Reshape(const Value& x, ir::Shape shape) {
  return Emit(OpCode::kReshape, {x}, Attrs{{"shape", std::move(shape)}});
}
Value Expand(const Value& x, ir::Shape shape) {
  return Emit(OpCode::kExpand, {x}, Attrs{{"shape", std::move(shape)}});
}

Value Concat(absl::Span<const Value> xs, int64_t axis) {
  Context* ctx = nullptr;
  for (const Value& v : xs) {
    if (ctx == nullptr) ctx = v.context();
  }
  if (ctx == nullptr) return Value();
  return ctx->Emit(OpCode::kConcat, xs, Attrs{{"axis", axis}});
}

Value Slice(const Value& x, int64_t axis, ir::SymExpr start, ir::SymExpr end) {
  return Emit(OpCode::kSlice, {x},
              Attrs{{"axis", axis}, {"start", std::move(start)}, {"end", std::move(end)}});
}

Value Gather(const Value& table, const Value& indices) {
  return Emit(OpCode::kGather, {table, indices});
}

Value ReduceSum(const Value& x, int64_t axis, bool keepdim) {
  return Emit(OpCode::kReduceSum, {x}, Attrs{{"axis", axis}, {"keepdim", keepdim}});
}
Value ReduceMax(const Value& x, int64_t axis, bool keepdim) {
  return Emit(OpCode::kReduceMax, {x}, Attrs{{"axis", axis}, {"keepdim", keepdim}});
}
Value ReduceMean(const Value& x, int64_t axis, bool keepdim) {
  return Emit(OpCode::kReduceMean, {x}, Attrs{{"axis", axis}, {"keepdim", keepdim}});
}

Value ArgMin(const Value& x, int64_t axis, bool keepdim) {
  return Emit(OpCode::kArgMin, {x}, Attrs{{"axis", axis}, {"keepdim", keepdim}});
}
Value ArgMax(const Value& x, int64_t axis, bool keepdim) {
  return Emit(OpCode::kArgMax, {x}, Attrs{{"axis", axis}, {"keepdim", keepdim}});
}
Value CumSum(const Value& x, int64_t axis) {
  return Emit(OpCode::kCumSum, {x}, Attrs{{"axis", axis}});
}

Value Softmax(const Value& x, int64_t axis) {
  return Emit(OpCode::kSoftmax, {x}, Attrs{{"axis", axis}});
}
Value RmsNorm(const Value& x, const Value& weight, double eps) {
  return Emit(OpCode::kRmsNorm, {x, weight}, Attrs{{"eps", eps}});
}
Value RmsNormUnweighted(const Value& x, double eps) {
  return Emit(OpCode::kRmsNorm, {x}, Attrs{{"eps", eps}});
}
Value LayerNorm(const Value& x, const Value& weight, const Value& bias, double eps) {
  return Emit(OpCode::kLayerNorm, {x, weight, bias}, Attrs{{"eps", eps}});
}
Value Rope(const Value& x, const Value& cos, const Value& sin) {
  return Emit(OpCode::kRope, {x, cos, sin});
}
Value CrossEntropy(const Value& logits, const Value& targets) {
  return Emit(OpCode::kCrossEntropy, {logits, targets});
}
Value CausalMask(const Value& scores) { return Emit(OpCode::kCausalMask, {scores}); }
Value KvWrite(const Value& cache, const Value& rows, ir::SymExpr pos) {
  return Emit(OpCode::kKvWrite, {cache, rows}, Attrs{{"pos", std::move(pos)}});
}

}  // namespace graphjit::frontend
