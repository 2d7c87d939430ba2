// Hash-consed nodes, linear forms and the i64 rewrites (sums, products, div, mod, min, max).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include "compiler/lower/simplify_index_internal.h"
#include "runtime/scalar_semantics.h"

namespace graphjit::compiler::simplify_index_internal {

using ir::DType;
using runtime::FloorDivI64;
using runtime::FloorModI64;
using runtime::WrapMul;

namespace {

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

// Whether `e` is `y op c` with a positive constant c.
bool IsOpByPositive(const Expr& e, ScalarOp op, int64_t* c) {
  return e.kind == ExprKind::kOp && e.op == op && e.operands.size() == 2 &&
         IsConstI64(e.operands[1], c) && *c > 0;
}

}  // namespace

ExprPtr Simplifier::Build(const Lin& l) {
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

// ---- nodes -----------------------------------------------------------------------------

ExprPtr Simplifier::Intern(Expr e) {
  NodeKey key{e.kind, e.dtype, e.op, e.index, e.i_value, Bits(e.f_value), {}};
  for (const ExprPtr& o : e.operands) key.operands.push_back(o.get());
  auto it = interned_.find(key);
  if (it != interned_.end()) return it->second;
  ExprPtr node = std::make_shared<const Expr>(std::move(e));
  interned_.emplace(std::move(key), node);
  return node;
}

ExprPtr Simplifier::IConst(int64_t v) { return Intern(*ConstI(v)); }
ExprPtr Simplifier::BConst(bool v) { return Intern(*ConstBool(v)); }

ExprPtr Simplifier::MakeOp(ScalarOp op, ExprPtr a, ExprPtr b) {
  Expr e{ExprKind::kOp, IsComparison(op) ? DType::kBool : a->dtype};
  e.op = op;
  e.operands.push_back(std::move(a));
  if (b != nullptr) e.operands.push_back(std::move(b));
  return Intern(std::move(e));
}

ExprPtr Simplifier::Rebuild(const Expr& e, std::vector<ExprPtr> operands) {
  Expr copy = e;
  copy.operands = std::move(operands);
  return Intern(std::move(copy));
}

std::pair<ExprPtr, ExprPtr> Simplifier::Ordered(ExprPtr a, ExprPtr b) {
  if (Compare(b.get(), a.get()) < 0) std::swap(a, b);
  return {a, b};
}

Lin Simplifier::Atom(ExprPtr node) {
  int64_t v;
  if (IsConstI64(node, &v)) return ConstLin(v);
  Lin l;
  l.terms.push_back({std::move(node), 1});
  return l;
}

Lin Simplifier::LinOf(const ExprPtr& node) {
  if (auto it = lin_of_.find(node.get()); it != lin_of_.end()) return it->second;
  return Atom(node);
}

// ---- i64 expressions -------------------------------------------------------------------

bool Simplifier::WellFormed(const Expr& e) {
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

Lin Simplifier::SimplifyIntUncached(const ExprPtr& e) {
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
      ExprPtr t =
          InScope(cond, true, *e->operands[1], [&] { return Build(SimplifyInt(e->operands[1])); });
      ExprPtr f =
          InScope(cond, false, *e->operands[2], [&] { return Build(SimplifyInt(e->operands[2])); });
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

Lin Simplifier::Normalize(Lin l) {
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

void Simplifier::Split(const Lin& x, int64_t c, Lin* a, Lin* r) {
  for (const Term& t : x.terms) {
    if (t.coeff % c == 0) {
      AddTerm(a, t.atom, t.coeff / c);
    } else {
      AddTerm(r, t.atom, t.coeff);
    }
  }
  r->k = x.k;
}

int64_t Simplifier::CommonFactor(const Lin& r, int64_t c) {
  auto mag = [](int64_t v) {
    return v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  };
  uint64_t g = static_cast<uint64_t>(c);
  for (const Term& t : r.terms) g = std::gcd(g, mag(t.coeff));
  g = std::gcd(g, mag(r.k));
  return static_cast<int64_t>(g);  // divides c, so fits
}

std::optional<int64_t> Simplifier::Block(const Lin& r, int64_t c) {
  Range rr = RangeOf(r);
  if (!rr.exact || rr.lo_inf || rr.hi_inf) return std::nullopt;
  int64_t m = FloorDivI64(rr.lo, c);
  if (FloorDivI64(rr.hi, c) != m) return std::nullopt;
  return m;
}

Lin Simplifier::DivConst(const Lin& x, int64_t c) {
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

Lin Simplifier::ModConst(const Lin& x, int64_t c) {
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

Lin Simplifier::MinMax(ScalarOp op, const Lin& a, const Lin& b) {
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

}  // namespace graphjit::compiler::simplify_index_internal
