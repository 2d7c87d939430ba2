#include "compiler/passes/cse.h"

#include "gtest/gtest.h"
#include "pass_test_util.h"

namespace graphjit::compiler {
namespace {

using testing::RunPassOnText;

TEST(Cse, MergesEqualSubgraphsTransitively) {
  bool changed = false;
  absl::StatusOr<std::string> out = RunPassOnText("cse", R"(graph g {
  %0 = input {name="x"} : f64[2, S]
  %1 = exp(%0) : f64[2, S]
  %2 = exp(%0) : f64[2, S]
  %3 = constant {value=[2.0]} : f64[]
  %4 = constant {value=[2.0]} : f64[]
  %5 = mul(%1, %3) : f64[2, S]
  %6 = mul(%2, %4) : f64[2, S]
  %7 = add(%5, %6) : f64[2, S]
  return %7
})",
                                                  nullptr, &changed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(changed);
  EXPECT_EQ(*out, R"(graph g {
  %0 = input {name="x"} : f64[2, S]
  %1 = exp(%0) : f64[2, S]
  %2 = constant {value=[2.0]} : f64[]
  %3 = mul(%1, %2) : f64[2, S]
  %4 = add(%3, %3) : f64[2, S]
  return %4
}
)");
}

TEST(Cse, DoesNotMergeKvWritesAtDifferentPositions) {
  const std::string text = R"(graph g {
  %0 = input {name="cache"} : f64[2, S, 4]
  %1 = input {name="row"} : f64[2, 1, 4]
  %2 = kv_write(%0, %1) {pos=P} : f64[2, S, 4]
  %3 = kv_write(%0, %1) {pos=P+1} : f64[2, S, 4]
  %4 = add(%2, %3) : f64[2, S, 4]
  return %4
}
)";
  bool changed = true;
  absl::StatusOr<std::string> out = RunPassOnText("cse", text, nullptr, &changed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(changed);
  EXPECT_EQ(*out, text);
}

TEST(Cse, DoesNotMergeNodesThatDifferInTypeOrAttributes) {
  const std::string text = R"(graph g {
  %0 = input {name="x"} : f64[4, 8]
  %1 = input {name="y"} : f64[4, 8]
  %2 = reduce_sum(%0) {axis=0, keepdim=false} : f64[8]
  %3 = reduce_sum(%0) {axis=1, keepdim=false} : f64[4]
  %4 = reduce_sum(%1) {axis=0, keepdim=false} : f64[8]
  %5 = reshape(%0) {shape=[32]} : f64[32]
  %6 = reshape(%0) {shape=[2, 16]} : f64[2, 16]
  return %2, %3, %4, %5, %6
}
)";
  absl::StatusOr<std::string> out = RunPassOnText("cse", text);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, text);
}

}  // namespace
}  // namespace graphjit::compiler
