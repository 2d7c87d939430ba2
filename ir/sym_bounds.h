// Ranges of SymExprs: what an expression over dims can be, given only that every symbol
// is at least some minimum (dims are >= 0; >= 2 where the 0/1 specialization holds). The
// ONNX importer decides shape comparisons with them (N + 1 == 0 is false for a dim N)
// where the difference of two dims is not a constant.
#ifndef GRAPHJIT_IR_SYM_BOUNDS_H_
#define GRAPHJIT_IR_SYM_BOUNDS_H_

#include <cstdint>
#include <optional>

#include "ir/sym_expr.h"

namespace graphjit::ir {

// [lo, hi], each end nullopt when unbounded (or not known).
struct SymRange {
  std::optional<int64_t> lo, hi;
};

// The range of `e` when every symbol lies in [symbol_min, +inf): interval arithmetic over
// the canonical terms (floor division and mod by positive constants, max, min, products
// of non-negative factors). Sound, not tight: a bound it cannot show is nullopt. An
// expression whose arithmetic overflowed has no bounds.
SymRange RangeOf(const SymExpr& e, int64_t symbol_min = 0);

// a < b, a == b, ... decided by the range of a - b, or nullopt when it does not decide.
std::optional<bool> ProvablyLess(const SymExpr& a, const SymExpr& b, int64_t symbol_min = 0);
std::optional<bool> ProvablyEqual(const SymExpr& a, const SymExpr& b, int64_t symbol_min = 0);

}  // namespace graphjit::ir

#endif  // GRAPHJIT_IR_SYM_BOUNDS_H_
