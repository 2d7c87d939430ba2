// Lazy execution: graph breaks, compiled-code reuse, no recomputation, freeing, and
// errors at the op that caused them.
#include <cmath>

#include "compiler/lazy/lazy_context.h"
#include "frontend/ops.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphjit::compiler {
namespace {

using frontend::Value;
using runtime::Tensor;
using ::testing::HasSubstr;

TEST(Lazy, ContextsSharingAStoreCompileEachGraphOnce) {
  auto store = std::make_shared<GraphStore>();
  auto run = [&](LazyContext& ctx, double v) {
    Value x = ctx.Tensor(*Tensor::FromDoubles(ir::DType::kF64, {4}, {v, v, v, v}));
    absl::StatusOr<double> item = ctx.Item(ReduceSum(Tanh(x) * 3.0, 0));
    EXPECT_TRUE(item.ok()) << item.status();
    return item.ok() ? *item : 0.0;
  };
  LazyContext a({}, {}, store), b({}, {}, store);
  EXPECT_NEAR(run(a, 0.5), 12 * std::tanh(0.5), 1e-12);
  EXPECT_NEAR(run(b, 0.25), 12 * std::tanh(0.25), 1e-12);  // other data, same graph
  EXPECT_EQ(a.compiles(), 1);
  EXPECT_EQ(b.compiles(), 0);
  EXPECT_FALSE(b.graphs().back().compiled);
  StoreStats s = store->stats();
  EXPECT_EQ(s.compiles, 1);
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(s.live, 1);
}

TEST(Lazy, NothingRunsUntilAValueIsNeeded) {
  LazyContext ctx;
  Value x = ctx.Tensor(*Tensor::FromDoubles(ir::DType::kF64, {3}, {1, 2, 3}));
  Value y = Exp(x) * 2.0;
  EXPECT_EQ(ctx.pending_ops(), 2);  // exp and mul (the constant 2 computes nothing)
  EXPECT_TRUE(ctx.graphs().empty());
  absl::StatusOr<Tensor> t = ctx.Materialize(y);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_NEAR(t->ValueAt(2), 2 * std::exp(3.0), 1e-12);
  EXPECT_EQ(ctx.pending_ops(), 0);
}

TEST(Lazy, AValueMaterializedTwiceIsComputedOnce) {
  LazyContext ctx;
  Value x = ctx.Tensor(*Tensor::FromDoubles(ir::DType::kF64, {2}, {1, 2}));
  Value y = Tanh(x);
  ASSERT_TRUE(ctx.Materialize(y).ok());
  ASSERT_TRUE(ctx.Materialize(y).ok());
  ASSERT_EQ(ctx.graphs().size(), 2u);
  EXPECT_EQ(ctx.graphs()[0].ops, 1);
  EXPECT_EQ(ctx.graphs()[1].ops, 0);
  EXPECT_EQ(ctx.compiles(), 1);
  // And a later graph reads it as an input instead of recomputing it.
  Value z = y + y;
  ASSERT_TRUE(ctx.Materialize(z).ok());
  EXPECT_EQ(ctx.graphs()[2].ops, 1);
}

TEST(Lazy, ValuesNoHandleHoldsAreNotComputed) {
  LazyContext ctx;
  Value x = ctx.Tensor(*Tensor::FromDoubles(ir::DType::kF64, {2}, {1, 2}));
  Value a = Exp(x);
  {
    Value dropped = Tanh(a);
  }
  ASSERT_TRUE(ctx.Materialize(a).ok());
  // The graph had exp and tanh, but only `a` was still held: one output.
  EXPECT_EQ(ctx.graphs()[0].ops, 2);
  EXPECT_EQ(ctx.graphs()[0].outputs, 1);
}

TEST(Lazy, ShapeErrorsSurfaceAtTheOp) {
  LazyContext ctx;
  Value a = ctx.Tensor(*Tensor::Zeros(ir::DType::kF64, {2, 3}));
  Value b = ctx.Tensor(*Tensor::Zeros(ir::DType::kF64, {4, 5}));
  Value c = Matmul(a, b);
  // Reported now, naming the op, before anything is materialized.
  EXPECT_FALSE(c.valid());
  EXPECT_THAT(std::string(ctx.status().message()), HasSubstr("matmul"));
  EXPECT_TRUE(ctx.graphs().empty());
  EXPECT_FALSE(ctx.Materialize(a).ok());
  EXPECT_FALSE(ctx.Item(a).ok());
}

TEST(Lazy, ItemNeedsOneElement) {
  LazyContext ctx;
  Value a = ctx.Tensor(*Tensor::Zeros(ir::DType::kF64, {2}));
  absl::StatusOr<double> v = ctx.Item(Exp(a));
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(std::string(v.status().message()), HasSubstr("2 elements"));
}

}  // namespace
}  // namespace graphjit::compiler
