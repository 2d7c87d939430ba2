// The vector-Jacobian products: for y = op(x_0, ..), given g = dL/dy, each dL/dx_i.
// Rules read the forward's result where the derivative is a function of it (exp, tanh,
// sigmoid, softmax, div), and recompute a composite's row statistics (norms) from its
// operands, which is elementwise work. They build no matmul beyond the two per forward
// matmul that the FLOP count of a training step expects (dA = dY @ B^T, dB = A^T @ dY).
#include "compiler/autodiff/grad_rules.h"

#include <cmath>
#include <numbers>

#include "ir/status_macros.h"

namespace graphjit::compiler::autodiff_internal {
namespace {

using ir::Attrs;
using ir::OpCode;

constexpr ValueId kNone = ir::kInvalidValue;

// One rule application: the node, its incoming gradient and which operands want one.
class Rule {
 public:
  Rule(GradEmitter& e, const ir::Graph& f, ValueId id, ValueId g, const std::vector<bool>& wanted)
      : e_(e),
        n_(f.node(id)),
        f_(f),
        y_(id),
        g_(g),
        wanted_(wanted),
        grads_(n_.operands.size(), kNone) {}

  std::vector<ValueId> Run() {
    bool any = false;
    for (int i = 0; i < static_cast<int>(grads_.size()); ++i) any |= Want(i);
    if (!any || !ir::HasGradient(n_.op) || !ir::IsFloat(n_.type.dtype)) return grads_;
    Apply();
    // Only float operands carry gradients (indices, targets and conditions do not).
    for (size_t i = 0; i < grads_.size(); ++i) {
      if (!wanted_[i] || !ir::IsFloat(f_.type(n_.operands[i]).dtype)) grads_[i] = kNone;
    }
    return grads_;
  }

 private:
  bool Want(int i) const {
    return i < static_cast<int>(wanted_.size()) && wanted_[i] &&
           ir::IsFloat(f_.type(n_.operands[i]).dtype);
  }
  ValueId X(int i) const { return n_.operands[i]; }
  const ir::Shape& XShape(int i) const { return f_.type(n_.operands[i]).shape; }
  ir::DType dt() const { return n_.type.dtype; }
  ValueId Zero() { return e_.Scalar(0.0, dt()); }
  // Sets operand i's gradient from `full`, a gradient of the result's (broadcast) shape.
  void SetReduced(int i, ValueId full) {
    if (Want(i)) grads_[i] = e_.SumToShape(full, XShape(i));
  }
  void Set(int i, ValueId grad) { grads_[i] = grad; }

  void Apply();
  void Matmul();
  void Reduce();
  void Slice();
  void Window();
  void LayerNorm();
  void RmsNorm();
  void GeluTanh();
  void Rope();
  void CrossEntropy();

  GradEmitter& e_;
  const ir::Node& n_;
  const ir::Graph& f_;
  ValueId y_, g_;
  const std::vector<bool>& wanted_;
  std::vector<ValueId> grads_;
};

void Rule::Apply() {
  ValueId g = g_, y = y_;
  // No default: the ops with Grad = None in ir/ops.def (no operands, or results that
  // carry no gradient) have their case labels generated; every op with Grad = Rule needs
  // a case here, or the build fails (-Werror=switch).
  switch (n_.op) {
#define GJ_OP(name, spelling, min_arity, max_arity, schema, rule, lowering, scalar, flops, grad) \
  GJ_NO_GRADIENT_##grad(name)
#define GJ_NO_GRADIENT_None(name) case OpCode::k##name:
#define GJ_NO_GRADIENT_Rule(name)
#include "ir/ops.def"
#undef GJ_OP
#undef GJ_NO_GRADIENT_None
#undef GJ_NO_GRADIENT_Rule
    return;

    case OpCode::kAdd:
      SetReduced(0, g);
      SetReduced(1, g);
      return;
    case OpCode::kSub:
      SetReduced(0, g);
      if (Want(1)) SetReduced(1, e_.Neg(g));
      return;
    case OpCode::kMul:
      if (Want(0)) SetReduced(0, e_.Mul(g, X(1)));
      if (Want(1)) SetReduced(1, e_.Mul(g, X(0)));
      return;
    case OpCode::kDiv:
      // y = a / b: da = g / b, db = -g * y / b.
      if (Want(0)) SetReduced(0, e_.Div(g, X(1)));
      if (Want(1)) SetReduced(1, e_.Neg(e_.Div(e_.Mul(g, y), X(1))));
      return;
    case OpCode::kPow: {
      // da = g * b * a^(b-1); db = g * y * log(a), taken as 0 where a == 0 (as PyTorch
      // does, so a zero base with a positive exponent gives 0 rather than 0 * -inf).
      if (Want(0)) {
        ValueId p = e_.Emit(OpCode::kPow, {X(0), e_.AddScalar(X(1), -1.0)});
        SetReduced(0, e_.Mul(g, e_.Mul(X(1), p)));
      }
      if (Want(1)) {
        ValueId at_zero = e_.Compare(OpCode::kEq, X(0), Zero());
        ValueId dy = e_.Where(at_zero, Zero(), e_.Mul(y, e_.Unary(OpCode::kLog, X(0))));
        SetReduced(1, e_.Mul(g, dy));
      }
      return;
    }
    case OpCode::kMaximum:
    case OpCode::kMinimum: {
      // The winner takes g; a tie splits it evenly (as PyTorch does).
      OpCode wins = n_.op == OpCode::kMaximum ? OpCode::kGt : OpCode::kLt;
      ValueId half = e_.Scale(g, 0.5);
      ValueId tie = e_.Compare(OpCode::kEq, X(0), X(1));
      for (int i = 0; i < 2; ++i) {
        if (!Want(i)) continue;
        ValueId won = e_.Compare(wins, X(i), X(1 - i));
        SetReduced(i, e_.Where(won, g, e_.Where(tie, half, Zero())));
      }
      return;
    }
    case OpCode::kWhere:
      if (Want(1)) SetReduced(1, e_.Where(X(0), g, Zero()));
      if (Want(2)) SetReduced(2, e_.Where(X(0), Zero(), g));
      return;

    case OpCode::kNeg:
      Set(0, e_.Neg(g));
      return;
    case OpCode::kAbs: {
      ValueId pos = e_.Compare(OpCode::kGt, X(0), Zero());
      ValueId neg = e_.Compare(OpCode::kLt, X(0), Zero());
      Set(0, e_.Where(pos, g, e_.Where(neg, e_.Neg(g), Zero())));
      return;
    }
    case OpCode::kExp:
      Set(0, e_.Mul(g, y));
      return;
    case OpCode::kLog:
      Set(0, e_.Div(g, X(0)));
      return;
    case OpCode::kSqrt:
      Set(0, e_.Div(e_.Scale(g, 0.5), y));
      return;
    case OpCode::kRsqrt:
      // d/dx x^-1/2 = -1/2 x^-3/2 = -1/2 y^3.
      Set(0, e_.Mul(e_.Scale(g, -0.5), e_.Mul(y, e_.Mul(y, y))));
      return;
    case OpCode::kTanh:
      Set(0, e_.Mul(g, e_.ScalarMinus(1.0, e_.Mul(y, y))));
      return;
    case OpCode::kSigmoid:
      Set(0, e_.Mul(g, e_.Mul(y, e_.ScalarMinus(1.0, y))));
      return;
    case OpCode::kSin:
      // cos(x) = sin(x + pi/2): graphjit has no cos op.
      Set(0, e_.Mul(g, e_.Unary(OpCode::kSin, e_.AddScalar(X(0), std::numbers::pi / 2))));
      return;
    case OpCode::kLog1p:
      Set(0, e_.Div(g, e_.AddScalar(X(0), 1.0)));
      return;
    case OpCode::kCast:
      // Float to float only (Run drops integer operands); back to the operand's dtype.
      Set(0, e_.Cast(g, f_.type(X(0)).dtype));
      return;
    case OpCode::kSilu: {
      // silu = x s, s = sigmoid(x): d/dx = s (1 + x (1 - s)).
      ValueId s = e_.Unary(OpCode::kSigmoid, X(0));
      ValueId d = e_.Mul(s, e_.AddScalar(e_.Mul(X(0), e_.ScalarMinus(1.0, s)), 1.0));
      Set(0, e_.Mul(g, d));
      return;
    }
    case OpCode::kGeluTanh:
      GeluTanh();
      return;

    case OpCode::kMatmul:
      Matmul();
      return;

    case OpCode::kTranspose: {
      const auto& perm = n_.attrs.Get<std::vector<int64_t>>("perm");
      std::vector<int64_t> inverse(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
      Set(0, e_.Transpose(g, inverse));
      return;
    }
    case OpCode::kReshape:
      Set(0, e_.Reshape(g, XShape(0)));
      return;
    case OpCode::kExpand:
      SetReduced(0, g);
      return;
    case OpCode::kConcat: {
      const int64_t axis =
          ir::ValueOrDie(ir::NormalizeAxis(n_.attrs.GetInt("axis"), n_.type.rank(), "concat"));
      ir::SymExpr offset = 0;
      for (int i = 0; i < static_cast<int>(n_.operands.size()); ++i) {
        ir::SymExpr end = offset + XShape(i)[axis];
        if (Want(i)) Set(i, e_.Slice(g, axis, offset, end));
        offset = end;
      }
      return;
    }
    case OpCode::kSlice:
      Slice();
      return;
    case OpCode::kWindow:
      if (Want(0)) Window();
      return;
    case OpCode::kGather:
      // Rows read several times (repeated tokens, a tied embedding) sum their gradients.
      if (Want(0)) Set(0, e_.Emit(OpCode::kScatterAdd, {e_.Full(0.0, f_.type(X(0))), X(1), g}));
      return;
    case OpCode::kScatterAdd:
      if (Want(0)) Set(0, g);
      if (Want(2)) Set(2, e_.Emit(OpCode::kGather, {g, X(1)}));
      return;

    case OpCode::kReduceSum:
    case OpCode::kReduceMean:
    case OpCode::kReduceMax:
      Reduce();
      return;
    case OpCode::kCumSum: {
      // dx_j = sum_{i >= j} g_i, the reverse running sum: sum(g) - cumsum(g) + g.
      const int64_t axis = n_.attrs.GetInt("axis");
      ValueId total = e_.ReduceSum(g, axis, true);
      Set(0, e_.Add(e_.Sub(total, e_.Emit(OpCode::kCumSum, {g}, n_.attrs)), g));
      return;
    }
    case OpCode::kSoftmax: {
      // dx = y * (g - sum(g * y)) along the axis.
      const int64_t axis = n_.attrs.GetInt("axis");
      ValueId dot = e_.ReduceSum(e_.Mul(g, y), axis, true);
      Set(0, e_.Mul(y, e_.Sub(g, dot)));
      return;
    }
    case OpCode::kRmsNorm:
      RmsNorm();
      return;
    case OpCode::kLayerNorm:
      LayerNorm();
      return;
    case OpCode::kRope:
      Rope();
      return;
    case OpCode::kCrossEntropy:
      CrossEntropy();
      return;
    case OpCode::kCausalMask: {
      // g where the mask kept the score, 0 where it wrote -inf. The kept positions are
      // found by masking zeros, so symbolic shapes need no index arithmetic here.
      ValueId masked = e_.Emit(OpCode::kCausalMask, {e_.Full(0.0, n_.type)});
      Set(0, e_.Where(e_.Compare(OpCode::kEq, masked, Zero()), g, Zero()));
      return;
    }
    case OpCode::kKvWrite: {
      // The written rows came from `rows`: the cache's gradient there is 0.
      const int64_t axis = n_.type.rank() - 2;
      const ir::SymExpr& pos = n_.attrs.GetDim("pos");
      if (Want(0)) {
        Set(0, e_.Emit(OpCode::kKvWrite, {g, e_.Full(0.0, f_.type(X(1)))}, n_.attrs));
      }
      if (Want(1)) Set(1, e_.Slice(g, axis, pos, pos + XShape(1)[axis]));
      return;
    }
  }
}

void Rule::Matmul() {
  // a [.., M, K] @ b [.., K, N] = y [batch.., M, N].
  const ir::Shape& a = XShape(0);
  const ir::Shape& b = XShape(1);
  if (Want(0)) SetReduced(0, e_.Matmul(g_, e_.TransposeLast2(X(1))));
  if (!Want(1)) return;
  if (b.size() == 2 && a.size() > 2) {
    // A weight shared over a's batch dims: fold them into M, so dB is one 2-D matmul
    // rather than a batched one and a sum over the batch (same FLOPs, less memory).
    ir::Shape lead(a.begin(), a.end() - 1);
    ir::SymExpr rows = ir::NumElements(lead);
    ValueId a2 = e_.Reshape(X(0), {rows, a.back()});
    ValueId g2 = e_.Reshape(g_, {rows, b.back()});
    Set(1, e_.Matmul(e_.TransposeLast2(a2), g2));
    return;
  }
  SetReduced(1, e_.Matmul(e_.TransposeLast2(X(0)), g_));
}

void Rule::Reduce() {
  const ir::Shape& x = XShape(0);
  const int axis = ir::ValueOrDie(
      ir::NormalizeAxis(n_.attrs.GetInt("axis"), static_cast<int>(x.size()), ir::OpName(n_.op)));
  // g and y with the reduced axis kept as size 1, so they broadcast against x.
  ir::Shape kept = x;
  kept[axis] = 1;
  ValueId g = e_.Reshape(g_, kept);
  switch (n_.op) {
    case OpCode::kReduceSum:
      Set(0, e_.Expand(g, x));
      return;
    case OpCode::kReduceMean:
      Set(0, e_.Expand(e_.Div(g, e_.Count(x[axis], dt())), x));
      return;
    default: {
      // reduce_max: g goes to the maxima, split evenly among ties.
      ValueId hit = e_.Cast(e_.Compare(OpCode::kEq, X(0), e_.Reshape(y_, kept)), dt());
      ValueId count = e_.ReduceSum(hit, axis, true);
      Set(0, e_.Mul(hit, e_.Div(g, count)));
      return;
    }
  }
}

void Rule::Slice() {
  // Zeros around g along the axis: concat(zeros[start], g, zeros[dim - end]).
  const int64_t axis =
      ir::ValueOrDie(ir::NormalizeAxis(n_.attrs.GetInt("axis"), n_.type.rank(), "slice"));
  const ir::Shape& x = XShape(0);
  const ir::SymExpr& start = n_.attrs.GetDim("start");
  const ir::SymExpr after = x[axis] - n_.attrs.GetDim("end");
  std::vector<ValueId> parts;
  auto zeros = [&](const ir::SymExpr& size) {
    ir::Shape s = x;
    s[axis] = size;
    return e_.Full(0.0, ir::ValueType{dt(), s});
  };
  if (start.AsConstant() != 0) parts.push_back(zeros(start));
  parts.push_back(g_);
  if (after.AsConstant() != 0) parts.push_back(zeros(after));
  Set(0, e_.Concat(parts, axis));
}

void Rule::Window() {
  // Every element of g came from one element of x: dx is the sum, over the window
  // positions j, of g[.., j, :] placed along each window dim at o * stride + j * dilation
  // (zeros between the strided elements, before the offset and after the end).
  const auto& kernel = n_.attrs.Get<std::vector<int64_t>>("kernel");
  const auto& strides = n_.attrs.Get<std::vector<int64_t>>("strides");
  const auto& dilations = n_.attrs.Get<std::vector<int64_t>>("dilations");
  const ir::Shape& x = XShape(0);
  const int64_t k = static_cast<int64_t>(kernel.size());
  const int64_t batch = static_cast<int64_t>(x.size()) - k;
  auto zeros_like = [&](ValueId v, int64_t axis, const ir::SymExpr& size) {
    ir::Shape s = e_.shape(v);
    s[axis] = size;
    return e_.Full(0.0, ir::ValueType{dt(), s});
  };
  // `v`'s dim `axis` (length o) spread to o * stride, then shifted by `offset` into x's dim.
  auto place = [&](ValueId v, int64_t axis, int64_t stride, int64_t offset) {
    if (stride > 1) {
      ir::Shape s = e_.shape(v);
      ir::Shape split = s;
      split.insert(split.begin() + axis + 1, 1);
      ValueId column = e_.Reshape(v, split);
      ValueId spread = e_.Concat({column, zeros_like(column, axis + 1, stride - 1)}, axis + 1);
      s[axis] = s[axis] * stride;
      v = e_.Reshape(spread, s);
    }
    std::vector<ValueId> parts;
    if (offset > 0) parts.push_back(zeros_like(v, axis, offset));
    parts.push_back(v);
    parts.push_back(zeros_like(v, axis, x[axis]));
    return e_.Slice(e_.Concat(parts, axis), axis, 0, x[axis]);
  };
  std::vector<int64_t> j(k, 0);
  ValueId sum = ir::kInvalidValue;
  for (;;) {
    ValueId part = g_;  // [b.., k_1..k_k, o_1..o_k]; drop window dim i at batch + i each time
    for (int64_t i = 0; i < k; ++i) {
      part = e_.Slice(part, batch, j[i], j[i] + 1);
      ir::Shape s = e_.shape(part);
      s.erase(s.begin() + batch);
      part = e_.Reshape(part, s);
    }
    for (int64_t i = 0; i < k; ++i) part = place(part, batch + i, strides[i], j[i] * dilations[i]);
    sum = sum == ir::kInvalidValue ? part : e_.Add(sum, part);
    int64_t i = k - 1;
    while (i >= 0 && ++j[i] == kernel[i]) j[i--] = 0;
    if (i < 0) break;
  }
  Set(0, sum);
}

void Rule::LayerNorm() {
  // xhat = (x - mean) r, r = rsqrt(var + eps); y = xhat w + b. With gh = g w:
  // dx = r (gh - mean(gh) - xhat mean(gh xhat)), dw = sum(g xhat), db = sum(g).
  const ir::Shape& w_shape = XShape(1);
  ValueId xc = e_.Sub(X(0), e_.ReduceMean(X(0), -1, true));
  ValueId var = e_.ReduceMean(e_.Mul(xc, xc), -1, true);
  ValueId r = e_.Unary(OpCode::kRsqrt, e_.AddScalar(var, n_.attrs.GetFloat("eps")));
  ValueId xhat = e_.Mul(xc, r);
  if (Want(2)) Set(2, e_.SumToShape(g_, w_shape));
  if (Want(1)) Set(1, e_.SumToShape(e_.Mul(g_, xhat), w_shape));
  if (!Want(0)) return;
  ValueId gh = e_.Mul(g_, X(1));
  ValueId centered = e_.Sub(gh, e_.ReduceMean(gh, -1, true));
  ValueId proj = e_.Mul(xhat, e_.ReduceMean(e_.Mul(gh, xhat), -1, true));
  Set(0, e_.Mul(r, e_.Sub(centered, proj)));
}

void Rule::RmsNorm() {
  // xhat = x r, r = rsqrt(mean(x^2) + eps); y = xhat w. With gh = g w:
  // dx = r (gh - xhat mean(gh xhat)), dw = sum(g xhat).
  ValueId ms = e_.ReduceMean(e_.Mul(X(0), X(0)), -1, true);
  ValueId r = e_.Unary(OpCode::kRsqrt, e_.AddScalar(ms, n_.attrs.GetFloat("eps")));
  ValueId xhat = e_.Mul(X(0), r);
  const bool weighted = n_.operands.size() > 1;
  if (weighted && Want(1)) Set(1, e_.SumToShape(e_.Mul(g_, xhat), XShape(1)));
  if (!Want(0)) return;
  ValueId gh = weighted ? e_.Mul(g_, X(1)) : g_;
  ValueId proj = e_.Mul(xhat, e_.ReduceMean(e_.Mul(gh, xhat), -1, true));
  Set(0, e_.Mul(r, e_.Sub(gh, proj)));
}

void Rule::GeluTanh() {
  // y = x/2 (1 + t), t = tanh(k (x + c x^3)):
  // dy/dx = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3 c x^2).
  const double k = std::sqrt(2.0 / std::numbers::pi), c = 0.044715;
  ValueId x = X(0);
  ValueId x2 = e_.Mul(x, x);
  ValueId t = e_.Unary(OpCode::kTanh, e_.Scale(e_.Add(x, e_.Scale(e_.Mul(x2, x), c)), k));
  ValueId outer = e_.Scale(e_.AddScalar(t, 1.0), 0.5);
  ValueId sech2 = e_.ScalarMinus(1.0, e_.Mul(t, t));
  ValueId inner = e_.Scale(e_.AddScalar(e_.Scale(x2, 3.0 * c), 1.0), k);
  ValueId d = e_.Add(outer, e_.Mul(e_.Scale(x, 0.5), e_.Mul(sech2, inner)));
  Set(0, e_.Mul(g_, d));
}

void Rule::Rope() {
  // y = x cos + rot(x) sin, rot([a, b]) = [-b, a] over the halves of the last axis. The
  // adjoint of rot is rot^T([a, b]) = [b, -a], so dx = g cos + rot^T(g sin).
  const ir::SymExpr d = n_.type.shape.back();
  const ir::SymExpr h = *d.AsConstant() / 2;
  auto rot = [&](ValueId v, bool transpose) {
    ValueId lo = e_.Slice(v, -1, 0, h), hi = e_.Slice(v, -1, h, d);
    return transpose ? e_.Concat({hi, e_.Neg(lo)}, -1) : e_.Concat({e_.Neg(hi), lo}, -1);
  };
  if (Want(0)) Set(0, e_.Add(e_.Mul(g_, X(1)), rot(e_.Mul(g_, X(2)), true)));
  if (Want(1)) SetReduced(1, e_.Mul(g_, X(0)));
  if (Want(2)) SetReduced(2, e_.Mul(g_, rot(X(0), false)));
}

void Rule::CrossEntropy() {
  // loss = mean over rows of logsumexp(row) - row[target]:
  // dlogits = (softmax(logits) - onehot(targets)) * g / rows.
  const ir::ValueType logits = f_.type(X(0));
  const int64_t last = logits.rank() - 1;
  ir::Shape column = XShape(1);
  column.push_back(1);
  ValueId classes =
      e_.Emit(OpCode::kIota, {},
              Attrs{{"axis", last}, {"dtype", ir::DType::kI64}, {"shape", logits.shape}});
  ValueId onehot =
      e_.Cast(e_.Compare(OpCode::kEq, classes, e_.Reshape(X(1), column)), logits.dtype);
  ValueId p = e_.Emit(OpCode::kSoftmax, {X(0)}, Attrs{{"axis", last}});
  ValueId scale = e_.Div(g_, e_.Count(ir::NumElements(XShape(1)), logits.dtype));
  Set(0, e_.Mul(e_.Sub(p, onehot), scale));
}

}  // namespace

std::vector<ValueId> OperandGradients(GradEmitter& e, const ir::Graph& forward, ValueId id,
                                      ValueId g, const std::vector<bool>& wanted) {
  return Rule(e, forward, id, g, wanted).Run();
}

}  // namespace graphjit::compiler::autodiff_internal
