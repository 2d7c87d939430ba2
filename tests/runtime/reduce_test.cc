// Reductions (sum, max, mean, argmin, argmax), cumsum and softmax over every axis against
// double references, including empty axes, ties, NaN and keepdim.
#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "tests/runtime/test_util.h"

namespace graphjit::runtime::testutil {
namespace {

COVERS_OPS(OpCode::kReduceSum, OpCode::kReduceMax, OpCode::kReduceMean, OpCode::kArgMin,
           OpCode::kArgMax, OpCode::kCumSum, OpCode::kSoftmax);

// Applies `row_fn` to every line of `x` along `axis`, producing one value per line (an
// output of x's shape without `axis`).
template <typename F>
std::vector<double> PerLine(const Tensor& x, int axis, F row_fn) {
  Dims shape = x.shape();
  const int64_t n = shape[axis];
  Dims reduced = shape;
  reduced.erase(reduced.begin() + axis);
  std::vector<double> out(Numel(reduced));
  Dims strides = Strides(shape);
  for (int64_t i = 0; i < Numel(reduced); ++i) {
    Dims idx = Unravel(i, reduced);
    idx.insert(idx.begin() + axis, 0);
    int64_t base = 0;
    for (size_t d = 0; d < idx.size(); ++d) base += idx[d] * strides[d];
    std::vector<double> line(n);
    for (int64_t r = 0; r < n; ++r) line[r] = x.ValueAt(base + r * strides[axis]);
    out[i] = row_fn(line);
  }
  return out;
}

double Sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

double Max(const std::vector<double>& v) {
  double m = -std::numeric_limits<double>::infinity();
  for (double x : v) m = std::max(m, x);
  return m;
}

TEST(ReduceTest, SumMaxMeanOverEveryAxis) {
  std::mt19937_64 rng(30);
  struct Case {
    OpCode op;
    double (*ref)(const std::vector<double>&);
    std::vector<DType> dtypes;
  };
  const std::vector<Case> cases = {
      {OpCode::kReduceSum, Sum, {DType::kF32, DType::kF64, DType::kI64}},
      {OpCode::kReduceMax, Max, {DType::kF32, DType::kF64, DType::kI64}},
      {OpCode::kReduceMean,
       [](const std::vector<double>& v) { return Sum(v) / static_cast<double>(v.size()); },
       {DType::kF32, DType::kF64}},
  };
  for (const Case& c : cases) {
    for (DType dtype : c.dtypes) {
      for (int trial = 0; trial < 30; ++trial) {
        // Long rows now and then, so the unrolled contiguous sum runs its main loop.
        Dims shape = RandomShape(rng, 1, 4, trial % 5 == 0 ? 40 : 5);
        const int axis = std::uniform_int_distribution<int>(0, shape.size() - 1)(rng);
        const bool keepdim = trial % 2 == 0;
        Tensor x = Random(rng, dtype, shape, -20, 20);
        std::vector<double> want = PerLine(x, axis, c.ref);
        Dims out = shape;
        if (keepdim)
          out[axis] = 1;
        else
          out.erase(out.begin() + axis);
        const int64_t attr_axis = trial % 3 == 0 ? axis - static_cast<int64_t>(shape.size()) : axis;
        ExpectTensor(EvalOp(c.op, {&x}, {{"axis", attr_axis}, {"keepdim", keepdim}}), dtype, out,
                     want, absl::StrCat(ir::OpName(c.op), " ", x.TypeString(), " axis ", axis));
      }
    }
  }
}

TEST(ReduceTest, EmptyAxis) {
  for (DType dtype : {DType::kF32, DType::kF64}) {
    Tensor x = FromValues(dtype, {2, 0}, {});
    ir::Attrs attrs = {{"axis", int64_t{1}}, {"keepdim", false}};
    const double inf = std::numeric_limits<double>::infinity();
    ExpectTensor(EvalOp(OpCode::kReduceSum, {&x}, attrs), dtype, {2}, {0, 0}, "empty sum");
    ExpectTensor(EvalOp(OpCode::kReduceMax, {&x}, attrs), dtype, {2}, {-inf, -inf}, "empty max");
    ExpectTensor(EvalOp(OpCode::kReduceMean, {&x}, attrs), dtype, {2}, {std::nan(""), std::nan("")},
                 "empty mean");
  }
}

TEST(ReduceTest, MaxPropagatesNaN) {
  const double nan = std::nan("");
  Tensor x = FromValues(DType::kF64, {2, 3}, {1, nan, 2, 3, 4, 5});
  ExpectTensor(EvalOp(OpCode::kReduceMax, {&x}, {{"axis", int64_t{1}}, {"keepdim", false}}),
               DType::kF64, {2}, {nan, 5}, "nan row");
  ExpectTensor(EvalOp(OpCode::kReduceMax, {&x}, {{"axis", int64_t{0}}, {"keepdim", false}}),
               DType::kF64, {3}, {3, nan, 5}, "nan column");
}

TEST(ReduceTest, RejectsBadOperands) {
  Tensor b = FromValues(DType::kBool, {2}, {1, 0});
  Tensor i = FromValues(DType::kI64, {2}, {1, 0});
  ir::Attrs attrs = {{"axis", int64_t{0}}, {"keepdim", false}};
  EXPECT_FALSE(EvalOp(OpCode::kReduceSum, {&b}, attrs).ok());
  EXPECT_FALSE(EvalOp(OpCode::kReduceMean, {&i}, attrs).ok());
  absl::StatusOr<Tensor> r =
      EvalOp(OpCode::kReduceSum, {&i}, {{"axis", int64_t{3}}, {"keepdim", false}});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("reduce_sum axis 3"));
}

// numpy's argmin / argmax of a line: the first extremum, or the first NaN if there is one.
double FirstExtremum(const std::vector<double>& v, bool min) {
  int64_t best = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[i])) return static_cast<double>(i);
    if (min ? v[i] < v[best] : v[i] > v[best]) best = static_cast<int64_t>(i);
  }
  return static_cast<double>(best);
}

TEST(ArgReduceTest, FirstExtremumOverEveryAxis) {
  std::mt19937_64 rng(32);
  for (OpCode op : {OpCode::kArgMin, OpCode::kArgMax}) {
    const bool min = op == OpCode::kArgMin;
    for (DType dtype : {DType::kF32, DType::kF64, DType::kI64}) {
      for (int trial = 0; trial < 30; ++trial) {
        Dims shape = RandomShape(rng, 1, 4, trial % 5 == 0 ? 40 : 5);
        const int axis = std::uniform_int_distribution<int>(0, shape.size() - 1)(rng);
        const bool keepdim = trial % 2 == 1;
        // Few distinct values, so most lines have tied extrema and the first must win.
        std::vector<double> v = Random(rng, DType::kF64, shape, -3, 3).ToDoubles();
        for (double& e : v) e = std::round(e);
        Tensor x = FromValues(dtype, shape, v);
        std::vector<double> want = PerLine(
            x, axis, [min](const std::vector<double>& line) { return FirstExtremum(line, min); });
        Dims out = shape;
        if (keepdim)
          out[axis] = 1;
        else
          out.erase(out.begin() + axis);
        ExpectTensor(EvalOp(op, {&x}, {{"axis", int64_t{axis}}, {"keepdim", keepdim}}), DType::kI64,
                     out, want, absl::StrCat(ir::OpName(op), " ", x.TypeString(), " axis ", axis));
      }
    }
  }
}

TEST(ArgReduceTest, NaNIsTheExtremeAndInfinitiesAreValues) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  for (DType dtype : {DType::kF32, DType::kF64}) {
    // Rows: NaN after a value and a second NaN; -inf ties; all +inf.
    Tensor x = FromValues(dtype, {3, 4}, {1, nan, 0, nan, 3, -inf, 3, -inf, inf, inf, inf, inf});
    ir::Attrs rows = {{"axis", int64_t{1}}, {"keepdim", false}};
    ExpectTensor(EvalOp(OpCode::kArgMin, {&x}, rows), DType::kI64, {3}, {1, 1, 0}, "argmin rows");
    ExpectTensor(EvalOp(OpCode::kArgMax, {&x}, rows), DType::kI64, {3}, {1, 0, 0}, "argmax rows");
    ir::Attrs columns = {{"axis", int64_t{0}}, {"keepdim", true}};
    ExpectTensor(EvalOp(OpCode::kArgMin, {&x}, columns), DType::kI64, {1, 4}, {0, 0, 0, 0},
                 "argmin columns");
    ExpectTensor(EvalOp(OpCode::kArgMax, {&x}, columns), DType::kI64, {1, 4}, {2, 0, 2, 0},
                 "argmax columns");
  }
  // i64 extremes are values like any other.
  Tensor i = Tensor::Empty(DType::kI64, {3}).value();
  i.data<int64_t>()[0] = std::numeric_limits<int64_t>::max();
  i.data<int64_t>()[1] = std::numeric_limits<int64_t>::min();
  i.data<int64_t>()[2] = std::numeric_limits<int64_t>::max();
  ir::Attrs all = {{"axis", int64_t{0}}, {"keepdim", false}};
  ExpectTensor(EvalOp(OpCode::kArgMin, {&i}, all), DType::kI64, {}, {1}, "i64 argmin");
  ExpectTensor(EvalOp(OpCode::kArgMax, {&i}, all), DType::kI64, {}, {0}, "i64 argmax");
}

TEST(ArgReduceTest, RejectsEmptyAxesAndBool) {
  Tensor empty = FromValues(DType::kF64, {2, 0}, {});
  absl::StatusOr<Tensor> r =
      EvalOp(OpCode::kArgMin, {&empty}, {{"axis", int64_t{1}}, {"keepdim", false}});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("argmin: axis 1 of f64[2, 0] is empty"));
  // Reducing the other axis of an empty tensor is fine: no lines, no indices.
  ExpectTensor(EvalOp(OpCode::kArgMax, {&empty}, {{"axis", int64_t{0}}, {"keepdim", false}}),
               DType::kI64, {0}, {}, "argmax over a non-empty axis");
  Tensor b = FromValues(DType::kBool, {2}, {1, 0});
  EXPECT_FALSE(EvalOp(OpCode::kArgMax, {&b}, {{"axis", int64_t{0}}, {"keepdim", false}}).ok());
}

TEST(CumSumTest, RunningSumsInIndexOrderOverEveryAxis) {
  std::mt19937_64 rng(33);
  for (DType dtype : {DType::kF32, DType::kF64, DType::kI64}) {
    for (int trial = 0; trial < 30; ++trial) {
      Dims shape = RandomShape(rng, 1, 4, trial % 5 == 0 ? 40 : 5);
      const int axis = std::uniform_int_distribution<int>(0, shape.size() - 1)(rng);
      Tensor x = Random(rng, dtype, shape, -20, 20);
      // The kernel's order and accumulator: index order, in double (exact for i64 here),
      // each prefix rounded to the dtype. So the result must match bit for bit.
      std::vector<double> vx = x.ToDoubles(), want(vx.size());
      Dims strides = Strides(shape);
      for (int64_t i = 0; i < x.numel(); ++i) {
        Dims idx = Unravel(i, shape);
        const int64_t first = i - idx[axis] * strides[axis];
        double acc = 0;
        for (int64_t r = 0; r <= idx[axis]; ++r) acc += vx[first + r * strides[axis]];
        want[i] = dtype == DType::kF32 ? static_cast<float>(acc) : acc;
      }
      const int64_t attr_axis = trial % 3 == 0 ? axis - static_cast<int64_t>(shape.size()) : axis;
      absl::StatusOr<Tensor> got = EvalOp(OpCode::kCumSum, {&x}, {{"axis", attr_axis}});
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_EQ(got->dtype(), dtype);
      ASSERT_EQ(got->shape(), shape);
      for (int64_t i = 0; i < x.numel(); ++i) {
        ASSERT_EQ(got->ValueAt(i), want[i]) << x.TypeString() << " axis " << axis << " at " << i;
      }
    }
  }
}

TEST(CumSumTest, I64WrapsEmptyAxesAndBadOperands) {
  Tensor x = Tensor::Empty(DType::kI64, {2}).value();
  x.data<int64_t>()[0] = std::numeric_limits<int64_t>::max();
  x.data<int64_t>()[1] = 1;
  absl::StatusOr<Tensor> y = EvalOp(OpCode::kCumSum, {&x}, {{"axis", int64_t{0}}});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->data<int64_t>()[1], std::numeric_limits<int64_t>::min());
  Tensor empty = FromValues(DType::kF64, {3, 0}, {});
  ExpectTensor(EvalOp(OpCode::kCumSum, {&empty}, {{"axis", int64_t{1}}}), DType::kF64, {3, 0}, {},
               "empty cumsum");
  Tensor b = FromValues(DType::kBool, {2}, {1, 0});
  EXPECT_FALSE(EvalOp(OpCode::kCumSum, {&b}, {{"axis", int64_t{0}}}).ok());
  absl::StatusOr<Tensor> r = EvalOp(OpCode::kCumSum, {&x}, {{"axis", int64_t{1}}});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("cumsum axis 1"));
}

TEST(SoftmaxTest, MatchesReferenceOverEveryAxis) {
  std::mt19937_64 rng(31);
  for (DType dtype : {DType::kF32, DType::kF64}) {
    for (int trial = 0; trial < 40; ++trial) {
      Dims shape = RandomShape(rng, 1, 4, trial % 5 == 0 ? 30 : 5);
      const int axis = std::uniform_int_distribution<int>(0, shape.size() - 1)(rng);
      Tensor x = Random(rng, dtype, shape, -10, 10);
      Dims strides = Strides(shape);
      std::vector<double> vx = x.ToDoubles(), want(vx.size());
      for (int64_t i = 0; i < x.numel(); ++i) {
        // The line through element i along `axis`.
        Dims idx = Unravel(i, shape);
        const int64_t base = i - idx[axis] * strides[axis];
        double m = -std::numeric_limits<double>::infinity(), sum = 0;
        for (int64_t r = 0; r < shape[axis]; ++r) m = std::max(m, vx[base + r * strides[axis]]);
        for (int64_t r = 0; r < shape[axis]; ++r) sum += std::exp(vx[base + r * strides[axis]] - m);
        want[i] = std::exp(vx[i] - m) / sum;
      }
      ExpectTensor(EvalOp(OpCode::kSoftmax, {&x}, {{"axis", int64_t{axis}}}), dtype, shape, want,
                   absl::StrCat("softmax ", x.TypeString(), " axis ", axis));
    }
  }
}

}  // namespace
}  // namespace graphjit::runtime::testutil
