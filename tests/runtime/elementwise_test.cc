// Elementwise kernels (binary with broadcasting, where, unary, cast) against plain double
// references over random shapes, for every dtype each op takes.
#include <cmath>
#include <functional>
#include <limits>

#include "gmock/gmock.h"
#include "tests/runtime/test_util.h"

namespace graphjit::runtime::testutil {
namespace {

using ::testing::HasSubstr;

COVERS_OPS(OpCode::kAdd, OpCode::kSub, OpCode::kMul, OpCode::kDiv, OpCode::kPow, OpCode::kMaximum,
           OpCode::kMinimum, OpCode::kEq, OpCode::kNe, OpCode::kLt, OpCode::kLe, OpCode::kGt,
           OpCode::kGe, OpCode::kWhere, OpCode::kNeg, OpCode::kAbs, OpCode::kExp, OpCode::kLog,
           OpCode::kSqrt, OpCode::kRsqrt, OpCode::kTanh, OpCode::kSigmoid, OpCode::kSin,
           OpCode::kLog1p, OpCode::kCast, OpCode::kErf, OpCode::kCos, OpCode::kTan, OpCode::kAsin,
           OpCode::kAcos, OpCode::kAtan, OpCode::kSinh, OpCode::kCosh, OpCode::kAsinh,
           OpCode::kAcosh, OpCode::kAtanh);

using BinaryRef = std::function<double(double, double)>;

struct BinaryCase {
  OpCode op;
  BinaryRef ref;
  std::vector<DType> dtypes;
  bool compare = false;
};

double FloorDiv(double a, double b) { return std::floor(a / b); }

std::vector<BinaryCase> BinaryCases() {
  const std::vector<DType> numeric = {DType::kF32, DType::kF64, DType::kI64};
  const std::vector<DType> all = {DType::kF32, DType::kF64, DType::kI64, DType::kBool};
  return {
      {OpCode::kAdd, [](double a, double b) { return a + b; }, numeric},
      {OpCode::kSub, [](double a, double b) { return a - b; }, numeric},
      {OpCode::kMul, [](double a, double b) { return a * b; }, numeric},
      {OpCode::kDiv, [](double a, double b) { return a / b; }, {DType::kF32, DType::kF64}},
      {OpCode::kDiv, FloorDiv, {DType::kI64}},
      {OpCode::kPow, [](double a, double b) { return std::pow(a, b); }, {DType::kF32, DType::kF64}},
      {OpCode::kMaximum, [](double a, double b) { return std::max(a, b); }, all},
      {OpCode::kMinimum, [](double a, double b) { return std::min(a, b); }, all},
      {OpCode::kEq, [](double a, double b) { return static_cast<double>(a == b); }, all, true},
      {OpCode::kNe, [](double a, double b) { return static_cast<double>(a != b); }, all, true},
      {OpCode::kLt, [](double a, double b) { return static_cast<double>(a < b); }, all, true},
      {OpCode::kLe, [](double a, double b) { return static_cast<double>(a <= b); }, all, true},
      {OpCode::kGt, [](double a, double b) { return static_cast<double>(a > b); }, all, true},
      {OpCode::kGe, [](double a, double b) { return static_cast<double>(a >= b); }, all, true},
  };
}

// Operand values suited to the op: pow gets positive bases, div nonzero divisors, and
// everything else a coarse grid (so comparisons see ties).
Tensor Operand(std::mt19937_64& rng, OpCode op, DType dtype, const Dims& shape, bool rhs) {
  if (dtype == DType::kBool) return Random(rng, dtype, shape);
  if (op == OpCode::kPow && IsFloat(dtype)) {
    return rhs ? Random(rng, dtype, shape, -2, 2) : Random(rng, dtype, shape, 0.1, 3);
  }
  Tensor t = Random(rng, DType::kI64, shape, -6, 6);
  std::vector<double> v = t.ToDoubles();
  for (double& x : v) {
    if (op == OpCode::kDiv && rhs && x == 0) x = 3;
    if (IsFloat(dtype) && op != OpCode::kDiv) x /= 2;
    if (IsFloat(dtype) && op == OpCode::kDiv) x += 0.25;
  }
  return FromValues(dtype, shape, v);
}

// Operand shapes for trial `i`: equal shapes, a one-element operand, or a random broadcast.
std::pair<Dims, Dims> OperandShapes(std::mt19937_64& rng, int trial) {
  Dims out = RandomShape(rng, 0, 4, 5);
  switch (trial % 4) {
    case 0:
      return {out, out};
    case 1:
      return {Dims(std::uniform_int_distribution<size_t>(0, 2)(rng), 1), out};
    case 2:
      return {out, Dims{1}};
    default:
      return {BroadcastableTo(rng, out), BroadcastableTo(rng, out)};
  }
}

TEST(ElementwiseTest, BinaryOpsMatchReferenceWithBroadcasting) {
  std::mt19937_64 rng(1);
  for (const BinaryCase& c : BinaryCases()) {
    for (DType dtype : c.dtypes) {
      for (int trial = 0; trial < 40; ++trial) {
        auto [sa, sb] = OperandShapes(rng, trial);
        if (trial % 8 == 5) std::swap(sa, sb);
        Tensor a = Operand(rng, c.op, dtype, sa, false);
        Tensor b = Operand(rng, c.op, dtype, sb, true);
        Dims out = BroadcastDims(sa, sb);
        std::vector<double> want(Numel(out));
        std::vector<double> va = a.ToDoubles(), vb = b.ToDoubles();
        for (int64_t i = 0; i < Numel(out); ++i) {
          Dims idx = Unravel(i, out);
          want[i] = c.ref(va[BroadcastIndex(idx, sa)], vb[BroadcastIndex(idx, sb)]);
        }
        ExpectTensor(
            EvalOp(c.op, {&a, &b}), c.compare ? DType::kBool : dtype, out, want,
            absl::StrCat(ir::OpName(c.op), " ", Name(dtype), DimsString(sa), " ", DimsString(sb)));
      }
    }
  }
}

TEST(ElementwiseTest, BinaryOpsOnZeroSizedTensors) {
  Tensor a = FromValues(DType::kF64, {0, 3}, {});
  Tensor b = FromValues(DType::kF64, {1, 3}, {1, 2, 3});
  ExpectTensor(EvalOp(OpCode::kAdd, {&a, &b}), DType::kF64, {0, 3}, {}, "add");
  Tensor ai = FromValues(DType::kI64, {0}, {});
  Tensor zero = FromValues(DType::kI64, {1}, {0});
  ExpectTensor(EvalOp(OpCode::kDiv, {&ai, &zero}), DType::kI64, {0}, {}, "empty div");
}

TEST(ElementwiseTest, MaximumAndMinimumPropagateNaN) {
  double nan = std::nan("");
  for (DType d : {DType::kF32, DType::kF64}) {
    Tensor a = FromValues(d, {3}, {nan, 1, nan});
    Tensor b = FromValues(d, {3}, {2, nan, nan});
    ExpectTensor(EvalOp(OpCode::kMaximum, {&a, &b}), d, {3}, {nan, nan, nan}, "maximum");
    ExpectTensor(EvalOp(OpCode::kMinimum, {&a, &b}), d, {3}, {nan, nan, nan}, "minimum");
  }
}

// x // 0 is 0 (docs/OPS.md: a total rule, so compiled code, which cannot fail halfway,
// gives the same value as the interpreter).
TEST(ElementwiseTest, IntegerDivisionFloorsAndGivesZeroForAZeroDivisor) {
  Tensor a = FromValues(DType::kI64, {4}, {7, -7, 7, -7});
  Tensor b = FromValues(DType::kI64, {4}, {2, 2, -2, -2});
  ExpectTensor(EvalOp(OpCode::kDiv, {&a, &b}), DType::kI64, {4}, {3, -4, -4, 3}, "floor div");
  Tensor zero = FromValues(DType::kI64, {2, 1}, {1, 0});
  ExpectTensor(EvalOp(OpCode::kDiv, {&a, &zero}), DType::kI64, {2, 4}, {7, -7, 7, -7, 0, 0, 0, 0},
               "div by 0");
}

// maximum / minimum order -0 below +0 (llvm.maximum), whichever operand comes first.
TEST(ElementwiseTest, MaximumOrdersSignedZeros) {
  for (DType d : {DType::kF32, DType::kF64}) {
    Tensor a = FromValues(d, {2}, {-0.0, 0.0});
    Tensor b = FromValues(d, {2}, {0.0, -0.0});
    absl::StatusOr<Tensor> max = EvalOp(OpCode::kMaximum, {&a, &b});
    absl::StatusOr<Tensor> min = EvalOp(OpCode::kMinimum, {&a, &b});
    ASSERT_TRUE(max.ok() && min.ok());
    for (int i = 0; i < 2; ++i) {
      EXPECT_FALSE(std::signbit(max->ToDoubles()[i])) << i;
      EXPECT_TRUE(std::signbit(min->ToDoubles()[i])) << i;
    }
  }
}

TEST(ElementwiseTest, IntegerOverflowWrapsWithoutUndefinedBehaviour) {
  const double min = static_cast<double>(std::numeric_limits<int64_t>::min());
  Tensor a = FromValues(DType::kI64, {1}, {min});
  Tensor m1 = FromValues(DType::kI64, {1}, {-1});
  ExpectTensor(EvalOp(OpCode::kDiv, {&a, &m1}), DType::kI64, {1}, {min}, "min / -1");
  ExpectTensor(EvalOp(OpCode::kNeg, {&a}), DType::kI64, {1}, {min}, "-min");
  ExpectTensor(EvalOp(OpCode::kAbs, {&a}), DType::kI64, {1}, {min}, "abs(min)");
}

TEST(ElementwiseTest, WhereMatchesReference) {
  std::mt19937_64 rng(2);
  for (DType dtype : {DType::kF32, DType::kF64, DType::kI64, DType::kBool}) {
    for (int trial = 0; trial < 40; ++trial) {
      Dims out = RandomShape(rng, 0, 4, 4);
      Dims sc = trial % 3 == 0 ? out : BroadcastableTo(rng, out);
      Dims sa = trial % 3 == 0 ? out : BroadcastableTo(rng, out);
      Dims sb = trial % 3 == 0 ? out : BroadcastableTo(rng, out);
      Tensor cond = Random(rng, DType::kBool, sc);
      Tensor a = Random(rng, dtype, sa, -5, 5);
      Tensor b = Random(rng, dtype, sb, -5, 5);
      Dims want_shape = BroadcastDims(sc, BroadcastDims(sa, sb));
      std::vector<double> vc = cond.ToDoubles(), va = a.ToDoubles(), vb = b.ToDoubles();
      std::vector<double> want(Numel(want_shape));
      for (int64_t i = 0; i < Numel(want_shape); ++i) {
        Dims idx = Unravel(i, want_shape);
        want[i] = vc[BroadcastIndex(idx, sc)] != 0 ? va[BroadcastIndex(idx, sa)]
                                                   : vb[BroadcastIndex(idx, sb)];
      }
      ExpectTensor(
          EvalOp(OpCode::kWhere, {&cond, &a, &b}), dtype, want_shape, want,
          absl::StrCat("where ", Name(dtype), DimsString(sc), DimsString(sa), DimsString(sb)));
    }
  }
}

struct UnaryCase {
  OpCode op;
  std::function<double(double)> ref;
  double lo, hi;
  std::vector<DType> dtypes;
};

TEST(ElementwiseTest, UnaryOpsMatchReference) {
  const std::vector<DType> floats = {DType::kF32, DType::kF64};
  const std::vector<UnaryCase> cases = {
      {OpCode::kNeg, [](double x) { return -x; }, -50, 50, {DType::kF32, DType::kF64, DType::kI64}},
      {OpCode::kAbs,
       [](double x) { return std::abs(x); },
       -50,
       50,
       {DType::kF32, DType::kF64, DType::kI64}},
      {OpCode::kExp, [](double x) { return std::exp(x); }, -5, 5, floats},
      {OpCode::kLog, [](double x) { return std::log(x); }, 0.01, 10, floats},
      {OpCode::kSqrt, [](double x) { return std::sqrt(x); }, 0, 10, floats},
      {OpCode::kRsqrt, [](double x) { return 1 / std::sqrt(x); }, 0.01, 10, floats},
      {OpCode::kTanh, [](double x) { return std::tanh(x); }, -4, 4, floats},
      {OpCode::kSigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }, -8, 8, floats},
      {OpCode::kSin, [](double x) { return std::sin(x); }, -10, 10, floats},
      // log1p near 0 is what it is for: log(1 + x) would lose the digits there.
      {OpCode::kLog1p, [](double x) { return std::log1p(x); }, -0.999, 1e-3, floats},
      {OpCode::kErf, [](double x) { return std::erf(x); }, -4, 4, floats},
      {OpCode::kCos, [](double x) { return std::cos(x); }, -10, 10, floats},
      {OpCode::kTan, [](double x) { return std::tan(x); }, -1.5, 1.5, floats},
      {OpCode::kAsin, [](double x) { return std::asin(x); }, -1, 1, floats},
      {OpCode::kAcos, [](double x) { return std::acos(x); }, -1, 1, floats},
      {OpCode::kAtan, [](double x) { return std::atan(x); }, -20, 20, floats},
      {OpCode::kSinh, [](double x) { return std::sinh(x); }, -5, 5, floats},
      {OpCode::kCosh, [](double x) { return std::cosh(x); }, -5, 5, floats},
      {OpCode::kAsinh, [](double x) { return std::asinh(x); }, -20, 20, floats},
      {OpCode::kAcosh, [](double x) { return std::acosh(x); }, 1, 20, floats},
      {OpCode::kAtanh, [](double x) { return std::atanh(x); }, -0.99, 0.99, floats},
  };
  std::mt19937_64 rng(3);
  for (const UnaryCase& c : cases) {
    for (DType dtype : c.dtypes) {
      for (int trial = 0; trial < 10; ++trial) {
        Dims shape = RandomShape(rng, 0, 4, 6);
        Tensor x = Random(rng, dtype, shape, c.lo, c.hi);
        std::vector<double> want = x.ToDoubles();
        for (double& v : want) v = c.ref(v);
        ExpectTensor(EvalOp(c.op, {&x}), dtype, shape, want,
                     absl::StrCat(ir::OpName(c.op), " ", Name(dtype), DimsString(shape)));
      }
    }
  }
}

TEST(ElementwiseTest, Log1pKeepsTheDigitsThatLogOfOnePlusXLoses) {
  // 1 + 1e-18 rounds to 1 in f64, so log(1 + x) would be 0; log1p(x) is x to first order.
  Tensor x = FromValues(DType::kF64, {3}, {1e-18, -1e-10, -1});
  absl::StatusOr<Tensor> y = EvalOp(OpCode::kLog1p, {&x});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->ValueAt(0), 1e-18);
  EXPECT_DOUBLE_EQ(y->ValueAt(1), -1e-10 - 0.5e-20);
  EXPECT_EQ(y->ValueAt(2), -std::numeric_limits<double>::infinity());
  Tensor i = FromValues(DType::kI64, {1}, {1});
  EXPECT_FALSE(EvalOp(OpCode::kLog1p, {&i}).ok());
  EXPECT_FALSE(EvalOp(OpCode::kSin, {&i}).ok());
}

TEST(ElementwiseTest, CastBetweenEveryPairOfDTypes) {
  const std::vector<DType> all = {DType::kF32, DType::kF64, DType::kI64, DType::kBool};
  std::mt19937_64 rng(4);
  for (DType from : all) {
    for (DType to : all) {
      Dims shape = RandomShape(rng, 0, 3, 5);
      Tensor x = Random(rng, from, shape, -5, 5);
      std::vector<double> want = x.ToDoubles();
      for (double& v : want) {
        if (to == DType::kBool) v = v != 0;
        if (to == DType::kI64) v = std::trunc(v);
        if (to == DType::kF32) v = static_cast<float>(v);
      }
      ExpectTensor(EvalOp(OpCode::kCast, {&x}, {{"dtype", to}}), to, shape, want,
                   absl::StrCat("cast ", Name(from), " to ", Name(to)));
    }
  }
  Tensor special = FromValues(DType::kF64, {4}, {std::nan(""), 1e300, -1e300, -0.0});
  const double max = static_cast<double>(std::numeric_limits<int64_t>::max());
  const double min = static_cast<double>(std::numeric_limits<int64_t>::min());
  ExpectTensor(EvalOp(OpCode::kCast, {&special}, {{"dtype", DType::kI64}}), DType::kI64, {4},
               {0, max, min, 0}, "saturating cast");
  ExpectTensor(EvalOp(OpCode::kCast, {&special}, {{"dtype", DType::kBool}}), DType::kBool, {4},
               {1, 1, 1, 0}, "cast to bool");
}

}  // namespace
}  // namespace graphjit::runtime::testutil
