// Tests of runtime::Tensor: construction, conversion, views, copies, printing, errors.
#include "runtime/tensor.h"

#include <cstdint>
#include <limits>
#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphjit::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TensorTest, DefaultIsInvalid) {
  Tensor t;
  EXPECT_FALSE(t.valid());
  EXPECT_EQ(t.numel(), 0);
  EXPECT_EQ(t.DebugString(), "<no tensor>");
  EXPECT_FALSE(t.Clone().valid());
}

TEST(TensorTest, ZerosAreZeroAndAligned) {
  for (DType d : {DType::kF32, DType::kF64, DType::kI64, DType::kBool}) {
    absl::StatusOr<Tensor> t = Tensor::Zeros(d, {2, 3, 5});
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->numel(), 30);
    EXPECT_EQ(t->nbytes(), 30 * ir::DTypeSize(d));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->raw_data()) % 64, 0u);
    for (double v : t->ToDoubles()) EXPECT_EQ(v, 0.0);
  }
}

TEST(TensorTest, ShapeAccessors) {
  absl::StatusOr<Tensor> t = Tensor::Zeros(DType::kF64, {2, 3, 4});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->rank(), 3);
  EXPECT_EQ(t->dim(0), 2);
  EXPECT_EQ(t->dim(-1), 4);
  EXPECT_EQ(t->dim(-3), 2);
  EXPECT_THAT(t->shape(), ElementsAre(2, 3, 4));
}

TEST(TensorTest, ZeroSizedTensorsWork) {
  absl::StatusOr<Tensor> t = Tensor::Zeros(DType::kF32, {3, 0, 2});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->valid());
  EXPECT_EQ(t->numel(), 0);
  EXPECT_TRUE(t->ToDoubles().empty());
  EXPECT_EQ(t->Clone().numel(), 0);
  absl::StatusOr<Tensor> r = t->Reshape({0, 7});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->shape(), ElementsAre(0, 7));
  absl::StatusOr<Tensor> e = Tensor::FromDoubles(DType::kF64, {0}, {});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->DebugString(3), "f64[0] {}");
}

TEST(TensorTest, NegativeDimIsAnError) {
  absl::StatusOr<Tensor> t = Tensor::Zeros(DType::kF32, {2, -1});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("[2, -1]"));
  EXPECT_FALSE(Tensor::FromDoubles(DType::kF64, {-3}, {}).ok());
  absl::StatusOr<Tensor> ok = Tensor::Zeros(DType::kF32, {6});
  ASSERT_TRUE(ok.ok());
  EXPECT_FALSE(ok->Reshape({-2, -3}).ok());
}

TEST(TensorTest, HugeShapeIsAnErrorNotACrash) {
  int64_t big = std::numeric_limits<int64_t>::max() / 2;
  absl::StatusOr<Tensor> t = Tensor::Zeros(DType::kF64, {big, 4});
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("too many elements"));
}

TEST(TensorTest, WrongValueCountNamesTheShape) {
  absl::StatusOr<Tensor> t = Tensor::FromDoubles(DType::kF64, {2, 3}, {1, 2, 3});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("[2, 3]"));
  EXPECT_THAT(t.status().message(), HasSubstr("got 3"));
  std::vector<float> v = {1, 2};
  absl::StatusOr<Tensor> f = Tensor::FromVector<float>({3}, v);
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr("[3]"));
}

TEST(TensorTest, FromDoublesConverts) {
  absl::StatusOr<Tensor> i = Tensor::FromDoubles(DType::kI64, {4}, {1.9, -1.9, 3, 0});
  ASSERT_TRUE(i.ok());
  EXPECT_THAT(i->ToDoubles(), ElementsAre(1, -1, 3, 0));  // truncation toward zero
  absl::StatusOr<Tensor> b = Tensor::FromDoubles(DType::kBool, {3}, {0, 0.5, -2});
  ASSERT_TRUE(b.ok());
  EXPECT_THAT(b->ToDoubles(), ElementsAre(0, 1, 1));
  absl::StatusOr<Tensor> f = Tensor::FromDoubles(DType::kF32, {1}, {0.1});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->data<float>()[0], 0.1f);
}

TEST(TensorTest, FromVectorForEveryType) {
  std::vector<float> f = {1.5f, -2};
  std::vector<double> d = {1.25, 3, 4};
  std::vector<int64_t> i = {7, -8};
  bool b[] = {true, false, true};
  absl::StatusOr<Tensor> tf = Tensor::FromVector<float>({2}, f);
  absl::StatusOr<Tensor> td = Tensor::FromVector<double>({3, 1}, d);
  absl::StatusOr<Tensor> ti = Tensor::FromVector<int64_t>({1, 2}, i);
  absl::StatusOr<Tensor> tb = Tensor::FromVector<bool>({3}, b);
  ASSERT_TRUE(tf.ok() && td.ok() && ti.ok() && tb.ok());
  EXPECT_EQ(tf->dtype(), DType::kF32);
  EXPECT_EQ(td->dtype(), DType::kF64);
  EXPECT_EQ(ti->dtype(), DType::kI64);
  EXPECT_EQ(tb->dtype(), DType::kBool);
  EXPECT_THAT(tf->ToDoubles(), ElementsAre(1.5, -2));
  EXPECT_THAT(td->ToDoubles(), ElementsAre(1.25, 3, 4));
  EXPECT_THAT(ti->ToDoubles(), ElementsAre(7, -8));
  EXPECT_THAT(tb->ToDoubles(), ElementsAre(1, 0, 1));
}

TEST(TensorTest, ScalarHasRankZero) {
  Tensor s = Tensor::Scalar(DType::kF64, 2.5);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.ValueAt(0), 2.5);
  EXPECT_EQ(s.TypeString(), "f64[]");
  EXPECT_EQ(Tensor::Scalar(DType::kI64, -3.7).ValueAt(0), -3);
}

TEST(TensorTest, ReshapeIsAViewAndCloneIsACopy) {
  absl::StatusOr<Tensor> t = Tensor::FromDoubles(DType::kF64, {2, 3}, {0, 1, 2, 3, 4, 5});
  ASSERT_TRUE(t.ok());
  absl::StatusOr<Tensor> v = t->Reshape({3, 2});
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->SharesBufferWith(*t));
  EXPECT_THAT(v->shape(), ElementsAre(3, 2));
  Tensor c = t->Clone();
  EXPECT_FALSE(c.SharesBufferWith(*t));
  t->data<double>()[0] = 42;
  EXPECT_EQ(v->ValueAt(0), 42);
  EXPECT_EQ(c.ValueAt(0), 0);
  absl::StatusOr<Tensor> bad = t->Reshape({4, 2});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("f64[2, 3]"));
  EXPECT_THAT(bad.status().message(), HasSubstr("[4, 2]"));
}

TEST(TensorTest, DebugStringShowsTypeAndValues) {
  absl::StatusOr<Tensor> t = Tensor::FromDoubles(DType::kF64, {2, 2}, {1, 2.5, -3, 4});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->TypeString(), "f64[2, 2]");
  EXPECT_EQ(t->DebugString(), "f64[2, 2]");
  EXPECT_EQ(t->DebugString(2), "f64[2, 2] {1, 2.5, ...}");
  EXPECT_EQ(t->DebugString(10), "f64[2, 2] {1, 2.5, -3, 4}");
}

TEST(TensorTest, ConvertElementIsDefinedEverywhere) {
  double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(ConvertElement<int64_t>(std::nan("")), 0);
  EXPECT_EQ(ConvertElement<int64_t>(inf), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ConvertElement<int64_t>(-inf), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(ConvertElement<int64_t>(1e30f), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ConvertElement<int64_t>(-2.9), -2);
  EXPECT_TRUE(ConvertElement<bool>(std::nan("")));
  EXPECT_FALSE(ConvertElement<bool>(int64_t{0}));
  EXPECT_EQ(ConvertElement<double>(true), 1.0);
}

}  // namespace
}  // namespace graphjit::runtime

namespace graphjit::runtime {
namespace {

TEST(TensorMaxAbsDiff, LargestElementDifferenceOrInfinityForOtherShapes) {
  Tensor a = *Tensor::FromDoubles(DType::kF64, {2, 2}, {1, 2, 3, 4});
  Tensor b = *Tensor::FromDoubles(DType::kF64, {2, 2}, {1, 2.5, 2, 4});
  EXPECT_EQ(MaxAbsDiff(a, b), 1.0);
  EXPECT_EQ(MaxAbsDiff(a, a), 0.0);
  EXPECT_TRUE(std::isinf(MaxAbsDiff(a, *Tensor::Zeros(DType::kF64, {4}))));
}

// A tensor over memory someone else owns (a mapped cache file): no copy, the owner kept
// alive by the tensor, and refused unless aligned to the element and sized for the type.
TEST(TensorTest, FromSharedUsesTheMemoryInPlace) {
  auto block = std::shared_ptr<void>(std::aligned_alloc(64, 256), [](void* p) { std::free(p); });
  double* data = static_cast<double*>(block.get());
  for (int i = 0; i < 6; ++i) data[i] = i + 0.5;
  std::weak_ptr<void> watch = block;
  absl::StatusOr<Tensor> t = Tensor::FromShared(DType::kF64, {2, 3}, block, data, 48);
  ASSERT_TRUE(t.ok()) << t.status();
  block.reset();
  EXPECT_FALSE(watch.expired());  // the tensor holds the owner
  EXPECT_EQ(t->raw_data(), data);
  EXPECT_EQ(t->ToDoubles()[5], 5.5);
  *t = Tensor();
  EXPECT_TRUE(watch.expired());

  auto other = std::shared_ptr<void>(std::aligned_alloc(64, 256), [](void* p) { std::free(p); });
  char* base = static_cast<char*>(other.get());
  // Aligned to the element is enough (numpy's arrays are; its large ones 16-byte aligned).
  EXPECT_TRUE(Tensor::FromShared(DType::kF64, {2}, other, base + 8, 16).ok());
  absl::StatusOr<Tensor> misaligned = Tensor::FromShared(DType::kF64, {2}, other, base + 4, 16);
  EXPECT_EQ(misaligned.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(misaligned.status().message(), HasSubstr("8-byte aligned"));
  EXPECT_FALSE(Tensor::FromShared(DType::kF64, {2}, other, base, 15).ok());
  EXPECT_FALSE(Tensor::FromShared(DType::kF64, {-1}, other, base, 8).ok());
}

}  // namespace
}  // namespace graphjit::runtime
