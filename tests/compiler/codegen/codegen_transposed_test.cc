// Maps between layouts (codegen_transposed_lanes.cc): a map that reads a buffer transposed
// (consecutive along an outer loop, as an NHWC product's output read into NCHW) or writes
// one so, evaluated in square blocks transposed in registers, in both tiers, at the host's
// vectors and narrower ones: every element is the reference's bits at extents around the
// lanes (1, lanes - 1, lanes, lanes + 1, primes), constant and symbolic, and the emitted
// IR has the blocks' loops and no gather. A map whose buffers are all read along its
// innermost loop is not one (it keeps its plain vectors).
#include <cstdint>
#include <cstring>
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

const std::vector<int64_t> kExtents = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 49};

std::unique_ptr<NativeCode> CompileAt(const Program& program, CodeTier tier, int vector_bytes) {
  CompileOptions options;
  options.keep_ir = true;
  options.tier = tier;
  options.max_vector_bytes = vector_bytes;
  return Compile(program, options);
}

template <typename T>
void ExpectBits(const std::vector<T>& got, const std::vector<T>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(T)), 0)
        << "element " << i << ": " << got[i] << " vs " << want[i];
  }
}

// out[r, i] = max((x[i, r] + z[r]) * y[r, i] - w[i, r], 0) over R rows of N (N a constant,
// or the symbol N where `symbolic`): x and w read transposed, along r.
template <typename T>
void CheckReadTransposed(DType dtype, int vector_bytes, bool symbolic) {
  for (int64_t rows : kExtents) {
    ProgramBuilder pb(symbolic ? std::vector<std::string>{"N"} : std::vector<std::string>{});
    const int64_t fixed_n = 13;
    ExprPtr n = symbolic ? SymbolValue(0) : C(fixed_n);
    int x = pb.Arg("x", dtype, {n, C(rows)});
    int w = pb.Arg("w", dtype, {n, C(rows)});
    int y = pb.Arg("y", dtype, {C(rows), n});
    int z = pb.Arg("z", dtype, {C(rows)});
    int out = pb.Arg("out", dtype, {C(rows), n}, BufferKind::kOutput);
    ExprPtr sum = Op(ScalarOp::kAdd, Load(x, dtype, {I(1), I(0)}), Load(z, dtype, {I(0)}));
    ExprPtr value = Op(ScalarOp::kSub, Op(ScalarOp::kMul, sum, Load(y, dtype, {I(0), I(1)})),
                       Load(w, dtype, {I(1), I(0)}));
    pb.Pointwise(out, {C(rows), n}, Op(ScalarOp::kMax, value, F(0.0, dtype)));
    for (CodeTier tier : {CodeTier::kBaseline, CodeTier::kOptimized}) {
      auto code = CompileAt(pb.program(), tier, vector_bytes);
      ASSERT_NE(code, nullptr);
      if (rows >= 2) {
        EXPECT_THAT(code->llvm_ir(), HasSubstr("transposed_u"));
      }
      EXPECT_THAT(code->llvm_ir(), Not(HasSubstr("llvm.masked.gather")));
      for (int64_t len : symbolic ? kExtents : std::vector<int64_t>{fixed_n}) {
        SCOPED_TRACE(::testing::Message() << CodeTierName(tier) << " bytes " << vector_bytes
                                          << " R " << rows << " N " << len);
        std::vector<T> xs = Values<T>(len * rows, 1), ws = Values<T>(len * rows, 2),
                       ys = Values<T>(rows * len, 3), zs = Values<T>(rows, 4);
        std::vector<T> got(rows * len, T(-7)), want(rows * len);
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t i = 0; i < len; ++i) {
            const T v = (xs[i * rows + r] + zs[r]) * ys[r * len + i] - ws[i * rows + r];
            want[r * len + i] = v > T(0) ? v : T(0);
          }
        }
        RunEntry(*code, {xs.data(), ws.data(), ys.data(), zs.data(), got.data()}, {len});
        ExpectBits(got, want);
      }
    }
  }
}

// out[i, r] = x[r, i] * z[r] + y[r, i], stored at out[i, r] over loops (r < R, i < N):
// every load moves along i, the store along r (written transposed).
template <typename T>
void CheckWrittenTransposed(DType dtype, int vector_bytes) {
  for (int64_t rows : kExtents) {
    for (int64_t len : {int64_t{1}, int64_t{5}, int64_t{16}, int64_t{17}, int64_t{40}}) {
      ProgramBuilder pb;
      int x = pb.Arg("x", dtype, {C(rows), C(len)});
      int y = pb.Arg("y", dtype, {C(rows), C(len)});
      int z = pb.Arg("z", dtype, {C(rows)});
      int out = pb.Arg("out", dtype, {C(len), C(rows)}, BufferKind::kOutput);
      ExprPtr value = Op(ScalarOp::kAdd,
                         Op(ScalarOp::kMul, Load(x, dtype, {I(0), I(1)}), Load(z, dtype, {I(0)})),
                         Load(y, dtype, {I(0), I(1)}));
      pb.Pointwise(out, {C(rows), C(len)}, value, {I(1), I(0)});
      for (CodeTier tier : {CodeTier::kBaseline, CodeTier::kOptimized}) {
        SCOPED_TRACE(::testing::Message() << CodeTierName(tier) << " bytes " << vector_bytes
                                          << " R " << rows << " N " << len);
        auto code = CompileAt(pb.program(), tier, vector_bytes);
        ASSERT_NE(code, nullptr);
        // A row or a column of one is plain: its vectors run along the other.
        if (rows >= 2 && len >= 2) {
          EXPECT_THAT(code->llvm_ir(), HasSubstr("transposed_u"));
          // Below 64-byte vectors whole blocks store plain vectors (masked stores may be
          // microcoded there), the others masked ones.
          if (vector_bytes == 32) {
            EXPECT_THAT(code->llvm_ir(), HasSubstr("whole_block"));
          }
        }
        std::vector<T> xs = Values<T>(rows * len, 5), ys = Values<T>(rows * len, 6),
                       zs = Values<T>(rows, 7);
        std::vector<T> got(len * rows, T(-7)), want(len * rows);
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t i = 0; i < len; ++i) {
            // Two roundings, as the kernel's separate multiply and add.
            const T product = xs[r * len + i] * zs[r];
            want[i * rows + r] = product + ys[r * len + i];
          }
        }
        RunEntry(*code, {xs.data(), ys.data(), zs.data(), got.data()});
        ExpectBits(got, want);
      }
    }
  }
}

TEST(CodegenTransposedTest, ReadTransposedF32) {
  for (int bytes : {0, 32, 16}) CheckReadTransposed<float>(DType::kF32, bytes, false);
  CheckReadTransposed<float>(DType::kF32, 0, true);
}
TEST(CodegenTransposedTest, ReadTransposedF64) {
  for (int bytes : {0, 32}) CheckReadTransposed<double>(DType::kF64, bytes, false);
  CheckReadTransposed<double>(DType::kF64, 0, true);
}
TEST(CodegenTransposedTest, WrittenTransposedF32) {
  for (int bytes : {0, 32}) CheckWrittenTransposed<float>(DType::kF32, bytes);
}
TEST(CodegenTransposedTest, WrittenTransposedF64) {
  for (int bytes : {0, 32}) CheckWrittenTransposed<double>(DType::kF64, bytes);
}

// Must not fire: a map whose loads all run along its innermost loop keeps its plain
// vectors, and one that reads transposed the buffer it writes (here its own transpose,
// in place) stays element by element, each read before its element is written.
TEST(CodegenTransposedTest, NotForPlainOrInPlaceMaps) {
  {
    ProgramBuilder pb;
    int x = pb.Arg("x", DType::kF32, {C(8), C(24)});
    int out = pb.Arg("out", DType::kF32, {C(8), C(24)}, BufferKind::kOutput);
    pb.Pointwise(out, {C(8), C(24)},
                 Op(ScalarOp::kAdd, Load(x, DType::kF32, {I(0), I(1)}), F(1.0, DType::kF32)));
    auto code = CompileAt(pb.program(), CodeTier::kOptimized, 0);
    ASSERT_NE(code, nullptr);
    EXPECT_THAT(code->llvm_ir(), Not(HasSubstr("transposed_u")));
  }
  {
    // out[r, i] = out[i, r] * 2 + 1 in place: element by element in loop order, an element
    // below the diagonal read after its mirror has been written, as the reference does.
    constexpr int64_t kSide = 20;
    ProgramBuilder pb;
    int out = pb.Arg("out", DType::kF32, {C(kSide), C(kSide)}, BufferKind::kOutput);
    pb.Pointwise(out, {C(kSide), C(kSide)},
                 Op(ScalarOp::kAdd,
                    Op(ScalarOp::kMul, Load(out, DType::kF32, {I(1), I(0)}), F(2.0, DType::kF32)),
                    F(1.0, DType::kF32)));
    auto code = CompileAt(pb.program(), CodeTier::kOptimized, 0);
    ASSERT_NE(code, nullptr);
    EXPECT_THAT(code->llvm_ir(), Not(HasSubstr("transposed_u")));
    std::vector<float> data = Values<float>(kSide * kSide, 8), want = data;
    for (int64_t r = 0; r < kSide; ++r) {
      for (int64_t i = 0; i < kSide; ++i) want[r * kSide + i] = want[i * kSide + r] * 2 + 1;
    }
    RunEntry(*code, {data.data()});
    ExpectBits(data, want);
  }
}

}  // namespace
}  // namespace graphjit::compiler::codegen_testutil
