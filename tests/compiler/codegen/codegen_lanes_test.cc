// The baseline tier's explicit vector maps and reductions (codegen_lanes.cc): at lengths
// around every vector width (0, 1, lanes - 1, lanes, lanes + 1, primes), symbolic and
// constant, for f32 and f64 at the host's width and the narrower ones: maps give the O2
// tier's bits, reductions the reference's values, and the emitted IR has vectors of the
// width asked for and none wider. Loops one vector cannot hold stay with LLVM's
// vectorizer. Stride-2 loads (a wide load's even lanes) give the reference's bits in
// both tiers, the O2 tier's pairs and masked rests included; so do row stencils, whose
// rows the O2 tier computes four at a time (with more than 9 taps, one row at a time in a
// vector as wide as the row), and reductions over strided axes, in vectors of outputs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/codegen/codegen_test_util.h"

namespace graphjit::compiler::codegen_testutil {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kRows = 3;
// Around 2, 4, 8 and 16 lanes, the 4-accumulator blocks of each, and primes.
const std::vector<int64_t> kLengths = {0,  1,  2,  3,  4,  5,  7,  8,  9,   15,  16,  17,
                                       31, 32, 33, 63, 64, 65, 67, 97, 127, 128, 129, 131};

std::string VectorOf(int lanes, DType dtype) {
  return "<" + std::to_string(lanes) + " x " + (dtype == DType::kF32 ? "float" : "double") + ">";
}

// The emitted IR has vectors of `dtype` filling `vector_bytes` (0: some width) with lanes
// of `lane_bytes` (the widest element beside them: 8 for an i64 index or an f64 sum beside
// f32) and none wider.
void ExpectWidth(const std::string& ir, int vector_bytes, DType dtype, int lane_bytes) {
  if (vector_bytes == 0) {
    EXPECT_THAT(ir, HasSubstr(dtype == DType::kF32 ? " x float>" : " x double>"));
    return;
  }
  const int lanes = vector_bytes / lane_bytes;
  EXPECT_THAT(ir, HasSubstr(VectorOf(lanes, dtype)));
  for (int wider = 2 * lanes; wider <= 16; wider *= 2) {
    EXPECT_THAT(ir, Not(HasSubstr(VectorOf(wider, dtype))));
  }
}

// out[r, i] = (x[r, i] > 0 ? exp(x[r, i]) * y[i] + i : -x[r, i]) + z[r], over rows of
// length `n` (a constant) or of the symbol N (n < 0).
Program MapProgram(DType dtype, int64_t n) {
  ProgramBuilder pb(n < 0 ? std::vector<std::string>{"N"} : std::vector<std::string>{});
  ExprPtr len = n < 0 ? SymbolValue(0) : C(n);
  int x = pb.Arg("x", dtype, {C(kRows), len});
  int y = pb.Arg("y", dtype, {len});
  int z = pb.Arg("z", dtype, {C(kRows)});
  int out = pb.Arg("out", dtype, {C(kRows), len}, BufferKind::kOutput);
  ExprPtr xv = Load(x, dtype, {I(0), I(1)});
  ExprPtr up =
      Op(ScalarOp::kAdd, Op(ScalarOp::kMul, Op(ScalarOp::kExp, xv), Load(y, dtype, {I(1)})),
         Cast(I(1), dtype));
  pb.Pointwise(
      out, {C(kRows), len},
      Op(ScalarOp::kAdd, Select(Op(ScalarOp::kGt, xv, F(0.0, dtype)), up, Op(ScalarOp::kNeg, xv)),
         Load(z, dtype, {I(0)})));
  return pb.program();
}

// Compiled at `tier` with vectors of at most `vector_bytes` (0: the host's), its emitted
// IR kept.
std::unique_ptr<NativeCode> CompileAt(const Program& program, CodeTier tier, int vector_bytes = 0) {
  CompileOptions options;
  options.keep_ir = true;
  options.tier = tier;
  options.max_vector_bytes = vector_bytes;
  return Compile(program, options);
}

std::unique_ptr<NativeCode> CompileBaseline(const Program& program) {
  return CompileAt(program, CodeTier::kBaseline);
}

// The map over rows of length n, compiled for `length` (n, or -1: the symbol N) in both
// tiers: the baseline's vectors give the O2 tier's bits, both near the reference.
template <typename T>
void CheckMap(DType dtype, int vector_bytes, int64_t length, const std::vector<int64_t>& ns) {
  std::vector<std::unique_ptr<NativeCode>> codes;
  for (CodeTier tier : {CodeTier::kBaseline, CodeTier::kOptimized}) {
    codes.push_back(CompileAt(MapProgram(dtype, length), tier, vector_bytes));
    ASSERT_NE(codes.back(), nullptr);
  }
  if (length < 0) {
    ExpectWidth(codes[0]->llvm_ir(), vector_bytes, dtype, /*lane_bytes=*/8);  // i64 i
    EXPECT_THAT(codes[0]->llvm_ir(), Not(HasSubstr("llvm.loop.vectorize.enable")));
  }
  for (int64_t n : ns) {
    SCOPED_TRACE(::testing::Message() << "bytes " << vector_bytes << " n " << n
                                      << (length < 0 ? " symbolic" : " constant"));
    std::vector<T> xs = Values<T>(kRows * n, 1), ys = Values<T>(n, 2), zs = Values<T>(kRows, 3);
    std::vector<std::vector<T>> outs;
    for (const auto& code : codes) {
      std::vector<T> out(kRows * n, T(-7));
      RunEntry(*code, {xs.data(), ys.data(), zs.data(), out.data()},
               length < 0 ? std::vector<int64_t>{n} : std::vector<int64_t>{});
      outs.push_back(out);
    }
    // The same bits (memcmp: NaN == NaN; an empty vector's data() may be null).
    if (n > 0) {
      ASSERT_EQ(std::memcmp(outs[0].data(), outs[1].data(), outs[0].size() * sizeof(T)), 0);
    }
    for (int64_t i = 0; i < kRows * n; ++i) {
      const int64_t r = i / n, c = i % n;
      const double want = (xs[i] > 0 ? std::exp(double(xs[i])) * ys[c] + c : -xs[i]) + zs[r];
      EXPECT_TRUE(Close(outs[0][i], want, dtype == DType::kF32 ? 1e-5 : 1e-13)) << i;
    }
  }
}

template <typename T>
void CheckMaps(DType dtype) {
  for (int vector_bytes : {0, 16, 32}) {
    CheckMap<T>(dtype, vector_bytes, -1, kLengths);
    for (int64_t n : {1, 7, 9, 17, 33, 67}) CheckMap<T>(dtype, vector_bytes, n, {n});
  }
}

TEST(CodegenLanesTest, MapsAtEdgeLengthsF64) { CheckMaps<double>(DType::kF64); }
TEST(CodegenLanesTest, MapsAtEdgeLengthsF32) { CheckMaps<float>(DType::kF32); }

// Below 64-byte vectors (AVX's masked stores are microcoded on AMD's Zen 1 to 3) a row's
// rest of constant length stores plain pieces: 7 of 8 lanes as 4 + 2 + 1, no masked
// store; no element past the rows is written (sentinels after the output stay), and the
// values are the baseline tier's bits (with 64-byte vectors too, on AVX-512 hosts, where the
// rest stays one masked store).
template <typename T>
void CheckConstantRests(DType dtype) {
  std::vector<int> widths = {16, 32};
  if (__builtin_cpu_supports("avx512f")) widths.push_back(64);
  for (int vector_bytes : widths) {
    for (int64_t n : {1, 3, 5, 6, 7, 9, 13, 15, 17, 23}) {
      SCOPED_TRACE(::testing::Message() << "bytes " << vector_bytes << " n " << n);
      const int lanes = vector_bytes / static_cast<int>(sizeof(T));
      std::unique_ptr<NativeCode> o2 =
          CompileAt(MapProgram(dtype, n), CodeTier::kOptimized, vector_bytes);
      std::unique_ptr<NativeCode> baseline =
          CompileAt(MapProgram(dtype, n), CodeTier::kBaseline, vector_bytes);
      ASSERT_NE(o2, nullptr);
      ASSERT_NE(baseline, nullptr);
      if (n % lanes != 0 && vector_bytes < 64) {
        EXPECT_THAT(o2->llvm_ir(), Not(HasSubstr("llvm.masked.store")));
      }
      std::vector<T> xs = Values<T>(kRows * n, 1), ys = Values<T>(n, 2), zs = Values<T>(kRows, 3);
      std::vector<std::vector<T>> outs;
      for (const auto& code : {o2.get(), baseline.get()}) {
        std::vector<T> out(kRows * n + 16, T(-7));
        RunEntry(*code, {xs.data(), ys.data(), zs.data(), out.data()}, {});
        for (int64_t i = kRows * n; i < kRows * n + 16; ++i) ASSERT_EQ(out[i], T(-7)) << i;
        outs.push_back(out);
      }
      ASSERT_EQ(std::memcmp(outs[0].data(), outs[1].data(), outs[0].size() * sizeof(T)), 0);
    }
  }
}

TEST(CodegenLanesTest, ConstantRestsStorePlainPiecesF32) { CheckConstantRests<float>(DType::kF32); }
TEST(CodegenLanesTest, ConstantRestsStorePlainPiecesF64) {
  CheckConstantRests<double>(DType::kF64);
}

// Indices are i64 but stay scalars: an f32 map without an i64 value fills its vectors
// with f32 lanes.
TEST(CodegenLanesTest, F32MapsTakeF32Lanes) {
  ProgramBuilder pb({"N"});
  int x = pb.Arg("x", DType::kF32, {C(kRows), SymbolValue(0)});
  int out = pb.Arg("out", DType::kF32, {C(kRows), SymbolValue(0)}, BufferKind::kOutput);
  pb.Pointwise(out, {C(kRows), SymbolValue(0)},
               Op(ScalarOp::kAdd, Load(x, DType::kF32, {I(0), I(1)}), F(1.0, DType::kF32)));
  for (int vector_bytes : {16, 32}) {
    auto code = CompileAt(pb.program(), CodeTier::kBaseline, vector_bytes);
    ASSERT_NE(code, nullptr);
    ExpectWidth(code->llvm_ir(), vector_bytes, DType::kF32, /*lane_bytes=*/4);
    for (int64_t n : {int64_t{3}, int64_t{17}, int64_t{67}}) {
      std::vector<float> xs = Values<float>(kRows * n, 4), got(kRows * n);
      RunEntry(*code, {xs.data(), got.data()}, {n});
      for (int64_t i = 0; i < kRows * n; ++i) EXPECT_EQ(got[i], xs[i] + 1.0f) << i;
    }
  }
}

// out[r, i] = (x[r, 2i] * w[0] + x[r, 2i + 1] * w[1]) + (i < N / 2 ? x[r, 2i + 2] : 0.5):
// a stride-2 window (even lanes of a wide load) with one load in a select arm (its mask
// spread over the wide lanes), rows of N outputs from rows of 2N + 1 inputs. Both tiers
// give the reference's bits at every length (pairs, single vectors, masked rests).
template <typename T>
void CheckStrideTwo(DType dtype) {
  ProgramBuilder pb({"N"});
  ExprPtr n = SymbolValue(0);
  ExprPtr row = Op(ScalarOp::kAdd, Op(ScalarOp::kMul, n, C(2)), C(1));
  int x = pb.Arg("x", dtype, {C(kRows), row});
  int w = pb.Arg("w", dtype, {C(2)});
  int out = pb.Arg("out", dtype, {C(kRows), n}, BufferKind::kOutput);
  ExprPtr two_i = Op(ScalarOp::kMul, I(1), C(2));
  auto tap = [&](int offset) {
    return Load(x, dtype, {I(0), offset == 0 ? two_i : Op(ScalarOp::kAdd, two_i, C(offset))});
  };
  ExprPtr window = Op(ScalarOp::kAdd, Op(ScalarOp::kMul, tap(0), Load(w, dtype, {C(0)})),
                      Op(ScalarOp::kMul, tap(1), Load(w, dtype, {C(1)})));
  pb.Pointwise(
      out, {C(kRows), n},
      Op(ScalarOp::kAdd, window,
         Select(Op(ScalarOp::kLt, I(1), Op(ScalarOp::kDiv, n, C(2))), tap(2), F(0.5, dtype))));
  for (CodeTier tier : {CodeTier::kBaseline, CodeTier::kOptimized}) {
    for (int vector_bytes : {0, 16, 32}) {
      auto code = CompileAt(pb.program(), tier, vector_bytes);
      ASSERT_NE(code, nullptr);
      // The wide load and its even lanes.
      EXPECT_THAT(code->llvm_ir(), HasSubstr("shufflevector"));
      for (int64_t len : kLengths) {
        SCOPED_TRACE(::testing::Message() << "tier " << static_cast<int>(tier) << " bytes "
                                          << vector_bytes << " N " << len);
        std::vector<T> xs = Values<T>(kRows * (2 * len + 1), 6), ws = {T(0.75), T(-1.25)};
        std::vector<T> got(kRows * len, T(-7));
        RunEntry(*code, {xs.data(), ws.data(), got.data()}, {len});
        for (int r = 0; r < kRows; ++r) {
          const T* in = xs.data() + r * (2 * len + 1);
          for (int64_t i = 0; i < len; ++i) {
            const T want = (in[2 * i] * ws[0] + in[2 * i + 1] * ws[1]) +
                           (i < len / 2 ? in[2 * i + 2] : T(0.5));
            ASSERT_EQ(got[r * len + i], want) << r << ", " << i;
          }
        }
      }
    }
  }
}

// A concat along the rows read inline: out[r, i] = r < 1 ? a[0, i] : (r < 2 ? b[0, i] *
// s[0] : c[0, i]), each arm's loads out of bounds where it is not taken. The condition is
// the same for every lane, so the vectors branch to the taken arm (one arm's scalar load
// of s included) instead of loading every arm masked.
TEST(CodegenLanesTest, UniformSelectsBranchToTheTakenArm) {
  ProgramBuilder pb({"N"});
  ExprPtr n = SymbolValue(0);
  int a = pb.Arg("a", DType::kF32, {C(1), n});
  int b = pb.Arg("b", DType::kF32, {C(1), n});
  int c = pb.Arg("c", DType::kF32, {C(1), n});
  int scale = pb.Arg("s", DType::kF32, {C(1)});
  int out = pb.Arg("out", DType::kF32, {C(kRows), n}, BufferKind::kOutput);
  auto row = [&](int buffer, int first) {
    return Load(buffer, DType::kF32, {Op(ScalarOp::kSub, I(0), C(first)), I(1)});
  };
  pb.Pointwise(
      out, {C(kRows), n},
      Select(Op(ScalarOp::kLt, I(0), C(1)), row(a, 0),
             Select(Op(ScalarOp::kLt, I(0), C(2)),
                    Op(ScalarOp::kMul, row(b, 1), Load(scale, DType::kF32, {C(0)})), row(c, 2))));
  for (CodeTier tier : {CodeTier::kBaseline, CodeTier::kOptimized}) {
    auto code = CompileAt(pb.program(), tier);
    ASSERT_NE(code, nullptr);
    EXPECT_THAT(code->llvm_ir(), HasSubstr("lanes.true"));
    for (int64_t len : kLengths) {
      SCOPED_TRACE(::testing::Message() << "tier " << static_cast<int>(tier) << " N " << len);
      std::vector<float> as = Values<float>(len, 7), bs = Values<float>(len, 8),
                         cs = Values<float>(len, 9), ss = {1.5f}, got(kRows * len, -7.0f);
      RunEntry(*code, {as.data(), bs.data(), cs.data(), ss.data(), got.data()}, {len});
      for (int64_t i = 0; i < len; ++i) {
        ASSERT_EQ(got[i], as[i]) << i;
        ASSERT_EQ(got[len + i], bs[i] * 1.5f) << i;
        ASSERT_EQ(got[2 * len + i], cs[i]) << i;
      }
    }
  }
}

TEST(CodegenLanesTest, StrideTwoLoadsF32) { CheckStrideTwo<float>(DType::kF32); }
TEST(CodegenLanesTest, StrideTwoLoadsF64) { CheckStrideTwo<double>(DType::kF64); }

// Vector stores in emitted IR.
int VectorStores(const std::string& ir) {
  int count = 0;
  for (size_t at = ir.find("store <"); at != std::string::npos; at = ir.find("store <", at + 1)) {
    ++count;
  }
  return count;
}

// A stride-1 stencil over rows, out[r, i] = (x[r, i] * 0.75 + x[r + s, i + 1] * -1.25) +
// x[r + 2s, i], `rows` rows of N outputs from rows + 2s rows of N + 1 inputs. With s = 1
// the taps share input rows, so at O2 the rows are computed four at a time (in the
// emitted IR, four rows' stores per vector, from 4 rows on), the rest rows one by one;
// s = 0 (every tap on the output's row) must not jam. Both tiers give the reference's
// bits at every row count and length.
template <typename T>
void CheckRowStencil(DType dtype) {
  for (int64_t rows : {1, 2, 3, 4, 5, 7, 9}) {
    std::vector<int> stores;
    for (int s : {0, 1}) {
      ProgramBuilder pb({"N"});
      ExprPtr n = SymbolValue(0);
      int x = pb.Arg("x", dtype, {C(rows + 2 * s), Op(ScalarOp::kAdd, n, C(1))});
      int out = pb.Arg("out", dtype, {C(rows), n}, BufferKind::kOutput);
      auto tap = [&](int row, int col) {
        ExprPtr r = row == 0 ? I(0) : Op(ScalarOp::kAdd, I(0), C(row));
        return Load(x, dtype, {r, col == 0 ? I(1) : Op(ScalarOp::kAdd, I(1), C(col))});
      };
      pb.Pointwise(out, {C(rows), n},
                   Op(ScalarOp::kAdd,
                      Op(ScalarOp::kAdd, Op(ScalarOp::kMul, tap(0, 0), F(0.75, dtype)),
                         Op(ScalarOp::kMul, tap(s, 1), F(-1.25, dtype))),
                      tap(2 * s, 0)));
      for (CodeTier tier : {CodeTier::kBaseline, CodeTier::kOptimized}) {
        auto code = CompileAt(pb.program(), tier);
        ASSERT_NE(code, nullptr);
        if (tier == CodeTier::kOptimized) stores.push_back(VectorStores(code->llvm_ir()));
        for (int64_t len : kLengths) {
          SCOPED_TRACE(::testing::Message() << "tier " << static_cast<int>(tier) << " rows " << rows
                                            << " s " << s << " N " << len);
          std::vector<T> xs = Values<T>((rows + 2 * s) * (len + 1), 4);
          std::vector<T> got(rows * len, T(-7));
          RunEntry(*code, {xs.data(), got.data()}, {len});
          for (int64_t r = 0; r < rows; ++r) {
            const T* in = xs.data() + r * (len + 1);
            for (int64_t i = 0; i < len; ++i) {
              const T want = (in[i] * T(0.75) + in[s * (len + 1) + i + 1] * T(-1.25)) +
                             in[2 * s * (len + 1) + i];
              ASSERT_EQ(got[r * len + i], want) << r << ", " << i;
            }
          }
        }
      }
    }
    // Fewer than four rows: no block of four is emitted.
    if (rows >= 4) {
      EXPECT_GT(stores[1], stores[0]) << rows << " rows";
    } else {
      EXPECT_EQ(stores[1], stores[0]) << rows << " rows";
    }
  }
}

TEST(CodegenLanesTest, RowStencilsF32) { CheckRowStencil<float>(DType::kF32); }
TEST(CodegenLanesTest, RowStencilsF64) { CheckRowStencil<double>(DType::kF64); }

// sums[r] = sum_i x[r, i] * x[r, i], maxes[r] = max_i x[r, i] over a symbolic length.
template <typename T>
void CheckReductions(DType dtype) {
  ProgramBuilder pb({"N"});
  int x = pb.Arg("x", dtype, {C(kRows), SymbolValue(0)});
  int sums = pb.Arg("sums", dtype, {C(kRows)}, BufferKind::kOutput);
  int maxes = pb.Arg("maxes", dtype, {C(kRows)}, BufferKind::kOutput);
  ExprPtr xv = Load(x, dtype, {I(0), I(1)});
  pb.Reduce(sums, {C(kRows)}, SymbolValue(0), ScalarOp::kAdd, Op(ScalarOp::kMul, xv, xv));
  pb.Reduce(maxes, {C(kRows)}, SymbolValue(0), ScalarOp::kMax, xv);
  for (int vector_bytes : {0, 16, 32}) {
    auto code = CompileAt(pb.program(), CodeTier::kBaseline, vector_bytes);
    ASSERT_NE(code, nullptr);
    // The max in the dtype's lanes (the f32 sums in f64's).
    ExpectWidth(code->llvm_ir(), vector_bytes, dtype, dtype == DType::kF32 ? 4 : 8);
    EXPECT_THAT(code->llvm_ir(), Not(HasSubstr("llvm.loop.vectorize.enable")));
    for (int64_t n : kLengths) {
      // Row 1 has a NaN (in the first vector, or the last element: the scalar rest), which
      // its max must keep; row 2 its largest value last.
      for (int64_t nan_at : {int64_t{0}, n - 1}) {
        SCOPED_TRACE(::testing::Message()
                     << "bytes " << vector_bytes << " n " << n << " NaN at " << nan_at);
        std::vector<T> xs = Values<T>(kRows * n, 5);
        if (n > 0) {
          xs[n + nan_at] = std::numeric_limits<T>::quiet_NaN();
          xs[2 * n + n - 1] = T(100);
        }
        std::vector<T> got_sums(kRows, T(-7)), got_maxes(kRows, T(-7));
        RunEntry(*code, {xs.data(), got_sums.data(), got_maxes.data()}, {n});
        for (int r = 0; r < kRows; ++r) {
          double sum = 0, max = -kInf;
          for (int64_t i = 0; i < n; ++i) {
            const T v = xs[r * n + i];
            sum += double(v * v);  // the product rounds in T, the sum in f64 (SumType)
            max = std::isnan(max) || std::isnan(double(v)) ? kNaN : std::max(max, double(v));
          }
          EXPECT_TRUE(Close(got_sums[r], sum, dtype == DType::kF32 ? 1e-6 : 1e-13)) << r;
          EXPECT_TRUE(Close(got_maxes[r], max, 0)) << r;
        }
        if (n == 0) break;
      }
    }
  }
}

TEST(CodegenLanesTest, ReductionsAtEdgeLengthsF64) { CheckReductions<double>(DType::kF64); }
TEST(CodegenLanesTest, ReductionsAtEdgeLengthsF32) { CheckReductions<float>(DType::kF32); }

// Reductions over a leading, strided axis (a mean over NCHW's channels):
// sums[r, i] = 0.25 * sum_j x[j, r, i]^2, maxes[r, i, 0] = max_j x[j, r, i] over rows of
// the symbol N. The reduced loop reads at a stride of kRows * N, which no vector holds, so
// both tiers take vectors of outputs along i (past the max's trailing loop of one), each
// lane summing its own j in order in f64: the reference's bits, NaNs kept, at every length.
template <typename T>
void CheckReductionsAcrossOutputs(DType dtype) {
  constexpr int kDepth = 5;
  ProgramBuilder pb({"N"});
  ExprPtr n = SymbolValue(0);
  int x = pb.Arg("x", dtype, {C(kDepth), C(kRows), n});
  int sums = pb.Arg("sums", dtype, {C(kRows), n}, BufferKind::kOutput);
  int maxes = pb.Arg("maxes", dtype, {C(kRows), n, C(1)}, BufferKind::kOutput);
  ExprPtr sq = Op(ScalarOp::kPow, Load(x, dtype, {I(2), I(0), I(1)}), F(2.0, dtype));
  pb.Reduce(sums, {C(kRows), n}, C(kDepth), ScalarOp::kAdd, sq, F(0.25, dtype));
  pb.Reduce(maxes, {C(kRows), n, C(1)}, C(kDepth), ScalarOp::kMax,
            Load(x, dtype, {I(3), I(0), I(1)}));
  for (CodeTier tier : {CodeTier::kBaseline, CodeTier::kOptimized}) {
    auto code = CompileAt(pb.program(), tier);
    ASSERT_NE(code, nullptr);
    EXPECT_THAT(code->llvm_ir(), HasSubstr(" x double>"));
    EXPECT_THAT(code->llvm_ir(), Not(HasSubstr("llvm.loop.vectorize.enable")));
    EXPECT_THAT(code->llvm_ir(), Not(HasSubstr("@llvm.pow")));
    for (int64_t len : kLengths) {
      SCOPED_TRACE(::testing::Message() << CodeTierName(tier) << " N " << len);
      std::vector<T> xs = Values<T>(kDepth * kRows * len, 6);
      if (len > 0) xs[kRows * len + len - 1] = std::numeric_limits<T>::quiet_NaN();  // j = 1
      std::vector<T> got_sums(kRows * len, T(-7)), got_maxes(kRows * len, T(-7));
      RunEntry(*code, {xs.data(), got_sums.data(), got_maxes.data()}, {len});
      for (int64_t o = 0; o < kRows * len; ++o) {
        double sum = 0;
        T max = -std::numeric_limits<T>::infinity();
        for (int j = 0; j < kDepth; ++j) {
          const T v = xs[j * kRows * len + o];
          sum += double(v * v);
          max = std::isnan(max) || std::isnan(v) ? std::numeric_limits<T>::quiet_NaN()
                                                 : std::max(max, v);
        }
        const T want_sum = static_cast<T>(sum * double(T(0.25)));
        ASSERT_EQ(std::memcmp(&got_sums[o], &want_sum, sizeof(T)), 0) << o;
        ASSERT_EQ(std::memcmp(&got_maxes[o], &max, sizeof(T)), 0) << o;
      }
    }
  }
}

TEST(CodegenLanesTest, StridedReductionsRunAcrossOutputsF32) {
  CheckReductionsAcrossOutputs<float>(DType::kF32);
}
TEST(CodegenLanesTest, StridedReductionsRunAcrossOutputsF64) {
  CheckReductionsAcrossOutputs<double>(DType::kF64);
}

// A 5 x 5 stencil (a depthwise convolution's 25 taps, more than rows are jammed for),
// out[r, i] = the pairwise sum over t of x[r + t / 5, i + t % 5] * w[t], over `rows` rows
// of a constant length: at O2 one vector as wide as the row (up to 4 of the target's), at
// 32 bytes a row of 56 f32 in one <32 x float>; a row that fits one vector has its rows
// as the parts of one vector, 4 rows a vector (2 where 4 leave more than a quarter of the
// rows), the rest one by one: rows of 8 f32 in a <32 x float> of 4 rows.
// The reference's bits at every length and row count in both tiers.
template <typename T>
void CheckManyTapStencil(DType dtype) {
  constexpr int kSide = 5, kTaps = kSide * kSide;
  for (int64_t rows : {1, 3, 4, 7, 9})
    for (int64_t len : {1, 5, 8, 9, 17, 33, 56, 67}) {
      ProgramBuilder pb;
      int x = pb.Arg("x", dtype, {C(rows + kSide - 1), C(len + kSide - 1)});
      int w = pb.Arg("w", dtype, {C(kTaps)});
      int out = pb.Arg("out", dtype, {C(rows), C(len)}, BufferKind::kOutput);
      std::vector<ExprPtr> terms;
      for (int t = 0; t < kTaps; ++t) {
        ExprPtr r = t / kSide == 0 ? I(0) : Op(ScalarOp::kAdd, I(0), C(t / kSide));
        ExprPtr c = t % kSide == 0 ? I(1) : Op(ScalarOp::kAdd, I(1), C(t % kSide));
        terms.push_back(Op(ScalarOp::kMul, Load(x, dtype, {r, c}), Load(w, dtype, {C(t)})));
      }
      while (terms.size() > 1) {
        std::vector<ExprPtr> next;
        for (size_t i = 0; i + 1 < terms.size(); i += 2) {
          next.push_back(Op(ScalarOp::kAdd, std::move(terms[i]), std::move(terms[i + 1])));
        }
        if (terms.size() % 2 == 1) next.push_back(std::move(terms.back()));
        terms = std::move(next);
      }
      pb.Pointwise(out, {C(rows), C(len)}, std::move(terms[0]));
      const int lanes = 32 / static_cast<int>(sizeof(T));
      std::vector<T> xs = Values<T>((rows + kSide - 1) * (len + kSide - 1), 8);
      std::vector<T> ws = Values<T>(kTaps, 9);
      for (CodeTier tier : {CodeTier::kBaseline, CodeTier::kOptimized}) {
        SCOPED_TRACE(::testing::Message()
                     << CodeTierName(tier) << " rows " << rows << " N " << len);
        auto code = CompileAt(pb.program(), tier, /*vector_bytes=*/32);
        ASSERT_NE(code, nullptr);
        if (tier == CodeTier::kOptimized) {
          // Rows as parts where a row fits one vector and there are rows for a block.
          const int64_t parts = len > lanes ? 1 : (rows % 4) * 4 > rows ? 2 : 4;
          const int64_t wide = len > lanes ? std::min<int64_t>(4, (len + lanes - 1) / lanes) * lanes
                               : rows >= parts ? parts * lanes
                                               : lanes;
          EXPECT_THAT(code->llvm_ir(), HasSubstr(VectorOf(static_cast<int>(wide), dtype)));
          EXPECT_THAT(code->llvm_ir(), Not(HasSubstr(VectorOf(static_cast<int>(2 * wide), dtype))));
        }
        std::vector<T> got(rows * len, T(-7));
        RunEntry(*code, {xs.data(), ws.data(), got.data()});
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t i = 0; i < len; ++i) {
            std::vector<T> sums;
            for (int t = 0; t < kTaps; ++t) {
              sums.push_back(xs[(r + t / kSide) * (len + kSide - 1) + i + t % kSide] * ws[t]);
            }
            while (sums.size() > 1) {
              std::vector<T> next;
              for (size_t j = 0; j + 1 < sums.size(); j += 2) next.push_back(sums[j] + sums[j + 1]);
              if (sums.size() % 2 == 1) next.push_back(sums.back());
              sums = std::move(next);
            }
            ASSERT_EQ(got[r * len + i], sums[0]) << r << ", " << i;
          }
        }
      }
    }
}

TEST(CodegenLanesTest, ManyTapStencilsTakeRowWideVectorsF32) {
  CheckManyTapStencil<float>(DType::kF32);
}
TEST(CodegenLanesTest, ManyTapStencilsTakeRowWideVectorsF64) {
  CheckManyTapStencil<double>(DType::kF64);
}

// i64 sums and maxima, and a bool map (i1 lanes, i8 in memory).
TEST(CodegenLanesTest, IntegerReductionsAndBoolMaps) {
  ProgramBuilder pb({"N"});
  int x = pb.Arg("x", DType::kI64, {C(kRows), SymbolValue(0)});
  int sums = pb.Arg("sums", DType::kI64, {C(kRows)}, BufferKind::kOutput);
  int maxes = pb.Arg("maxes", DType::kI64, {C(kRows)}, BufferKind::kOutput);
  int odd = pb.Arg("odd", DType::kBool, {C(kRows), SymbolValue(0)}, BufferKind::kOutput);
  ExprPtr xv = Load(x, DType::kI64, {I(0), I(1)});
  pb.Reduce(sums, {C(kRows)}, SymbolValue(0), ScalarOp::kAdd, xv);
  pb.Reduce(maxes, {C(kRows)}, SymbolValue(0), ScalarOp::kMax, xv);
  pb.Pointwise(odd, {C(kRows), SymbolValue(0)},
               Op(ScalarOp::kOr, Op(ScalarOp::kGt, xv, C(40)), Op(ScalarOp::kLt, xv, I(1))));
  auto code = CompileBaseline(pb.program());
  ASSERT_NE(code, nullptr);
  EXPECT_THAT(code->llvm_ir(), HasSubstr(" x i64>"));
  EXPECT_THAT(code->llvm_ir(), HasSubstr(" x i8>"));
  EXPECT_THAT(code->llvm_ir(), Not(HasSubstr("llvm.loop.vectorize.enable")));
  for (int64_t n : kLengths) {
    SCOPED_TRACE(n);
    std::vector<int64_t> xs(kRows * n);
    for (int64_t i = 0; i < kRows * n; ++i) xs[i] = (i * 7919) % 83 - 20;
    std::vector<int64_t> got_sums(kRows, -7), got_maxes(kRows, -7);
    std::vector<uint8_t> got_odd(kRows * n, 7);
    RunEntry(*code, {xs.data(), got_sums.data(), got_maxes.data(), got_odd.data()}, {n});
    for (int r = 0; r < kRows; ++r) {
      int64_t sum = 0, max = std::numeric_limits<int64_t>::min();
      for (int64_t i = 0; i < n; ++i) {
        sum += xs[r * n + i];
        max = std::max(max, xs[r * n + i]);
        EXPECT_EQ(got_odd[r * n + i], xs[r * n + i] > 40 || xs[r * n + i] < i) << r << "," << i;
      }
      EXPECT_EQ(got_sums[r], sum) << r;
      EXPECT_EQ(got_maxes[r], max) << r;
    }
  }
}

// Guarded loads (concat: a[r, i] where i < 5, b[r, i - 5] elsewhere) become masked loads
// that read only the lanes their arm is selected in.
TEST(CodegenLanesTest, GuardedLoadsReadOnlyTheirLanes) {
  ProgramBuilder pb({"N"});
  ExprPtr n = SymbolValue(0);
  int a = pb.Arg("a", DType::kF64, {C(kRows), C(5)});
  int b = pb.Arg("b", DType::kF64, {C(kRows), n});
  int out =
      pb.Arg("out", DType::kF64, {C(kRows), Op(ScalarOp::kAdd, n, C(5))}, BufferKind::kOutput);
  pb.Pointwise(out, {C(kRows), Op(ScalarOp::kAdd, n, C(5))},
               Select(Op(ScalarOp::kLt, I(1), C(5)), Load(a, DType::kF64, {I(0), I(1)}),
                      Load(b, DType::kF64, {I(0), Op(ScalarOp::kSub, I(1), C(5))})));
  auto code = CompileBaseline(pb.program());
  ASSERT_NE(code, nullptr);
  EXPECT_THAT(code->llvm_ir(), HasSubstr("@llvm.masked.load."));
  EXPECT_THAT(code->llvm_ir(), Not(HasSubstr("llvm.loop.vectorize.enable")));
  for (int64_t len : kLengths) {
    SCOPED_TRACE(len);
    std::vector<double> as = Values<double>(kRows * 5, 1), bs = Values<double>(kRows * len, 2);
    std::vector<double> got(kRows * (len + 5), -7);
    RunEntry(*code, {as.data(), bs.data(), got.data()}, {len});
    for (int r = 0; r < kRows; ++r) {
      for (int64_t c = 0; c < len + 5; ++c) {
        EXPECT_EQ(got[r * (len + 5) + c], c < 5 ? as[r * 5 + c] : bs[r * len + c - 5])
            << r << "," << c;
      }
    }
  }
}

// A narrower width is a narrower target too: the machine code of both tiers, LLVM's own
// vector loops (tanh through libmvec) included, uses no AVX-512 register at 32 or 16
// bytes (no zmm, no mask register) and no ymm at 16, on any host; at the host's width an
// AVX-512 host uses zmm.
TEST(CodegenLanesTest, NarrowerWidthsAreNarrowerTargets) {
  constexpr int kN = 1024;
  ProgramBuilder pb;
  int x = pb.Arg("x", DType::kF64, {C(kN)});
  int e = pb.Arg("e", DType::kF64, {C(kN)}, BufferKind::kOutput);
  int t = pb.Arg("t", DType::kF64, {C(kN)}, BufferKind::kOutput);
  int sum = pb.Arg("sum", DType::kF64, {}, BufferKind::kOutput);
  ExprPtr xv = Load(x, DType::kF64, {I(0)});
  pb.Pointwise(e, {C(kN)}, Op(ScalarOp::kExp, xv));
  pb.Pointwise(t, {C(kN)}, Op(ScalarOp::kTanh, xv));
  pb.Reduce(sum, {}, C(kN), ScalarOp::kAdd, Op(ScalarOp::kMul, xv, xv));
  std::vector<double> xs = Values<double>(kN, 3);
  for (CodeTier tier : {CodeTier::kBaseline, CodeTier::kOptimized}) {
    for (int vector_bytes : {0, 16, 32}) {
      SCOPED_TRACE(::testing::Message() << CodeTierName(tier) << " " << vector_bytes);
      CompileOptions options;
      options.emit_asm = true;
      options.tier = tier;
      options.max_vector_bytes = vector_bytes;
      auto code = Compile(pb.program(), options);
      ASSERT_NE(code, nullptr);
      const std::string& asm_text = code->assembly();
      if (vector_bytes == 0) {
        if (__builtin_cpu_supports("avx512f")) {
          EXPECT_THAT(asm_text, HasSubstr("%zmm"));
        }
      } else {
        EXPECT_THAT(asm_text, Not(HasSubstr("%zmm")));
        EXPECT_THAT(asm_text, Not(::testing::ContainsRegex("%k[1-7]")));
        if (vector_bytes == 16) {
          EXPECT_THAT(asm_text, Not(HasSubstr("%ymm")));
        }
      }
      std::vector<double> es(kN), ts(kN), got_sum(1);
      RunEntry(*code, {xs.data(), es.data(), ts.data(), got_sum.data()});
      double want = 0;
      for (int i = 0; i < kN; ++i) {
        want += xs[i] * xs[i];
        EXPECT_TRUE(Close(es[i], std::exp(xs[i]), 1e-14)) << i;
        EXPECT_TRUE(Close(ts[i], std::tanh(xs[i]), 1e-14)) << i;
      }
      EXPECT_TRUE(Close(got_sum[0], want, 1e-13));
    }
  }
}

// Must not fire: a load with a stride of 3 along the loop (a gather; a transposed read
// has blocks of its own, codegen_transposed_test.cc), a libm call without a vector form here, a
// guarded load of one element for all lanes, and a kernel reading the buffer it writes in place of:
// those loops stay scalar for LLVM's vectorizer, and still compute the right values.
TEST(CodegenLanesTest, LoopsOneVectorCannotHoldStayWithTheVectorizer) {
  constexpr int kN = 37;
  ProgramBuilder pb;
  int x = pb.Arg("x", DType::kF64, {C(kN), C(kN)});
  int x3 = pb.Arg("x3", DType::kF64, {C(kN), C(3 * kN)});
  int t = pb.Arg("t", DType::kF64, {C(kN), C(kN)}, BufferKind::kOutput);
  int h = pb.Arg("h", DType::kF64, {C(kN), C(kN)}, BufferKind::kOutput);
  int p = pb.Arg("p", DType::kF64, {C(kN), C(kN + 3)}, BufferKind::kOutput);
  int acc = pb.Arg("acc", DType::kF64, {C(kN), C(kN)}, BufferKind::kOutput);
  pb.Pointwise(t, {C(kN), C(kN)}, Load(x3, DType::kF64, {I(0), Op(ScalarOp::kMul, I(1), C(3))}));
  pb.Pointwise(h, {C(kN), C(kN)}, Op(ScalarOp::kTanh, Load(x, DType::kF64, {I(0), I(1)})));
  pb.Pointwise(p, {C(kN), C(kN + 3)},
               Select(Op(ScalarOp::kLt, I(1), C(kN)), Load(x, DType::kF64, {I(0), C(0)}), F(0.0)));
  pb.Pointwise(acc, {C(kN), C(kN)},
               Op(ScalarOp::kAdd, Load(acc, DType::kF64, {I(0), I(1)}), F(1.0)));
  auto code = CompileBaseline(pb.program());
  ASSERT_NE(code, nullptr);
  const std::string& ir = code->llvm_ir();
  EXPECT_EQ(CountOf(ir, "!llvm.loop !"), 4) << ir;
  EXPECT_THAT(ir, Not(HasSubstr(" x double>"))) << ir;
  std::vector<double> xs = Values<double>(kN * kN, 7), x3s = Values<double>(3 * kN * kN, 8),
                      ts(kN * kN), hs(kN * kN), ps(kN * (kN + 3)), accs(kN * kN, 2.0);
  RunEntry(*code, {xs.data(), x3s.data(), ts.data(), hs.data(), ps.data(), accs.data()});
  for (int r = 0; r < kN; ++r) {
    for (int c = 0; c < kN + 3; ++c) {
      EXPECT_EQ(ps[r * (kN + 3) + c], c < kN ? xs[r * kN] : 0.0) << r << "," << c;
      if (c >= kN) continue;
      EXPECT_EQ(ts[r * kN + c], x3s[r * 3 * kN + 3 * c]);
      EXPECT_TRUE(Close(hs[r * kN + c], std::tanh(xs[r * kN + c]), 1e-14));
      EXPECT_EQ(accs[r * kN + c], 3.0);
    }
  }
}

}  // namespace
}  // namespace graphjit::compiler::codegen_testutil
