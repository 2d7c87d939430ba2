// Tests of SymExpr evaluation (floor semantics, errors, overflow), binding as partial
// evaluation, collecting symbols, hashing, and symbol names.
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/sym_expr.h"
#include "tests/ir/sym_expr_test_util.h"

namespace graphjit::ir::sym_expr_testutil {
namespace {

using ::testing::HasSubstr;

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

}  // namespace
}  // namespace graphjit::ir::sym_expr_testutil
