// Tests of SymExpr parsing: infix input, the parse-print round trip, parsing inside a
// longer text, and malformed and hostile input failing cleanly with InvalidArgument.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/sym_expr.h"
#include "tests/ir/sym_expr_test_util.h"

namespace graphjit::ir::sym_expr_testutil {
namespace {

using ::testing::HasSubstr;

TEST(SymExprTest, ParsesInfixInput) {
  EXPECT_EQ(Parse("S + 1 - 1"), S);
  EXPECT_EQ(Parse("2*S/2"), S);
  EXPECT_EQ(Parse("(2 * S + 1) / 2"), S);
  EXPECT_EQ(Parse("S*T"), Parse("T*S"));
  EXPECT_EQ(Parse("(S+1)*(S-1)"), S * S - 1);
  EXPECT_EQ(Parse("(4*S+3)%4"), SymExpr(3));
  EXPECT_EQ(Parse("max(S, T)"), Parse("max(T,S)"));
  EXPECT_EQ(Parse("min( S , S + 2 )"), S);
  EXPECT_EQ(Parse("--S"), S);
  EXPECT_EQ(Parse("-S"), -S);
  EXPECT_EQ(Parse("2*-S"), -2 * S);
  EXPECT_EQ(Parse("7 - 2 - 1"), SymExpr(4));  // left associative
  EXPECT_EQ(Parse("12/3/2"), SymExpr(2));
  EXPECT_EQ(Parse("1+2*3"), SymExpr(7));
  EXPECT_EQ(Parse("\tS_1 +x2"), SymExpr::Symbol("S_1") + SymExpr::Symbol("x2"));
  EXPECT_EQ(Parse("max"), SymExpr::Symbol("max"));  // only `max(` is the function
  EXPECT_EQ(Parse("9223372036854775807"), SymExpr(std::numeric_limits<int64_t>::max()));
}

TEST(SymExprTest, ParsePrintRoundTrip) {
  const std::vector<std::string> texts = {"0",
                                          "-3",
                                          "S",
                                          "S+1",
                                          "-S+1",
                                          "2*S+1",
                                          "S*T",
                                          "S*S*T-2",
                                          "(S+1)/2",
                                          "S/2",
                                          "(S-1)/2",
                                          "S%4",
                                          "(S+T)%3",
                                          "2*(S/3)",
                                          "-(S/2)",
                                          "S*(T/2)",
                                          "max(S, T)",
                                          "min(S, 4)",
                                          "max(S, 4)+1",
                                          "2*max(S, T+1)",
                                          "S/T",
                                          "S%(T+1)",
                                          "(-3)/S",
                                          "S/(-2)",
                                          "max(S/2, T%3)",
                                          "(S/2)/3",
                                          "((S+1)/2)%5",
                                          "S*T/(P+1)",
                                          "min(max(S, T), P)",
                                          "S-T-P+7",
                                          "(2*S)/3",
                                          "-(S%3)*T",
                                          "max(-S, -T)",
                                          "(S*S+1)/(T*T+1)"};
  for (const std::string& text : texts) {
    SymExpr e = Parse(text);
    absl::StatusOr<SymExpr> again = ParseSymExpr(e.ToString());
    ASSERT_TRUE(again.ok()) << text << " printed as " << e.ToString() << ": " << again.status();
    EXPECT_EQ(*again, e) << text << " printed as " << e.ToString();
    EXPECT_EQ(again->ToString(), e.ToString());
  }
}

TEST(SymExprTest, ParseSymExprAtStopsAtTheEndOfTheExpression) {
  std::string text = "[2*S+1, T]";
  size_t pos = 1;
  absl::StatusOr<SymExpr> e = ParseSymExprAt(text, &pos);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(*e, 2 * S + 1);
  EXPECT_EQ(text[pos], ',');
  pos += 1;
  e = ParseSymExprAt(text, &pos);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(*e, T);
  EXPECT_EQ(text[pos], ']');

  // On error the position is left alone and the message carries an offset.
  pos = 0;
  absl::StatusOr<SymExpr> bad = ParseSymExprAt("S+]", &pos);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(pos, 0u);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("offset 2"));
}

TEST(SymExprTest, ParseErrorsAreInvalidArgument) {
  const std::vector<std::string> bad = {"",
                                        " ",
                                        "S+",
                                        "max(S",
                                        "max(S,)",
                                        "min(S, T",
                                        ")",
                                        "(S",
                                        "S)",
                                        "S S",
                                        "2*",
                                        "S/0",
                                        "S%0",
                                        "S/(1-1)",
                                        "@",
                                        "S+@",
                                        "max(S T)",
                                        "99999999999999999999",
                                        "9223372036854775808",
                                        "1 2",
                                        "S/",
                                        "*S",
                                        "S,",
                                        std::string("S\0T", 3)};
  for (const std::string& text : bad) {
    absl::StatusOr<SymExpr> e = ParseSymExpr(text);
    EXPECT_FALSE(e.ok()) << "'" << text << "' parsed as " << e->ToString();
    if (!e.ok()) {
      EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument) << text;
    }
  }
  EXPECT_THAT(std::string(ParseSymExpr("S/0").status().message()), HasSubstr("division by zero"));
  EXPECT_THAT(std::string(ParseSymExpr("99999999999999999999").status().message()),
              HasSubstr("too large"));
  EXPECT_THAT(std::string(ParseSymExpr("max(S").status().message()), HasSubstr("','"));
}

TEST(SymExprTest, HostileInputFailsCleanly) {
  // Deep nesting of every kind must be an error (or a value), never a stack overflow.
  std::string parens = std::string(100000, '(') + "S" + std::string(100000, ')');
  EXPECT_FALSE(ParseSymExpr(parens).ok());
  std::string minuses = std::string(100000, '-') + "S";
  EXPECT_FALSE(ParseSymExpr(minuses).ok());
  std::string maxes;
  for (int i = 0; i < 5000; ++i) maxes += "max(S, ";
  maxes += "T" + std::string(5000, ')');
  EXPECT_FALSE(ParseSymExpr(maxes).ok());
  // A chain of divisions nests one atom inside the next, as deeply as parentheses do.
  std::string divs = "S";
  for (int i = 0; i < 100000; ++i) divs += "/2";
  EXPECT_FALSE(ParseSymExpr(divs).ok());
  std::string mods = "S";
  for (int i = 0; i < 100000; ++i) mods += "%3";
  EXPECT_FALSE(ParseSymExpr(mods).ok());
  EXPECT_THAT(std::string(ParseSymExpr(divs).status().message()), HasSubstr("nested"));
  // Products of sums multiply out; exponential growth must be cut off, not attempted.
  std::string sum = "(A+B+C+D+E+F+G+H+I+J)";
  std::string power = sum;
  for (int i = 0; i < 30; ++i) power += "*" + sum;
  absl::StatusOr<SymExpr> big = ParseSymExpr(power);
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(std::string(big.status().message()), HasSubstr("too large"));
  std::string product = "S";
  for (int i = 0; i < 100000; ++i) product += "*S";
  EXPECT_FALSE(ParseSymExpr(product).ok());
  std::string many_terms = "X0";
  for (int i = 1; i < 100000; ++i) absl::StrAppend(&many_terms, "+X", i);
  EXPECT_FALSE(ParseSymExpr(many_terms).ok());
  // Moderate nesting is fine.
  std::string ok = "S";
  for (int i = 0; i < 50; ++i) ok = absl::StrCat("(", ok, ")/2");
  absl::StatusOr<SymExpr> e = ParseSymExpr(ok);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(Eval(*e, {{"S", int64_t{1} << 60}}), int64_t{1} << 10);
  // Constant folding of INT64_MIN / -1 must not trap (x86 idiv faults on it); the
  // quotient does not fit in int64, so the dim is an overflow error (issue 16).
  absl::StatusOr<SymExpr> min_div = ParseSymExpr("(-9223372036854775807-1)/(-1)");
  ASSERT_FALSE(min_div.ok());
  EXPECT_THAT(std::string(min_div.status().message()), HasSubstr("overflows int64"));
  EXPECT_EQ(Parse("(-9223372036854775807-1)%(-1)"), SymExpr(0));
}

}  // namespace
}  // namespace graphjit::ir::sym_expr_testutil
