// Tiered compilation: a miss is served at once by the interpreter while the code compiles
// in the background; results match the untiered cache; the background queue is bounded.
#include <atomic>
#include <chrono>
#include <thread>
#include <utility>

#include "absl/functional/function_ref.h"
#include "cache_test_util.h"
#include "compiler/jit.h"
#include "compiler/jit_call.h"
#include "gtest/gtest.h"
#include "models/jit_model.h"

namespace graphjit::compiler::entries {
namespace {

using runtime::Tensor;
using testutil::DecodeInputs;

JitOptions Tiered(ShapePolicy policy, int queue = 4) {
  JitOptions o;
  o.policy = policy;
  o.log = {};
  o.tiered = true;
  o.tier_queue = queue;
  o.store = std::make_shared<GraphStore>();
  return o;
}

// Polls until `count` of the stats reaches `expected` (bounded: a broken background
// thread fails the expectations that follow, not the test's time limit).
void WaitForStats(const JitFunction& fn, absl::FunctionRef<int64_t(const CacheStats&)> count,
                  int64_t expected) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (count(fn.stats()) < expected && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Polls until the background thread has nothing left.
void WaitForBackground(const JitFunction& fn, int64_t expected) {
  WaitForStats(
      fn, [](const CacheStats& s) { return s.background_compiles + s.dropped_compiles; }, expected);
}

// An O2-only cache's options, and the same cache compiling at the baseline tier and
// reoptimizing entries after `after` calls.
std::pair<JitOptions, JitOptions> O2AndReoptimizing(ShapePolicy policy, int after) {
  JitOptions o2 = Tiered(policy);
  o2.tiered = false;
  JitOptions options = o2;
  options.compile.codegen.tier = CodeTier::kBaseline;
  options.reoptimize_after = after;
  return {o2, options};
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

// Reoptimization: baseline code serves an entry's first calls; after reoptimize_after of
// them its O2 code is compiled in the background and replaces it, for Run and for a
// JitCall's kept frame alike, with results that still match the O2-only cache.
TEST(Reoptimize, HotBaselineEntriesGetO2Code) {
  auto model = testutil::SmallDecode();
  auto [o2, options] = O2AndReoptimizing(ShapePolicy::kSymbolic, 3);
  // Both tiers are timed before the swap; here O2 is made to look faster, so the test
  // does not depend on which one this machine runs faster.
  std::atomic<double> measured_baseline{0}, measured_o2{0};
  options.measured_tiers = [&](double* baseline_seconds, double* o2_seconds) {
    measured_baseline = *baseline_seconds;
    measured_o2 = *o2_seconds;
    *o2_seconds = *baseline_seconds / 2;
  };
  auto reference = *models::JitModel(*model, o2);
  auto fn = *models::JitModel(*model, options);
  std::vector<std::string> names;
  for (const auto& [name, t] : DecodeInputs(*model, 4)) names.push_back(name);
  JitCall call(fn.get(), names);
  auto check = [&](int64_t S) {
    std::vector<Tensor> want = *reference->Run(DecodeInputs(*model, S), {{"P", S - 1}});
    runtime::TensorMap in = DecodeInputs(*model, S);
    std::vector<Tensor> positional;
    for (const std::string& name : names) positional.push_back(in.at(name));
    absl::Status s = call.Run(positional, {{"P", S - 1}});
    ASSERT_TRUE(s.ok()) << s;
    for (int i = 0; i < 3; ++i) EXPECT_LT(runtime::MaxAbsDiff(call.outputs()[i], want[i]), 1e-12);
  };
  std::shared_ptr<const CacheEntry> entry = *fn->Acquire(DecodeInputs(*model, 4));
  const CompiledGraph* baseline = entry->code().get();
  EXPECT_EQ(entry->code_version(), 0u);
  for (int64_t S : {4, 4, 4, 4, 5}) check(S);  // the same symbolic entry, past 3 calls
  WaitForStats(*fn, [](const CacheStats& s) { return s.reoptimized + s.failed_compiles; }, 1);
  CacheStats s = fn->stats();
  EXPECT_EQ(s.reoptimized, 1);
  EXPECT_EQ(s.reoptimize_kept, 0);
  EXPECT_EQ(s.failed_compiles, 0);
  // Timed for real, on inputs of the triggering call's dims.
  EXPECT_GT(measured_baseline.load(), 0);
  EXPECT_GT(measured_o2.load(), 0);
  EXPECT_EQ(s.compiles, 1);  // the baseline compile; the O2 one is counted apart
  EXPECT_GT(s.reoptimize_seconds, 0);
  EXPECT_EQ(entry->code_version(), 1u);
  std::shared_ptr<const CacheEntry> again = *fn->Acquire(DecodeInputs(*model, 6));
  EXPECT_EQ(again, entry);
  EXPECT_NE(again->code().get(), baseline);  // the O2 code replaced it
  // The kept frame follows the new code (the same dims as its last call, then others).
  for (int64_t S : {5, 5, 7}) check(S);
  EXPECT_EQ(fn->stats().reoptimized, 1);  // once per entry
}

// O2 code measured no faster than the baseline code is not swapped in: the entry keeps
// its baseline code (and its code version), is not compiled again, and still computes
// what the O2-only cache does.
TEST(Reoptimize, O2CodeThatIsNotFasterIsNotSwappedIn) {
  auto model = testutil::SmallDecode();
  auto [o2, options] = O2AndReoptimizing(ShapePolicy::kExact, 2);
  options.measured_tiers = [](double* baseline_seconds, double* o2_seconds) {
    *o2_seconds = *baseline_seconds;  // a tie is not faster
  };
  auto reference = *models::JitModel(*model, o2);
  auto fn = *models::JitModel(*model, options);
  std::shared_ptr<const CacheEntry> entry = *fn->Acquire(DecodeInputs(*model, 6));
  const CompiledGraph* baseline = entry->code().get();
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(fn->Run(DecodeInputs(*model, 6), {{"P", 5}}).ok());
  WaitForStats(
      *fn,
      [](const CacheStats& s) { return s.reoptimize_kept + s.reoptimized + s.failed_compiles; }, 1);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(fn->Run(DecodeInputs(*model, 6), {{"P", 5}}).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const CacheStats s = fn->stats();
  EXPECT_EQ(s.reoptimize_kept, 1);
  EXPECT_EQ(s.reoptimized, 0);
  EXPECT_EQ(s.failed_compiles, 0);
  EXPECT_EQ(entry->code_version(), 0u);
  EXPECT_EQ(entry->code().get(), baseline);
  std::vector<Tensor> want = *reference->Run(DecodeInputs(*model, 6), {{"P", 5}});
  std::vector<Tensor> got = *fn->Run(DecodeInputs(*model, 6), {{"P", 5}});
  for (int i = 0; i < 3; ++i) EXPECT_LT(runtime::MaxAbsDiff(got[i], want[i]), 1e-12);
}

// Must not fire: O2 caches, and baseline caches without reoptimize_after, keep their code.
TEST(Reoptimize, OnlyBaselineCachesThatAskForIt) {
  auto model = testutil::SmallDecode();
  for (CodeTier tier : {CodeTier::kOptimized, CodeTier::kBaseline}) {
    JitOptions options = Tiered(ShapePolicy::kSymbolic);
    options.tiered = false;
    options.compile.codegen.tier = tier;
    options.reoptimize_after = tier == CodeTier::kOptimized ? 2 : 0;
    auto fn = *models::JitModel(*model, options);
    for (int i = 0; i < 6; ++i) {
      ASSERT_TRUE(fn->Run(DecodeInputs(*model, 5), {{"P", 4}}).ok());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(fn->stats().reoptimized, 0) << CodeTierName(tier);
    EXPECT_EQ((*fn->Acquire(DecodeInputs(*model, 5)))->code_version(), 0u);
  }
}

}  // namespace
}  // namespace graphjit::compiler::entries
