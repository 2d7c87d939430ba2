// The policy study's decode loop (the compile-cache lecture's first demo): the default decode
// layer, prompt 100, 512 steps (S = 101 .. 612), under every policy; the table of
// docs/spec/decode_layer.md.
//
// One test on purpose: ctest runs each test in its own process, and the exact policy's
// 512 real compiles are by far the suite's most expensive part, so they run once and
// every assertion about the loop shares them. The exact run has capacity 4, so the same
// 512 compiles also pin down eviction (bounded entries, results still right).
#include <cstdio>
#include <map>

#include "gtest/gtest.h"
#include "models/jit_model.h"
#include "studies/decode_loop.h"
#include "tests/compiler/entries/cache_test_util.h"

namespace graphjit::studies {
namespace {

using compiler::JitOptions;
using compiler::entries::AllPolicies;
using compiler::entries::CacheStats;
using compiler::entries::PolicyName;
using compiler::entries::ShapePolicy;
namespace testutil = compiler::entries::testutil;

TEST(DecodeLoop512, ReproducesTheSeedsTableUnderEveryPolicy) {
  absl::StatusOr<std::unique_ptr<models::Model>> model = models::CreateModel("decode");
  ASSERT_TRUE(model.ok()) << model.status();
  std::map<ShapePolicy, DecodeLoopResult> runs;
  for (ShapePolicy policy : AllPolicies()) {
    JitOptions options;
    options.policy = policy;
    options.log = {};
    if (policy == ShapePolicy::kExact) options.capacity = 4;
    absl::StatusOr<DecodeLoopResult> r = RunDecodeLoop(**model, options);
    ASSERT_TRUE(r.ok()) << PolicyName(policy) << ": " << r.status();
    double step_total = 0;  // printed for the record only: tests assert no times
    for (double s : r->step_seconds) step_total += s;
    std::printf("%-8s %s run_s=%.3f\n", std::string(PolicyName(policy)).c_str(),
                r->stats.ToString().c_str(), step_total - r->stats.compile_seconds);
    runs[policy] = *std::move(r);
  }

  // sum(101..612) rows are real; the buckets read 269824 (pow2) and 215040 (mult128).
  constexpr int64_t kReal = 182528;
  struct Row {
    ShapePolicy policy;
    int64_t compiles;
    int64_t padded;
    double overhead;  // the lecture's table, rounded to 0.1%
  };
  for (Row row :
       {Row{ShapePolicy::kExact, 512, kReal, 0.0}, Row{ShapePolicy::kPow2, 4, 269824, 0.478},
        Row{ShapePolicy::kMult128, 5, 215040, 0.178}, Row{ShapePolicy::kSymbolic, 1, kReal, 0.0},
        Row{ShapePolicy::kAuto, 2, kReal, 0.0}}) {
    SCOPED_TRACE(PolicyName(row.policy));
    const CacheStats& s = runs[row.policy].stats;
    EXPECT_EQ(s.compiles, row.compiles);
    EXPECT_EQ(s.compiles, testutil::PredictedCompiles(row.policy, 100, 512));
    EXPECT_EQ(s.hits, 512 - row.compiles);
    EXPECT_EQ(s.failed_compiles, 0);
    EXPECT_EQ(s.real_elements, kReal);
    EXPECT_EQ(s.padded_elements, row.padded);
    EXPECT_NEAR(s.padding_overhead(), row.overhead, 0.0005);
    EXPECT_GT(s.compile_seconds, 0);
    // Kernels compile on several threads, so their phases (summed per thread) may add up
    // to more than the wall time of the compiles; each phase is still positive.
    EXPECT_GT(s.phases.optimize, 0);
    EXPECT_GT(s.phases.codegen, 0);

    // Every policy computes exact's outputs, and leaves the same caches behind.
    const DecodeLoopResult& exact = runs[ShapePolicy::kExact];
    const DecodeLoopResult& r = runs[row.policy];
    ASSERT_EQ(r.outputs.size(), 512u);
    double worst = 0;
    for (int t = 0; t < 512; ++t) {
      worst = std::max(worst, runtime::MaxAbsDiff(r.outputs[t], exact.outputs[t]));
    }
    EXPECT_LT(worst, 1e-12);
    EXPECT_LT(runtime::MaxAbsDiff(r.k_cache, exact.k_cache), 1e-12);
    EXPECT_LT(runtime::MaxAbsDiff(r.v_cache, exact.v_cache), 1e-12);
    EXPECT_EQ(r.k_cache.shape(), (std::vector<int64_t>{2, 612, 16}));
  }

  // Eviction under exact with capacity 4: never more than 4 entries, one eviction per
  // compile past the fourth.
  const DecodeLoopResult& exact = runs[ShapePolicy::kExact];
  EXPECT_EQ(exact.stats.evictions, 508);
  EXPECT_EQ(exact.stats.peak_entries, 4);
  for (int64_t live : exact.live_entries) EXPECT_LE(live, 4);
  EXPECT_EQ(runs[ShapePolicy::kAuto].live_entries.back(), 1);  // the exact entry was dropped
}

}  // namespace
}  // namespace graphjit::studies
