#include "ir/sym_bounds.h"

#include <algorithm>
#include <limits>

namespace graphjit::ir {
namespace {

// Products and sums that would leave int64 give up (an unbounded end) rather than wrap.
std::optional<int64_t> Mul(std::optional<int64_t> a, std::optional<int64_t> b) {
  if (!a || !b) return std::nullopt;
  int64_t r;
  if (__builtin_mul_overflow(*a, *b, &r)) return std::nullopt;
  return r;
}
std::optional<int64_t> Add(std::optional<int64_t> a, std::optional<int64_t> b) {
  if (!a || !b) return std::nullopt;
  int64_t r;
  if (__builtin_add_overflow(*a, *b, &r)) return std::nullopt;
  return r;
}
int64_t FloorDivI(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

SymRange AtomRange(const SymExpr::AtomView& atom, int64_t symbol_min);

// The range of a product of atoms: only products of non-negative factors are bounded.
SymRange ProductRange(const std::vector<SymExpr::AtomView>& factors, int64_t symbol_min) {
  SymRange r{1, 1};
  for (const SymExpr::AtomView& f : factors) {
    const SymRange fr = AtomRange(f, symbol_min);
    if (!fr.lo || *fr.lo < 0) return {};
    r.lo = Mul(r.lo, fr.lo);
    r.hi = Mul(r.hi, fr.hi);
    if (!r.lo) return {};
  }
  return r;
}

SymRange AtomRange(const SymExpr::AtomView& atom, int64_t symbol_min) {
  switch (atom.kind) {
    case SymExpr::AtomView::Kind::kSymbol:
      return {symbol_min, std::nullopt};
    case SymExpr::AtomView::Kind::kFloorDiv: {
      const std::optional<int64_t> d = atom.rhs->AsConstant();
      if (!d || *d <= 0) return {};
      const SymRange a = RangeOf(*atom.lhs, symbol_min);
      SymRange r;
      if (a.lo) r.lo = FloorDivI(*a.lo, *d);
      if (a.hi) r.hi = FloorDivI(*a.hi, *d);
      return r;
    }
    case SymExpr::AtomView::Kind::kMod: {
      const std::optional<int64_t> d = atom.rhs->AsConstant();
      if (!d || *d <= 0) return {};
      return {0, *d - 1};
    }
    case SymExpr::AtomView::Kind::kMax: {
      const SymRange a = RangeOf(*atom.lhs, symbol_min), b = RangeOf(*atom.rhs, symbol_min);
      SymRange r;
      if (a.lo || b.lo)
        r.lo = std::max(a.lo.value_or(std::numeric_limits<int64_t>::min()),
                        b.lo.value_or(std::numeric_limits<int64_t>::min()));
      if (a.hi && b.hi) r.hi = std::max(*a.hi, *b.hi);
      return r;
    }
    case SymExpr::AtomView::Kind::kMin: {
      const SymRange a = RangeOf(*atom.lhs, symbol_min), b = RangeOf(*atom.rhs, symbol_min);
      SymRange r;
      if (a.lo && b.lo) r.lo = std::min(*a.lo, *b.lo);
      if (a.hi || b.hi)
        r.hi = std::min(a.hi.value_or(std::numeric_limits<int64_t>::max()),
                        b.hi.value_or(std::numeric_limits<int64_t>::max()));
      return r;
    }
  }
  return {};
}

}  // namespace

SymRange RangeOf(const SymExpr& e, int64_t symbol_min) {
  if (e.Overflowed()) return {};
  SymRange sum{0, 0};
  for (const SymExpr::TermView& t : e.Terms()) {
    const SymRange p = t.factors.empty() ? SymRange{1, 1} : ProductRange(t.factors, symbol_min);
    // coeff * [lo, hi]: a negative coefficient swaps the ends.
    const std::optional<int64_t> a = Mul(t.coeff, p.lo), b = Mul(t.coeff, p.hi);
    if (t.coeff >= 0) {
      sum.lo = Add(sum.lo, a);
      sum.hi = Add(sum.hi, b);
    } else {
      sum.lo = Add(sum.lo, b);
      sum.hi = Add(sum.hi, a);
    }
  }
  return sum;
}

std::optional<bool> ProvablyLess(const SymExpr& a, const SymExpr& b, int64_t symbol_min) {
  const SymRange d = RangeOf(a - b, symbol_min);
  if (d.hi && *d.hi < 0) return true;
  if (d.lo && *d.lo >= 0) return false;
  return std::nullopt;
}

std::optional<bool> ProvablyEqual(const SymExpr& a, const SymExpr& b, int64_t symbol_min) {
  const SymRange d = RangeOf(a - b, symbol_min);
  if (d.lo && d.hi && *d.lo == 0 && *d.hi == 0) return true;
  if ((d.lo && *d.lo > 0) || (d.hi && *d.hi < 0)) return false;
  return std::nullopt;
}

}  // namespace graphjit::ir
