// Tiered compilation: a miss is served at once by the interpreter while the code compiles
// in the background; results match the untiered cache; the background queue is bounded.
#include <chrono>
#include <thread>

#include "cache_test_util.h"
#include "compiler/jit.h"
#include "gtest/gtest.h"
#include "models/jit_model.h"

namespace graphjit::compiler::cache {
namespace {

using runtime::Tensor;
using testutil::DecodeInputs;

JitOptions Tiered(ShapePolicy policy, int queue = 4) {
  JitOptions o;
  o.policy = policy;
  o.log = {};
  o.tiered = true;
  o.tier_queue = queue;
  o.store = std::make_shared<CodeStore>();
  return o;
}

// Polls until the background thread has nothing left (bounded: a broken queue fails).
void WaitForBackground(const JitFunction& fn, int64_t expected) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (fn.stats().background_compiles + fn.stats().dropped_compiles < expected &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

TEST(Tiered, MissesAreInterpretedThenCompiledWithTheSameResults) {
  auto model = testutil::SmallDecode();
  JitOptions plain = Tiered(ShapePolicy::kSymbolic);
  plain.tiered = false;
  auto reference = *models::JitModel(*model, plain);
  auto tiered = *models::JitModel(*model, Tiered(ShapePolicy::kSymbolic));
  auto check = [&](int64_t S) {
    std::vector<Tensor> want = *reference->Run(DecodeInputs(*model, S), {{"P", S - 1}});
    absl::StatusOr<std::vector<Tensor>> got = tiered->Run(DecodeInputs(*model, S), {{"P", S - 1}});
    ASSERT_TRUE(got.ok()) << got.status();
    for (int i = 0; i < 3; ++i) EXPECT_LT(runtime::MaxAbsDiff((*got)[i], want[i]), 1e-12) << i;
  };
  check(5);  // a miss: interpreted
  EXPECT_EQ(tiered->stats().interpreted, 1);
  WaitForBackground(*tiered, 1);
  EXPECT_EQ(tiered->stats().background_compiles, 1);
  EXPECT_EQ(tiered->stats().compiles, 1);
  const int64_t interpreted = tiered->stats().interpreted;
  for (int64_t S : {6, 9, 17}) check(S);  // the same symbolic entry, now compiled
  EXPECT_EQ(tiered->stats().interpreted, interpreted);
  EXPECT_EQ(tiered->stats().hits, 3);
  // Acquire wants code: it gets an entry whose code is installed.
  auto entry = tiered->Acquire(DecodeInputs(*model, 1));  // S=1: a new entry
  ASSERT_TRUE(entry.ok()) << entry.status();
  EXPECT_NE((*entry)->code(), nullptr);
}

TEST(Tiered, TheBackgroundQueueIsBoundedAndDropsWhatNobodyAsksForAgain) {
  auto model = testutil::SmallDecode();
  auto fn = *models::JitModel(*model, Tiered(ShapePolicy::kExact, /*queue=*/2));
  // Twenty new lengths in a row, each asked for once: far more than the queue holds.
  for (int64_t S = 2; S < 22; ++S) {
    absl::StatusOr<std::vector<Tensor>> out = fn->Run(DecodeInputs(*model, S), {{"P", S - 1}});
    ASSERT_TRUE(out.ok()) << out.status();
  }
  WaitForBackground(*fn, 20);
  CacheStats s = fn->stats();
  EXPECT_EQ(s.interpreted, 20);
  EXPECT_GT(s.dropped_compiles, 0);
  EXPECT_EQ(s.background_compiles + s.dropped_compiles, 20);
  EXPECT_LT(s.compiles, 20);  // the dropped ones never compiled
  // Every call was answered without waiting for a compile: the worst stall is a trace.
  EXPECT_EQ(s.compiles, s.background_compiles);
}

}  // namespace
}  // namespace graphjit::compiler::cache
