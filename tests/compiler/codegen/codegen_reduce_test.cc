// Codegen of reductions, arg-reductions, scans and matmuls end to end: programs compiled
// by CompileProgram and run on real buffers (NaN, infinities, ties, vector tails, empty
// extents) against values computed here.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/dtype.h"
#include "tests/compiler/codegen/codegen_test_util.h"

namespace graphjit::compiler::codegen_testutil {
namespace {

TEST(CodegenTest, SumMeanAndMaxReductions) {
  constexpr int kRows = 4, kCols = 37;
  ProgramBuilder pb;
  int x = pb.Arg("x", DType::kF64, {C(kRows), C(kCols)});
  int sum = pb.Arg("sum", DType::kF64, {C(kRows)}, BufferKind::kOutput);
  int mean = pb.Arg("mean", DType::kF64, {C(kRows), C(1)}, BufferKind::kOutput);
  int max = pb.Arg("max", DType::kF64, {C(kRows)}, BufferKind::kOutput);
  int empty = pb.Arg("empty", DType::kF64, {C(2)}, BufferKind::kOutput);
  ExprPtr xv = Load(x, DType::kF64, {I(0), I(1)});
  pb.Reduce(sum, {C(kRows)}, C(kCols), ScalarOp::kAdd, xv);
  pb.Reduce(mean, {C(kRows)}, C(kCols), ScalarOp::kAdd, xv, F(1.0 / kCols)).store_indices = {
      I(0), C(0)};  // keepdims
  pb.Reduce(max, {C(kRows)}, C(kCols), ScalarOp::kMax, xv);
  // Empty reductions give the identities.
  pb.Reduce(empty, {}, C(0), ScalarOp::kAdd, F(1)).store_indices = {C(0)};
  pb.Reduce(empty, {}, C(0), ScalarOp::kMax, F(1)).store_indices = {C(1)};
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);

  std::vector<double> xs(kRows * kCols);
  for (int i = 0; i < kRows; ++i) {
    for (int j = 0; j < kCols; ++j) xs[i * kCols + j] = std::cos(i * 31 + j) * 10;
  }
  for (int j = 0; j < kCols; ++j) xs[1 * kCols + j] = -kInf;  // row 1: all -inf
  xs[2 * kCols + 20] = kNaN;                                  // row 2: one NaN
  xs[3 * kCols + 36] = 1e3;                                   // row 3: max in the tail
  std::vector<double> sums(kRows), means(kRows), maxes(kRows), empties(2);
  RunEntry(*code, {xs.data(), sums.data(), means.data(), maxes.data(), empties.data()});
  for (int i = 0; i < kRows; ++i) {
    double s = 0, m = -kInf;
    for (int j = 0; j < kCols; ++j) {
      double v = xs[i * kCols + j];
      s += v;
      m = std::isnan(m) || std::isnan(v) ? kNaN : std::max(m, v);
    }
    EXPECT_TRUE(Close(sums[i], s, 1e-12)) << "row " << i;
    EXPECT_TRUE(Close(means[i], s * (1.0 / kCols), 1e-12)) << "row " << i;
    EXPECT_TRUE(Close(maxes[i], m, 0)) << "row " << i;
  }
  EXPECT_EQ(maxes[1], -kInf);
  EXPECT_TRUE(std::isnan(maxes[2]));
  EXPECT_EQ(maxes[3], 1e3);
  EXPECT_EQ(empties[0], 0.0);
  EXPECT_EQ(empties[1], -kInf);
}

TEST(CodegenTest, IntegerSumAndMaxReductions) {
  ProgramBuilder pb;
  int x = pb.Arg("x", DType::kI64, {C(2), C(5)});
  int out = pb.Arg("out", DType::kI64, {C(2), C(2)}, BufferKind::kOutput);
  ExprPtr xv = Load(x, DType::kI64, {I(0), I(1)});
  pb.Reduce(out, {C(2)}, C(5), ScalarOp::kAdd, xv).store_indices = {I(0), C(0)};
  pb.Reduce(out, {C(2)}, C(5), ScalarOp::kMax, xv).store_indices = {I(0), C(1)};
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<int64_t> xs = {1, -2, 3, -4, 5, -10, -20, -3, -40, -50}, os(4);
  RunEntry(*code, {xs.data(), os.data()});
  EXPECT_THAT(os, ::testing::ElementsAre(3, 5, -123, -3));
}

// The first extremum per row (ties, a row of +inf, NaNs) for f64, f32 and i64 values, and
// an empty extent, which stores 0.
TEST(CodegenTest, ArgMinAndArgMaxKeepTheFirstExtremumAndTheFirstNaN) {
  constexpr int kRows = 5, kCols = 37;
  std::vector<double> xs(kRows * kCols);
  for (int i = 0; i < kRows * kCols; ++i) xs[i] = std::round(std::cos(i * 0.9) * 3);  // ties
  for (int j = 0; j < kCols; ++j) xs[1 * kCols + j] = kInf;                           // all +inf
  xs[2 * kCols + 5] = kNaN;  // row 2: NaNs after values
  xs[2 * kCols + 30] = kNaN;
  xs[3 * kCols + 36] = -100;  // row 3: the minimum in the vector tail
  xs[4 * kCols + 0] = -kInf;  // row 4: -inf first
  std::vector<float> fs(xs.begin(), xs.end());
  std::vector<int64_t> is(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) is[i] = std::isfinite(xs[i]) ? int64_t(xs[i]) : -7;
  auto first = [&](int row, bool min, bool as_int) {
    int best = 0;
    for (int j = 0; j < kCols; ++j) {
      const double v = as_int ? double(is[row * kCols + j]) : xs[row * kCols + j];
      const double b = as_int ? double(is[row * kCols + best]) : xs[row * kCols + best];
      if (std::isnan(v)) return int64_t{j};
      if (min ? v < b : v > b) best = j;
    }
    return int64_t{best};
  };

  ProgramBuilder pb;
  int x64 = pb.Arg("x64", DType::kF64, {C(kRows), C(kCols)});
  int x32 = pb.Arg("x32", DType::kF32, {C(kRows), C(kCols)});
  int xi = pb.Arg("xi", DType::kI64, {C(kRows), C(kCols)});
  int out = pb.Arg("out", DType::kI64, {C(6), C(kRows)}, BufferKind::kOutput);
  int empty = pb.Arg("empty", DType::kI64, {C(1)}, BufferKind::kOutput);
  const int loads[] = {x64, x32, xi};
  const DType dtypes[] = {DType::kF64, DType::kF32, DType::kI64};
  for (int t = 0; t < 3; ++t) {
    for (int m = 0; m < 2; ++m) {
      pb.ArgReduce(out, {C(kRows)}, C(kCols), m == 0 ? ScalarOp::kMin : ScalarOp::kMax,
                   Load(loads[t], dtypes[t], {I(0), I(1)}))
          .store_indices = {C(2 * t + m), I(0)};
    }
  }
  pb.ArgReduce(empty, {}, C(0), ScalarOp::kMin, F(1)).store_indices = {C(0)};
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<int64_t> os(6 * kRows, -1), es = {-1};
  RunEntry(*code, {xs.data(), fs.data(), is.data(), os.data(), es.data()});
  for (int t = 0; t < 3; ++t) {
    for (int m = 0; m < 2; ++m) {
      for (int r = 0; r < kRows; ++r) {
        EXPECT_EQ(os[(2 * t + m) * kRows + r], first(r, m == 0, t == 2))
            << ir::DTypeName(dtypes[t]) << (m == 0 ? " argmin" : " argmax") << " row " << r;
      }
    }
  }
  EXPECT_EQ(os[1 * kRows + 2], 5) << "the first NaN wins argmax";
  EXPECT_EQ(os[0 * kRows + 1], 0) << "argmin of all +inf is the first";
  EXPECT_EQ(os[0 * kRows + 3], 36);
  EXPECT_EQ(es[0], 0);
}

// Running sums along the contiguous axis (identity store) and along a strided one, f32
// accumulating in f64 (so the result is the double sum rounded per element), i64 wrapping.
TEST(CodegenTest, ScansAreRunningSumsInIndexOrder) {
  constexpr int kRows = 3, kCols = 37;
  ProgramBuilder pb;
  int x64 = pb.Arg("x64", DType::kF64, {C(kRows), C(kCols)});
  int x32 = pb.Arg("x32", DType::kF32, {C(kRows), C(kCols)});
  int xi = pb.Arg("xi", DType::kI64, {C(2)});
  int rows64 = pb.Arg("rows64", DType::kF64, {C(kRows), C(kCols)}, BufferKind::kOutput);
  int cols64 = pb.Arg("cols64", DType::kF64, {C(kRows), C(kCols)}, BufferKind::kOutput);
  int rows32 = pb.Arg("rows32", DType::kF32, {C(kRows), C(kCols)}, BufferKind::kOutput);
  int wrapped = pb.Arg("wrapped", DType::kI64, {C(2)}, BufferKind::kOutput);
  pb.Scan(rows64, {C(kRows)}, C(kCols), Load(x64, DType::kF64, {I(0), I(1)}));
  // Along axis 0: the loop runs over columns, the scan variable i1 over rows.
  pb.Scan(cols64, {C(kCols)}, C(kRows), Load(x64, DType::kF64, {I(1), I(0)}), {I(1), I(0)});
  pb.Scan(rows32, {C(kRows)}, C(kCols), Load(x32, DType::kF32, {I(0), I(1)}));
  pb.Scan(wrapped, {}, C(2), Load(xi, DType::kI64, {I(0)}));
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<double> xs(kRows * kCols), r64(xs.size()), c64(xs.size());
  std::vector<float> xf(xs.size()), r32(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    xs[i] = std::sin(i * 1.3) * 1e3 + 1e-3 * i;
    xf[i] = static_cast<float>(std::cos(i * 0.7) * 1e4);
  }
  std::vector<int64_t> xi_v = {std::numeric_limits<int64_t>::max(), 1}, wi(2);
  RunEntry(*code,
           {xs.data(), xf.data(), xi_v.data(), r64.data(), c64.data(), r32.data(), wi.data()});
  for (int i = 0; i < kRows; ++i) {
    double acc = 0, acc32 = 0;
    for (int j = 0; j < kCols; ++j) {
      acc += xs[i * kCols + j];
      acc32 += xf[i * kCols + j];
      EXPECT_EQ(r64[i * kCols + j], acc) << i << "," << j;
      EXPECT_EQ(r32[i * kCols + j], static_cast<float>(acc32)) << i << "," << j;
    }
  }
  for (int j = 0; j < kCols; ++j) {
    double acc = 0;
    for (int i = 0; i < kRows; ++i) {
      acc += xs[i * kCols + j];
      EXPECT_EQ(c64[i * kCols + j], acc) << i << "," << j;
    }
  }
  EXPECT_EQ(wi[0], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(wi[1], std::numeric_limits<int64_t>::min());
}

// out[b, m, n] = sum_k a[b, m, k] * w[(b,) k, n] for both loop orders, against naive loops.
void MatmulCase(MatmulOrder order, bool broadcast_rhs) {
  constexpr int kB = 2, kM = 5, kN = 19, kK = 33;
  ProgramBuilder pb;
  int a = pb.Arg("a", DType::kF64, {C(kB), C(kM), C(kK)});
  int w = broadcast_rhs ? pb.Arg("w", DType::kF64, {C(kK), C(kN)})
                        : pb.Arg("w", DType::kF64, {C(kB), C(kK), C(kN)});
  int out = pb.Arg("out", DType::kF64, {C(kB), C(kM), C(kN)}, BufferKind::kOutput);
  // Loop variables: b = 0, m = 1, n = 2, k = 3.
  ExprPtr lhs = Load(a, DType::kF64, {I(0), I(1), I(3)});
  ExprPtr rhs =
      broadcast_rhs ? Load(w, DType::kF64, {I(3), I(2)}) : Load(w, DType::kF64, {I(0), I(3), I(2)});
  pb.Matmul(out, {C(kB), C(kM), C(kN), C(kK)}, lhs, rhs, order);
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<double> as(kB * kM * kK), ws((broadcast_rhs ? 1 : kB) * kK * kN);
  std::vector<double> os(kB * kM * kN, kNaN);  // kAxpy must zero it first
  for (size_t i = 0; i < as.size(); ++i) as[i] = std::sin(i * 0.37);
  for (size_t i = 0; i < ws.size(); ++i) ws[i] = std::cos(i * 0.11) - 0.3;
  RunEntry(*code, {as.data(), ws.data(), os.data()});
  for (int b = 0; b < kB; ++b) {
    const double* wb = ws.data() + (broadcast_rhs ? 0 : b * kK * kN);
    for (int m = 0; m < kM; ++m) {
      for (int n = 0; n < kN; ++n) {
        double acc = 0;
        for (int k = 0; k < kK; ++k) acc += as[(b * kM + m) * kK + k] * wb[k * kN + n];
        EXPECT_TRUE(Close(os[(b * kM + m) * kN + n], acc, 1e-12)) << b << "," << m << "," << n;
      }
    }
  }
}

TEST(CodegenTest, MatmulDotOrderWithBatch) { MatmulCase(MatmulOrder::kDot, false); }
TEST(CodegenTest, MatmulAxpyOrderWithBatch) { MatmulCase(MatmulOrder::kAxpy, false); }
TEST(CodegenTest, MatmulAxpyOrderBroadcastRhs) { MatmulCase(MatmulOrder::kAxpy, true); }

}  // namespace
}  // namespace graphjit::compiler::codegen_testutil
