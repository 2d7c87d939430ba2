// Elementwise kernels: binary arithmetic and comparisons with numpy broadcasting, where,
// unary math and cast. Equal shapes and scalar operands take flat loops the compiler
// vectorizes; other broadcasts walk a coalesced loop nest (kernels.h).
#include <cmath>
#include <cstring>

#include "ir/status_macros.h"
#include "runtime/kernels.h"
#include "runtime/scalar_semantics.h"

namespace graphjit::runtime::kernels {
namespace {

// i64 arithmetic wraps (two's complement) instead of overflowing into undefined behaviour;
// the helpers are shared with the compiler (runtime/scalar_semantics.h).

template <typename T>
constexpr bool kIsI64 = std::is_same_v<T, int64_t>;

struct AddOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (kIsI64<T>)
      return WrapAdd(a, b);
    else
      return a + b;
  }
};
struct SubOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (kIsI64<T>)
      return WrapSub(a, b);
    else
      return a - b;
  }
};
struct MulOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (kIsI64<T>)
      return WrapMul(a, b);
    else
      return a * b;
  }
};
// Floor division on i64 (Python's //; x // 0 is 0, see runtime/scalar_semantics.h).
struct DivOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (kIsI64<T>) {
      return FloorDivI64(a, b);
    } else {
      return a / b;
    }
  }
};
struct PowOp {
  template <typename T>
  T operator()(T a, T b) const {
    return std::pow(a, b);
  }
};
// max/min: NaN wins and -0 < +0 on floats, or/and on bool (runtime/scalar_semantics.h).
struct MaxOp {
  template <typename T>
  T operator()(T a, T b) const {
    return MaxOf(a, b);
  }
};
struct MinOp {
  template <typename T>
  T operator()(T a, T b) const {
    return MinOf(a, b);
  }
};
#define GJ_COMPARE_OP(Name, expr)     \
  struct Name {                       \
    template <typename T>             \
    bool operator()(T a, T b) const { \
      return expr;                    \
    }                                 \
  };
GJ_COMPARE_OP(EqOp, a == b)
GJ_COMPARE_OP(NeOp, a != b)
GJ_COMPARE_OP(LtOp, a < b)
GJ_COMPARE_OP(LeOp, a <= b)
GJ_COMPARE_OP(GtOp, a > b)
GJ_COMPARE_OP(GeOp, a >= b)
#undef GJ_COMPARE_OP

template <typename T, typename Op>
absl::StatusOr<Tensor> BinaryLoop(const Prepared& p, const Tensor& a, const Tensor& b, Op f) {
  using R = decltype(f(T{}, T{}));
  absl::StatusOr<Tensor> out = NewResult(p);
  if (!out.ok()) return out;
  const T* x = a.data<T>();
  const T* y = b.data<T>();
  R* o = out->data<R>();
  const int64_t n = out->numel();
  // With n > 0, an operand with n elements is laid out exactly as the output.
  if (n == 0) return out;
  if (a.numel() == n && b.numel() == n) {
    for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
  } else if (a.numel() == 1 && b.numel() == n) {
    const T s = x[0];
    for (int64_t i = 0; i < n; ++i) o[i] = f(s, y[i]);
  } else if (b.numel() == 1 && a.numel() == n) {
    const T s = y[0];
    for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], s);
  } else {
    LoopNest<2> nest = BroadcastNest<2>(p.shape, {&a.shape(), &b.shape()});
    ForEachRun<2>(nest, [&](int64_t len, const auto& off, const auto& st, int64_t at) {
      const T* xs = x + off[0];
      const T* ys = y + off[1];
      R* os = o + at;
      if (st[0] == 1 && st[1] == 1) {
        for (int64_t i = 0; i < len; ++i) os[i] = f(xs[i], ys[i]);
      } else if (st[0] == 0 && st[1] == 1) {
        for (int64_t i = 0; i < len; ++i) os[i] = f(xs[0], ys[i]);
      } else if (st[0] == 1 && st[1] == 0) {
        for (int64_t i = 0; i < len; ++i) os[i] = f(xs[i], ys[0]);
      } else {
        for (int64_t i = 0; i < len; ++i) os[i] = f(xs[i * st[0]], ys[i * st[1]]);
      }
    });
  }
  return out;
}

template <typename Op, typename... Ts>
absl::StatusOr<Tensor> EvalBinary(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                  const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  return Dispatch<Ts...>(node, operands[0]->dtype(), [&](auto tag) {
    return BinaryLoop<decltype(tag)>(p, *operands[0], *operands[1], Op{});
  });
}

// The float unary ops: one generic lambda instantiated for f32 and f64.
template <typename F>
absl::StatusOr<Tensor> EvalFloatUnary(const ir::Node& node,
                                      absl::Span<const Tensor* const> operands,
                                      const ir::Bindings& bindings, F f) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  return Dispatch<GJ_FLOAT_TYPES>(node, operands[0]->dtype(), [&](auto tag) {
    using T = decltype(tag);
    return MapUnary<T>(p, *operands[0], [&](T x) -> T { return f(x); });
  });
}

}  // namespace

#define GJ_BINARY_KERNEL(Name, Op, ...)                                       \
  absl::StatusOr<Tensor> Eval##Name(const ir::Node& node,                     \
                                    absl::Span<const Tensor* const> operands, \
                                    const ir::Bindings& bindings) {           \
    return EvalBinary<Op, __VA_ARGS__>(node, operands, bindings);             \
  }
GJ_BINARY_KERNEL(Add, AddOp, GJ_NUMERIC_TYPES)
GJ_BINARY_KERNEL(Sub, SubOp, GJ_NUMERIC_TYPES)
GJ_BINARY_KERNEL(Mul, MulOp, GJ_NUMERIC_TYPES)
GJ_BINARY_KERNEL(Div, DivOp, GJ_NUMERIC_TYPES)
GJ_BINARY_KERNEL(Pow, PowOp, GJ_FLOAT_TYPES)
GJ_BINARY_KERNEL(Maximum, MaxOp, GJ_ALL_TYPES)
GJ_BINARY_KERNEL(Minimum, MinOp, GJ_ALL_TYPES)
GJ_BINARY_KERNEL(Eq, EqOp, GJ_ALL_TYPES)
GJ_BINARY_KERNEL(Ne, NeOp, GJ_ALL_TYPES)
GJ_BINARY_KERNEL(Lt, LtOp, GJ_ALL_TYPES)
GJ_BINARY_KERNEL(Le, LeOp, GJ_ALL_TYPES)
GJ_BINARY_KERNEL(Gt, GtOp, GJ_ALL_TYPES)
GJ_BINARY_KERNEL(Ge, GeOp, GJ_ALL_TYPES)
#undef GJ_BINARY_KERNEL

absl::StatusOr<Tensor> EvalWhere(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                 const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const Tensor& cond = *operands[0];
  const Tensor& a = *operands[1];
  const Tensor& b = *operands[2];
  return Dispatch<GJ_ALL_TYPES>(node, p.dtype, [&](auto tag) -> absl::StatusOr<Tensor> {
    using T = decltype(tag);
    absl::StatusOr<Tensor> out = NewResult(p);
    if (!out.ok()) return out;
    const bool* c = cond.data<bool>();
    const T* x = a.template data<T>();
    const T* y = b.template data<T>();
    T* o = out->template data<T>();
    const int64_t n = out->numel();
    if (n > 0 && cond.numel() == n && a.numel() == n && b.numel() == n) {
      for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? x[i] : y[i];
      return out;
    }
    LoopNest<3> nest = BroadcastNest<3>(p.shape, {&cond.shape(), &a.shape(), &b.shape()});
    ForEachRun<3>(nest, [&](int64_t len, const auto& off, const auto& st, int64_t at) {
      const bool* cs = c + off[0];
      const T* xs = x + off[1];
      const T* ys = y + off[2];
      T* os = o + at;
      for (int64_t i = 0; i < len; ++i) os[i] = cs[i * st[0]] ? xs[i * st[1]] : ys[i * st[2]];
    });
    return out;
  });
}

absl::StatusOr<Tensor> EvalNeg(const ir::Node& node, absl::Span<const Tensor* const> operands,
                               const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  return Dispatch<GJ_NUMERIC_TYPES>(node, p.dtype, [&](auto tag) {
    using T = decltype(tag);
    return MapUnary<T>(p, *operands[0], [](T x) -> T {
      if constexpr (kIsI64<T>)
        return WrapNeg(x);
      else
        return -x;
    });
  });
}

absl::StatusOr<Tensor> EvalAbs(const ir::Node& node, absl::Span<const Tensor* const> operands,
                               const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  return Dispatch<GJ_NUMERIC_TYPES>(node, p.dtype, [&](auto tag) {
    using T = decltype(tag);
    return MapUnary<T>(p, *operands[0], [](T x) -> T {
      if constexpr (kIsI64<T>)
        return x < 0 ? WrapNeg(x) : x;
      else
        return std::abs(x);
    });
  });
}

#define GJ_FLOAT_UNARY_KERNEL(Name, expr)                                                        \
  absl::StatusOr<Tensor> Eval##Name(const ir::Node& node,                                        \
                                    absl::Span<const Tensor* const> operands,                    \
                                    const ir::Bindings& bindings) {                              \
    return EvalFloatUnary(node, operands, bindings, [](auto x) -> decltype(x) { return expr; }); \
  }
GJ_FLOAT_UNARY_KERNEL(Sqrt, std::sqrt(x))
GJ_FLOAT_UNARY_KERNEL(Rsqrt, decltype(x){1} / std::sqrt(x))
GJ_FLOAT_UNARY_KERNEL(Sigmoid, decltype(x){1} / (decltype(x){1} + std::exp(-x)))
// One C library function each, from the list the compiler shares.
#define GJ_FLOAT_MATH(name, spelling, cost, function, ...) GJ_FLOAT_UNARY_KERNEL(name, function(x))
#include "runtime/float_math.def"
#undef GJ_FLOAT_MATH
#undef GJ_FLOAT_UNARY_KERNEL

absl::StatusOr<Tensor> EvalCast(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  return operands[0]->Cast(p.dtype);
}

}  // namespace graphjit::runtime::kernels
