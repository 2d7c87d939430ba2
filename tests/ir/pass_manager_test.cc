// The one pass manager (ir/pass_manager.h) on a toy state: steps run in order and are
// timed and counted, the verifier runs after (only) the steps that changed the state and
// names the step that broke it, print-after takes known names only, errors name the step.
#include "ir/pass_manager.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphjit::ir {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The state: a list of numbers that must stay sorted.
using Numbers = std::vector<int>;

PassManager<Numbers> Manager(std::vector<std::string>* verified) {
  PassManager<Numbers> m({.step = "pass", .list = "the test list", .verifier = "sort check"});
  m.set_verifier([verified](const Numbers& n) {
    verified->push_back(std::to_string(n.size()));
    return std::is_sorted(n.begin(), n.end()) ? absl::OkStatus()
                                              : absl::InvalidArgumentError("not sorted");
  });
  m.set_counter([](const Numbers& n) -> std::vector<int64_t> { return {int64_t(n.size())}; });
  return m;
}

TEST(PassManager, RunsInOrderVerifiesChangedStepsAndCounts) {
  std::vector<std::string> verified;
  PassManager<Numbers> m = Manager(&verified);
  m.Add("append", [](Numbers& n) -> absl::StatusOr<bool> {
    n.push_back(9);
    return true;
  });
  m.Add("look", [](Numbers&) -> absl::StatusOr<bool> { return false; });
  m.Add("append_more", [](Numbers& n) -> absl::StatusOr<bool> {
    n.push_back(10);
    return true;
  });
  std::vector<std::string> printed;
  ASSERT_TRUE(m.SetPrintAfter({"look"}, [&](const std::string& s, const Numbers&) {
                 printed.push_back(s);
               }).ok());
  Numbers n = {1, 2};
  ASSERT_TRUE(m.Run(n).ok());
  EXPECT_THAT(n, ElementsAre(1, 2, 9, 10));
  EXPECT_THAT(verified, ElementsAre("3", "4"));  // not after "look"
  EXPECT_THAT(printed, ElementsAre("look"));
  ASSERT_EQ(m.stats().size(), 3u);
  EXPECT_EQ(m.stats()[0].name, "append");
  EXPECT_THAT(m.stats()[0].before, ElementsAre(2));
  EXPECT_THAT(m.stats()[0].after, ElementsAre(3));
  EXPECT_FALSE(m.stats()[1].changed);
  EXPECT_GE(m.stats()[2].seconds, 0);
  EXPECT_THAT(m.names(), ElementsAre("append", "look", "append_more"));
}

TEST(PassManager, VerifierFailureNamesTheStep) {
  std::vector<std::string> verified;
  PassManager<Numbers> m = Manager(&verified);
  int later = 0;
  m.Add("ok", [](Numbers&) -> absl::StatusOr<bool> { return true; });
  m.Add("unsort", [](Numbers& n) -> absl::StatusOr<bool> {
    n.insert(n.begin(), 100);
    return true;
  });
  m.Add("later", [&later](Numbers&) -> absl::StatusOr<bool> {
    ++later;
    return false;
  });
  Numbers n = {1};
  absl::Status s = m.Run(n);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(s.message(), "sort check failed after pass unsort: not sorted");
  EXPECT_EQ(later, 0);  // nothing runs on a broken state
  // Off, the broken state goes through.
  m.set_verify(false);
  Numbers again = {1};
  EXPECT_TRUE(m.Run(again).ok());
  EXPECT_EQ(later, 1);
}

TEST(PassManager, StepErrorsKeepTheirCodeAndNameTheStep) {
  std::vector<std::string> verified;
  PassManager<Numbers> m = Manager(&verified);
  m.Add("refuse",
        [](Numbers&) -> absl::StatusOr<bool> { return absl::UnimplementedError("no such thing"); });
  Numbers n;
  absl::Status s = m.Run(n);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(s.message(), "pass refuse: no such thing");
  PassManager<Numbers> quiet({.prefix_errors = false});
  quiet.Add("refuse", [](Numbers&) -> absl::StatusOr<bool> {
    return absl::UnimplementedError("no such thing");
  });
  EXPECT_EQ(quiet.Run(n).message(), "no such thing");
}

TEST(PassManager, PrintAfterTakesOnlyKnownSteps) {
  std::vector<std::string> verified;
  PassManager<Numbers> m = Manager(&verified);
  m.Add("a", [](Numbers&) -> absl::StatusOr<bool> { return false; });
  m.Add("b", [](Numbers&) -> absl::StatusOr<bool> { return false; });
  absl::Status s = m.SetPrintAfter({"a", "c"}, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "--print-after: no pass 'c' in the test list (a, b)");
  std::vector<std::string> printed;
  ASSERT_TRUE(m.SetPrintAfter({"*"}, [&](const std::string& st, const Numbers&) {
                 printed.push_back(st);
               }).ok());
  Numbers n;
  ASSERT_TRUE(m.Run(n).ok());
  EXPECT_THAT(printed, ElementsAre("a", "b"));
}

}  // namespace
}  // namespace graphjit::ir
