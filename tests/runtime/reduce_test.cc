// Reductions (sum, max, mean) and softmax over every axis against double references,
// including empty axes and keepdim.
#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "tests/runtime/test_util.h"

namespace graphjit::runtime::testutil {
namespace {

COVERS_OPS(OpCode::kReduceSum, OpCode::kReduceMax, OpCode::kReduceMean, OpCode::kSoftmax);

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
