// The op functions model code calls on Values (eager or traced alike). Each is a thin
// spelling of one op of ir/ops.def; scalars become constants of the operand's dtype.
#ifndef GRAPHJIT_FRONTEND_OPS_H_
#define GRAPHJIT_FRONTEND_OPS_H_

#include <vector>

#include "frontend/value.h"

namespace graphjit::frontend {

// A scalar constant of `dtype` in the context of `like`.
Value Scalar(const Value& like, double value);
// Element [i_0, .., i_n] is i_axis, as `dtype` (iota).
Value Iota(Context& ctx, ir::Shape shape, int64_t axis, ir::DType dtype);

Value Add(const Value& a, const Value& b);
Value Sub(const Value& a, const Value& b);
Value Mul(const Value& a, const Value& b);
Value Div(const Value& a, const Value& b);
Value Pow(const Value& a, const Value& b);
Value Maximum(const Value& a, const Value& b);
Value Minimum(const Value& a, const Value& b);
Value Compare(ir::OpCode op, const Value& a, const Value& b);  // eq, ne, lt, le, gt, ge
Value Where(const Value& cond, const Value& a, const Value& b);

inline Value operator+(const Value& a, const Value& b) { return Add(a, b); }
inline Value operator-(const Value& a, const Value& b) { return Sub(a, b); }
inline Value operator*(const Value& a, const Value& b) { return Mul(a, b); }
inline Value operator/(const Value& a, const Value& b) { return Div(a, b); }
inline Value operator+(const Value& a, double b) { return Add(a, Scalar(a, b)); }
inline Value operator-(const Value& a, double b) { return Sub(a, Scalar(a, b)); }
inline Value operator*(const Value& a, double b) { return Mul(a, Scalar(a, b)); }
inline Value operator/(const Value& a, double b) { return Div(a, Scalar(a, b)); }
inline Value operator*(double a, const Value& b) { return Mul(Scalar(b, a), b); }

Value Unary(ir::OpCode op, const Value& x);  // neg, abs, exp, log, sqrt, rsqrt, tanh, ...
inline Value operator-(const Value& x) { return Unary(ir::OpCode::kNeg, x); }
inline Value Exp(const Value& x) { return Unary(ir::OpCode::kExp, x); }
inline Value Log(const Value& x) { return Unary(ir::OpCode::kLog, x); }
inline Value Sqrt(const Value& x) { return Unary(ir::OpCode::kSqrt, x); }
inline Value Rsqrt(const Value& x) { return Unary(ir::OpCode::kRsqrt, x); }
inline Value Tanh(const Value& x) { return Unary(ir::OpCode::kTanh, x); }
inline Value Sigmoid(const Value& x) { return Unary(ir::OpCode::kSigmoid, x); }
inline Value Sin(const Value& x) { return Unary(ir::OpCode::kSin, x); }
inline Value Log1p(const Value& x) { return Unary(ir::OpCode::kLog1p, x); }
inline Value Erf(const Value& x) { return Unary(ir::OpCode::kErf, x); }
inline Value Cos(const Value& x) { return Unary(ir::OpCode::kCos, x); }
inline Value Tan(const Value& x) { return Unary(ir::OpCode::kTan, x); }
inline Value Asin(const Value& x) { return Unary(ir::OpCode::kAsin, x); }
inline Value Acos(const Value& x) { return Unary(ir::OpCode::kAcos, x); }
inline Value Atan(const Value& x) { return Unary(ir::OpCode::kAtan, x); }
inline Value Sinh(const Value& x) { return Unary(ir::OpCode::kSinh, x); }
inline Value Cosh(const Value& x) { return Unary(ir::OpCode::kCosh, x); }
inline Value Asinh(const Value& x) { return Unary(ir::OpCode::kAsinh, x); }
inline Value Acosh(const Value& x) { return Unary(ir::OpCode::kAcosh, x); }
inline Value Atanh(const Value& x) { return Unary(ir::OpCode::kAtanh, x); }
inline Value Floor(const Value& x) { return Unary(ir::OpCode::kFloor, x); }
inline Value Silu(const Value& x) { return Unary(ir::OpCode::kSilu, x); }
inline Value GeluTanh(const Value& x) { return Unary(ir::OpCode::kGeluTanh, x); }
Value Cast(const Value& x, ir::DType dtype);

Value Matmul(const Value& a, const Value& b);
Value Transpose(const Value& x, std::vector<int64_t> perm);
// Swaps the last two axes.
Value TransposeLast2(const Value& x);
Value Reshape(const Value& x, ir::Shape shape);
Value Expand(const Value& x, ir::Shape shape);
Value Concat(absl::Span<const Value> xs, int64_t axis);
Value Slice(const Value& x, int64_t axis, ir::SymExpr start, ir::SymExpr end);
Value Gather(const Value& table, const Value& indices);

Value ReduceSum(const Value& x, int64_t axis, bool keepdim = false);
Value ReduceMax(const Value& x, int64_t axis, bool keepdim = false);
Value ReduceMean(const Value& x, int64_t axis, bool keepdim = false);
// The index (i64) of the first minimum / maximum along `axis`.
Value ArgMin(const Value& x, int64_t axis, bool keepdim = false);
Value ArgMax(const Value& x, int64_t axis, bool keepdim = false);
// Running sum along `axis` (same shape as x).
Value CumSum(const Value& x, int64_t axis);

Value Softmax(const Value& x, int64_t axis = -1);
Value RmsNorm(const Value& x, const Value& weight, double eps);
Value RmsNormUnweighted(const Value& x, double eps);
Value LayerNorm(const Value& x, const Value& weight, const Value& bias, double eps);
Value Rope(const Value& x, const Value& cos, const Value& sin);
Value CrossEntropy(const Value& logits, const Value& targets);
Value CausalMask(const Value& scores);
// Writes `rows` into `cache` at row `pos` of the second-to-last axis.
Value KvWrite(const Value& cache, const Value& rows, ir::SymExpr pos);

}  // namespace graphjit::frontend

#endif  // GRAPHJIT_FRONTEND_OPS_H_
