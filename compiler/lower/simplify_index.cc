#include "compiler/lower/simplify_index.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "runtime/scalar_semantics.h"

namespace graphjit::compiler {
namespace {

using ir::DType;
using runtime::FloorDivI64;
using runtime::FloorModI64;
using runtime::WrapAdd;
using runtime::WrapMul;
using runtime::WrapSub;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
// Infinite bounds stand for sizes (loop variables with symbolic extents, symbols), assumed
// not to overflow; combined with a finite bound beyond +-2^62 (only values read from
// buffers come near that) they count as a possible overflow.
constexpr int64_t kHuge = int64_t{1} << 62;
// Selects whose arms get narrowed ranges re-simplify those arms: at most this deep, and
// this many per kernel (the work stays a small multiple of the kernel's size).
constexpr int kMaxRefineDepth = 8;
constexpr int kMaxRefineScopes = 256;

bool Fits(__int128 v) { return v >= kMin && v <= kMax; }
bool Huge(int64_t v) { return v > kHuge || v < -kHuge; }

// The values an i64 expression can take: [lo, hi], either bound possibly infinite. For a
// linear form, `exact` says its runtime value is the integer the form denotes (no i64
// wrap-around can have happened): the range is then that integer's range. An inexact
// range is the whole i64 range.
struct Range {
  int64_t lo = kMin, hi = kMax;
  bool lo_inf = false, hi_inf = false;  // -inf, +inf
  bool exact = true;

  static Range Of(int64_t v) { return {v, v, false, false, true}; }
  static Range Any() { return {}; }
  static Range Wrapped() { return {kMin, kMax, false, false, false}; }
  static Range NonNegative() { return {0, 0, false, true, true}; }
  static Range Between(int64_t lo, int64_t hi) { return {lo, hi, false, false, true}; }
  bool Single() const { return exact && !lo_inf && !hi_inf && lo == hi; }
  bool FiniteLo() const { return !lo_inf; }
  bool FiniteHi() const { return !hi_inf; }
  bool operator==(const Range& o) const {
    return lo == o.lo && hi == o.hi && lo_inf == o.lo_inf && hi_inf == o.hi_inf && exact == o.exact;
  }
};

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

// Whether d (a difference a - b, exact) decides `op` on (a, b).
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

uint64_t Bits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof(b));
  return b;
}

// A total structural order on expressions: loop variables (by index) first, then
// symbols, then loads, ops, selects, casts, constants; ties broken field by field, then
// by operands. Never by address, so sorted terms are the same in every run.
int Compare(const Expr* a, const Expr* b) {
  if (a == b) return 0;
  auto rank = [](ExprKind k) {
    switch (k) {
      case ExprKind::kLoopVar:
        return 0;
      case ExprKind::kSymbol:
        return 1;
      case ExprKind::kLoad:
        return 2;
      case ExprKind::kOp:
        return 3;
      case ExprKind::kSelect:
        return 4;
      case ExprKind::kCast:
        return 5;
      case ExprKind::kConst:
        return 6;
    }
    return 7;
  };
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  if (int c = cmp(rank(a->kind), rank(b->kind))) return c;
  if (int c = cmp(a->index, b->index)) return c;
  if (int c = cmp(static_cast<int>(a->op), static_cast<int>(b->op))) return c;
  if (int c = cmp(static_cast<int>(a->dtype), static_cast<int>(b->dtype))) return c;
  if (int c = cmp(a->i_value, b->i_value)) return c;
  if (int c = cmp(Bits(a->f_value), Bits(b->f_value))) return c;
  if (int c = cmp(a->operands.size(), b->operands.size())) return c;
  for (size_t i = 0; i < a->operands.size(); ++i) {
    if (int c = Compare(a->operands[i].get(), b->operands[i].get())) return c;
  }
  return 0;
}

// The hash-consing key of a node whose operands are already hash-consed.
struct NodeKey {
  ExprKind kind;
  DType dtype;
  ScalarOp op;
  int index;
  int64_t i_value;
  uint64_t f_bits;
  std::vector<const Expr*> operands;

  bool operator==(const NodeKey& o) const {
    return kind == o.kind && dtype == o.dtype && op == o.op && index == o.index &&
           i_value == o.i_value && f_bits == o.f_bits && operands == o.operands;
  }
  template <typename H>
  friend H AbslHashValue(H h, const NodeKey& k) {
    return H::combine(std::move(h), static_cast<int>(k.kind), static_cast<int>(k.dtype),
                      static_cast<int>(k.op), k.index, k.i_value, k.f_bits, k.operands);
  }
};

// sum(coeff * atom) + k, coefficients nonzero, atoms distinct (hash-consed) and never
// constants or sums.
struct Term {
  ExprPtr atom;
  int64_t coeff;
};
struct Lin {
  std::vector<Term> terms;
  int64_t k = 0;
  bool IsConst() const { return terms.empty(); }
};

void AddTerm(Lin* l, const ExprPtr& atom, int64_t coeff) {
  if (coeff == 0) return;
  for (size_t i = 0; i < l->terms.size(); ++i) {
    if (l->terms[i].atom == atom) {
      l->terms[i].coeff = WrapAdd(l->terms[i].coeff, coeff);
      if (l->terms[i].coeff == 0) l->terms.erase(l->terms.begin() + i);
      return;
    }
  }
  l->terms.push_back({atom, coeff});
}

// a + scale * b (i64 wrap-around: the ring identities hold exactly).
Lin Combine(const Lin& a, const Lin& b, int64_t scale) {
  Lin r = a;
  for (const Term& t : b.terms) AddTerm(&r, t.atom, WrapMul(t.coeff, scale));
  r.k = WrapAdd(r.k, WrapMul(b.k, scale));
  return r;
}

Lin Scale(const Lin& a, int64_t c) { return Combine(Lin{}, a, c); }
Lin ConstLin(int64_t v) { return Lin{{}, v}; }

bool IsConstI64(const ExprPtr& e, int64_t* v) {
  if (e->kind != ExprKind::kConst || e->dtype != DType::kI64) return false;
  *v = e->i_value;
  return true;
}

// Whether `e` is `y op c` with a positive constant c.
bool IsOpByPositive(const Expr& e, ScalarOp op, int64_t* c) {
  return e.kind == ExprKind::kOp && e.op == op && e.operands.size() == 2 &&
         IsConstI64(e.operands[1], c) && *c > 0;
}

class Simplifier {
 public:
  // Loop variable ranges of the current scope (a select arm narrows them).
  struct Scope {
    std::vector<Range> vars;
    int depth = 0;
    absl::flat_hash_map<const Expr*, Lin> int_memo;      // input node -> its form
    absl::flat_hash_map<const Expr*, ExprPtr> any_memo;  // input node (not i64) -> output
    absl::flat_hash_map<const Expr*, Range> ranges;      // output atom -> range
  };

  Simplifier() { scopes_.push_back(std::make_unique<Scope>()); }

  void SetLoopRanges(std::vector<Range> vars) {
    scopes_.clear();
    scopes_.push_back(std::make_unique<Scope>());
    scopes_.back()->vars = std::move(vars);
  }

  // The range loop variable with extent `extent` (a simplified extent) takes.
  Range LoopRange(const Lin& extent) {
    Range e = RangeOf(extent);
    Range r = Range::NonNegative();
    if (!e.hi_inf) {
      r.hi_inf = false;
      r.hi = e.hi <= 1 ? 0 : e.hi - 1;
    }
    return r;
  }

  ExprPtr Simplify(const ExprPtr& e) {
    if (e == nullptr) return nullptr;
    if (e->dtype == DType::kI64) return Build(SimplifyInt(e));
    return SimplifyAny(e);
  }

  Lin SimplifyInt(const ExprPtr& e) {
    Scope& s = *scopes_.back();
    if (auto it = s.int_memo.find(e.get()); it != s.int_memo.end()) return it->second;
    Lin l = SimplifyIntUncached(e);
    scopes_.back()->int_memo[e.get()] = l;
    return l;
  }

  // The canonical expression of a linear form: terms in structural order, then the
  // constant; `x + (a * c)`, `x - a`, `x - (a * c)`.
  ExprPtr Build(const Lin& l) {
    if (l.terms.empty()) return IConst(l.k);
    if (l.terms.size() == 1 && l.terms[0].coeff == 1 && l.k == 0) return l.terms[0].atom;
    std::vector<Term> terms = l.terms;
    std::stable_sort(terms.begin(), terms.end(), [](const Term& a, const Term& b) {
      return Compare(a.atom.get(), b.atom.get()) < 0;
    });
    ExprPtr acc;
    for (const Term& t : terms) {
      const int64_t c = t.coeff;
      if (acc == nullptr) {
        acc = c == 1 ? t.atom : MakeOp(ScalarOp::kMul, t.atom, IConst(c));
      } else if (c == 1) {
        acc = MakeOp(ScalarOp::kAdd, acc, t.atom);
      } else if (c == -1) {
        acc = MakeOp(ScalarOp::kSub, acc, t.atom);
      } else if (c < 0 && c != kMin) {
        acc = MakeOp(ScalarOp::kSub, acc, MakeOp(ScalarOp::kMul, t.atom, IConst(-c)));
      } else {
        acc = MakeOp(ScalarOp::kAdd, acc, MakeOp(ScalarOp::kMul, t.atom, IConst(c)));
      }
    }
    if (l.k > 0 || l.k == kMin) {
      acc = MakeOp(ScalarOp::kAdd, acc, IConst(l.k));
    } else if (l.k < 0) {
      acc = MakeOp(ScalarOp::kSub, acc, IConst(-l.k));
    }
    Lin sorted{std::move(terms), l.k};
    lin_of_.try_emplace(acc.get(), std::move(sorted));
    return acc;
  }

 private:
  // ---- nodes ---------------------------------------------------------------------------

  ExprPtr Intern(Expr e) {
    NodeKey key{e.kind, e.dtype, e.op, e.index, e.i_value, Bits(e.f_value), {}};
    for (const ExprPtr& o : e.operands) key.operands.push_back(o.get());
    auto it = interned_.find(key);
    if (it != interned_.end()) return it->second;
    ExprPtr node = std::make_shared<const Expr>(std::move(e));
    interned_.emplace(std::move(key), node);
    return node;
  }

  ExprPtr IConst(int64_t v) { return Intern(*ConstI(v)); }
  ExprPtr BConst(bool v) { return Intern(*ConstBool(v)); }

  ExprPtr MakeOp(ScalarOp op, ExprPtr a, ExprPtr b = nullptr) {
    Expr e{ExprKind::kOp, IsComparison(op) ? DType::kBool : a->dtype};
    e.op = op;
    e.operands.push_back(std::move(a));
    if (b != nullptr) e.operands.push_back(std::move(b));
    return Intern(std::move(e));
  }

  // A copy of `e` with `operands`, hash-consed.
  ExprPtr Rebuild(const Expr& e, std::vector<ExprPtr> operands) {
    Expr copy = e;
    copy.operands = std::move(operands);
    return Intern(std::move(copy));
  }

  // The two operands of a commutative op in structural order.
  std::pair<ExprPtr, ExprPtr> Ordered(ExprPtr a, ExprPtr b) {
    if (Compare(b.get(), a.get()) < 0) std::swap(a, b);
    return {a, b};
  }

  Lin Atom(ExprPtr node) {
    int64_t v;
    if (IsConstI64(node, &v)) return ConstLin(v);
    Lin l;
    l.terms.push_back({std::move(node), 1});
    return l;
  }

  // The linear form of an output node (Build records the sums it makes).
  Lin LinOf(const ExprPtr& node) {
    if (auto it = lin_of_.find(node.get()); it != lin_of_.end()) return it->second;
    return Atom(node);
  }

  // ---- ranges --------------------------------------------------------------------------

  Range RangeOf(const Lin& l) {
    Range r = Range::Of(l.k);
    for (const Term& t : l.terms) {
      r = AddRanges(r, ScaleRange(AtomRange(t.atom), t.coeff));
      if (!r.exact) break;
    }
    return r;
  }

  // The range of an output node's runtime value (wrapped sums: any i64).
  Range ValueRange(const ExprPtr& node) {
    Range r = RangeOf(LinOf(node));
    if (!r.exact) return Range::Any();
    return r;
  }

  Range AtomRange(const ExprPtr& atom) {
    Scope& s = *scopes_.back();
    if (auto it = s.ranges.find(atom.get()); it != s.ranges.end()) return it->second;
    Range r = AtomRangeUncached(*atom);
    scopes_.back()->ranges[atom.get()] = r;
    return r;
  }

  Range AtomRangeUncached(const Expr& e) {
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

  // ---- i64 expressions -----------------------------------------------------------------

  // Operand counts as the kinds need them (codegen reports malformed trees; here they
  // are only copied).
  static bool WellFormed(const Expr& e) {
    for (const ExprPtr& o : e.operands) {
      if (o == nullptr) return false;
    }
    switch (e.kind) {
      case ExprKind::kCast:
        return e.operands.size() == 1;
      case ExprKind::kSelect:
        return e.operands.size() == 3;
      case ExprKind::kOp:
        return e.operands.size() == (IsUnary(e.op) ? 1u : 2u);
      default:
        return true;
    }
  }

  Lin SimplifyIntUncached(const ExprPtr& e) {
    if (!WellFormed(*e)) return Atom(SimplifyOperands(*e));
    switch (e->kind) {
      case ExprKind::kConst:
        return ConstLin(e->i_value);
      case ExprKind::kLoopVar: {
        ExprPtr var = Intern(*e);
        Range r = AtomRange(var);
        if (r.Single()) return ConstLin(r.lo);
        return Atom(var);
      }
      case ExprKind::kSymbol:
        return Atom(Intern(*e));
      case ExprKind::kLoad:
        return Atom(SimplifyOperands(*e));
      case ExprKind::kCast: {
        ExprPtr x = SimplifyAny(e->operands[0]);
        if (x->kind == ExprKind::kConst && x->dtype == DType::kBool) {
          return ConstLin(x->i_value != 0 ? 1 : 0);
        }
        return Atom(Rebuild(*e, {x}));
      }
      case ExprKind::kSelect: {
        ExprPtr cond = SimplifyAny(e->operands[0]);
        if (cond->kind == ExprKind::kConst) {
          return SimplifyInt(e->operands[cond->i_value != 0 ? 1 : 2]);
        }
        ExprPtr t = InScope(cond, true, *e->operands[1],
                            [&] { return Build(SimplifyInt(e->operands[1])); });
        ExprPtr f = InScope(cond, false, *e->operands[2],
                            [&] { return Build(SimplifyInt(e->operands[2])); });
        if (t == f) return LinOf(t);
        return Atom(Rebuild(*e, {cond, t, f}));
      }
      case ExprKind::kOp:
        break;
    }
    const ScalarOp op = e->op;
    if (e->operands[0]->dtype != DType::kI64 ||
        (!IsUnary(op) && e->operands[1]->dtype != DType::kI64)) {
      return Atom(SimplifyOperands(*e));  // malformed: codegen reports it
    }
    switch (op) {
      case ScalarOp::kAdd:
      case ScalarOp::kSub:
        return Normalize(Combine(SimplifyInt(e->operands[0]), SimplifyInt(e->operands[1]),
                                 op == ScalarOp::kAdd ? 1 : -1));
      case ScalarOp::kNeg:
        return Scale(SimplifyInt(e->operands[0]), -1);
      case ScalarOp::kMul: {
        Lin a = SimplifyInt(e->operands[0]), b = SimplifyInt(e->operands[1]);
        if (a.IsConst()) return Normalize(Scale(b, a.k));
        if (b.IsConst()) return Normalize(Scale(a, b.k));
        auto [x, y] = Ordered(Build(a), Build(b));
        return Atom(MakeOp(ScalarOp::kMul, x, y));
      }
      case ScalarOp::kDiv:
      case ScalarOp::kMod: {
        const bool mod = op == ScalarOp::kMod;
        Lin a = SimplifyInt(e->operands[0]), b = SimplifyInt(e->operands[1]);
        if (b.IsConst() && b.k > 0) return mod ? ModConst(a, b.k) : DivConst(a, b.k);
        if (b.IsConst() && a.IsConst() && b.k != 0) {
          return ConstLin(mod ? FloorModI64(a.k, b.k) : FloorDivI64(a.k, b.k));
        }
        return Atom(MakeOp(op, Build(a), Build(b)));
      }
      case ScalarOp::kMin:
      case ScalarOp::kMax:
        return MinMax(op, SimplifyInt(e->operands[0]), SimplifyInt(e->operands[1]));
      case ScalarOp::kAbs: {
        Lin a = SimplifyInt(e->operands[0]);
        if (a.IsConst()) return ConstLin(runtime::WrapAbs(a.k));
        Range r = RangeOf(a);
        if (r.exact && r.FiniteLo() && r.lo >= 0) return a;
        return Atom(MakeOp(op, Build(a)));
      }
      default:
        return Atom(SimplifyOperands(*e));
    }
  }

  // Collects c*k*(y / c) + k*(y % c) into k*y (exact for every y).
  Lin Normalize(Lin l) {
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = 0; i < l.terms.size() && !changed; ++i) {
        const Expr& d = *l.terms[i].atom;
        int64_t c, c2;
        if (!IsOpByPositive(d, ScalarOp::kDiv, &c) || l.terms[i].coeff % c != 0) continue;
        const int64_t k = l.terms[i].coeff / c;
        for (size_t j = 0; j < l.terms.size(); ++j) {
          const Expr& m = *l.terms[j].atom;
          if (IsOpByPositive(m, ScalarOp::kMod, &c2) && m.operands[0] == d.operands[0] && c2 == c &&
              l.terms[j].coeff == k) {
            ExprPtr y = d.operands[0];
            l.terms.erase(l.terms.begin() + std::max(i, j));
            l.terms.erase(l.terms.begin() + std::min(i, j));
            l = Combine(l, LinOf(y), k);
            changed = true;
            break;
          }
        }
      }
    }
    return l;
  }

  // x = c*A + r, A the terms whose coefficient c divides, r the others and the constant.
  void Split(const Lin& x, int64_t c, Lin* a, Lin* r) {
    for (const Term& t : x.terms) {
      if (t.coeff % c == 0) {
        AddTerm(a, t.atom, t.coeff / c);
      } else {
        AddTerm(r, t.atom, t.coeff);
      }
    }
    r->k = x.k;
  }

  // The gcd of c and every coefficient and the constant of r.
  static int64_t CommonFactor(const Lin& r, int64_t c) {
    auto mag = [](int64_t v) {
      return v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    };
    uint64_t g = static_cast<uint64_t>(c);
    for (const Term& t : r.terms) g = std::gcd(g, mag(t.coeff));
    g = std::gcd(g, mag(r.k));
    return static_cast<int64_t>(g);  // divides c, so fits
  }

  // The block [m*c, (m+1)*c) holding all of r's values, if there is one.
  std::optional<int64_t> Block(const Lin& r, int64_t c) {
    Range rr = RangeOf(r);
    if (!rr.exact || rr.lo_inf || rr.hi_inf) return std::nullopt;
    int64_t m = FloorDivI64(rr.lo, c);
    if (FloorDivI64(rr.hi, c) != m) return std::nullopt;
    return m;
  }

  // x / c, c > 0.
  Lin DivConst(const Lin& x, int64_t c) {
    if (x.IsConst()) return ConstLin(FloorDivI64(x.k, c));
    if (c == 1) return x;
    auto keep = [&] { return Atom(MakeOp(ScalarOp::kDiv, Build(x), IConst(c))); };
    // x / c = A + r / c needs x's and r's runtime values to be the integers they denote.
    if (!RangeOf(x).exact) return keep();
    Lin a, r;
    Split(x, c, &a, &r);
    if (!RangeOf(r).exact) return keep();
    if (std::optional<int64_t> m = Block(r, c)) return Combine(a, ConstLin(*m), 1);
    if (int64_t g = CommonFactor(r, c); g > 1) {
      for (Term& t : r.terms) t.coeff /= g;
      r.k /= g;
      c /= g;
      if (c == 1) return Combine(a, r, 1);
    }
    // (y / c2) / c = y / (c2 * c)
    if (r.terms.size() == 1 && r.k == 0 && r.terms[0].coeff == 1) {
      const Expr& inner = *r.terms[0].atom;
      int64_t c2;
      if (IsOpByPositive(inner, ScalarOp::kDiv, &c2) && Fits(static_cast<__int128>(c2) * c)) {
        return Combine(a, DivConst(LinOf(inner.operands[0]), c2 * c), 1);
      }
    }
    return Combine(a, Atom(MakeOp(ScalarOp::kDiv, Build(r), IConst(c))), 1);
  }

  // x % c, c > 0.
  Lin ModConst(const Lin& x, int64_t c) {
    if (x.IsConst()) return ConstLin(FloorModI64(x.k, c));
    if (c == 1) return ConstLin(0);
    auto keep = [&] { return Atom(MakeOp(ScalarOp::kMod, Build(x), IConst(c))); };
    if (!RangeOf(x).exact) return keep();
    Lin a, r;
    Split(x, c, &a, &r);
    if (!RangeOf(r).exact) return keep();
    if (std::optional<int64_t> m = Block(r, c)) {
      return Combine(r, ConstLin(WrapMul(*m, c)), -1);
    }
    int64_t g = CommonFactor(r, c);
    if (g > 1) {
      for (Term& t : r.terms) t.coeff /= g;
      r.k /= g;
      c /= g;
    }
    Lin inner_mod;
    bool merged = false;
    // (y % c2) % c = y % c when c divides c2
    if (r.terms.size() == 1 && r.k == 0 && r.terms[0].coeff == 1) {
      const Expr& inner = *r.terms[0].atom;
      int64_t c2;
      if (IsOpByPositive(inner, ScalarOp::kMod, &c2) && c2 % c == 0) {
        inner_mod = ModConst(LinOf(inner.operands[0]), c);
        merged = true;
      }
    }
    if (!merged) inner_mod = Atom(MakeOp(ScalarOp::kMod, Build(r), IConst(c)));
    return g > 1 ? Scale(inner_mod, g) : inner_mod;
  }

  Lin MinMax(ScalarOp op, const Lin& a, const Lin& b) {
    const bool min = op == ScalarOp::kMin;
    if (a.IsConst() && b.IsConst()) return ConstLin(min ? std::min(a.k, b.k) : std::max(a.k, b.k));
    if (RangeOf(a).exact && RangeOf(b).exact) {
      Range d = RangeOf(Combine(a, b, -1));
      if (Decide(ScalarOp::kLe, d) == true) return min ? a : b;  // a <= b everywhere
      if (Decide(ScalarOp::kGe, d) == true) return min ? b : a;  // a >= b everywhere
    }
    auto [x, y] = Ordered(Build(a), Build(b));
    if (x == y) return a;
    return Atom(MakeOp(op, x, y));
  }

  // ---- other expressions ---------------------------------------------------------------

  ExprPtr SimplifyOperands(const Expr& e) {
    std::vector<ExprPtr> operands;
    for (const ExprPtr& o : e.operands) operands.push_back(Simplify(o));
    return Rebuild(e, std::move(operands));
  }

  ExprPtr SimplifyAny(const ExprPtr& e) {
    if (e->dtype == DType::kI64) return Build(SimplifyInt(e));
    Scope& s = *scopes_.back();
    if (auto it = s.any_memo.find(e.get()); it != s.any_memo.end()) return it->second;
    ExprPtr out = SimplifyAnyUncached(e);
    scopes_.back()->any_memo[e.get()] = out;
    return out;
  }

  ExprPtr SimplifyAnyUncached(const ExprPtr& e) {
    if (!WellFormed(*e)) return SimplifyOperands(*e);
    switch (e->kind) {
      case ExprKind::kConst:
      case ExprKind::kLoopVar:
      case ExprKind::kSymbol:
        return Intern(*e);
      case ExprKind::kLoad:
        return SimplifyOperands(*e);
      case ExprKind::kCast: {
        if (e->operands.size() != 1) return SimplifyOperands(*e);
        ExprPtr x = Simplify(e->operands[0]);
        int64_t v;
        if (e->dtype == DType::kBool && IsConstI64(x, &v)) return BConst(v != 0);
        return Rebuild(*e, {x});
      }
      case ExprKind::kSelect: {
        if (e->operands.size() != 3) return SimplifyOperands(*e);
        ExprPtr cond = Simplify(e->operands[0]);
        if (cond->kind == ExprKind::kConst)
          return Simplify(e->operands[cond->i_value != 0 ? 1 : 2]);
        ExprPtr t = InScope(cond, true, *e->operands[1], [&] { return Simplify(e->operands[1]); });
        ExprPtr f = InScope(cond, false, *e->operands[2], [&] { return Simplify(e->operands[2]); });
        if (t == f) return t;
        return Rebuild(*e, {cond, t, f});
      }
      case ExprKind::kOp:
        break;
    }
    if (e->operands.empty()) return SimplifyOperands(*e);
    if (IsComparison(e->op) && e->operands.size() == 2 && e->operands[0]->dtype == DType::kI64 &&
        e->operands[1]->dtype == DType::kI64) {
      Lin a = SimplifyInt(e->operands[0]), b = SimplifyInt(e->operands[1]);
      if (RangeOf(a).exact && RangeOf(b).exact) {
        if (std::optional<bool> v = Decide(e->op, RangeOf(Combine(a, b, -1)))) return BConst(*v);
      }
      return MakeOp(e->op, Build(a), Build(b));
    }
    if (e->dtype == DType::kBool && e->operands[0]->dtype == DType::kBool &&
        (e->op == ScalarOp::kAnd || e->op == ScalarOp::kOr || e->op == ScalarOp::kNot)) {
      ExprPtr x = Simplify(e->operands[0]);
      auto is = [](const ExprPtr& c, bool v) {
        return c->kind == ExprKind::kConst && (c->i_value != 0) == v;
      };
      if (e->op == ScalarOp::kNot) {
        if (x->kind == ExprKind::kConst) return BConst(x->i_value == 0);
        return MakeOp(ScalarOp::kNot, x);
      }
      if (e->operands.size() != 2) return SimplifyOperands(*e);
      ExprPtr y = Simplify(e->operands[1]);
      const bool land = e->op == ScalarOp::kAnd;
      // and: false absorbs, true is neutral; or the other way round.
      if (is(x, !land) || is(y, !land)) return BConst(!land);
      if (is(x, land)) return y;
      if (is(y, land)) return x;
      return MakeOp(e->op, x, y);
    }
    return SimplifyOperands(*e);
  }

  // ---- narrowing inside select arms -----------------------------------------------------

  // The loop variables `e` (an input node) reads, as bits (bit 63: any of 63 and up).
  uint64_t VarsUsed(const Expr& e) {
    if (e.kind == ExprKind::kLoopVar) return uint64_t{1} << std::clamp(e.index, 0, 63);
    if (auto it = vars_used_.find(&e); it != vars_used_.end()) return it->second;
    uint64_t used = 0;
    for (const ExprPtr& o : e.operands) used |= VarsUsed(*o);
    vars_used_[&e] = used;
    return used;
  }

  // Narrows `vars` by `cond` being `truth`; returns the variables narrowed (as bits).
  uint64_t Narrow(const ExprPtr& cond, bool truth, std::vector<Range>* vars) {
    if (cond->kind != ExprKind::kOp || cond->operands.empty()) return 0;
    const ScalarOp op = cond->op;
    if (op == ScalarOp::kNot) return Narrow(cond->operands[0], !truth, vars);
    if ((op == ScalarOp::kAnd && truth) || (op == ScalarOp::kOr && !truth)) {
      if (cond->operands.size() != 2) return 0;
      return Narrow(cond->operands[0], truth, vars) | Narrow(cond->operands[1], truth, vars);
    }
    if (!IsComparison(op) || cond->operands.size() != 2 ||
        cond->operands[0]->dtype != DType::kI64) {
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

  // f() (which simplifies `arm`) in a scope where `cond` is `truth` (narrowed loop
  // variable ranges), if that narrows a variable the arm reads.
  template <typename F>
  ExprPtr InScope(const ExprPtr& cond, bool truth, const Expr& arm, F f) {
    const Scope& outer = *scopes_.back();
    if (outer.depth >= kMaxRefineDepth || refine_scopes_ >= kMaxRefineScopes) return f();
    std::vector<Range> vars = outer.vars;
    if ((Narrow(cond, truth, &vars) & VarsUsed(arm)) == 0) return f();
    ++refine_scopes_;
    auto scope = std::make_unique<Scope>();
    scope->vars = std::move(vars);
    scope->depth = outer.depth + 1;
    scopes_.push_back(std::move(scope));
    ExprPtr out = f();
    scopes_.pop_back();
    return out;
  }

  std::vector<std::unique_ptr<Scope>> scopes_;
  int refine_scopes_ = 0;
  absl::flat_hash_map<const Expr*, uint64_t> vars_used_;  // input nodes
  absl::flat_hash_map<NodeKey, ExprPtr> interned_;
  absl::flat_hash_map<const Expr*, Lin> lin_of_;  // output sums -> their forms
};

// Counts the distinct nodes of `e` not seen yet; returns its size as printed.
int64_t CountNodes(const ExprPtr& e, absl::flat_hash_map<const Expr*, int64_t>* printed,
                   ExprNodeCounts* counts) {
  if (e == nullptr) return 0;
  if (auto it = printed->find(e.get()); it != printed->end()) return it->second;
  ++counts->nodes;
  if (e->dtype == DType::kI64) ++counts->i64_nodes;
  int64_t size = 1;
  for (const ExprPtr& o : e->operands) {
    int64_t s = CountNodes(o, printed, counts);
    size = s > kMax - size ? kMax : size + s;
  }
  (*printed)[e.get()] = size;
  return size;
}

}  // namespace

void SimplifyKernel(Kernel* k) {
  // The simplifier memoizes by input node: the input must outlive it.
  const Kernel input = *k;
  Simplifier s;
  // Extents are evaluated outside the loops they bound: no loop variable ranges there.
  std::vector<Range> vars;
  for (ExprPtr& extent : k->loops) {
    if (extent == nullptr) continue;
    Lin l = s.SimplifyInt(extent);
    extent = s.Build(l);
    vars.push_back(s.LoopRange(l));
  }
  // The variable past the loops (a reduction's r, attention's column e) is variable
  // loops.size(), over its extent.
  if (ExprPtr* extent = MutableVarExtent(k); extent != nullptr && *extent != nullptr) {
    Lin l = s.SimplifyInt(*extent);
    *extent = s.Build(l);
    if (vars.size() == k->loops.size()) vars.push_back(s.LoopRange(l));
  }
  if (vars.size() < k->loops.size()) vars.clear();  // malformed (null extents): no ranges
  s.SetLoopRanges(std::move(vars));
  for (ExprPtr& e : k->store_indices) e = s.Simplify(e);
  for (ExprPtr* e : {&k->value, &k->finish_scale, &k->lhs, &k->rhs, &k->values}) {
    *e = s.Simplify(*e);
  }
  for (ExprPtr& e : k->sum_indices) e = s.Simplify(e);
}

void SimplifyKernelIndices(Program* program) {
  for (Kernel& k : program->kernels) SimplifyKernel(&k);
}

ExprPtr SimplifyIndexExpr(const ExprPtr& e, const std::vector<ExprPtr>& loop_extents) {
  Simplifier s;
  std::vector<Range> vars;
  for (const ExprPtr& extent : loop_extents) vars.push_back(s.LoopRange(s.SimplifyInt(extent)));
  s.SetLoopRanges(std::move(vars));
  return s.Simplify(e);
}

ExprNodeCounts CountKernelExprNodes(const Program& program) {
  ExprNodeCounts counts;
  for (const Kernel& k : program.kernels) {
    absl::flat_hash_map<const Expr*, int64_t> printed;
    for (const ExprPtr* e : KernelExprs(k)) {
      int64_t s = CountNodes(*e, &printed, &counts);
      counts.printed_nodes = s > kMax - counts.printed_nodes ? kMax : counts.printed_nodes + s;
    }
  }
  return counts;
}

}  // namespace graphjit::compiler
