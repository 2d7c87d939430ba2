// Lecture 12's graph-break demo: one seven-op graph per iteration, compiled once, and the
// same loop traced into one unrolled graph.
#include "studies/lazy_demo.h"

#include "gtest/gtest.h"

namespace graphjit::studies {
namespace {

TEST(LazyDemo, EveryIterationIsOneSevenOpGraphCompiledOnce) {
  absl::StatusOr<LazyDemoResult> r = RunLazyDemo();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->iterations, 2);
  EXPECT_LE(r->iterations, 200);
  // One graph per stopping test, plus the final materialization.
  ASSERT_EQ(r->graphs.size(), static_cast<size_t>(r->iterations) + 1);
  for (int i = 0; i < r->iterations; ++i) {
    // matmul, tanh, two subs (the square is written (a - b) * (a - b)), mul, two maxes.
    EXPECT_EQ(r->graphs[i].ops, 7) << i;
  }
  // y_new was computed by the last stopping test's graph: nothing left to run.
  EXPECT_EQ(r->graphs.back().ops, 0);
  // Same structure every iteration (only the data differs): compiled once.
  EXPECT_EQ(r->compiles, 1);
  EXPECT_TRUE(r->graphs[0].compiled);
  EXPECT_FALSE(r->graphs[1].compiled);
  EXPECT_LT(r->max_abs_diff, 1e-14);
  EXPECT_EQ(r->unrolled_ops, 2 * r->iterations);
  EXPECT_LT(r->unrolled_max_abs_diff, 1e-14);
}

}  // namespace
}  // namespace graphjit::studies
