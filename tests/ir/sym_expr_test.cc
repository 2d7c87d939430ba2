// Tests of SymExpr: canonical simplification, printing, parsing, evaluation, and a seeded
// randomized check that simplification never changes an expression's value.
#include "ir/sym_expr.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphjit::ir {

// Lets GoogleTest print SymExprs in failure messages (internal linkage: each test file
// may have its own).
[[maybe_unused]] static void PrintTo(const SymExpr& e, std::ostream* os) { *os << e.ToString(); }

namespace {

using ::testing::HasSubstr;

const SymExpr S = SymExpr::Symbol("S");
const SymExpr T = SymExpr::Symbol("T");
const SymExpr P = SymExpr::Symbol("P");

SymExpr Parse(absl::string_view text) {
  absl::StatusOr<SymExpr> e = ParseSymExpr(text);
  EXPECT_TRUE(e.ok()) << "parsing '" << text << "': " << e.status();
  return e.ok() ? *e : SymExpr(-999999);
}

int64_t Eval(const SymExpr& e, const Bindings& bindings) {
  absl::StatusOr<int64_t> v = e.Evaluate(bindings);
  EXPECT_TRUE(v.ok()) << e.ToString() << ": " << v.status();
  return v.ok() ? *v : -999999;
}

// ---------------------------------------------------------------------------------------
// Canonical simplification.

TEST(SymExprTest, ConstantsAndSymbols) {
  EXPECT_EQ(SymExpr(), SymExpr(0));
  EXPECT_TRUE(SymExpr(7).IsConstant());
  EXPECT_EQ(SymExpr(7).AsConstant(), 7);
  EXPECT_FALSE(S.IsConstant());
  EXPECT_EQ(S.AsConstant(), std::nullopt);
  std::string name;
  EXPECT_TRUE(S.IsSymbol(&name));
  EXPECT_EQ(name, "S");
  EXPECT_FALSE((2 * S).IsSymbol());
  EXPECT_FALSE((S + 1).IsSymbol());
  EXPECT_FALSE(SymExpr(3).IsSymbol());
  EXPECT_NE(S, T);
  EXPECT_NE(S, SymExpr(0));
}

TEST(SymExprTest, AdditiveIdentitiesCancel) {
  EXPECT_EQ(S + 1 - 1, S);
  EXPECT_EQ(S - S, SymExpr(0));
  EXPECT_EQ((S - S).AsConstant(), 0);
  EXPECT_EQ(S + T - S, T);
  EXPECT_EQ(S + S, 2 * S);
  EXPECT_EQ(-(-S), S);
  EXPECT_EQ(S + 0, S);
  EXPECT_EQ(3 + S + 4, S + 7);
}

TEST(SymExprTest, MultiplicationIsCommutativeAndDistributes) {
  EXPECT_EQ(S * T, T * S);
  EXPECT_EQ((S + 1) * (S - 1), S * S - 1);
  EXPECT_EQ((S + T) * 2, 2 * S + 2 * T);
  EXPECT_EQ(S * 1, S);
  EXPECT_EQ(S * 0, SymExpr(0));
  EXPECT_EQ(S * T * S, S * S * T);
  EXPECT_EQ((S + T) * (S + T), S * S + 2 * S * T + T * T);
}

TEST(SymExprTest, FloorDivisionFoldsExactParts) {
  EXPECT_EQ(2 * S / 2, S);
  EXPECT_EQ((2 * S + 1) / 2, S);
  EXPECT_EQ((4 * S + 8) / 4, S + 2);
  EXPECT_EQ((6 * S + 3 * T) / 3, 2 * S + T);
  EXPECT_EQ((2 * S + T) / 2, S + T / 2);
  EXPECT_EQ(S / 1, S);
  EXPECT_EQ(SymExpr(7) / 2, SymExpr(3));
  EXPECT_EQ(SymExpr(-7) / 2, SymExpr(-4));
  EXPECT_EQ(SymExpr(7) / -2, SymExpr(-4));
  EXPECT_EQ(SymExpr(0) / S, SymExpr(0));
  // Not foldable: the division stays an atom.
  EXPECT_FALSE((S / 2).IsConstant());
  EXPECT_NE(S / 2, S);
  EXPECT_NE(2 * (S / 2), S);
  EXPECT_NE((S + 1) / 2, S / 2);
}

TEST(SymExprTest, ModFoldsExactParts) {
  EXPECT_EQ((4 * S + 3) % 4, SymExpr(3));
  EXPECT_EQ((4 * S) % 4, SymExpr(0));
  EXPECT_EQ((4 * S + T) % 4, T % 4);
  EXPECT_EQ(S % 1, SymExpr(0));
  EXPECT_EQ(S % -1, SymExpr(0));
  EXPECT_EQ(SymExpr(7) % 3, SymExpr(1));
  EXPECT_EQ(SymExpr(-7) % 3, SymExpr(2));
  EXPECT_EQ(SymExpr(7) % -3, SymExpr(-2));
  EXPECT_FALSE((S % 4).IsConstant());
}

TEST(SymExprTest, MaxMinFoldConstantDifferences) {
  EXPECT_EQ(SymExpr::Max(S, S + 1), S + 1);
  EXPECT_EQ(SymExpr::Max(S + 3, S - 2), S + 3);
  EXPECT_EQ(SymExpr::Min(S, S + 1), S);
  EXPECT_EQ(SymExpr::Min(S + 3, S - 2), S - 2);
  EXPECT_EQ(SymExpr::Max(S, S), S);
  EXPECT_EQ(SymExpr::Min(S, S), S);
  EXPECT_EQ(SymExpr::Max(3, 5), SymExpr(5));
  EXPECT_EQ(SymExpr::Min(3, 5), SymExpr(3));
  EXPECT_EQ(SymExpr::Max(-3, -5), SymExpr(-3));
  // Commutative, so the operand order does not matter.
  EXPECT_EQ(SymExpr::Max(S, T), SymExpr::Max(T, S));
  EXPECT_EQ(SymExpr::Min(S, T), SymExpr::Min(T, S));
  EXPECT_EQ(SymExpr::Max(S, 4), SymExpr::Max(4, S));
  // Not foldable without knowing S.
  EXPECT_FALSE(SymExpr::Max(S, 4).IsConstant());
  EXPECT_NE(SymExpr::Max(S, T), SymExpr::Min(S, T));
  EXPECT_NE(SymExpr::Max(S, 2 * S), S);
}

// ---------------------------------------------------------------------------------------
// Printing.

TEST(SymExprTest, PrintsCanonicalText) {
  EXPECT_EQ(SymExpr(0).ToString(), "0");
  EXPECT_EQ(SymExpr(-5).ToString(), "-5");
  EXPECT_EQ(S.ToString(), "S");
  EXPECT_EQ((2 * S + 1).ToString(), "2*S+1");
  EXPECT_EQ((1 - S).ToString(), "-S+1");
  EXPECT_EQ((S - 1).ToString(), "S-1");
  EXPECT_EQ((S - T).ToString(), "S-T");
  EXPECT_EQ((T + S).ToString(), "S+T");
  EXPECT_EQ((-2 * S).ToString(), "-2*S");
  EXPECT_EQ((S * T).ToString(), "S*T");
  EXPECT_EQ((S * S).ToString(), "S*S");
  EXPECT_EQ(((S + 1) / 2).ToString(), "(S+1)/2");
  EXPECT_EQ((S / 2).ToString(), "S/2");
  EXPECT_EQ((S % 3).ToString(), "S%3");
  EXPECT_EQ((S / 2 + 1).ToString(), "S/2+1");
  EXPECT_EQ((S / T).ToString(), "S/T");
  EXPECT_EQ((S / (T + 1)).ToString(), "S/(T+1)");
  EXPECT_EQ((S / -2).ToString(), "S/(-2)");
  EXPECT_EQ(SymExpr::Max(S, T).ToString(), "max(S, T)");
  EXPECT_EQ(SymExpr::Min(T + 1, S).ToString(), "min(S, T+1)");
  // A constant operand goes last whichever way round it was given.
  EXPECT_EQ(SymExpr::Max(4, S).ToString(), "max(S, 4)");
  EXPECT_EQ(SymExpr::Min(S, 4).ToString(), "min(S, 4)");
}

TEST(SymExprTest, PrintsDivAtomsInProductsWithParentheses) {
  // `2*S/3` would read back as (2*S)/3, which is a different value.
  EXPECT_EQ((2 * (S / 3)).ToString(), "2*(S/3)");
  EXPECT_EQ((-(S / 2)).ToString(), "-(S/2)");
  EXPECT_EQ((S * (T / 2)).ToString(), "S*(T/2)");
  EXPECT_EQ((3 * (S % 4)).ToString(), "3*(S%4)");
  EXPECT_EQ((2 * S / 3).ToString(), "(2*S)/3");
  EXPECT_EQ((2 * SymExpr::Max(S, T)).ToString(), "2*max(S, T)");
  for (const SymExpr& e : {2 * (S / 3), -(S / 2), S * (T / 2), 3 * (S % 4), 2 * S / 3,
                           (S / 2) * (T % 3) - 1, -(S / 2) * T}) {
    EXPECT_EQ(Parse(e.ToString()), e) << e.ToString();
    for (int64_t s = -7; s <= 7; ++s) {
      EXPECT_EQ(Eval(Parse(e.ToString()), {{"S", s}, {"T", 5}}), Eval(e, {{"S", s}, {"T", 5}}))
          << e.ToString() << " at S=" << s;
    }
  }
}

TEST(SymExprTest, ShapeHelpers) {
  Shape shape = {2, S + 1, 16};
  EXPECT_EQ(ShapeToString(shape), "[2, S+1, 16]");
  EXPECT_EQ(ShapeToString({}), "[]");
  EXPECT_EQ(NumElements(shape), 32 * S + 32);
  EXPECT_EQ(NumElements({}), SymExpr(1));
  absl::StatusOr<std::vector<int64_t>> dims = EvaluateShape(shape, {{"S", 3}});
  ASSERT_TRUE(dims.ok()) << dims.status();
  EXPECT_EQ(*dims, (std::vector<int64_t>{2, 4, 16}));
  EXPECT_FALSE(EvaluateShape(shape, {}).ok());
  EXPECT_EQ(ConstShape({4, 5}), (Shape{4, 5}));
}

// ---------------------------------------------------------------------------------------
// Parsing.

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

// ---------------------------------------------------------------------------------------
// Evaluation, binding, symbols, hashing.

TEST(SymExprTest, EvaluatesWithFloorSemantics) {
  SymExpr div = S / T;
  SymExpr mod = S % T;
  struct Case {
    int64_t s, t, quotient, remainder;  // as Python's // and %
  };
  for (const Case& c : std::vector<Case>{{7, 2, 3, 1},
                                         {-7, 2, -4, 1},
                                         {7, -2, -4, -1},
                                         {-7, -2, 3, -1},
                                         {6, 3, 2, 0},
                                         {-6, 3, -2, 0},
                                         {0, 5, 0, 0},
                                         {-1, 5, -1, 4},
                                         {1, -5, -1, -4}}) {
    Bindings b = {{"S", c.s}, {"T", c.t}};
    EXPECT_EQ(Eval(div, b), c.quotient) << c.s << " // " << c.t;
    EXPECT_EQ(Eval(mod, b), c.remainder) << c.s << " % " << c.t;
  }
  EXPECT_EQ(Eval((S + 1) / 2, {{"S", -4}}), -2);
  EXPECT_EQ(Eval(S % 4, {{"S", -1}}), 3);
  EXPECT_EQ(Eval(2 * S * T - 3, {{"S", 4}, {"T", -5}}), -43);
  EXPECT_EQ(Eval(SymExpr::Max(S, T), {{"S", -4}, {"T", -5}}), -4);
  EXPECT_EQ(Eval(SymExpr::Min(S, T), {{"S", -4}, {"T", -5}}), -5);
  EXPECT_EQ(Eval(SymExpr(42), {}), 42);
  // Bindings for symbols the expression does not mention are ignored.
  EXPECT_EQ(Eval(S + 1, {{"S", 1}, {"Q", 9}}), 2);
}

TEST(SymExprTest, EvaluateErrors) {
  absl::StatusOr<int64_t> v = (S + T).Evaluate({{"S", 1}});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(v.status().message()), HasSubstr("'T'"));

  v = (S / T).Evaluate({{"S", 1}, {"T", 0}});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(v.status().message()), HasSubstr("division by zero"));

  v = (S % (T - 3)).Evaluate({{"S", 1}, {"T", 3}});
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(std::string(v.status().message()), HasSubstr("division by zero"));

  // An unbound symbol inside an atom is reported too.
  v = SymExpr::Max(S, T).Evaluate({{"S", 1}});
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(std::string(v.status().message()), HasSubstr("'T'"));

  // INT64_MIN / -1 does not fit; it must be an error, not a trap.
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_FALSE((S / T).Evaluate({{"S", kMin}, {"T", -1}}).ok());
  absl::StatusOr<int64_t> m = (S % T).Evaluate({{"S", kMin}, {"T", -1}});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(*m, 0);
}

TEST(SymExprTest, EvaluateReportsOverflow) {
  const int64_t big = int64_t{1} << 40;
  absl::StatusOr<int64_t> v = (S * S).Evaluate({{"S", big}});
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(std::string(v.status().message()), HasSubstr("overflow"));
  EXPECT_FALSE((S + T).Evaluate({{"S", std::numeric_limits<int64_t>::max()}, {"T", 1}}).ok());
  EXPECT_FALSE((2 * S).Evaluate({{"S", std::numeric_limits<int64_t>::max() / 2 + 1}}).ok());
  // Values that fit are fine.
  EXPECT_EQ(Eval(S * S, {{"S", int64_t{1} << 31}}), int64_t{1} << 62);
}

TEST(SymExprTest, BindIsPartialEvaluation) {
  SymExpr e = S * T + S / 2 + SymExpr::Max(T, P);
  SymExpr bound = e.Bind({{"S", 4}});
  EXPECT_EQ(bound, 4 * T + 2 + SymExpr::Max(T, P));
  std::set<std::string> symbols;
  bound.CollectSymbols(&symbols);
  EXPECT_EQ(symbols, (std::set<std::string>{"P", "T"}));

  EXPECT_EQ(e.Bind({{"S", 4}, {"T", 3}, {"P", 5}}), SymExpr(19));
  EXPECT_EQ(e.Bind({}), e);
  EXPECT_EQ(e.Bind({{"Q", 1}}), e);
  // Binding can make a max fold: T vs T+1.
  EXPECT_EQ(SymExpr::Max(T, P).Bind({{"P", 0}}), SymExpr::Max(T, 0));
  EXPECT_EQ(SymExpr::Max(T, P).Bind({{"P", 0}, {"T", -3}}), SymExpr(0));
  EXPECT_EQ((S / T).Bind({{"T", 1}}), S);
  EXPECT_EQ((S % T).Bind({{"T", 1}}), SymExpr(0));
  // A zero divisor stays an atom whose evaluation reports the error.
  SymExpr by_zero = (S / T).Bind({{"T", 0}});
  EXPECT_FALSE(by_zero.Evaluate({{"S", 3}}).ok());
  // Binding agrees with evaluation.
  for (int64_t s = -5; s <= 5; ++s) {
    Bindings all = {{"S", s}, {"T", 3}, {"P", -2}};
    EXPECT_EQ(Eval(e.Bind({{"S", s}}), all), Eval(e, all));
    EXPECT_EQ(e.Bind(all).AsConstant(), Eval(e, all));
  }
}

TEST(SymExprTest, CollectSymbolsLooksInsideAtoms) {
  std::set<std::string> symbols;
  (S * 2 + SymExpr::Max(T, 4) + (SymExpr::Symbol("A") + 1) / SymExpr::Symbol("B") +
   SymExpr::Symbol("C") % 3)
      .CollectSymbols(&symbols);
  EXPECT_EQ(symbols, (std::set<std::string>{"A", "B", "C", "S", "T"}));
  std::set<std::string> none;
  SymExpr(5).CollectSymbols(&none);
  (S - S).CollectSymbols(&none);
  EXPECT_TRUE(none.empty());
}

TEST(SymExprTest, HashIsConsistentWithEquality) {
  absl::flat_hash_set<SymExpr> set;
  set.insert(S + 1 - 1);
  set.insert(S);
  set.insert(T * S);
  set.insert(S * T);
  set.insert(SymExpr::Max(S, T));
  set.insert(SymExpr::Max(T, S));
  set.insert((2 * S + 1) / 2);
  set.insert(SymExpr(0));
  set.insert(S - S);
  EXPECT_EQ(set.size(), 4u);
  EXPECT_TRUE(set.contains(Parse("S")));
  EXPECT_TRUE(set.contains(Parse("T*S")));
  EXPECT_TRUE(set.contains(Parse("max(T, S)")));
  EXPECT_TRUE(set.contains(Parse("0")));
  EXPECT_FALSE(set.contains(Parse("S+1")));
  EXPECT_EQ(absl::HashOf(S * T), absl::HashOf(T * S));
  EXPECT_EQ(absl::HashOf((S + 1) * (S - 1)), absl::HashOf(S * S - 1));
}

TEST(SymExprDeathTest, SymbolNameMustBeAnIdentifier) {
  // The canonical text is an expression's identity, so a symbol spelled like an
  // expression would compare equal to one.
  EXPECT_DEATH(SymExpr::Symbol("S+1"), "identifier");
  EXPECT_DEATH(SymExpr::Symbol(""), "identifier");
  EXPECT_DEATH(SymExpr::Symbol("2"), "identifier");
}

// ---------------------------------------------------------------------------------------
// Randomized soundness check: random expression trees are evaluated directly (test-side
// arithmetic) and through SymExpr, whose simplifications must never change the value.

// Floor division and mod written differently from ir/sym_expr_internal.h: from the truncated
// remainder, fixed up to take the divisor's sign.
int64_t RefMod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
int64_t RefDiv(int64_t a, int64_t b) { return (a - RefMod(a, b)) / b; }

struct Tree {
  enum Kind { kConst, kSym, kAdd, kSub, kMul, kDiv, kMod, kMax, kMin, kNeg } kind;
  int64_t value = 0;
  std::string name;
  std::shared_ptr<const Tree> a, b;
};
using TreePtr = std::shared_ptr<const Tree>;

// The value of `t`, or nullopt if it divides by zero.
std::optional<int64_t> RefEval(const Tree& t, const Bindings& bindings) {
  if (t.kind == Tree::kConst) return t.value;
  if (t.kind == Tree::kSym) return bindings.at(t.name);
  std::optional<int64_t> a = RefEval(*t.a, bindings);
  if (!a) return std::nullopt;
  if (t.kind == Tree::kNeg) return -*a;
  std::optional<int64_t> b = RefEval(*t.b, bindings);
  if (!b) return std::nullopt;
  switch (t.kind) {
    case Tree::kAdd:
      return *a + *b;
    case Tree::kSub:
      return *a - *b;
    case Tree::kMul:
      return *a * *b;
    case Tree::kDiv:
      return *b == 0 ? std::nullopt : std::optional<int64_t>(RefDiv(*a, *b));
    case Tree::kMod:
      return *b == 0 ? std::nullopt : std::optional<int64_t>(RefMod(*a, *b));
    case Tree::kMax:
      return std::max(*a, *b);
    case Tree::kMin:
      return std::min(*a, *b);
    default:
      return std::nullopt;
  }
}

SymExpr ToSym(const Tree& t) {
  switch (t.kind) {
    case Tree::kConst:
      return t.value;
    case Tree::kSym:
      return SymExpr::Symbol(t.name);
    case Tree::kNeg:
      return -ToSym(*t.a);
    case Tree::kAdd:
      return ToSym(*t.a) + ToSym(*t.b);
    case Tree::kSub:
      return ToSym(*t.a) - ToSym(*t.b);
    case Tree::kMul:
      return ToSym(*t.a) * ToSym(*t.b);
    case Tree::kDiv:
      return ToSym(*t.a) / ToSym(*t.b);
    case Tree::kMod:
      return ToSym(*t.a) % ToSym(*t.b);
    case Tree::kMax:
      return SymExpr::Max(ToSym(*t.a), ToSym(*t.b));
    case Tree::kMin:
      return SymExpr::Min(ToSym(*t.a), ToSym(*t.b));
  }
  return 0;
}

std::string TreeText(const Tree& t) {
  static const char* const kOps[] = {"", "", "+", "-", "*", "/", "%", "max", "min", "-"};
  switch (t.kind) {
    case Tree::kConst:
      return absl::StrCat(t.value);
    case Tree::kSym:
      return t.name;
    case Tree::kNeg:
      return absl::StrCat("-(", TreeText(*t.a), ")");
    case Tree::kMax:
    case Tree::kMin:
      return absl::StrCat(kOps[t.kind], "(", TreeText(*t.a), ", ", TreeText(*t.b), ")");
    default:
      return absl::StrCat("(", TreeText(*t.a), kOps[t.kind], TreeText(*t.b), ")");
  }
}

class TreeGen {
 public:
  explicit TreeGen(uint32_t seed) : rng_(seed) {}

  // Leaves are small constants, S and T; divisors are mostly nonzero constants of either
  // sign, sometimes whole subtrees (bindings that make those zero are skipped).
  TreePtr Gen(int depth) {
    auto t = std::make_shared<Tree>();
    if (depth == 0 || Uniform(0, 9) < 2) {
      if (Uniform(0, 2) == 0) {
        t->kind = Tree::kConst;
        t->value = Uniform(-6, 6);
      } else {
        t->kind = Tree::kSym;
        t->name = Uniform(0, 1) == 0 ? "S" : "T";
      }
      return t;
    }
    t->kind = static_cast<Tree::Kind>(Uniform(Tree::kAdd, Tree::kNeg));
    t->a = Gen(depth - 1);
    if (t->kind == Tree::kNeg) return t;
    if ((t->kind == Tree::kDiv || t->kind == Tree::kMod) && Uniform(0, 3) != 0) {
      auto c = std::make_shared<Tree>();
      c->kind = Tree::kConst;
      do c->value = Uniform(-5, 8);
      while (c->value == 0);
      t->b = c;
    } else {
      t->b = Gen(depth - 1);
    }
    return t;
  }

  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

 private:
  std::mt19937 rng_;
};

TEST(SymExprPropertyTest, SimplificationPreservesValues) {
  constexpr int kTrees = 4000;
  int compared = 0;
  int zero_divisors = 0;
  for (uint32_t seed = 1; seed <= kTrees; ++seed) {
    TreeGen gen(seed);
    // Depth 4 keeps every intermediate within +-8^16, far from overflow.
    TreePtr tree = gen.Gen(4);
    SymExpr e = ToSym(*tree);
    absl::StatusOr<SymExpr> reparsed = ParseSymExpr(e.ToString());
    if (!reparsed.ok()) {
      // The one text the parser refuses: a division by a divisor that folded to the
      // constant 0 (e.g. `S/(2/6)`), which has no value for any binding.
      ASSERT_THAT(std::string(reparsed.status().message()), HasSubstr("by zero"))
          << TreeText(*tree) << " printed as " << e.ToString();
      ASSERT_TRUE(absl::StrContains(e.ToString(), "/0") || absl::StrContains(e.ToString(), "%0"))
          << e.ToString();
      ++zero_divisors;
      continue;
    }
    EXPECT_EQ(*reparsed, e) << TreeText(*tree) << " printed as " << e.ToString() << " re-parsed as "
                            << reparsed->ToString();
    absl::StatusOr<SymExpr> from_tree_text = ParseSymExpr(TreeText(*tree));
    if (!from_tree_text.ok()) {
      // Only a literal zero divisor such as `(S%0)` is refused.
      ASSERT_THAT(std::string(from_tree_text.status().message()), HasSubstr("by zero"))
          << TreeText(*tree);
    }
    for (int trial = 0; trial < 12; ++trial) {
      Bindings b = {{"S", gen.Uniform(-8, 8)}, {"T", gen.Uniform(-8, 8)}};
      std::optional<int64_t> want = RefEval(*tree, b);
      // Dividing by zero has no value; simplification may have removed the division.
      if (!want) continue;
      ++compared;
      auto where = [&] {
        return absl::StrCat(TreeText(*tree), " simplified to ", e.ToString(), " at S=", b.at("S"),
                            " T=", b.at("T"), " (seed ", seed, ")");
      };
      absl::StatusOr<int64_t> got = e.Evaluate(b);
      ASSERT_TRUE(got.ok()) << where() << ": " << got.status();
      ASSERT_EQ(*got, *want) << where();
      absl::StatusOr<int64_t> got_reparsed = reparsed->Evaluate(b);
      ASSERT_TRUE(got_reparsed.ok()) << where() << ": " << got_reparsed.status();
      ASSERT_EQ(*got_reparsed, *want) << where() << ", re-parsed";
      if (from_tree_text.ok()) {
        absl::StatusOr<int64_t> got_text = from_tree_text->Evaluate(b);
        ASSERT_TRUE(got_text.ok()) << where() << ": " << got_text.status();
        ASSERT_EQ(*got_text, *want) << where() << ", parsed from the tree's text";
      }
      // Partial evaluation agrees too, binding either symbol first.
      ASSERT_EQ(Eval(e.Bind({{"S", b.at("S")}}), b), *want) << where() << ", S bound first";
      ASSERT_EQ(Eval(e.Bind({{"T", b.at("T")}}), b), *want) << where() << ", T bound first";
      ASSERT_EQ(e.Bind(b).AsConstant(), *want) << where() << ", fully bound";
    }
  }
  // Most bindings are defined: the test really compared values.
  EXPECT_GT(compared, kTrees * 6);
  EXPECT_LT(zero_divisors, kTrees / 20);
}

TEST(SymExprPropertyTest, AlgebraicIdentitiesHoldStructurally) {
  for (uint32_t seed = 1; seed <= 1000; ++seed) {
    TreeGen gen(seed);
    SymExpr a = ToSym(*gen.Gen(3));
    SymExpr b = ToSym(*gen.Gen(3));
    SymExpr c = ToSym(*gen.Gen(2));
    int64_t k = gen.Uniform(1, 9);
    int64_t r = gen.Uniform(0, k - 1);
    std::string where = absl::StrCat("a=", a.ToString(), " b=", b.ToString(), " c=", c.ToString(),
                                     " k=", k, " r=", r);
    ASSERT_EQ(a + b, b + a) << where;
    ASSERT_EQ(a * b, b * a) << where;
    ASSERT_EQ((a + b) * c, a * c + b * c) << where;
    ASSERT_EQ(a - a, SymExpr(0)) << where;
    ASSERT_EQ(a + b - b, a) << where;
    ASSERT_EQ((k * a + r) / k, a) << where;
    ASSERT_EQ((k * a + r) % k, SymExpr(r)) << where;
    ASSERT_EQ(SymExpr::Max(a, b), SymExpr::Max(b, a)) << where;
    ASSERT_EQ(SymExpr::Min(a, b), SymExpr::Min(b, a)) << where;
    ASSERT_EQ(SymExpr::Max(a, a + k), a + k) << where;
    ASSERT_EQ(SymExpr::Min(a, a + k), a) << where;
    // Hashes follow equality.
    ASSERT_EQ(absl::HashOf(a * b), absl::HashOf(b * a)) << where;
  }
}

}  // namespace
}  // namespace graphjit::ir
