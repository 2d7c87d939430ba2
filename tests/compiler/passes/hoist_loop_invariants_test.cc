#include "compiler/passes/hoist_loop_invariants.h"

#include "gtest/gtest.h"
#include "pass_test_util.h"

namespace graphjit::compiler {
namespace {

using testing::RunPassOnText;

// The body scales x by w * 2 (invariant: w is an invariant operand, 2 a constant) and
// adds the transposed weight's row sums (a param): both computed once before the loop.
TEST(HoistLoopInvariants, MovesWhatTheInvariantsAloneComputeOutOfTheLoop) {
  absl::StatusOr<std::string> out = RunPassOnText("hoist_loop_invariants", R"(graph g {
  %0 = input {name="x"} : f32[4]
  %1 = input {name="w"} : f32[4]
  %2 = param {name="m"} : f32[4, 4]
  %3 = while(%0, %1) {carried=1, max_trips=3} : f32[4]
    region graph cond {
      %0 = input {name="x"} : f32[4]
      %1 = input {name="w"} : f32[4]
      %2 = full {value=1.0} : bool[]
      return %2
    }
    region graph body {
      %0 = input {name="x"} : f32[4]
      %1 = input {name="w"} : f32[4]
      %2 = constant {value=[2.0]} : f32[]
      %3 = mul(%1, %2) : f32[4]
      %4 = mul(%0, %3) : f32[4]
      %5 = param {name="m"} : f32[4, 4]
      %6 = transpose(%5) {perm=[1, 0]} : f32[4, 4]
      %7 = reduce_sum(%6) {axis=1, keepdim=false} : f32[4]
      %8 = add(%4, %7) : f32[4]
      return %8
    }
  return %3
})");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"(graph g {
  %0 = input {name="x"} : f32[4]
  %1 = input {name="w"} : f32[4]
  %2 = param {name="m"} : f32[4, 4]
  %3 = constant {value=[2.0]} : f32[]
  %4 = mul(%1, %3) : f32[4]
  %5 = transpose(%2) {perm=[1, 0]} : f32[4, 4]
  %6 = reduce_sum(%5) {axis=1, keepdim=false} : f32[4]
  %7 = while(%0, %1, %4, %6) {carried=1, max_trips=3} : f32[4]
    region graph cond {
      %0 = input {name="x"} : f32[4]
      %1 = input {name="w"} : f32[4]
      %2 = input {name="h0"} : f32[4]
      %3 = input {name="h1"} : f32[4]
      %4 = full {value=1.0} : bool[]
      return %4
    }
    region graph body {
      %0 = input {name="x"} : f32[4]
      %1 = input {name="w"} : f32[4]
      %2 = input {name="h0"} : f32[4]
      %3 = input {name="h1"} : f32[4]
      %4 = mul(%0, %2) : f32[4]
      %5 = add(%4, %3) : f32[4]
      return %5
    }
  return %7
}
)");
}

// Must not fire: what reads a carried value, a gather that could fail on a loop of no
// trips, and a graph without loops.
TEST(HoistLoopInvariants, KeepsWhatDependsOnTheCarriedValuesOrMayFail) {
  const std::string text = R"(graph g {
  %0 = input {name="x"} : f32[4]
  %1 = input {name="rows"} : f32[8, 4]
  %2 = input {name="ids"} : i64[2]
  %3 = while(%0, %1, %2) {carried=1, max_trips=2} : f32[4]
    region graph cond {
      %0 = input {name="x"} : f32[4]
      %1 = input {name="rows"} : f32[8, 4]
      %2 = input {name="ids"} : i64[2]
      %3 = reduce_sum(%0) {axis=0, keepdim=false} : f32[]
      %4 = constant {value=[100.0]} : f32[]
      %5 = lt(%3, %4) : bool[]
      return %5
    }
    region graph body {
      %0 = input {name="x"} : f32[4]
      %1 = input {name="rows"} : f32[8, 4]
      %2 = input {name="ids"} : i64[2]
      %3 = gather(%1, %2) : f32[2, 4]
      %4 = reduce_sum(%3) {axis=0, keepdim=false} : f32[4]
      %5 = add(%0, %4) : f32[4]
      return %5
    }
  return %3
}
)";
  bool changed = true;
  absl::StatusOr<std::string> out = RunPassOnText("hoist_loop_invariants", text, nullptr, &changed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(changed);
  EXPECT_EQ(*out, text);
  out = RunPassOnText("hoist_loop_invariants", R"(graph g {
  %0 = input {name="x"} : f32[4]
  %1 = exp(%0) : f32[4]
  return %1
})",
                      nullptr, &changed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace graphjit::compiler
