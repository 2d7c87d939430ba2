// Value ranges of i64 expressions, and the narrowing of loop variables inside select arms.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "compiler/lower/simplify_index_internal.h"
#include "runtime/scalar_semantics.h"

namespace graphjit::compiler::simplify_index_internal {

using ir::DType;
using runtime::FloorDivI64;

namespace {

bool Huge(int64_t v) { return v > kHuge || v < -kHuge; }

// One side of a sum of ranges; false on a possible overflow.
bool AddBound(int64_t a, bool a_inf, int64_t b, bool b_inf, int64_t* out, bool* out_inf) {
  if (a_inf || b_inf) {
    if ((!a_inf && Huge(a)) || (!b_inf && Huge(b))) return false;
    *out = 0;
    *out_inf = true;
    return true;
  }
  __int128 s = static_cast<__int128>(a) + b;
  if (!Fits(s)) return false;
  *out = static_cast<int64_t>(s);
  *out_inf = false;
  return true;
}

bool MulBound(int64_t a, bool a_inf, int64_t c, int64_t* out, bool* out_inf) {
  if (a_inf) {
    if (Huge(c)) return false;
    *out = 0;
    *out_inf = true;
    return true;
  }
  __int128 p = static_cast<__int128>(a) * c;
  if (!Fits(p)) return false;
  *out = static_cast<int64_t>(p);
  *out_inf = false;
  return true;
}

Range AddRanges(const Range& a, const Range& b) {
  if (!a.exact || !b.exact) return Range::Wrapped();
  Range r;
  if (!AddBound(a.lo, a.lo_inf, b.lo, b.lo_inf, &r.lo, &r.lo_inf) ||
      !AddBound(a.hi, a.hi_inf, b.hi, b.hi_inf, &r.hi, &r.hi_inf)) {
    return Range::Wrapped();
  }
  return r;
}

Range ScaleRange(const Range& a, int64_t c) {
  if (c == 0) return Range::Of(0);
  if (!a.exact) return Range::Wrapped();
  Range r;
  bool ok = c > 0 ? MulBound(a.lo, a.lo_inf, c, &r.lo, &r.lo_inf) &&
                        MulBound(a.hi, a.hi_inf, c, &r.hi, &r.hi_inf)
                  : MulBound(a.hi, a.hi_inf, c, &r.lo, &r.lo_inf) &&
                        MulBound(a.lo, a.lo_inf, c, &r.hi, &r.hi_inf);
  return ok ? r : Range::Wrapped();
}

// Holds both ranges' values. An infinite bound joined with a finite one beyond 2^62 is
// that of any i64 (kMin / kMax are true bounds of everything; an infinity claims a size).
Range Union(const Range& a, const Range& b) {
  Range r;
  if (a.lo_inf && b.lo_inf) {
    r.lo_inf = true;
    r.lo = 0;
  } else if (a.lo_inf || b.lo_inf) {
    const int64_t f = a.lo_inf ? b.lo : a.lo;
    r.lo_inf = f >= -kHuge;
    r.lo = r.lo_inf ? 0 : kMin;
  } else {
    r.lo = std::min(a.lo, b.lo);
  }
  if (a.hi_inf && b.hi_inf) {
    r.hi_inf = true;
    r.hi = 0;
  } else if (a.hi_inf || b.hi_inf) {
    const int64_t f = a.hi_inf ? b.hi : a.hi;
    r.hi_inf = f <= kHuge;
    r.hi = r.hi_inf ? 0 : kMax;
  } else {
    r.hi = std::max(a.hi, b.hi);
  }
  return r;
}

// The range of the product of two values (a non-linear atom).
Range MulRanges(const Range& a, const Range& b) {
  if (a.lo_inf || a.hi_inf || b.lo_inf || b.hi_inf) {
    for (const Range* r : {&a, &b}) {
      if ((!r->lo_inf && Huge(r->lo)) || (!r->hi_inf && Huge(r->hi))) return Range::Any();
    }
    if (!a.lo_inf && !b.lo_inf && a.lo >= 0 && b.lo >= 0) {
      Range r = Range::NonNegative();
      const __int128 lo = static_cast<__int128>(a.lo) * b.lo;  // both <= 2^62
      if (Fits(lo)) r.lo = static_cast<int64_t>(lo);
      return r;
    }
    Range r;
    r.lo_inf = r.hi_inf = true;
    r.lo = r.hi = 0;
    return r;
  }
  __int128 p[] = {static_cast<__int128>(a.lo) * b.lo, static_cast<__int128>(a.lo) * b.hi,
                  static_cast<__int128>(a.hi) * b.lo, static_cast<__int128>(a.hi) * b.hi};
  __int128 lo = *std::min_element(p, p + 4), hi = *std::max_element(p, p + 4);
  if (!Fits(lo) || !Fits(hi)) return Range::Any();
  return Range::Between(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
}

}  // namespace

std::optional<bool> Decide(ScalarOp op, const Range& d) {
  if (!d.exact) return std::nullopt;
  const bool neg = d.FiniteHi() && d.hi < 0, nonpos = d.FiniteHi() && d.hi <= 0;
  const bool pos = d.FiniteLo() && d.lo > 0, nonneg = d.FiniteLo() && d.lo >= 0;
  switch (op) {
    case ScalarOp::kLt:
      if (neg) return true;
      if (nonneg) return false;
      break;
    case ScalarOp::kLe:
      if (nonpos) return true;
      if (pos) return false;
      break;
    case ScalarOp::kGt:
      if (pos) return true;
      if (nonpos) return false;
      break;
    case ScalarOp::kGe:
      if (nonneg) return true;
      if (neg) return false;
      break;
    case ScalarOp::kEq:
    case ScalarOp::kNe: {
      std::optional<bool> eq;
      if (nonneg && nonpos) eq = true;
      if (neg || pos) eq = false;
      if (eq.has_value()) return op == ScalarOp::kEq ? *eq : !*eq;
      break;
    }
    default:
      break;
  }
  return std::nullopt;
}

// ---- ranges of loop variables and atoms ------------------------------------------------

Range Simplifier::LoopRange(const Lin& extent) {
  Range e = RangeOf(extent);
  Range r = Range::NonNegative();
  if (!e.hi_inf) {
    r.hi_inf = false;
    r.hi = e.hi <= 1 ? 0 : e.hi - 1;
  }
  return r;
}

Range Simplifier::RangeOf(const Lin& l) {
  Range r = Range::Of(l.k);
  for (const Term& t : l.terms) {
    r = AddRanges(r, ScaleRange(AtomRange(t.atom), t.coeff));
    if (!r.exact) break;
  }
  return r;
}

Range Simplifier::ValueRange(const ExprPtr& node) {
  Range r = RangeOf(LinOf(node));
  if (!r.exact) return Range::Any();
  return r;
}

Range Simplifier::AtomRange(const ExprPtr& atom) {
  Scope& s = *scopes_.back();
  if (auto it = s.ranges.find(atom.get()); it != s.ranges.end()) return it->second;
  Range r = AtomRangeUncached(*atom);
  scopes_.back()->ranges[atom.get()] = r;
  return r;
}

Range Simplifier::AtomRangeUncached(const Expr& e) {
  const std::vector<Range>& vars = scopes_.back()->vars;
  if (!WellFormed(e)) return Range::Any();
  switch (e.kind) {
    case ExprKind::kConst:
      return Range::Of(e.i_value);
    case ExprKind::kLoopVar:
      if (e.index >= 0 && e.index < static_cast<int>(vars.size())) return vars[e.index];
      return Range::Any();
    case ExprKind::kSymbol:
      return Range::NonNegative();
    case ExprKind::kLoad:
      return Range::Any();
    case ExprKind::kCast:
      return e.operands[0]->dtype == DType::kBool ? Range::Between(0, 1) : Range::Any();
    case ExprKind::kSelect:
      return Union(ValueRange(e.operands[1]), ValueRange(e.operands[2]));
    case ExprKind::kOp:
      break;
  }
  if (IsUnary(e.op)) return Range::Any();
  const Range x = ValueRange(e.operands[0]), y = ValueRange(e.operands[1]);
  switch (e.op) {
    case ScalarOp::kDiv: {
      if (y.Single() && y.lo > 0) {
        Range r = x;
        if (!r.lo_inf) r.lo = FloorDivI64(r.lo, y.lo);
        if (!r.hi_inf) r.hi = FloorDivI64(r.hi, y.lo);
        return r;
      }
      if (!y.lo_inf && y.lo >= 1) {  // |x / y| <= |x|, rounding towards -inf
        Range r = x;
        if (!r.lo_inf) r.lo = std::min<int64_t>(r.lo, 0);
        if (!r.hi_inf) r.hi = r.hi >= 0 ? r.hi : -1;
        return r;
      }
      return Range::Any();
    }
    case ScalarOp::kMod: {
      if (y.lo_inf || y.lo < 1) return Range::Any();
      Range r = Range::NonNegative();
      if (!y.hi_inf) {
        r.hi_inf = false;
        r.hi = y.hi - 1;
      }
      if (!x.lo_inf && x.lo >= 0 && !x.hi_inf && (r.hi_inf || x.hi < r.hi)) {
        r.hi_inf = false;
        r.hi = x.hi;  // x % y <= x for x >= 0
      }
      return r;
    }
    case ScalarOp::kMin:
    case ScalarOp::kMax: {
      // min(x, y) <= either high; when one is +inf (a size) and the other finite but
      // beyond 2^62 (a value read from a buffer), the size is the useful bound: that is
      // how a clamp min(max(row, 0), n - 1) of a gathered row stays a size.
      if (e.op == ScalarOp::kMin) {
        Range r = Union(x, y);  // the lower bound: the smaller low
        if (x.hi_inf != y.hi_inf) {
          const int64_t f = x.hi_inf ? y.hi : x.hi;
          r.hi_inf = f > kHuge;
          r.hi = r.hi_inf ? 0 : f;
        } else if (!x.hi_inf) {
          r.hi = std::min(x.hi, y.hi);
        }
        return r;
      }
      Range r = Union(x, y);  // the upper bound: the larger high
      if (x.lo_inf != y.lo_inf) {
        const int64_t f = x.lo_inf ? y.lo : x.lo;
        r.lo_inf = f < -kHuge;
        r.lo = r.lo_inf ? 0 : f;
      } else if (!x.lo_inf) {
        r.lo = std::max(x.lo, y.lo);
      }
      return r;
    }
    case ScalarOp::kMul:
      return MulRanges(x, y);
    default:
      return Range::Any();
  }
}

// ---- narrowing inside select arms ------------------------------------------------------

uint64_t Simplifier::VarsUsed(const Expr& e) {
  if (e.kind == ExprKind::kLoopVar) return uint64_t{1} << std::clamp(e.index, 0, 63);
  if (auto it = vars_used_.find(&e); it != vars_used_.end()) return it->second;
  uint64_t used = 0;
  for (const ExprPtr& o : e.operands) used |= VarsUsed(*o);
  vars_used_[&e] = used;
  return used;
}

uint64_t Simplifier::Narrow(const ExprPtr& cond, bool truth, std::vector<Range>* vars) {
  if (cond->kind != ExprKind::kOp || cond->operands.empty()) return 0;
  const ScalarOp op = cond->op;
  if (op == ScalarOp::kNot) return Narrow(cond->operands[0], !truth, vars);
  if ((op == ScalarOp::kAnd && truth) || (op == ScalarOp::kOr && !truth)) {
    if (cond->operands.size() != 2) return 0;
    return Narrow(cond->operands[0], truth, vars) | Narrow(cond->operands[1], truth, vars);
  }
  if (!IsComparison(op) || cond->operands.size() != 2 || cond->operands[0]->dtype != DType::kI64) {
    return 0;
  }
  Lin a = LinOf(cond->operands[0]), b = LinOf(cond->operands[1]);
  if (!RangeOf(a).exact || !RangeOf(b).exact) return false;
  Lin d = Combine(a, b, -1);  // the condition is `d op 0`
  if (d.terms.size() != 1 || d.terms[0].atom->kind != ExprKind::kLoopVar) return 0;
  const int var = d.terms[0].atom->index;
  if (var < 0 || var >= static_cast<int>(vars->size())) return 0;
  const __int128 c = d.terms[0].coeff, t = -static_cast<__int128>(d.k);  // c*v op t
  ScalarOp rel = op;
  if (!truth) {
    switch (op) {
      case ScalarOp::kLt:
        rel = ScalarOp::kGe;
        break;
      case ScalarOp::kLe:
        rel = ScalarOp::kGt;
        break;
      case ScalarOp::kGt:
        rel = ScalarOp::kLe;
        break;
      case ScalarOp::kGe:
        rel = ScalarOp::kLt;
        break;
      case ScalarOp::kEq:
        rel = ScalarOp::kNe;
        break;
      case ScalarOp::kNe:
        rel = ScalarOp::kEq;
        break;
      default:
        return 0;
    }
  }
  auto floor_div = [](__int128 x, __int128 y) {
    __int128 q = x / y;
    return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
  };
  auto ceil_div = [&](__int128 x, __int128 y) { return -floor_div(-x, y); };
  // c*v <= u or c*v >= u as a bound on v.
  std::optional<__int128> lo, hi;
  auto at_most = [&](__int128 u) {  // c*v <= u
    if (c > 0)
      hi = floor_div(u, c);
    else
      lo = ceil_div(u, c);
  };
  auto at_least = [&](__int128 u) {  // c*v >= u
    if (c > 0)
      lo = ceil_div(u, c);
    else
      hi = floor_div(u, c);
  };
  switch (rel) {
    case ScalarOp::kLt:
      at_most(t - 1);
      break;
    case ScalarOp::kLe:
      at_most(t);
      break;
    case ScalarOp::kGt:
      at_least(t + 1);
      break;
    case ScalarOp::kGe:
      at_least(t);
      break;
    case ScalarOp::kEq:
      at_most(t);
      at_least(t);
      break;
    default:
      return 0;
  }
  Range r = (*vars)[var];
  const Range before = r;
  if (lo && Fits(*lo) && (r.lo_inf || *lo > r.lo)) {
    r.lo = static_cast<int64_t>(*lo);
    r.lo_inf = false;
  }
  if (hi && Fits(*hi) && (r.hi_inf || *hi < r.hi)) {
    r.hi = static_cast<int64_t>(*hi);
    r.hi_inf = false;
  }
  if (!r.lo_inf && !r.hi_inf && r.lo > r.hi) return 0;  // the arm is never taken
  (*vars)[var] = r;
  return r == before ? 0 : uint64_t{1} << std::min(var, 63);
}

}  // namespace graphjit::compiler::simplify_index_internal
