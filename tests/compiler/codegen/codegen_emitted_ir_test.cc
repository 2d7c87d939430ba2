// The LLVM IR codegen emits: index arithmetic shared within a block, kernels as internal
// functions called by the entry, math that vectorizes (inline exp, libmvec's log), and
// kernels that may be named like the libm functions they call; each program is also run.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/codegen/codegen_test_util.h"

namespace graphjit::compiler::codegen_testutil {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Loads at the same index share its address arithmetic: out[i, j] = a[i, j] * b[i, j] +
// a[i, j + 0] emits i * 4 (+ j) once, not once per load, and `+ 0` not at all. Rows of 4
// are one block on every host (one f64 vector of AVX2, part of one of AVX-512).
TEST(CodegenTest, EqualIndexArithmeticIsEmittedOncePerBlock) {
  ProgramBuilder pb;
  int a = pb.Arg("a", DType::kF64, {C(5), C(4)});
  int b = pb.Arg("b", DType::kF64, {C(5), C(4)});
  int out = pb.Arg("out", DType::kF64, {C(5), C(4)}, BufferKind::kOutput);
  pb.Pointwise(
      out, {C(5), C(4)},
      Op(ScalarOp::kAdd,
         Op(ScalarOp::kMul, Load(a, DType::kF64, {I(0), I(1)}), Load(b, DType::kF64, {I(0), I(1)})),
         Load(a, DType::kF64, {I(0), Op(ScalarOp::kAdd, I(1), C(0))})));
  CompileOptions options;
  options.keep_ir = true;
  auto code = Compile(pb.program(), options);
  ASSERT_NE(code, nullptr);
  const std::string& ir = code->llvm_ir();
  EXPECT_EQ(CountOf(ir, "= mul nsw i64 %i0, 4\n"), 1) << ir;  // the row stride, once
  EXPECT_EQ(CountOf(ir, ", 0\n"), 0) << ir;                   // no `add x, 0`
  std::vector<double> as(20), bs(20), os(20);
  for (int i = 0; i < 20; ++i) {
    as[i] = i;
    bs[i] = 2;
  }
  RunEntry(*code, {as.data(), bs.data(), os.data()});
  for (int i = 0; i < 20; ++i) EXPECT_EQ(os[i], 3.0 * i) << i;
}

// exp is emitted inline (no call, so it vectorizes anywhere); log is libm's, which the
// vectorizer maps to libmvec's 4 x f64 variant.
TEST(CodegenTest, EntryCallsInternalKernelsAndVectorizesMath) {
  constexpr int kN = 1024;
  ProgramBuilder pb;
  int x = pb.Arg("x", DType::kF64, {C(kN)});
  int out = pb.Arg("out", DType::kF64, {C(kN)}, BufferKind::kOutput);
  int out2 = pb.Arg("out2", DType::kF64, {C(kN)}, BufferKind::kOutput);
  pb.Pointwise(out, {C(kN)}, Op(ScalarOp::kExp, Load(x, DType::kF64, {I(0)})));
  pb.Pointwise(out2, {C(kN)}, Op(ScalarOp::kLog, Load(out, DType::kF64, {I(0)})));
  CompileOptions options;
  options.keep_ir = true;
  auto code = Compile(pb.program(), options);
  ASSERT_NE(code, nullptr);
  EXPECT_THAT(code->llvm_ir(), HasSubstr("define internal void @gj.k0("));
  EXPECT_THAT(code->llvm_ir(), Not(HasSubstr("@exp(")));
  EXPECT_THAT(code->llvm_ir(), HasSubstr("declare double @log(double) #"));
  EXPECT_THAT(code->optimized_ir(), HasSubstr("<4 x double>"));
  EXPECT_THAT(code->optimized_ir(), HasSubstr("_ZGVdN4v_log"));
  std::vector<double> xs(kN), os(kN), logs(kN);
  for (int i = 0; i < kN; ++i) xs[i] = (i - 512) / 50.0;
  RunEntry(*code, {xs.data(), os.data(), logs.data()});
  for (int i = 0; i < kN; ++i) {
    EXPECT_TRUE(Close(os[i], std::exp(xs[i]), 1e-14)) << i;
    EXPECT_TRUE(Close(logs[i], xs[i], 1e-13)) << i;
  }
}

TEST(CodegenTest, KernelsNamedLikeLibmFunctions) {
  // Kernel functions must not take the names of the libm functions they call.
  ProgramBuilder pb;
  int x = pb.Arg("x", DType::kF64, {C(3)});
  int out = pb.Arg("out", DType::kF64, {C(3)}, BufferKind::kOutput);
  ExprPtr xv = Load(x, DType::kF64, {I(0)});
  pb.Pointwise(out, {C(3)}, Op(ScalarOp::kTanh, xv)).name = "tanh";
  pb.Pointwise(out, {C(3)}, Op(ScalarOp::kExp, Load(out, DType::kF64, {I(0)}))).name = "exp";
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<double> xs = {-1, 0, 2}, os(3);
  RunEntry(*code, {xs.data(), os.data()});
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(Close(os[i], std::exp(std::tanh(xs[i])), 1e-14)) << i;
}

// The baseline tier writes a map's and a reduction's vectors itself (codegen_lanes.cc,
// tested at edge lengths in codegen_lanes_test.cc) and marks no loop for LLVM's vectorizer;
// O2 marks none either and lets its vectorizer choose. Both tiers vectorize and compute
// the same values.
TEST(CodegenTest, BaselineWritesMapAndReductionVectorsItself) {
  constexpr int kRows = 4, kCols = 67;
  ProgramBuilder pb;
  int x = pb.Arg("x", DType::kF64, {C(kRows), C(kCols)});
  int e = pb.Arg("e", DType::kF64, {C(kRows), C(kCols)}, BufferKind::kOutput);
  int sum = pb.Arg("sum", DType::kF64, {C(kRows)}, BufferKind::kOutput);
  pb.Pointwise(e, {C(kRows), C(kCols)}, Op(ScalarOp::kExp, Load(x, DType::kF64, {I(0), I(1)})));
  pb.Reduce(sum, {C(kRows)}, C(kCols), ScalarOp::kAdd, Load(x, DType::kF64, {I(0), I(1)}));
  std::vector<double> xs(kRows * kCols);
  for (int i = 0; i < kRows * kCols; ++i) xs[i] = (i % 23) / 7.0 - 1.5;
  for (CodeTier tier : {CodeTier::kOptimized, CodeTier::kBaseline}) {
    SCOPED_TRACE(CodeTierName(tier));
    CompileOptions options;
    options.keep_ir = true;
    options.tier = tier;
    auto code = Compile(pb.program(), options);
    ASSERT_NE(code, nullptr);
    const std::string& ir = code->llvm_ir();
    EXPECT_EQ(CountOf(ir, "!llvm.loop !"), 0) << ir;
    if (tier == CodeTier::kBaseline) {
      EXPECT_THAT(ir, HasSubstr(" x double>"));
    }
    EXPECT_THAT(code->optimized_ir(), HasSubstr("x double>")) << code->optimized_ir();
    std::vector<double> es(kRows * kCols), sums(kRows);
    RunEntry(*code, {xs.data(), es.data(), sums.data()});
    for (int r = 0; r < kRows; ++r) {
      double want = 0;
      for (int c = 0; c < kCols; ++c) {
        want += xs[r * kCols + c];
        EXPECT_TRUE(Close(es[r * kCols + c], std::exp(xs[r * kCols + c]), 1e-14)) << r << "," << c;
      }
      EXPECT_TRUE(Close(sums[r], want, 1e-13)) << r;
    }
  }
}

}  // namespace
}  // namespace graphjit::compiler::codegen_testutil
