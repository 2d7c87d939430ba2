// Canonical-form symbolic integer arithmetic: polynomials over atoms. This file builds
// and queries the canonical form; sym_expr_eval.cc evaluates and substitutes, and
// sym_expr_parser.cc parses the text form.
#include "ir/sym_expr.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/check.h"
#include "ir/sym_expr_internal.h"

namespace graphjit::ir {

using sym_expr_internal::Atom;
using sym_expr_internal::AtomKind;
using sym_expr_internal::FloorDivInt;
using sym_expr_internal::FloorModInt;
using sym_expr_internal::Term;

namespace {

bool IsSimpleOperand(const SymExpr& e) {
  if (e.IsSymbol()) return true;
  std::optional<int64_t> c = e.AsConstant();
  return c.has_value() && *c >= 0;
}

std::string OperandText(const SymExpr& e) {
  return IsSimpleOperand(e) ? e.ToString() : absl::StrCat("(", e.ToString(), ")");
}

std::string TermText(const Term& t) {
  if (t.factors.empty()) return absl::StrCat(t.coeff);
  // Division and mod bind like '*', so inside a product they need parentheses:
  // `2*(S/3)` is not `2*S/3`.
  bool wrap = t.coeff != 1 || t.factors.size() > 1;
  std::vector<std::string> texts;
  for (const auto& f : t.factors) {
    bool divlike = f->kind == AtomKind::kFloorDiv || f->kind == AtomKind::kMod;
    texts.push_back(wrap && divlike ? absl::StrCat("(", f->text, ")") : f->text);
  }
  std::string product = absl::StrJoin(texts, "*");
  if (t.coeff == 1) return product;
  if (t.coeff == -1) return absl::StrCat("-", product);
  return absl::StrCat(t.coeff, "*", product);
}

}  // namespace

bool IsSymbolName(absl::string_view name) {
  if (name.empty() || absl::ascii_isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::string ToSymbolName(absl::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  if (out.empty() || absl::ascii_isdigit(static_cast<unsigned char>(out[0]))) out.insert(0, "_");
  return out;
}

SymExpr SymExprBuilder::Make(TermMap terms, bool overflow) {
  auto rep = std::make_shared<SymExpr::Rep>();
  rep->overflow = overflow;
  std::optional<Term> constant;
  for (auto& [key, term] : terms) {
    for (const auto& f : term.factors) rep->overflow = rep->overflow || f->overflow;
    if (term.coeff == 0) continue;
    if (key.empty()) {
      constant = std::move(term);
    } else {
      rep->terms.push_back(std::move(term));
    }
  }
  if (constant) rep->terms.push_back(std::move(*constant));
  if (rep->terms.empty()) {
    rep->text.push_back('0');  // not = "0": GCC 12 -Wrestrict false positive
  } else {
    for (size_t i = 0; i < rep->terms.size(); ++i) {
      std::string t = TermText(rep->terms[i]);
      if (i > 0 && t[0] != '-') rep->text += "+";
      rep->text += t;
    }
  }
  return SymExpr(std::move(rep));
}

SymExpr SymExprBuilder::FromAtom(std::shared_ptr<const Atom> atom) {
  TermMap m;
  Term t;
  t.coeff = 1;
  t.key = atom->text;
  t.factors.push_back(std::move(atom));
  m.emplace(t.key, std::move(t));
  return Make(std::move(m));
}

SymExprBuilder::TermMap SymExprBuilder::ToMap(const SymExpr& e) {
  TermMap m;
  for (const Term& t : e.rep_->terms) m.emplace(t.key, t);
  return m;
}

SymExpr SymExprBuilder::MarkOverflow(SymExpr e, bool overflow) {
  if (!overflow || e.rep_->overflow) return e;
  auto rep = std::make_shared<SymExpr::Rep>(*e.rep_);
  rep->overflow = true;
  return SymExpr(std::move(rep));
}

void SymExprBuilder::AddTerm(TermMap* m, Term t, bool* overflow) {
  auto it = m->find(t.key);
  if (it == m->end()) {
    m->emplace(t.key, std::move(t));
  } else {
    *overflow |= __builtin_add_overflow(it->second.coeff, t.coeff, &it->second.coeff);
  }
}

Term SymExprBuilder::Multiply(const Term& a, const Term& b, bool* overflow) {
  Term t;
  *overflow |= __builtin_mul_overflow(a.coeff, b.coeff, &t.coeff);
  t.factors = a.factors;
  t.factors.insert(t.factors.end(), b.factors.begin(), b.factors.end());
  std::stable_sort(t.factors.begin(), t.factors.end(),
                   [](const auto& x, const auto& y) { return x->text < y->text; });
  std::vector<std::string> texts;
  for (const auto& f : t.factors) texts.push_back(f->text);
  t.key = absl::StrJoin(texts, "*");
  return t;
}

std::shared_ptr<const Atom> SymExprBuilder::MakeAtom(AtomKind kind, SymExpr lhs, SymExpr rhs) {
  auto atom = std::make_shared<Atom>();
  atom->kind = kind;
  switch (kind) {
    case AtomKind::kFloorDiv:
      atom->text = absl::StrCat(OperandText(lhs), "/", OperandText(rhs));
      break;
    case AtomKind::kMod:
      atom->text = absl::StrCat(OperandText(lhs), "%", OperandText(rhs));
      break;
    case AtomKind::kMax:
    case AtomKind::kMin:
      // Commutative, so order the operands: by text, but a constant last, as in sums
      // (`max(S, 4)`, which is also how people write it).
      if (std::make_pair(rhs.IsConstant(), rhs.ToString()) <
          std::make_pair(lhs.IsConstant(), lhs.ToString())) {
        std::swap(lhs, rhs);
      }
      atom->text = absl::StrCat(kind == AtomKind::kMax ? "max(" : "min(", lhs.ToString(), ", ",
                                rhs.ToString(), ")");
      break;
    case AtomKind::kSymbol:
      GJ_FATAL() << "symbols are made by SymExpr::Symbol";
  }
  atom->overflow = Overflowed(lhs) || Overflowed(rhs);
  atom->lhs = std::move(lhs);
  atom->rhs = std::move(rhs);
  return atom;
}

std::pair<SymExpr, SymExpr> SymExprBuilder::SplitDivisible(const SymExpr& a, int64_t c) {
  TermMap quotient, rest;
  bool overflow = a.rep_->overflow;
  for (const Term& t : Terms(a)) {
    if (t.coeff % c == 0) {
      Term q = t;
      q.coeff /= c;
      AddTerm(&quotient, std::move(q), &overflow);
    } else {
      AddTerm(&rest, t, &overflow);
    }
  }
  return {Make(std::move(quotient), overflow), Make(std::move(rest), overflow)};
}

SymExpr::SymExpr() : SymExpr(int64_t{0}) {}

namespace {

// Shapes, strides and index arithmetic are mostly small constants, and every pass and
// lowering builds them again (a compile makes hundreds of thousands): the common ones are
// made once and shared.
constexpr int64_t kMinShared = -16, kMaxShared = 4096;

std::shared_ptr<const SymExpr::Rep> MakeConstantRep(int64_t value) {
  auto rep = std::make_shared<SymExpr::Rep>();
  if (value != 0) {
    Term t;
    t.coeff = value;
    rep->terms.push_back(std::move(t));
  }
  rep->text = absl::StrCat(value);
  return rep;
}

}  // namespace

SymExpr::SymExpr(int64_t value) {
  if (value >= kMinShared && value <= kMaxShared) {
    static const auto* shared = [] {
      auto* reps = new std::vector<std::shared_ptr<const Rep>>();
      for (int64_t v = kMinShared; v <= kMaxShared; ++v) reps->push_back(MakeConstantRep(v));
      return reps;
    }();
    rep_ = (*shared)[value - kMinShared];
  } else {
    rep_ = MakeConstantRep(value);
  }
}

SymExpr SymExpr::Symbol(absl::string_view name) {
  // The canonical text is an expression's identity (operator== and the hash compare it),
  // so a symbol must print as one token: a name spelled `S+1` or `2` would equal an
  // expression.
  GJ_CHECK(IsSymbolName(name)) << "symbol name '" << name
                               << "' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)";
  auto atom = std::make_shared<Atom>();
  atom->kind = AtomKind::kSymbol;
  atom->name = std::string(name);
  atom->text = atom->name;
  return SymExprBuilder::FromAtom(std::move(atom));
}

SymExpr operator+(const SymExpr& a, const SymExpr& b) {
  std::optional<int64_t> ca = a.AsConstant(), cb = b.AsConstant();
  if (ca && cb) {  // the common case, without building term maps
    int64_t sum;
    const bool wrapped = __builtin_add_overflow(*ca, *cb, &sum);
    return SymExprBuilder::MarkOverflow(sum, wrapped || a.Overflowed() || b.Overflowed());
  }
  SymExprBuilder::TermMap m = SymExprBuilder::ToMap(a);
  bool overflow = SymExprBuilder::Overflowed(a) || SymExprBuilder::Overflowed(b);
  for (const Term& t : SymExprBuilder::Terms(b)) SymExprBuilder::AddTerm(&m, t, &overflow);
  return SymExprBuilder::Make(std::move(m), overflow);
}

SymExpr SymExpr::operator-() const { return *this * SymExpr(-1); }

SymExpr operator-(const SymExpr& a, const SymExpr& b) { return a + (-b); }

SymExpr operator*(const SymExpr& a, const SymExpr& b) {
  std::optional<int64_t> ca = a.AsConstant(), cb = b.AsConstant();
  if (ca && cb) {
    int64_t product;
    const bool wrapped = __builtin_mul_overflow(*ca, *cb, &product);
    return SymExprBuilder::MarkOverflow(product, wrapped || a.Overflowed() || b.Overflowed());
  }
  SymExprBuilder::TermMap m;
  bool overflow = SymExprBuilder::Overflowed(a) || SymExprBuilder::Overflowed(b);
  for (const Term& x : SymExprBuilder::Terms(a)) {
    for (const Term& y : SymExprBuilder::Terms(b)) {
      SymExprBuilder::AddTerm(&m, SymExprBuilder::Multiply(x, y, &overflow), &overflow);
    }
  }
  return SymExprBuilder::Make(std::move(m), overflow);
}

SymExpr SymExpr::FloorDiv(const SymExpr& a, const SymExpr& b) {
  std::optional<int64_t> cb = b.AsConstant();
  const bool overflow = a.Overflowed() || b.Overflowed();
  if (cb && *cb != 0) {
    if (*cb == 1) return SymExprBuilder::MarkOverflow(a, overflow);
    if (std::optional<int64_t> ca = a.AsConstant()) {
      return SymExprBuilder::MarkOverflow(FloorDivInt(*ca, *cb),
                                          overflow || (*ca == INT64_MIN && *cb == -1));
    }
    if (*cb > 0) {
      auto [quotient, rest] = SymExprBuilder::SplitDivisible(a, *cb);
      if (!quotient.IsConstant() || *quotient.AsConstant() != 0) {
        return quotient + FloorDiv(rest, b);
      }
    }
  }
  if (a.IsConstant() && *a.AsConstant() == 0 && !(cb && *cb == 0)) {
    return SymExprBuilder::MarkOverflow(0, overflow);
  }
  return SymExprBuilder::FromAtom(SymExprBuilder::MakeAtom(AtomKind::kFloorDiv, a, b));
}

SymExpr SymExpr::Mod(const SymExpr& a, const SymExpr& b) {
  std::optional<int64_t> cb = b.AsConstant();
  const bool overflow = a.Overflowed() || b.Overflowed();
  if (cb && *cb != 0) {
    if (*cb == 1 || *cb == -1) return SymExprBuilder::MarkOverflow(0, overflow);
    if (std::optional<int64_t> ca = a.AsConstant()) {
      return SymExprBuilder::MarkOverflow(FloorModInt(*ca, *cb), overflow);
    }
    if (*cb > 0) {
      auto [quotient, rest] = SymExprBuilder::SplitDivisible(a, *cb);
      if (!quotient.IsConstant() || *quotient.AsConstant() != 0) return Mod(rest, b);
    }
  }
  return SymExprBuilder::FromAtom(SymExprBuilder::MakeAtom(AtomKind::kMod, a, b));
}

// The sign of a - b when it is a constant that did not overflow (a wrapped difference
// would have the wrong sign).
static std::optional<int> ConstantSign(const SymExpr& a, const SymExpr& b) {
  std::optional<int64_t> ca = a.AsConstant(), cb = b.AsConstant();
  if (ca && cb) return *ca < *cb ? -1 : *ca > *cb ? 1 : 0;
  SymExpr d = a - b;
  std::optional<int64_t> c = d.AsConstant();
  if (!c || (d.Overflowed() && !a.Overflowed() && !b.Overflowed())) return std::nullopt;
  return *c < 0 ? -1 : *c > 0 ? 1 : 0;
}

SymExpr SymExpr::Max(const SymExpr& a, const SymExpr& b) {
  const bool overflow = a.Overflowed() || b.Overflowed();
  if (std::optional<int> sign = ConstantSign(a, b)) {
    return SymExprBuilder::MarkOverflow(*sign >= 0 ? a : b, overflow);
  }
  return SymExprBuilder::FromAtom(SymExprBuilder::MakeAtom(AtomKind::kMax, a, b));
}

SymExpr SymExpr::Min(const SymExpr& a, const SymExpr& b) {
  const bool overflow = a.Overflowed() || b.Overflowed();
  if (std::optional<int> sign = ConstantSign(a, b)) {
    return SymExprBuilder::MarkOverflow(*sign <= 0 ? a : b, overflow);
  }
  return SymExprBuilder::FromAtom(SymExprBuilder::MakeAtom(AtomKind::kMin, a, b));
}

bool SymExpr::Overflowed() const { return rep_->overflow; }

bool SymExpr::IsConstant() const {
  return rep_->terms.empty() || (rep_->terms.size() == 1 && rep_->terms[0].factors.empty());
}

std::optional<int64_t> SymExpr::AsConstant() const {
  if (rep_->terms.empty()) return 0;
  if (rep_->terms.size() == 1 && rep_->terms[0].factors.empty()) return rep_->terms[0].coeff;
  return std::nullopt;
}

bool SymExpr::IsSymbol(std::string* name) const {
  if (rep_->terms.size() != 1) return false;
  const Term& t = rep_->terms[0];
  if (t.coeff != 1 || t.factors.size() != 1 || t.factors[0]->kind != AtomKind::kSymbol) {
    return false;
  }
  if (name != nullptr) *name = t.factors[0]->name;
  return true;
}

}  // namespace graphjit::ir
