// Tests of SymExpr: canonical simplification (sums, products, floor division, mod, max and
// min) and printing, and the shape helpers over SymExpr dims.
#include "ir/sym_expr.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "tests/ir/sym_expr_test_util.h"

namespace graphjit::ir::sym_expr_testutil {
namespace {

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

}  // namespace
}  // namespace graphjit::ir::sym_expr_testutil
