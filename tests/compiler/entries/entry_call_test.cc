// The one call path (compiler/entries/entry_call.h): JitFunction::Run borrows an idle
// call of the cache and JitCall keeps its own, so both must let go of code the cache no
// longer serves, and a JitCall's positional lookup must find the entry Run's would.
#include "compiler/entries/entry_call.h"

#include <random>

#include "compiler/jit.h"
#include "compiler/jit_call.h"
#include "frontend/ops.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/random_init.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using runtime::TensorMap;
using ::testing::HasSubstr;

std::vector<frontend::Value> Scale(frontend::Context& ctx) {
  return {frontend::Tanh(frontend::Matmul(ctx.Input("rows"), ctx.Param("w"))) + ctx.Input("b")};
}

TensorMap Weights() {
  std::mt19937_64 rng(5);
  return {{"w", models::RandomNormal(ir::DType::kF64, {4, 4}, rng)}};
}

TensorMap Inputs(int64_t n) {
  std::mt19937_64 rng(static_cast<uint64_t>(n));
  return {{"rows", models::RandomNormal(ir::DType::kF64, {n, 4}, rng)},
          {"b", models::RandomNormal(ir::DType::kF64, {4}, rng)}};
}

JitOptions Exact(int64_t capacity) {
  JitOptions o;
  o.policy = entries::ShapePolicy::kExact;
  o.log = {};
  o.capacity = capacity;
  o.store = std::make_shared<GraphStore>();
  return o;
}

TEST(EntryCall, AnIdleCallOfRunLetsGoOfTheCodeOfAnEvictedEntry) {
  auto fn = Jit("scale", Scale, Weights(), Exact(/*capacity=*/1));
  ASSERT_TRUE(fn.ok());
  // Run leaves an idle call behind whose frame runs the n = 3 entry's code.
  ASSERT_TRUE((*fn)->Run(Inputs(3)).ok());
  std::weak_ptr<const CompiledGraph> code;
  {
    absl::StatusOr<std::shared_ptr<const entries::CacheEntry>> entry = (*fn)->Acquire(Inputs(3));
    ASSERT_TRUE(entry.ok());
    code = (*entry)->code();
  }
  EXPECT_FALSE(code.expired());
  // A lookup (not a Run: no call is borrowed) evicts the entry; the idle call lets go.
  ASSERT_TRUE((*fn)->Acquire(Inputs(5)).ok());
  EXPECT_EQ((*fn)->stats().evictions, 1);
  EXPECT_TRUE(code.expired());
  // Run still answers for both shapes, recompiling the evicted one.
  absl::StatusOr<std::vector<Tensor>> again = (*fn)->Run(Inputs(3));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[0].shape(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ((*fn)->stats().compiles, 3);
}

TEST(EntryCall, RunReturnsFreshOutputsEachCall) {
  auto fn = Jit("scale", Scale, Weights(), Exact(0));
  ASSERT_TRUE(fn.ok());
  absl::StatusOr<std::vector<Tensor>> first = (*fn)->Run(Inputs(3));
  absl::StatusOr<std::vector<Tensor>> second = (*fn)->Run(Inputs(4));
  absl::StatusOr<std::vector<Tensor>> third = (*fn)->Run(Inputs(3));
  ASSERT_TRUE(first.ok() && second.ok() && third.ok());
  // The idle call's frame is reused, but results already handed out are never written.
  EXPECT_NE((*first)[0].raw_data(), (*third)[0].raw_data());
  EXPECT_EQ((*first)[0].ToDoubles(), (*third)[0].ToDoubles());
  EXPECT_EQ((*second)[0].shape(), (std::vector<int64_t>{4, 4}));
}

TEST(JitCall, AcquireByPositionFindsTheEntryRunWould) {
  auto fn = Jit("scale", Scale, Weights(), Exact(0));
  ASSERT_TRUE(fn.ok());
  JitCall call(fn->get(), {"b", "rows"});
  for (int64_t n : {2, 3, 2, 3}) {
    const TensorMap in = Inputs(n);
    absl::StatusOr<std::shared_ptr<const entries::CacheEntry>> by_position =
        call.Acquire({in.at("b"), in.at("rows")});
    absl::StatusOr<std::shared_ptr<const entries::CacheEntry>> by_name = (*fn)->Acquire(in);
    ASSERT_TRUE(by_position.ok() && by_name.ok()) << n;
    EXPECT_EQ(by_position->get(), by_name->get()) << n;
  }
  const entries::CacheStats stats = (*fn)->stats();
  EXPECT_EQ(stats.calls, 8);
  EXPECT_EQ(stats.compiles, 2);
  EXPECT_EQ(stats.hits, 6);

  const TensorMap in = Inputs(2);
  absl::StatusOr<std::shared_ptr<const entries::CacheEntry>> short_call =
      call.Acquire({in.at("b")});
  EXPECT_EQ(short_call.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(short_call.status().message(), HasSubstr("expected 2 inputs (b, rows), got 1"));
  // A new rank is a new signature, found by name, as Run finds it.
  absl::StatusOr<Tensor> flat = Tensor::Zeros(ir::DType::kF64, {4, 4, 1});
  ASSERT_TRUE(flat.ok());
  absl::StatusOr<std::shared_ptr<const entries::CacheEntry>> other =
      call.Acquire({in.at("b"), *flat});
  EXPECT_FALSE(other.ok());  // the function's matmul refuses rank 3 at trace time
  EXPECT_EQ((*fn)->num_signatures(), 2);
}

}  // namespace
}  // namespace graphjit::compiler
