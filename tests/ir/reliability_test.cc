// Regressions found by fuzzing the IR (tests/fuzz): dims whose constants overflow int64
// are an InvalidArgument at the dim's line:col, never a wrapped value; SymExpr arithmetic
// on such constants is defined (it wraps) and marks the result.
#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/parser.h"
#include "ir/sym_expr.h"

namespace graphjit::ir {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

std::string InputGraph(const std::string& dims) {
  return absl::StrCat("graph big {\n  %0 = input {name=\"x\"} : f32[", dims, "]\n  return %0\n}\n");
}

TEST(DimOverflow, IsAnErrorAtTheDim) {
  struct Case {
    std::string dims, location, quoted;
  };
  // Column 31 is the first character inside `f32[`.
  for (const Case& c : std::vector<Case>{
           {"3037000500*3037000500", "2:31: ", "'3037000500*3037000500'"},
           {"9223372036854775807+1", "2:31: ", "'9223372036854775807+1'"},
           {"2, -9223372036854775807-2", "2:34: ", "'-9223372036854775807-2'"},
           {"-(-9223372036854775807-1)", "2:31: ", "'-(-9223372036854775807-1)'"},
           {"S*4611686018427387904*2", "2:31: ", "'S*4611686018427387904*2'"},
           {"S+9223372036854775807+1", "2:31: ", "'S+9223372036854775807+1'"},
           {"5/(4294967296*4294967296)", "2:31: ", "'5/(4294967296*4294967296)'"},
           {"max(9223372036854775807+1, 2)", "2:31: ", "overflows"},
       }) {
    SCOPED_TRACE(c.dims);
    absl::StatusOr<Graph> g = ParseGraph(InputGraph(c.dims));
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(g.status().message()), StartsWith(c.location));
    EXPECT_THAT(std::string(g.status().message()), HasSubstr("overflows int64"));
    EXPECT_THAT(std::string(g.status().message()), HasSubstr(c.quoted));
    EXPECT_THAT(std::string(g.status().message()), Not(HasSubstr("negative dim")));
  }
}

TEST(DimOverflow, LargestDimsStillParse) {
  // INT64_MAX itself, and sums that come back in range only through exact arithmetic.
  absl::StatusOr<Graph> g = ParseGraph(InputGraph("0*9223372036854775807, 2*S-S, 1"));
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<SymExpr> e = ParseSymExpr("9223372036854775807");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->AsConstant(), kMax);
  e = ParseSymExpr("-9223372036854775807-1");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->AsConstant(), kMin);
}

TEST(DimOverflow, ElementCountOverflowIsAShapeError) {
  // Each dim fits; their product does not.
  absl::StatusOr<Graph> g = ParseGraph(InputGraph("4294967296, 4294967296"));
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()), StartsWith("2:"));
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("element count"));
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("overflows int64"));
}

TEST(SymExprOverflow, ArithmeticWrapsAndIsMarked) {
  SymExpr big = SymExpr(kMax);
  EXPECT_FALSE(big.Overflowed());
  SymExpr sum = big + 1;
  EXPECT_TRUE(sum.Overflowed());
  EXPECT_TRUE((sum - 1).Overflowed());  // sticky, even when the value is back in range
  EXPECT_TRUE((SymExpr(3037000500) * SymExpr(3037000500)).Overflowed());
  EXPECT_TRUE((-SymExpr(kMin)).Overflowed());
  EXPECT_TRUE(SymExpr::FloorDiv(kMin, -1).Overflowed());
  SymExpr S = SymExpr::Symbol("S");
  EXPECT_TRUE((S * kMax * 2).Overflowed());
  EXPECT_TRUE((S * kMax + S * kMax).Overflowed());
  EXPECT_TRUE(SymExpr::Max(sum, S).Overflowed());
  EXPECT_FALSE((S * kMax - S * kMax).Overflowed());
  EXPECT_FALSE((S + kMax - 1).Overflowed());

  absl::StatusOr<int64_t> v = sum.Evaluate({});
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(std::string(v.status().message()), HasSubstr("overflow"));
  // Binding keeps the mark.
  SymExpr marked = (S + kMax) + 1;
  EXPECT_TRUE(marked.Overflowed());
  EXPECT_TRUE(marked.Bind({{"S", 0}}).Overflowed());
  // A symbol bound to a large value overflows when multiplied out.
  EXPECT_TRUE((S * 4).Bind({{"S", kMax / 2}}).Overflowed());
}

TEST(SymExprOverflow, MaxAndMinCompareWithoutWrapping) {
  // max(INT64_MAX, -1): the difference INT64_MAX + 1 does not fit; the constant compare must
  // not be fooled by its wrapped (negative) value.
  EXPECT_EQ(SymExpr::Max(kMax, -1).AsConstant(), kMax);
  EXPECT_EQ(SymExpr::Min(kMax, -1).AsConstant(), -1);
  EXPECT_EQ(SymExpr::Max(kMin, 1).AsConstant(), 1);
  EXPECT_EQ(SymExpr::Min(kMin, 1).AsConstant(), kMin);
  EXPECT_FALSE(SymExpr::Max(kMax, -1).Overflowed());
  SymExpr S = SymExpr::Symbol("S");
  // S + INT64_MAX vs S - 1 differ by a constant that overflows: left as an atom.
  SymExpr m = SymExpr::Max(S + kMax, S - 1);
  EXPECT_FALSE(m.Overflowed());
  EXPECT_FALSE(m.IsSymbol());
}

TEST(SymExprOverflow, BuilderRejectsOverflowedShapes) {
  GraphBuilder b("g");
  b.Input("x", DType::kF32, {SymExpr(kMax) + 1});
  absl::StatusOr<Graph> g = std::move(b).Build();
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("overflows int64"));
}

}  // namespace
}  // namespace graphjit::ir
