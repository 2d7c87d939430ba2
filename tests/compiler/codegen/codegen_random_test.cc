// Differential test of codegen: random programs (pointwise float, integer and bool
// expressions, a reduction and a scan) compiled and run, against the reference evaluator
// (program_eval) on the same buffers.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "compiler/lower/program_eval.h"
#include "gtest/gtest.h"
#include "tests/compiler/codegen/codegen_test_util.h"

namespace graphjit::compiler::codegen_testutil {
namespace {

// Random expressions over x[R, C] (float), row[C] (float, broadcast over rows),
// n[R, C] (i64) and flag[R] (bool). Values stay bounded (no division by ~0, exp only of
// tanh), so FMA contraction and libmvec's few-ulp differences stay near rounding.
class RandomExprs {
 public:
  RandomExprs(uint32_t seed, DType dtype) : rng_(seed), dtype_(dtype) {}

  ExprPtr Float(int depth) {
    if (depth == 0 || Pick(4) == 0) return FloatLeaf();
    ExprPtr a = Float(depth - 1);
    switch (Pick(12)) {
      case 0:
        return Op(ScalarOp::kAdd, a, Float(depth - 1));
      case 1:
        return Op(ScalarOp::kSub, a, Float(depth - 1));
      case 2:
        return Op(ScalarOp::kMul, a, Float(depth - 1));
      case 3:
        return Op(Pick(2) ? ScalarOp::kMax : ScalarOp::kMin, a, Float(depth - 1));
      case 4:
        return Op(ScalarOp::kDiv, a,
                  Op(ScalarOp::kAdd, F(1, dtype_), Op(ScalarOp::kAbs, Float(depth - 1))));
      case 5:
        return Op(ScalarOp::kTanh, a);
      case 6:
        return Op(ScalarOp::kExp, Op(ScalarOp::kTanh, a));
      case 7:
        return Op(ScalarOp::kSigmoid, a);
      case 8:
        return Op(ScalarOp::kSqrt, Op(ScalarOp::kAbs, a));
      case 9:
        return Op(ScalarOp::kNeg, a);
      case 10:
        return Select(Bool(depth - 1), a, Float(depth - 1));
      default:
        return Cast(Int(depth - 1), dtype_);
    }
  }
  ExprPtr Int(int depth) {
    if (depth == 0 || Pick(3) == 0) {
      switch (Pick(3)) {
        case 0:
          return Load(kN, DType::kI64, {I(0), I(1)});
        case 1:
          return Op(ScalarOp::kSub, I(Pick(2)), C(2));
        default:
          return C(static_cast<int64_t>(Pick(11)) - 5);
      }
    }
    ExprPtr a = Int(depth - 1);
    switch (Pick(6)) {
      case 0:
        return Op(ScalarOp::kAdd, a, Int(depth - 1));
      case 1:
        return Op(ScalarOp::kMul, a, Int(depth - 1));
      case 2:
        return Op(ScalarOp::kDiv, a, C(Pick(2) ? 3 : -4));
      case 3:
        return Op(ScalarOp::kMod, a, C(Pick(2) ? 5 : -2));
      case 4:
        return Op(Pick(2) ? ScalarOp::kMax : ScalarOp::kMin, a, Int(depth - 1));
      default:
        return Op(ScalarOp::kAbs, a);
    }
  }
  ExprPtr Bool(int depth) {
    switch (Pick(4)) {
      case 0:
        return Load(kFlag, DType::kBool, {I(0)});
      case 1:
        return Op(static_cast<ScalarOp>(static_cast<int>(ScalarOp::kEq) + Pick(6)), Float(depth),
                  Float(depth));
      case 2:
        return Op(ScalarOp::kLt, Int(depth), Int(depth));
      default:
        return Op(Pick(2) ? ScalarOp::kAnd : ScalarOp::kOr, Load(kFlag, DType::kBool, {I(0)}),
                  Op(ScalarOp::kNot, Op(ScalarOp::kGe, Float(depth), F(0, dtype_))));
    }
  }

  static constexpr int kX = 0, kRow = 1, kN = 2, kFlag = 3;

 private:
  uint32_t Pick(uint32_t n) { return rng_() % n; }
  ExprPtr FloatLeaf() {
    switch (Pick(4)) {
      case 0:
        return Load(kX, dtype_, {I(0), I(1)});
      case 1:
        return Load(kRow, dtype_, {I(1)});
      case 2:
        return Cast(I(Pick(2)), dtype_);
      default:
        return F(std::ldexp(static_cast<double>(Pick(64)) - 32, -3), dtype_);
    }
  }

  std::mt19937 rng_;
  DType dtype_;
};

template <typename T>
void RandomProgramsMatchTheEvaluator(DType dtype, double rel) {
  constexpr int kRows = 3, kCols = 11, kPrograms = 12;
  std::mt19937 data_rng(7);
  std::uniform_real_distribution<double> uniform(-3, 3);
  std::vector<T> x(kRows * kCols), row(kCols);
  std::vector<int64_t> n(kRows * kCols);
  std::vector<uint8_t> flag = {1, 0, 1};
  for (T& v : x) v = static_cast<T>(uniform(data_rng));
  for (T& v : row) v = static_cast<T>(uniform(data_rng));
  for (int64_t& v : n) v = static_cast<int64_t>(uniform(data_rng) * 10);
  for (int p = 0; p < kPrograms; ++p) {
    SCOPED_TRACE(p);
    RandomExprs gen(1000 + p, dtype);
    ProgramBuilder pb;
    pb.Arg("x", dtype, {C(kRows), C(kCols)});
    pb.Arg("row", dtype, {C(kCols)});
    pb.Arg("n", DType::kI64, {C(kRows), C(kCols)});
    pb.Arg("flag", DType::kBool, {C(kRows)});
    int out_f = pb.Arg("out_f", dtype, {C(kRows), C(kCols)}, BufferKind::kOutput);
    int out_i = pb.Arg("out_i", DType::kI64, {C(kRows), C(kCols)}, BufferKind::kOutput);
    int out_b = pb.Arg("out_b", DType::kBool, {C(kRows), C(kCols)}, BufferKind::kOutput);
    int out_r = pb.Arg("out_r", dtype, {C(kRows)}, BufferKind::kOutput);
    int out_s = pb.Arg("out_s", dtype, {C(kRows), C(kCols)}, BufferKind::kOutput);
    pb.Pointwise(out_f, {C(kRows), C(kCols)}, gen.Float(4));
    pb.Pointwise(out_i, {C(kRows), C(kCols)}, gen.Int(4));
    pb.Pointwise(out_b, {C(kRows), C(kCols)}, gen.Bool(3));
    pb.Reduce(out_r, {C(kRows)}, C(kCols), p % 2 ? ScalarOp::kMax : ScalarOp::kAdd, gen.Float(3));
    pb.Scan(out_s, {C(kRows)}, C(kCols), gen.Float(3));
    auto code = Compile(pb.program());
    ASSERT_NE(code, nullptr);

    std::vector<T> want_f(kRows * kCols), got_f(want_f.size()), want_r(kRows), got_r(kRows);
    std::vector<T> want_s(want_f.size()), got_s(want_f.size());
    std::vector<int64_t> want_i(kRows * kCols), got_i(want_i.size());
    std::vector<uint8_t> want_b(kRows * kCols), got_b(want_b.size());
    std::vector<void*> want_args = {x.data(),      row.data(),    n.data(),
                                    flag.data(),   want_f.data(), want_i.data(),
                                    want_b.data(), want_r.data(), want_s.data()};
    int64_t no_symbols = 0;
    absl::Status status =
        EvaluateProgram(pb.program(), want_args.data(), &no_symbols, /*workspace=*/nullptr);
    ASSERT_TRUE(status.ok()) << status << "\n" << ProgramToString(pb.program());
    RunEntry(*code, {x.data(), row.data(), n.data(), flag.data(), got_f.data(), got_i.data(),
                     got_b.data(), got_r.data(), got_s.data()});
    for (size_t i = 0; i < want_f.size(); ++i) {
      ASSERT_TRUE(Close(got_f[i], want_f[i], rel)) << i << "\n" << ProgramToString(pb.program());
      ASSERT_EQ(got_i[i], want_i[i]) << i << "\n" << ProgramToString(pb.program());
      ASSERT_EQ(got_b[i], want_b[i]) << i << "\n" << ProgramToString(pb.program());
    }
    for (int r = 0; r < kRows; ++r) {
      ASSERT_TRUE(Close(got_r[r], want_r[r], rel * kCols)) << "row " << r << "\n"
                                                           << ProgramToString(pb.program());
    }
    for (size_t i = 0; i < want_s.size(); ++i) {
      ASSERT_TRUE(Close(got_s[i], want_s[i], rel * kCols)) << "scan " << i << "\n"
                                                           << ProgramToString(pb.program());
    }
  }
}

TEST(CodegenTest, RandomProgramsMatchTheEvaluatorF64) {
  RandomProgramsMatchTheEvaluator<double>(DType::kF64, 1e-12);
}
TEST(CodegenTest, RandomProgramsMatchTheEvaluatorF32) {
  RandomProgramsMatchTheEvaluator<float>(DType::kF32, 1e-5);
}

}  // namespace
}  // namespace graphjit::compiler::codegen_testutil
