#include "compiler/passes/dce.h"

#include "gtest/gtest.h"
#include "pass_test_util.h"

namespace graphjit::compiler {
namespace {

using testing::RunPassOnText;

TEST(Dce, RemovesWhatReachesNoOutputButKeepsInputs) {
  absl::StatusOr<std::string> out = RunPassOnText("dce", R"(graph g {
  %0 = input {name="x"} : f32[3]
  %1 = input {name="unused"} : f32[3]
  %2 = param {name="w"} : f32[3]
  %3 = exp(%0) : f32[3]
  %4 = mul(%0, %2) : f32[3]
  %5 = log(%4) : f32[3]
  return %3
})");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"(graph g {
  %0 = input {name="x"} : f32[3]
  %1 = input {name="unused"} : f32[3]
  %2 = exp(%0) : f32[3]
  return %2
}
)");
}

TEST(Dce, DoesNotFireWhenEverythingIsLive) {
  const std::string text = R"(graph g {
  %0 = input {name="x"} : f32[3]
  %1 = exp(%0) : f32[3]
  return %1, %0
}
)";
  bool changed = true;
  absl::StatusOr<std::string> out = RunPassOnText("dce", text, nullptr, &changed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(changed);
  EXPECT_EQ(*out, text);
}

}  // namespace
}  // namespace graphjit::compiler
