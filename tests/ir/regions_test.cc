// Regions (ir/regions.h) in the textual IR: a while prints and parses back to the same
// text, and every broken signature - a carried value whose shape changes, a cond that is
// not a bool scalar, regions that do not take the operands, a loop_result naming no
// carried value, regions nested past the limit - is an InvalidArgument naming it.
#include "ir/regions.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"

namespace graphjit::ir {
namespace {

using ::testing::HasSubstr;

constexpr absl::string_view kLoop = R"(graph loop {
  %0 = input {name="x"} : f32[N, 4]
  %1 = param {name="w"} : f32[4, 4]
  %2 = full {value=0.0} : i64[]
  %3 = while(%0, %2, %1) {carried=2} : f32[N, 4]
    region graph cond {
      %0 = input {name="y"} : f32[N, 4]
      %1 = input {name="n"} : i64[]
      %2 = input {name="w"} : f32[4, 4]
      %3 = constant {value=[10.0]} : i64[]
      %4 = lt(%1, %3) : bool[]
      return %4
    }
    region graph body {
      %0 = input {name="y"} : f32[N, 4]
      %1 = input {name="n"} : i64[]
      %2 = input {name="w"} : f32[4, 4]
      %3 = matmul(%0, %2) : f32[N, 4]
      %4 = tanh(%3) : f32[N, 4]
      %5 = constant {value=[1.0]} : i64[]
      %6 = add(%1, %5) : i64[]
      return %4, %6
    }
  %4 = loop_result(%3, %2) {index=1} : i64[]
  return %3, %4
}
)";

absl::Status ParseError(const std::string& text) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  return g.ok() ? absl::OkStatus() : g.status();
}

std::string Replace(std::string text, absl::string_view from, absl::string_view to) {
  const size_t at = text.find(std::string(from));
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), std::string(to));
  return text;
}

TEST(RegionsTest, AWhilePrintsAsItParses) {
  absl::StatusOr<Graph> g = ParseGraph(kLoop);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(PrintGraph(*g), kLoop);
  EXPECT_EQ(g->node(3).regions.size(), 2u);
  EXPECT_TRUE(g->HasRegions());
  EXPECT_EQ(g->Symbols(), std::set<std::string>{"N"});
}

TEST(RegionsTest, ACarriedValueKeepsItsShape) {
  const std::string text = Replace(Replace(std::string(kLoop), "%3 = matmul(%0, %2) : f32[N, 4]",
                                           "%3 = slice(%0) {axis=0, start=1, end=N} : f32[N-1, 4]"),
                                   "%4 = tanh(%3) : f32[N, 4]", "%4 = tanh(%3) : f32[N-1, 4]");
  absl::Status s = ParseError(text);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("region body returns f32[N-1, 4] for carried value 0"));
}

TEST(RegionsTest, TheCondReturnsOneBoolScalar) {
  absl::Status s = ParseError(Replace(std::string(kLoop), "return %4\n", "return %1\n"));
  EXPECT_THAT(s.message(), HasSubstr("region cond must return one bool[] value, returns i64[]"));
}

TEST(RegionsTest, RegionsTakeTheOperands) {
  absl::Status s = ParseError(
      Replace(std::string(kLoop), "      %2 = input {name=\"w\"} : f32[4, 4]\n      %3 = constant",
              "      %2 = input {name=\"w\"} : f32[4, 5]\n      %3 = constant"));
  EXPECT_THAT(s.message(), HasSubstr("region cond input 2 'w' is f32[4, 5], but operand 2 is"));
  s = ParseError(Replace(std::string(kLoop), "{carried=2}", "{carried=4}"));
  EXPECT_THAT(s.message(), HasSubstr("carried=4 must be in [1, 3]"));
  s = ParseError(Replace(std::string(kLoop), "{carried=2}", "{carried=1}"));
  EXPECT_THAT(s.message(), HasSubstr("region body returns 2 values, expected 1"));
}

TEST(RegionsTest, ALoopResultNamesACarriedValue) {
  absl::Status s = ParseError(Replace(std::string(kLoop), "loop_result(%3, %2) {index=1} : i64[]",
                                      "loop_result(%3, %1) {index=2} : f32[4, 4]"));
  EXPECT_THAT(s.message(), HasSubstr("does not name a carried value of while %3"));
  s = ParseError(Replace(std::string(kLoop), "loop_result(%3, %2) {index=1} : i64[]",
                         "loop_result(%0, %2) {index=1} : i64[]"));
  EXPECT_THAT(s.message(), HasSubstr("expected a while"));
}

TEST(RegionsTest, AWhileWithoutRegionsIsRefused) {
  absl::Status s = ParseError(R"(graph g {
  %0 = input {name="x"} : f32[4]
  %1 = while(%0) {carried=1} : f32[4]
  return %1
})");
  EXPECT_THAT(s.message(), HasSubstr("while: has 0 regions, expected 2"));
}

constexpr absl::string_view kIf = R"(graph branch {
  %0 = input {name="x"} : f32[N]
  %1 = input {name="p"} : bool[]
  %2 = if(%1, %0) {dtype=f32, shape=[N]} : f32[N]
    region graph then {
      %0 = input {name="x"} : f32[N]
      %1 = exp(%0) : f32[N]
      return %1
    }
    region graph else {
      %0 = input {name="x"} : f32[N]
      return %0
    }
  return %2
}
)";

TEST(RegionsTest, AnIfPrintsAsItParsesAndChecksItsBranches) {
  absl::StatusOr<Graph> g = ParseGraph(kIf);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(PrintGraph(*g), kIf);
  absl::Status s = ParseError(Replace(std::string(kIf), "      return %0\n    }\n  return",
                                      "      %1 = reduce_sum(%0) {axis=0, keepdim=true} : f32[1]\n "
                                      "     return %1\n    }\n  return"));
  EXPECT_THAT(s.message(), HasSubstr("if: region else must return one f32[N], returns f32[1]"));
  s = ParseError(Replace(std::string(kIf), "if(%1, %0)", "if(%0, %0)"));
  EXPECT_THAT(s.message(), HasSubstr("the condition must be bool[], got f32[N]"));
  s = ParseError(Replace(
      std::string(kIf),
      "region graph then {\n      %0 = input {name=\"x\"} : f32[N]\n      %1 = exp(%0) : f32[N]",
      "region graph then {\n      %0 = input {name=\"x\"} : f64[N]\n      %1 = exp(%0) : f64[N]"));
  EXPECT_THAT(s.message(),
              HasSubstr("if: region then input 0 'x' is f64[N], but operand 1 is f32[N]"));
}

constexpr absl::string_view kScan = R"(graph sums {
  %0 = input {name="xs"} : f32[T, 3]
  %1 = full {value=0.0} : f32[3]
  %2 = scan(%1, %0) {carried=1, scanned=1} : f32[3]
    region graph body {
      %0 = input {name="acc"} : f32[3]
      %1 = input {name="x"} : f32[3]
      %2 = add(%0, %1) : f32[3]
      %3 = mul(%2, %2) : f32[3]
      return %2, %3
    }
  %3 = scan_output(%2) {dtype=f32, index=0, shape=[T, 3]} : f32[T, 3]
  return %2, %3
}
)";

TEST(RegionsTest, AScanPrintsAsItParsesAndChecksItsRows) {
  absl::StatusOr<Graph> g = ParseGraph(kScan);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(PrintGraph(*g), kScan);
  absl::Status s =
      ParseError(Replace(std::string(kScan), "shape=[T, 3]} : f32[T, 3]", "shape=[3]} : f32[3]"));
  EXPECT_THAT(s.message(), HasSubstr("declares f32[3], but the stacked value is f32[T, 3]"));
  s = ParseError(Replace(std::string(kScan), "{dtype=f32, index=0,", "{dtype=f32, index=1,"));
  EXPECT_THAT(s.message(), HasSubstr("index=1, but scan %2 has 1 per-row values"));
  s = ParseError(Replace(std::string(kScan), "%0 = input {name=\"xs\"} : f32[T, 3]",
                         "%0 = input {name=\"xs\"} : f32[T, 4]"));
  EXPECT_THAT(s.message(), HasSubstr("region body input 1 'x' is f32[3], but operand 1 is f32[4]"));
}

// A while whose body is a while whose body ... `depth` deep.
std::string Nested(int depth) {
  std::string inner = "%0 = input {name=\"x\"} : f32[4]\n return %0";
  for (int d = 0; d < depth; ++d) {
    inner = absl::StrCat(
        "%0 = input {name=\"x\"} : f32[4]\n %1 = while(%0) {carried=1, max_trips=1} : f32[4]\n",
        " region graph cond { %0 = input {name=\"x\"} : f32[4]\n %1 = full {value=1.0} : "
        "bool[]\n return %1 }\n",
        " region graph body { ", inner, " }\n return %1");
  }
  return absl::StrCat("graph g { ", inner, " }");
}

TEST(RegionsTest, RegionsNestOnlySoDeep) {
  EXPECT_TRUE(ParseGraph(Nested(kMaxRegionDepth - 1)).ok())
      << ParseError(Nested(kMaxRegionDepth - 1));
  absl::Status s = ParseError(Nested(kMaxRegionDepth));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("regions nest deeper than"));
  // Far past the limit: refused at the limit, no recursion to the end.
  EXPECT_THAT(ParseError(Nested(200)).message(), HasSubstr("regions nest deeper than"));
}

}  // namespace
}  // namespace graphjit::ir
