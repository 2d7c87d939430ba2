// The data-dependent ops' eager kernels (ir/ops.def: nonzero, compress,
// non_max_suppression, unique, top_k) against hand-computed results, and the interpreter binding
// the symbols they define so that later nodes are sized by them.
#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "ir/parser.h"
#include "runtime/interpreter.h"
#include "tests/runtime/test_util.h"

namespace graphjit::runtime::testutil {
namespace {

COVERS_OPS(OpCode::kNonZero, OpCode::kCompress, OpCode::kNonMaxSuppression, OpCode::kAssertDim,
           OpCode::kTopK, OpCode::kTopKIndices, OpCode::kFactorDim, OpCode::kUnique,
           OpCode::kUniqueIndices, OpCode::kUniqueInverse, OpCode::kUniqueCounts);

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

ir::Attrs Symbol(ir::Attrs attrs = {}) {
  attrs.Set("symbol", std::string("k"));
  return attrs;
}

std::vector<int64_t> Ints(const Tensor& t) {
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}

TEST(NonZero, IndicesPerAxisInRowMajorOrder) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = *Tensor::FromDoubles(DType::kF32, {2, 1, 3}, {0, 2, 0, nan, 0, -1});
  absl::StatusOr<Tensor> y = EvalOp(OpCode::kNonZero, {&x}, Symbol());
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), (Dims{3, 3}));
  // (0,0,1), (1,0,0) NaN counts, (1,0,2).
  EXPECT_THAT(Ints(*y), ElementsAre(0, 1, 1, 0, 0, 0, 1, 0, 2));
  const Tensor none = *Tensor::FromDoubles(DType::kI64, {4}, {0, 0, 0, 0});
  y = EvalOp(OpCode::kNonZero, {&none}, Symbol());
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), (Dims{1, 0}));
  const Tensor flags = *Tensor::FromDoubles(DType::kBool, {3}, {1, 0, 1});
  y = EvalOp(OpCode::kNonZero, {&flags}, Symbol());
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Ints(*y), ElementsAre(0, 2));
}

TEST(Compress, KeepsTheSelectedSlicesAlongTheAxis) {
  const Tensor x = *Tensor::FromDoubles(DType::kF64, {2, 3}, {1, 2, 3, 4, 5, 6});
  // Shorter than the axis: column 2 is dropped.
  const Tensor cond = *Tensor::FromDoubles(DType::kBool, {2}, {0, 1});
  absl::StatusOr<Tensor> y = EvalOp(OpCode::kCompress, {&x, &cond}, Symbol({{"axis", int64_t{1}}}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), (Dims{2, 1}));
  EXPECT_THAT(std::vector<double>(y->data<double>(), y->data<double>() + 2), ElementsAre(2, 5));
  const Tensor rows = *Tensor::FromDoubles(DType::kBool, {2}, {1, 1});
  y = EvalOp(OpCode::kCompress, {&x, &rows}, Symbol({{"axis", int64_t{-2}}}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), (Dims{2, 3}));
  const Tensor longer = *Tensor::FromDoubles(DType::kBool, {4}, {1, 0, 0, 1});
  y = EvalOp(OpCode::kCompress, {&x, &longer}, Symbol({{"axis", int64_t{1}}}));
  ASSERT_FALSE(y.ok());
  EXPECT_THAT(y.status().message(), HasSubstr("compress: condition bool[4] is longer than axis 1"));
}

ir::Attrs Nms(int64_t max_per_class, double iou, double score, int64_t center) {
  return Symbol({{"max_per_class", max_per_class},
                 {"iou_threshold", iou},
                 {"score_threshold", score},
                 {"center_point_box", center}});
}

TEST(NonMaxSuppression, PerBatchAndClassByDescendingScore) {
  // Centre format: boxes 0 and 1 overlap (IoU 0.82), 2 is apart; two classes.
  const Tensor boxes =
      *Tensor::FromDoubles(DType::kF32, {1, 3, 4}, {0.5, 0.5, 1, 1, 0.6, 0.5, 1, 1, 5, 5, 1, 1});
  const Tensor scores =
      *Tensor::FromDoubles(DType::kF32, {1, 2, 3}, {0.9, 0.95, 0.3, 0.2, 0.2, 0.1});
  absl::StatusOr<Tensor> y =
      EvalOp(OpCode::kNonMaxSuppression, {&boxes, &scores}, Nms(10, 0.5, 0.15, 1));
  ASSERT_TRUE(y.ok()) << y.status();
  // Class 0: box 1 (best), box 0 suppressed, box 2. Class 1: boxes 0 and 1 tie (index
  // order: 0 first, 1 suppressed); box 2 under the score threshold.
  EXPECT_THAT(Ints(*y), ElementsAreArray({0, 0, 1, 0, 0, 2, 0, 1, 0}));
  // A limit of one keeps each class's best only; none with a limit of 0.
  y = EvalOp(OpCode::kNonMaxSuppression, {&boxes, &scores}, Nms(1, 0.7, 0.0, 1));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Ints(*y), ElementsAreArray({0, 0, 1, 0, 1, 0}));
  y = EvalOp(OpCode::kNonMaxSuppression, {&boxes, &scores}, Nms(0, 0.5, 0.0, 1));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), (Dims{0, 3}));
}

TEST(AssertDim, PassesEqualCountsThroughAndNamesUnequalOnes) {
  const Tensor x = *Tensor::FromDoubles(DType::kF32, {3, 2}, {1, 2, 3, 4, 5, 6});
  const ir::Attrs attrs = {{"axis", int64_t{0}}, {"dim", ir::SymExpr::Symbol("k")}};
  absl::StatusOr<Tensor> y = EvalOp(OpCode::kAssertDim, {&x}, attrs, {{"k", 3}});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->raw_data(), x.raw_data());  // no copy
  y = EvalOp(OpCode::kAssertDim, {&x}, attrs, {{"k", 2}});
  ASSERT_FALSE(y.ok());
  EXPECT_THAT(y.status().message(), HasSubstr("dim 0 of f32[3, 2] must equal k = 2"));
}

TEST(TopK, LargestAndSmallestAlongAnAxisTiesByIndexNanFirstOrLast) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Two rows along axis 0 of a [4, 2] tensor: column 0 = 3, nan, 3, 1; column 1 = 2, 2, 5, 0.
  const Tensor x = *Tensor::FromDoubles(DType::kF64, {4, 2}, {3, 2, nan, 2, 3, 5, 1, 0});
  auto run = [&](OpCode op, int64_t k, bool largest) {
    absl::StatusOr<Tensor> y =
        EvalOp(op, {&x}, {{"k", ir::SymExpr(k)}, {"axis", int64_t{0}}, {"largest", largest}});
    EXPECT_TRUE(y.ok()) << y.status();
    return *y;
  };
  // Largest 3: column 0 nan, 3 (index 0), 3 (index 2); column 1 5, 2 (index 0), 2 (index 1).
  EXPECT_THAT(Ints(run(OpCode::kTopKIndices, 3, true)), ElementsAre(1, 2, 0, 0, 2, 1));
  const Tensor values = run(OpCode::kTopK, 3, true);
  EXPECT_EQ(values.shape(), (Dims{3, 2}));
  EXPECT_TRUE(std::isnan(values.data<double>()[0]));
  EXPECT_EQ(values.data<double>()[1], 5);
  // Smallest 2: column 0 1, 3 (index 0); column 1 0, 2 (index 0).
  EXPECT_THAT(Ints(run(OpCode::kTopKIndices, 2, false)), ElementsAre(3, 3, 0, 0));
  EXPECT_EQ(run(OpCode::kTopK, 0, true).shape(), (Dims{0, 2}));
  absl::StatusOr<Tensor> too_many = EvalOp(
      OpCode::kTopK, {&x},
      {{"k", ir::SymExpr::Symbol("K")}, {"axis", int64_t{0}}, {"largest", true}}, {{"K", 5}});
  ASSERT_FALSE(too_many.ok());
  EXPECT_THAT(too_many.status().message(), HasSubstr("k=5 is more than axis 0 of f64[4, 2] holds"));
}

// unique and its parts of x along `axis`: values, first indices, inverse, counts.
struct UniqueRun {
  Tensor values;
  std::vector<int64_t> indices, inverse, counts;
};

UniqueRun RunUnique(const Tensor& x, int64_t axis, bool sorted) {
  ir::Attrs attrs{{"axis", axis}, {"sorted", sorted}};
  absl::StatusOr<Tensor> values = EvalOp(OpCode::kUnique, {&x}, Symbol(attrs));
  EXPECT_TRUE(values.ok()) << values.status();
  UniqueRun run{*values, {}, {}, {}};
  for (auto [op, part] : {std::pair{OpCode::kUniqueIndices, &run.indices},
                          std::pair{OpCode::kUniqueInverse, &run.inverse},
                          std::pair{OpCode::kUniqueCounts, &run.counts}}) {
    absl::StatusOr<Tensor> y = EvalOp(op, {&x, &run.values}, attrs);
    EXPECT_TRUE(y.ok()) << y.status();
    *part = Ints(*y);
  }
  return run;
}

std::vector<double> Doubles(const Tensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.data<double>()[i]);
  return out;
}

TEST(Unique, SortedAndByFirstOccurrenceWithIndicesInverseAndCounts) {
  const Tensor x = *Tensor::FromDoubles(DType::kF64, {6}, {2, 1, 1, 3, 4, 3});
  UniqueRun sorted = RunUnique(x, 0, true);  // ONNX's test_unique_sorted_without_axis
  EXPECT_THAT(Doubles(sorted.values), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(sorted.indices, ElementsAre(1, 0, 3, 4));
  EXPECT_THAT(sorted.inverse, ElementsAre(1, 0, 0, 2, 3, 2));
  EXPECT_THAT(sorted.counts, ElementsAre(2, 1, 2, 1));
  UniqueRun first = RunUnique(x, 0, false);
  EXPECT_THAT(Doubles(first.values), ElementsAre(2, 1, 3, 4));
  EXPECT_THAT(first.indices, ElementsAre(0, 1, 3, 4));
  EXPECT_THAT(first.inverse, ElementsAre(0, 1, 1, 2, 3, 2));
  EXPECT_THAT(first.counts, ElementsAre(1, 2, 2, 1));
}

TEST(Unique, SlicesAlongAnAxisCompareWholeAndNanEqualsNan) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Columns of a [2, 4]: (1, nan), (0, 5), (1, nan), (1, 2).
  const Tensor x = *Tensor::FromDoubles(DType::kF64, {2, 4}, {1, 0, 1, 1, nan, 5, nan, 2});
  UniqueRun run = RunUnique(x, -1, true);
  EXPECT_EQ(run.values.shape(), (Dims{2, 3}));
  // Sorted: (0, 5), (1, 2), (1, nan): NaN above every number.
  std::vector<double> v = Doubles(run.values);
  EXPECT_THAT(std::vector<double>(v.begin(), v.begin() + 5), ElementsAre(0, 1, 1, 5, 2));
  EXPECT_TRUE(std::isnan(v[5]));
  EXPECT_THAT(run.indices, ElementsAre(1, 3, 0));
  EXPECT_THAT(run.inverse, ElementsAre(2, 0, 2, 1));
  EXPECT_THAT(run.counts, ElementsAre(1, 1, 2));
  const Tensor empty = *Tensor::FromDoubles(DType::kI64, {0, 3}, {});
  UniqueRun none = RunUnique(empty, 0, true);
  EXPECT_EQ(none.values.shape(), (Dims{0, 3}));
  EXPECT_TRUE(none.counts.empty());
}

TEST(Unique, APartOfValuesThatAreNotTheUniqueOfXIsAnError) {
  const Tensor x = *Tensor::FromDoubles(DType::kI64, {4}, {5, 5, 6, 7});
  const Tensor wrong = *Tensor::FromDoubles(DType::kI64, {2}, {5, 6});
  absl::StatusOr<Tensor> y =
      EvalOp(OpCode::kUniqueCounts, {&x, &wrong}, {{"axis", int64_t{0}}, {"sorted", true}});
  ASSERT_FALSE(y.ok());
  EXPECT_THAT(y.status().message(),
              HasSubstr("values i64[2] are not the unique of i64[4], which has 3 distinct slices"));
}

TEST(FactorDim, BindsTheQuotientAndRefusesADimThatIsNotAMultiple) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(R"(graph sides {
  %0 = input {name="x"} : f32[2, H]
  %1 = factor_dim(%0) {axis=1, factor=4, symbol="h"} : f32[2, 4*h]
  %2 = reshape(%1) {shape=[8, h]} : f32[8, h]
  %3 = reduce_sum(%2) {axis=0, keepdim=false} : f32[h]
  return %3
})");
  ASSERT_TRUE(g.ok()) << g.status();
  const Tensor x = *Tensor::FromDoubles(DType::kF32, {2, 12}, std::vector<double>(24, 1.0));
  absl::StatusOr<std::vector<Tensor>> out = Interpret(*g, {{"x", x}}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Dims{3}));  // h = 12 / 4
  EXPECT_EQ((*out)[0].data<float>()[0], 8);
  const Tensor odd = *Tensor::FromDoubles(DType::kF32, {2, 10}, std::vector<double>(20, 1.0));
  out = Interpret(*g, {{"x", odd}}, {});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("dim 1 of f32[2, 10] is not a multiple of 4"));
}

TEST(DataDependentInterpreter, LaterNodesAreSizedByTheBoundSymbol) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(R"(graph count {
  %0 = input {name="x"} : f32[N]
  %1 = full {value=0.0} : f32[]
  %2 = gt(%0, %1) : bool[N]
  %3 = compress(%0, %2) {axis=0, symbol="k"} : f32[k]
  %4 = full {value=2.0} : f32[k]
  %5 = mul(%3, %4) : f32[k]
  return %5
})");
  ASSERT_TRUE(g.ok()) << g.status();
  const Tensor x = *Tensor::FromDoubles(DType::kF32, {5}, {1, -1, 3, 0, 2});
  absl::StatusOr<std::vector<Tensor>> out = Interpret(*g, {{"x", x}}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(std::vector<float>((*out)[0].data<float>(), (*out)[0].data<float>() + 3),
              ElementsAre(2, 6, 4));
}

}  // namespace
}  // namespace graphjit::runtime::testutil
