// Codegen of pointwise kernels end to end: float, integer and bool ops, symbolic extents,
// temps in the workspace, stores at a symbolic row and select arms, compiled by
// CompileProgram (EmitModule, verifyModule, O2, JIT) and run on real buffers against
// values computed here.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/codegen/codegen_test_util.h"

namespace graphjit::compiler::codegen_testutil {
namespace {

using ::testing::HasSubstr;

// out[i, j] = x[i, j] > 0 ? exp(x[i, j]) + bias[j] : tanh(x[i, j]) * bias[j], where the
// bias load ignores loop variable 0 (a broadcast).
template <typename T>
void PointwiseChain(DType dtype, double rel) {
  constexpr int kRows = 4, kCols = 37;
  ProgramBuilder pb;
  int x = pb.Arg("x", dtype, {C(kRows), C(kCols)});
  int bias = pb.Arg("bias", dtype, {C(kCols)});
  int out = pb.Arg("out", dtype, {C(kRows), C(kCols)}, BufferKind::kOutput);
  ExprPtr xv = Load(x, dtype, {I(0), I(1)});
  ExprPtr bv = Load(bias, dtype, {I(1)});
  pb.Pointwise(
      out, {C(kRows), C(kCols)},
      Select(Op(ScalarOp::kGt, xv, F(0, dtype)), Op(ScalarOp::kAdd, Op(ScalarOp::kExp, xv), bv),
             Op(ScalarOp::kMul, Op(ScalarOp::kTanh, xv), bv)));
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<T> xs(kRows * kCols), bs(kCols), os(kRows * kCols);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<T>(std::sin(i * 0.7) * 3);
  for (size_t j = 0; j < bs.size(); ++j) bs[j] = static_cast<T>(0.5 + j * 0.25);
  RunEntry(*code, {xs.data(), bs.data(), os.data()});
  for (int i = 0; i < kRows; ++i) {
    for (int j = 0; j < kCols; ++j) {
      T v = xs[i * kCols + j];
      T want = v > 0 ? std::exp(v) + bs[j] : std::tanh(v) * bs[j];
      EXPECT_TRUE(Close(os[i * kCols + j], want, rel)) << i << "," << j;
    }
  }
}

TEST(CodegenTest, PointwiseExpTanhSelectBroadcastF64) {
  PointwiseChain<double>(DType::kF64, 1e-13);
}
TEST(CodegenTest, PointwiseExpTanhSelectBroadcastF32) { PointwiseChain<float>(DType::kF32, 1e-6); }

TEST(CodegenTest, UnaryAndBinaryFloatOpsMatchTheInterpreterSemantics) {
  // One output column per op, with NaN, infinities and signed values.
  const std::vector<double> a = {1.5, -2.0, 0.0, kNaN, kInf, -kInf, 3.0, 0.25};
  const std::vector<double> b = {2.0, 3.0, -1.0, 1.0, kNaN, 2.0, 3.0, -0.5};
  const int n = static_cast<int>(a.size());
  struct Case {
    ExprPtr (*make)(ExprPtr, ExprPtr);
    double (*want)(double, double);
  };
  const std::vector<Case> cases = {
      {[](ExprPtr x, ExprPtr y) { return Op(ScalarOp::kMax, x, y); },
       [](double x, double y) { return std::isnan(x) || std::isnan(y) ? kNaN : std::max(x, y); }},
      {[](ExprPtr x, ExprPtr y) { return Op(ScalarOp::kMin, x, y); },
       [](double x, double y) { return std::isnan(x) || std::isnan(y) ? kNaN : std::min(x, y); }},
      {[](ExprPtr x, ExprPtr y) { return Op(ScalarOp::kPow, x, y); },
       [](double x, double y) { return std::pow(x, y); }},
      {[](ExprPtr x, ExprPtr y) { return Cast(Op(ScalarOp::kNe, x, y), DType::kF64); },
       [](double x, double y) { return double(x != y); }},
      {[](ExprPtr x, ExprPtr y) { return Cast(Op(ScalarOp::kLe, x, y), DType::kF64); },
       [](double x, double y) { return double(x <= y); }},
      {[](ExprPtr x, ExprPtr) { return Op(ScalarOp::kRsqrt, x); },
       [](double x, double) { return 1 / std::sqrt(x); }},
      {[](ExprPtr x, ExprPtr) { return Op(ScalarOp::kSigmoid, x); },
       [](double x, double) { return 1 / (1 + std::exp(-x)); }},
      {[](ExprPtr x, ExprPtr) { return Op(ScalarOp::kAbs, Op(ScalarOp::kNeg, x)); },
       [](double x, double) { return std::abs(x); }},
      {[](ExprPtr x, ExprPtr) { return Op(ScalarOp::kLog, x); },
       [](double x, double) { return std::log(x); }},
      {[](ExprPtr x, ExprPtr) { return Cast(Cast(x, DType::kBool), DType::kF64); },
       [](double x, double) { return double(x != 0); }},
      {[](ExprPtr x, ExprPtr) { return Cast(Cast(x, DType::kF32), DType::kF64); },
       [](double x, double) { return double(static_cast<float>(x)); }},
  };
  const int m = static_cast<int>(cases.size());
  ProgramBuilder pb;
  int in_a = pb.Arg("a", DType::kF64, {C(n)});
  int in_b = pb.Arg("b", DType::kF64, {C(n)});
  int out = pb.Arg("out", DType::kF64, {C(m), C(n)}, BufferKind::kOutput);
  for (int c = 0; c < m; ++c) {
    pb.Pointwise(out, {C(n)},
                 cases[c].make(Load(in_a, DType::kF64, {I(0)}), Load(in_b, DType::kF64, {I(0)})),
                 {C(c), I(0)});
  }
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<double> os(m * n);
  RunEntry(*code, {const_cast<double*>(a.data()), const_cast<double*>(b.data()), os.data()});
  for (int c = 0; c < m; ++c) {
    for (int i = 0; i < n; ++i) {
      EXPECT_TRUE(Close(os[c * n + i], cases[c].want(a[i], b[i]), 1e-14))
          << "case " << c << " element " << i;
    }
  }
}

TEST(CodegenTest, SymbolicExtentsAreReadFromTheSymbolsArray) {
  // out[i, j] = x[i, j] * 2 + i over [S, 3]; dims and extents read symbols[0].
  ProgramBuilder pb({"S"});
  ExprPtr s = SymbolValue(0);
  int x = pb.Arg("x", DType::kF64, {s, C(3)});
  int out = pb.Arg("out", DType::kF64, {s, C(3)}, BufferKind::kOutput);
  pb.Pointwise(out, {s, C(3)},
               Op(ScalarOp::kAdd, Op(ScalarOp::kMul, Load(x, DType::kF64, {I(0), I(1)}), F(2)),
                  Cast(I(0), DType::kF64)));
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  for (int64_t rows : {3, 7}) {
    std::vector<double> xs(rows * 3), os(rows * 3 + 1, -1.0);  // one guard element
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = i * 0.5;
    RunEntry(*code, {xs.data(), os.data()}, {rows});
    for (int64_t i = 0; i < rows; ++i) {
      for (int j = 0; j < 3; ++j) EXPECT_EQ(os[i * 3 + j], xs[i * 3 + j] * 2 + i);
    }
    EXPECT_EQ(os.back(), -1.0) << "wrote past S rows";
  }
}

int64_t PyFloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

TEST(CodegenTest, IntegerDivisionAndModuloFloor) {
  const std::vector<int64_t> a = {7, -7, 7, -7, 0, 6, -6, 13, -1, 5};
  const std::vector<int64_t> b = {2, 2, -2, -2, 3, 3, -3, -5, 4, 1};
  const int n = static_cast<int>(a.size());
  ProgramBuilder pb;
  int in_a = pb.Arg("a", DType::kI64, {C(n)});
  int in_b = pb.Arg("b", DType::kI64, {C(n)});
  int out = pb.Arg("out", DType::kI64, {C(4), C(n)}, BufferKind::kOutput);
  ExprPtr av = Load(in_a, DType::kI64, {I(0)});
  ExprPtr bv = Load(in_b, DType::kI64, {I(0)});
  pb.Pointwise(out, {C(n)}, Op(ScalarOp::kDiv, av, bv), {C(0), I(0)});
  pb.Pointwise(out, {C(n)}, Op(ScalarOp::kMod, av, bv), {C(1), I(0)});
  // Constant divisors take LLVM's strength-reduced paths.
  pb.Pointwise(out, {C(n)}, Op(ScalarOp::kDiv, av, C(-3)), {C(2), I(0)});
  pb.Pointwise(out, {C(n)}, Op(ScalarOp::kMod, av, C(4)), {C(3), I(0)});
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<int64_t> os(4 * n);
  RunEntry(*code, {const_cast<int64_t*>(a.data()), const_cast<int64_t*>(b.data()), os.data()});
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(os[i], PyFloorDiv(a[i], b[i])) << a[i] << " // " << b[i];
    EXPECT_EQ(os[n + i], a[i] - PyFloorDiv(a[i], b[i]) * b[i]) << a[i] << " % " << b[i];
    EXPECT_EQ(os[2 * n + i], PyFloorDiv(a[i], -3)) << a[i] << " // -3";
    EXPECT_EQ(os[3 * n + i], a[i] - PyFloorDiv(a[i], 4) * 4) << a[i] << " % 4";
  }
}

TEST(CodegenTest, IntegerDivisionByZeroDoesNotTrap) {
  ProgramBuilder pb;
  int in = pb.Arg("a", DType::kI64, {C(2)});
  int out = pb.Arg("out", DType::kI64, {C(2)}, BufferKind::kOutput);
  ExprPtr av = Load(in, DType::kI64, {I(0)});
  pb.Pointwise(out, {C(2)},
               Op(ScalarOp::kAdd, Op(ScalarOp::kDiv, C(5), av), Op(ScalarOp::kMod, C(5), av)));
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<int64_t> as = {0, 2}, os(2);
  RunEntry(*code, {as.data(), os.data()});  // the result for 0 is unspecified, but no SIGFPE
  EXPECT_EQ(os[1], 2 + 1);
}

TEST(CodegenTest, TempBufferInWorkspaceFeedsALaterKernel) {
  constexpr int kN = 10;
  constexpr int64_t kOffset = 128;
  ProgramBuilder pb;
  int x = pb.Arg("x", DType::kF32, {C(kN)});
  int t = pb.Temp("t", DType::kF32, {C(kN)}, kOffset);
  int out = pb.Arg("out", DType::kF32, {C(kN)}, BufferKind::kOutput);
  pb.Pointwise(t, {C(kN)}, Op(ScalarOp::kMul, Load(x, DType::kF32, {I(0)}), F(2, DType::kF32)));
  pb.Pointwise(out, {C(kN)},
               Op(ScalarOp::kAdd, Load(t, DType::kF32, {Op(ScalarOp::kSub, C(kN - 1), I(0))}),
                  F(1, DType::kF32)));
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<float> xs(kN), os(kN);
  for (int i = 0; i < kN; ++i) xs[i] = i * 1.5f;
  alignas(64) char workspace[kOffset + kN * sizeof(float)];
  std::memset(workspace, 0, sizeof(workspace));
  RunEntry(*code, {xs.data(), os.data()}, {}, workspace);
  for (int i = 0; i < kN; ++i) EXPECT_EQ(os[i], xs[kN - 1 - i] * 2 + 1);
  float t3;
  std::memcpy(&t3, workspace + kOffset + 3 * sizeof(float), sizeof(float));
  EXPECT_EQ(t3, xs[3] * 2);  // the temp is where its offset says
}

TEST(CodegenTest, StoreAtASymbolicRowOfACache) {
  // cache[pos, j] = row[j] * 10 for j < D, pos = symbols[0]: a KV cache append.
  constexpr int kRows = 8, kD = 6;
  ProgramBuilder pb({"pos"});
  int row = pb.Arg("row", DType::kF64, {C(kD)});
  int cache = pb.Arg("cache", DType::kF64, {C(kRows), C(kD)}, BufferKind::kOutput);
  pb.Pointwise(cache, {C(kD)}, Op(ScalarOp::kMul, Load(row, DType::kF64, {I(0)}), F(10)),
               {SymbolValue(0), I(0)});
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<double> rs(kD), cs(kRows * kD, -1);
  for (int j = 0; j < kD; ++j) rs[j] = j + 1;
  RunEntry(*code, {rs.data(), cs.data()}, {2});
  RunEntry(*code, {rs.data(), cs.data()}, {5});
  for (int r = 0; r < kRows; ++r) {
    for (int j = 0; j < kD; ++j) {
      EXPECT_EQ(cs[r * kD + j], r == 2 || r == 5 ? (j + 1) * 10.0 : -1) << r << "," << j;
    }
  }
}

TEST(CodegenTest, BoolLoadsAndStores) {
  constexpr int kN = 9;
  ProgramBuilder pb;
  int mask = pb.Arg("mask", DType::kBool, {C(kN)});
  int x = pb.Arg("x", DType::kF64, {C(kN)});
  int out_bool = pb.Arg("out_bool", DType::kBool, {C(kN)}, BufferKind::kOutput);
  int out_num = pb.Arg("out_num", DType::kI64, {C(kN)}, BufferKind::kOutput);
  ExprPtr mv = Load(mask, DType::kBool, {I(0)});
  ExprPtr xv = Load(x, DType::kF64, {I(0)});
  // (x > 0 and not mask) or (x == 0)
  pb.Pointwise(
      out_bool, {C(kN)},
      Op(ScalarOp::kOr, Op(ScalarOp::kAnd, Op(ScalarOp::kGt, xv, F(0)), Op(ScalarOp::kNot, mv)),
         Op(ScalarOp::kEq, xv, F(0))));
  // mask as 0/1 plus 10 * (mask != (x < 0))
  pb.Pointwise(out_num, {C(kN)},
               Op(ScalarOp::kAdd, Cast(mv, DType::kI64),
                  Op(ScalarOp::kMul, C(10),
                     Cast(Op(ScalarOp::kNe, mv, Op(ScalarOp::kLt, xv, F(0))), DType::kI64))));
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  // Any nonzero byte is true.
  std::vector<uint8_t> ms = {0, 1, 0, 1, 0, 7, 0, 1, 0};
  std::vector<double> xs = {1, 1, -1, -1, 0, 2, kNaN, 0, 3};
  std::vector<uint8_t> ob(kN, 0xAA);
  std::vector<int64_t> on(kN);
  RunEntry(*code, {ms.data(), xs.data(), ob.data(), on.data()});
  for (int i = 0; i < kN; ++i) {
    bool m = ms[i] != 0;
    EXPECT_EQ(ob[i], ((xs[i] > 0 && !m) || xs[i] == 0) ? 1 : 0) << i;
    EXPECT_EQ(on[i], int64_t{m} + 10 * int64_t{m != (xs[i] < 0)}) << i;
  }
}

TEST(CodegenTest, SelectArmLoadsOnlyWhenTaken) {
  // Concatenation: out[i] = i < 3 ? a[i] : b[i - 3]. Each arm's index is out of range
  // when the other arm is taken, so the arms must be branches (scalar code) or loads
  // masked by their condition (vectors), never a `select` of two plain loads.
  ProgramBuilder pb;
  int a = pb.Arg("a", DType::kF64, {C(3)});
  int b = pb.Arg("b", DType::kF64, {C(6)});
  int out = pb.Arg("out", DType::kF64, {C(9)}, BufferKind::kOutput);
  pb.Pointwise(out, {C(9)},
               Select(Op(ScalarOp::kLt, I(0), C(3)), Load(a, DType::kF64, {I(0)}),
                      Load(b, DType::kF64, {Op(ScalarOp::kSub, I(0), C(3))})));
  for (CodeTier tier : {CodeTier::kOptimized, CodeTier::kBaseline}) {
    CompileOptions options;
    options.keep_ir = true;
    options.tier = tier;
    options.max_vector_bytes = 32;
    auto code = Compile(pb.program(), options);
    ASSERT_NE(code, nullptr);
    // O2: vectors in pairs and a masked rest; the baseline: vectors and a scalar rest.
    EXPECT_THAT(code->llvm_ir(), HasSubstr("llvm.masked.load"));
    if (tier == CodeTier::kBaseline) {
      EXPECT_THAT(code->llvm_ir(), HasSubstr("sel.true"));
    }
    std::vector<double> as = {1, 2, 3}, bs = {4, 5, 6, 7, 8, 9}, os(9);
    RunEntry(*code, {as.data(), bs.data(), os.data()});
    EXPECT_THAT(os, ::testing::ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 9));
  }
}

}  // namespace
}  // namespace graphjit::compiler::codegen_testutil
