// The transcendental functions kernels emit inline rather than call: exp, a clamped exp
// for sums that saturate (sigmoid's 1 + exp(-x), erf's 1 - exp(q)), sigmoid and f32 erf.
// Inline rather than libmvec's _ZGVdN4v_exp: no call that clobbers every vector register,
// no AVX2 needed, vector loops and their scalar tails give the same bits, and on this
// project's AMD host 4096 exps took 6.5-6.9 us against libmvec's 9.0-9.3 (graphjit-dump on
// a 1-D exp, --profile, alternating runs; equal in a 2-D softmax loop, where LLVM shuffles
// the constants between registers).
#include <algorithm>
#include <numbers>
#include <utility>
#include <vector>

#include "compiler/codegen/codegen_emitter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Intrinsics.h"

namespace graphjit::compiler::codegen_internal {

namespace {

// a * y + z, fused where the hardware fuses.
llvm::Value* Fma(llvm::IRBuilder<>& b, llvm::Value* a, llvm::Value* y, llvm::Value* z) {
  return HostHasFma() ? b.CreateIntrinsic(llvm::Intrinsic::fma, {a->getType()}, {a, y, z})
                      : b.CreateFAdd(b.CreateFMul(a, y), z);
}

// The integer type of `type`'s bits (a vector of them for a vector).
llvm::Type* BitsOf(llvm::IRBuilder<>& b, llvm::Type* type) {
  llvm::Type* bits = type->getScalarType()->isFloatTy() ? static_cast<llvm::Type*>(b.getInt32Ty())
                                                        : b.getInt64Ty();
  if (auto* vector = llvm::dyn_cast<llvm::VectorType>(type)) {
    bits = llvm::VectorType::get(bits, vector->getElementCount());
  }
  return bits;
}

// exp(r) for x = t ln 2 + r (t an integer, |r| <= ln 2 / 2; ln 2 split as in Cephes' exp):
// exp's Taylor polynomial, degree 13 for f64 and 7 for f32 (the first omitted term is below
// 2^-57 / 2^-27 of the result). The coefficients 1 / k!, each rounded once (k! is exact in
// a double), combined by Estrin's scheme: pairs c[2i] + c[2i+1] r, then pairs of those with
// r^2, r^4, r^8. Its dependent chain is 4 FMAs deep where Horner's rule's is 13, and that
// latency, not the FMA count, bounds a vectorized exp loop.
llvm::Value* ExpOfRemainder(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* t) {
  llvm::Type* type = x->getType();
  const bool f32 = type->getScalarType()->isFloatTy();
  auto c = [&](double v) { return llvm::ConstantFP::get(type, v); };
  // ln 2 = c1 + c2 with c1 short enough that t * c1 is exact.
  llvm::Value* r = Fma(b, b.CreateFNeg(t), c(f32 ? 0.693359375 : 6.93145751953125e-1), x);
  r = Fma(b, b.CreateFNeg(t), c(f32 ? -2.12194440e-4 : 1.42860682030941723212e-6), r);
  const int degree = f32 ? 7 : 13;
  std::vector<llvm::Value*> terms;
  double factorial = 1.0;
  for (int k = 0; k <= degree; ++k) {
    factorial *= std::max(k, 1);
    terms.push_back(c(1.0 / factorial));
  }
  for (llvm::Value* power = r; terms.size() > 1; power = b.CreateFMul(power, power)) {
    std::vector<llvm::Value*> next;
    for (size_t i = 0; i < terms.size(); i += 2) {
      next.push_back(i + 1 < terms.size() ? Fma(b, terms[i + 1], power, terms[i]) : terms[i]);
    }
    terms = std::move(next);
  }
  return terms[0];
}

// x clamped to [lo, hi]; x < lo ? lo : x keeps NaN (one vmaxps), which then flows through.
llvm::Value* Clamp(llvm::IRBuilder<>& b, llvm::Value* x, double lo, double hi) {
  llvm::Value* l = llvm::ConstantFP::get(x->getType(), lo);
  llvm::Value* h = llvm::ConstantFP::get(x->getType(), hi);
  llvm::Value* xc = b.CreateSelect(b.CreateFCmpOLT(x, l), l, x);
  return b.CreateSelect(b.CreateFCmpOGT(xc, h), h, xc);
}

}  // namespace

// exp(x) = 2^n * exp(r) with n = rint(x / ln 2) (ExpOfRemainder). 2^n is applied as two
// powers of two built from exponent bits, so results that underflow into subnormals or
// overflow to inf round once, as libm's. Within 1 ulp of libm on this project's AMD host
// (tests/compiler/compiled/exp_test.cc asserts 2).
llvm::Value* KernelEmitter::Exp(llvm::Value* x) {
  llvm::IRBuilder<>& b = *b_;
  llvm::Type* type = x->getType();
  const bool f32 = type->getScalarType()->isFloatTy();
  auto c = [&](double v) { return llvm::ConstantFP::get(type, v); };
  // Past these exp is 0 or inf in the dtype; clamping keeps n within two normal powers.
  llvm::Value* xc = Clamp(b, x, f32 ? -105.0 : -746.0, f32 ? 89.0 : 710.0);
  // t = rint(x / ln 2) by adding base + bias, base = 1.5 * 2^52 (2^23): the sum's mantissa
  // bits are then base's plus n + bias, with no float-to-int conversion (poison for NaN,
  // and several instructions in AVX2 vectors).
  const int64_t bias = f32 ? 160 : 1100;  // makes n + bias >= 0 for the clamped x
  const double base_value = f32 ? 0x1.8p23 : 0x1.8p52;
  llvm::Value* base = c(base_value);
  llvm::Value* magic = c(base_value + static_cast<double>(bias));
  llvm::Value* shifted = b.CreateFAdd(b.CreateFMul(xc, c(std::numbers::log2e)), magic);
  llvm::Value* p = ExpOfRemainder(b, xc, b.CreateFSub(shifted, magic));
  // 2^n = 2^((m >> 1) - bias / 2) * 2^(m - (m >> 1) - bias / 2) with m = n + bias: each
  // a normal number for the clamped x, built from exponent bits.
  llvm::Type* bits = BitsOf(b, type);
  const int mantissa = f32 ? 23 : 52;
  const int64_t exponent_bias = f32 ? 127 : 1023;
  llvm::Value* m = b.CreateSub(b.CreateBitCast(shifted, bits), b.CreateBitCast(base, bits));
  llvm::Value* m1 = b.CreateLShr(m, 1);
  llvm::Value* m2 = b.CreateSub(m, m1);
  auto power = [&](llvm::Value* half) {
    llvm::Value* e = b.CreateAdd(half, llvm::ConstantInt::get(bits, exponent_bias - bias / 2));
    return b.CreateBitCast(b.CreateShl(e, mantissa), type);
  };
  return b.CreateFMul(b.CreateFMul(p, power(m1)), power(m2));
}

// exp(x) where only exp's normal results matter: x is clamped to [lo, hi] with exp(lo)
// normal (f32 -87: 1.6e-38; f64 -708), so below lo the result is exp(lo), which a sum
// with 1 absorbs, and 2^n is one power: with the rounding constant 1.5 * 2^23 + 127
// (2^52 + 1023) the sum's low bits are n plus the exponent's bias, which a shift by the
// mantissa's width moves into the exponent field (and drops the rest). From x = 127.5 ln 2
// (88.37; f64 1023.5 ln 2, 709.44) on, n + bias is the exponent of inf and so is the
// result, where libm's stays finite up to 88.72 (709.78). Half the integer work of Exp and
// one multiply fewer: sigmoid over a 96 x 28 x 28 map took 10.4-11.4 us against
// 12.8-13.7 (graphjit-dump --profile, alternating runs).
llvm::Value* KernelEmitter::ExpClamped(llvm::Value* x) {
  llvm::IRBuilder<>& b = *b_;
  llvm::Type* type = x->getType();
  const bool f32 = type->getScalarType()->isFloatTy();
  auto c = [&](double v) { return llvm::ConstantFP::get(type, v); };
  llvm::Value* xc = Clamp(b, x, f32 ? -87.0 : -708.0, f32 ? 88.5 : 709.5);
  llvm::Value* magic = c((f32 ? 0x1.8p23 : 0x1.8p52) + (f32 ? 127 : 1023));
  llvm::Value* shifted = Fma(b, xc, c(std::numbers::log2e), magic);
  llvm::Value* p = ExpOfRemainder(b, xc, b.CreateFSub(shifted, magic));
  llvm::Value* power = b.CreateShl(b.CreateBitCast(shifted, BitsOf(b, type)), f32 ? 23 : 52);
  return b.CreateFMul(p, b.CreateBitCast(power, type));
}

// 1 / (1 + exp(-x)) on ExpClamped: 1 for x > 87, 0 for x < -88.37 (f64 -709.44), where
// libm's is a subnormal below 2^-127.5, 4.2e-39 (2^-1023.5, 7.9e-309); within 4 ulps elsewhere
// (tests/compiler/compiled/exp_test.cc).
llvm::Value* KernelEmitter::Sigmoid(llvm::Value* x) {
  llvm::IRBuilder<>& b = *b_;
  llvm::Value* one = llvm::ConstantFP::get(x->getType(), 1.0);
  return b.CreateFDiv(one, b.CreateFAdd(one, ExpClamped(b.CreateFNeg(x))));
}

// erf(x) for f32 in two pieces, both computed and one selected per lane (vectors have no
// branches). |x| <= 0.927734375: x + x * p(x^2), p of degree 5. Beyond: sign(x) * (1 -
// exp(q(|x|))), q of degree 7 with q(t) ~ -t^2 for large t, so exp takes it towards 0 (at
// most ExpClamped's floor, which 1 - absorbs) and erf to +-1 (inf included; NaN takes the first
// piece and stays NaN). The minimax coefficients are Norbert Juffa's (erff, published on Stack
// Overflow, 2015); within 1 ulp of glibc's erff over every float with libm's exp, within 2 with
// ExpClamped (tests/compiler/compiled/exp_test.cc).
llvm::Value* KernelEmitter::ErfF32(llvm::Value* x) {
  llvm::IRBuilder<>& b = *b_;
  llvm::Type* type = x->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(type, v); };
  auto fma = [&](llvm::Value* a, llvm::Value* y, llvm::Value* z) { return Fma(b, a, y, z); };
  llvm::Value* t = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* s = b.CreateFMul(x, x);
  // |x| small: Horner in s.
  llvm::Value* p = c(-5.96761703e-4);
  for (double k : {4.99119423e-3, -2.67681349e-2, 1.12819925e-1, -3.76125336e-1, 1.28379166e-1}) {
    p = fma(p, s, c(k));
  }
  llvm::Value* near = fma(p, x, x);
  // |x| large: q(t), the first two terms paired to shorten the chain.
  llvm::Value* r = fma(c(-1.72853470e-5), t, c(3.83197126e-4));
  llvm::Value* u = fma(c(-3.88396438e-3), t, c(2.42546219e-2));
  r = fma(r, s, u);
  for (double k : {-1.06777877e-1, -6.34846687e-1, -1.28717512e-1}) r = fma(r, t, c(k));
  r = fma(r, t, b.CreateFNeg(t));
  llvm::Value* far =
      b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, b.CreateFSub(c(1.0), ExpClamped(r)), x);
  return b.CreateSelect(b.CreateFCmpOGT(t, c(0.927734375)), far, near);
}

}  // namespace graphjit::compiler::codegen_internal
