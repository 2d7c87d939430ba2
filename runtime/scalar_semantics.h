// The scalar semantics of the ops where C++ leaves a case undefined, in one place: the
// eager kernels, constant folding (through them), the kernel-program evaluator and the
// kernel IR's constant folding all call these, and codegen emits the same (docs/OPS.md).
//   - i64 add, sub, mul, neg and abs wrap (two's complement);
//   - i64 division floors (Python's //) and mod floors (Python's %); INT64_MIN // -1 wraps
//     to INT64_MIN and INT64_MIN % -1 is 0; x // 0 and x % 0 are 0 (numpy's results).
//     A total rule rather than an error because compiled kernels have no way to stop
//     halfway with an error: every mode (eager, interpreter, folding, compiled) then
//     gives the same value instead of some failing and one returning garbage;
//   - float max / min are IEEE 754-2019 maximum / minimum (LLVM's llvm.maximum): a NaN
//     operand gives NaN, and -0 < +0;
//   - float to i64 truncates toward zero, saturates out-of-range values and maps NaN to 0
//     (LLVM's llvm.fptosi.sat); to bool is `x != 0` (NaN is true).
// No function here is undefined behaviour for any input.
#ifndef GRAPHJIT_RUNTIME_SCALAR_SEMANTICS_H_
#define GRAPHJIT_RUNTIME_SCALAR_SEMANTICS_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace graphjit::runtime {

inline int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t WrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t WrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
inline int64_t WrapNeg(int64_t a) { return WrapSub(0, a); }
inline int64_t WrapAbs(int64_t a) { return a < 0 ? WrapNeg(a) : a; }

// Floor division; x // 0 is 0.
inline int64_t FloorDivI64(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return WrapNeg(a);  // INT64_MIN / -1 overflows (and traps on x86)
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
// Floor mod (the sign of the divisor); x % 0 is 0.
inline int64_t FloorModI64(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;  // INT64_MIN % -1 traps on x86
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// maximum / minimum of two elements: on floats as llvm.maximum / llvm.minimum (NaN wins,
// -0 < +0), on i64 the larger / smaller, on bool or / and.
template <typename T>
inline T MaxOf(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    if (a == b) return std::signbit(a) ? b : a;  // max(-0, +0) is +0
  }
  return a > b ? a : b;
}
template <typename T>
inline T MinOf(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    if (a == b) return std::signbit(a) ? a : b;  // min(-0, +0) is -0
  }
  return a < b ? a : b;
}

// Float to int64_t or int32_t as llvm.fptosi.sat: truncation toward zero, saturation,
// NaN -> 0.
template <typename I, typename F>
inline I SaturatingToInt(F x) {
  static_assert(std::is_floating_point_v<F> && std::is_integral_v<I>);
  if (std::isnan(x)) return 0;
  // 2^63 and 2^31 are exact in float and double; anything at or beyond them saturates.
  constexpr F kLimit =
      static_cast<F>(static_cast<double>(uint64_t{1} << std::numeric_limits<I>::digits));
  if (x >= kLimit) return std::numeric_limits<I>::max();
  if (x < -kLimit) return std::numeric_limits<I>::min();
  return static_cast<I>(x);
}
template <typename F>
inline int64_t SaturatingToI64(F x) {
  return SaturatingToInt<int64_t>(x);
}

// Converts one element between the C++ element types (float, double, int64_t, bool,
// int32_t) with the semantics of `cast`: integers narrow by wrapping (two's complement).
template <typename To, typename From>
inline To ConvertElement(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    return x != From{0};
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    return SaturatingToInt<To>(x);
  } else {
    return static_cast<To>(x);
  }
}

}  // namespace graphjit::runtime

#endif  // GRAPHJIT_RUNTIME_SCALAR_SEMANTICS_H_
