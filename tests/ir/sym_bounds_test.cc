// Ranges of dim expressions: what each form is bounded by when symbols are >= 0 (or >= 2),
// the comparisons they decide, and the ones they must not decide.
#include "ir/sym_bounds.h"

#include "gtest/gtest.h"

namespace graphjit::ir {
namespace {

const SymExpr N = SymExpr::Symbol("N");
const SymExpr M = SymExpr::Symbol("M");

void ExpectRange(const SymExpr& e, std::optional<int64_t> lo, std::optional<int64_t> hi,
                 int64_t symbol_min = 0) {
  const SymRange r = RangeOf(e, symbol_min);
  EXPECT_EQ(r.lo, lo) << e.ToString();
  EXPECT_EQ(r.hi, hi) << e.ToString();
}

TEST(SymBounds, RangesOfEachForm) {
  ExpectRange(SymExpr(7), 7, 7);
  ExpectRange(N, 0, std::nullopt);
  ExpectRange(N + 1, 1, std::nullopt);
  ExpectRange(N - 1, -1, std::nullopt);
  ExpectRange(-N, std::nullopt, 0);
  ExpectRange(3 * N * M + 2, 2, std::nullopt);
  ExpectRange(N % 7, 0, 6);
  ExpectRange((7 - N % 7) % 7, 0, 6);  // swin's window padding
  ExpectRange((N + 6) / 7, 0, std::nullopt);
  ExpectRange(SymExpr::Max(N, 4), 4, std::nullopt);
  ExpectRange(SymExpr::Min(N, 4), 0, 4);
  ExpectRange(N - M, std::nullopt, std::nullopt);  // must not be decided
  ExpectRange(N - 2, 0, std::nullopt, /*symbol_min=*/2);
}

TEST(SymBounds, ComparisonsOfDims) {
  EXPECT_EQ(ProvablyEqual(N, -1), false);  // expand(n, -1, -1) exports
  EXPECT_EQ(ProvablyEqual(N, N), true);
  EXPECT_EQ(ProvablyLess(N, 0), false);
  EXPECT_EQ(ProvablyLess(-1, N), true);
  EXPECT_EQ(ProvablyLess(N % 7, 7), true);
  // Not decided: two free dims, a dim against a positive constant, 0 or 1 without the
  // 0/1 specialization.
  EXPECT_EQ(ProvablyEqual(N, M), std::nullopt);
  EXPECT_EQ(ProvablyLess(N, M), std::nullopt);
  EXPECT_EQ(ProvablyEqual(N, 5), std::nullopt);
  EXPECT_EQ(ProvablyEqual(N, 1), std::nullopt);
  EXPECT_EQ(ProvablyEqual(N, 1, /*symbol_min=*/2), false);
  EXPECT_EQ(ProvablyEqual(N % 7, 0), std::nullopt);  // swin: a guard's question
}

TEST(SymBounds, OverflowGivesUp) {
  const SymExpr big = SymExpr(int64_t{1} << 62) * 4 * N;
  EXPECT_EQ(RangeOf(big).lo, std::nullopt);
}

}  // namespace
}  // namespace graphjit::ir
