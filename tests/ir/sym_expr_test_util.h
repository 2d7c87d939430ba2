// Shared helpers of the SymExpr tests: GoogleTest printing of SymExprs, the symbols S, T
// and P, and parsing and evaluation that fail the test on an error.
#ifndef GRAPHJIT_TESTS_IR_SYM_EXPR_TEST_UTIL_H_
#define GRAPHJIT_TESTS_IR_SYM_EXPR_TEST_UTIL_H_

#include <cstdint>
#include <ostream>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "ir/sym_expr.h"

namespace graphjit::ir {

// Lets GoogleTest print SymExprs in failure messages.
inline void PrintTo(const SymExpr& e, std::ostream* os) { *os << e.ToString(); }

namespace sym_expr_testutil {

inline const SymExpr S = SymExpr::Symbol("S");
inline const SymExpr T = SymExpr::Symbol("T");
inline const SymExpr P = SymExpr::Symbol("P");

// `text` parsed; on an error fails the test and returns a sentinel constant.
inline SymExpr Parse(absl::string_view text) {
  absl::StatusOr<SymExpr> e = ParseSymExpr(text);
  EXPECT_TRUE(e.ok()) << "parsing '" << text << "': " << e.status();
  return e.ok() ? *e : SymExpr(-999999);
}

// The value of `e` under `bindings`; on an error fails the test and returns a sentinel.
inline int64_t Eval(const SymExpr& e, const Bindings& bindings) {
  absl::StatusOr<int64_t> v = e.Evaluate(bindings);
  EXPECT_TRUE(v.ok()) << e.ToString() << ": " << v.status();
  return v.ok() ? *v : -999999;
}

}  // namespace sym_expr_testutil
}  // namespace graphjit::ir

#endif  // GRAPHJIT_TESTS_IR_SYM_EXPR_TEST_UTIL_H_
