// Canonical-form symbolic integer arithmetic: polynomials over atoms.
#include "ir/sym_expr.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/check.h"
#include "ir/status_macros.h"

namespace graphjit::ir {

// An atom is a symbol or an irreducible div / mod / max / min of two expressions.
enum class AtomKind { kSymbol, kFloorDiv, kMod, kMax, kMin };

struct Atom {
  AtomKind kind;
  std::string name;       // kSymbol
  SymExpr lhs, rhs;       // the others
  std::string text;       // canonical text, also the sort key
  bool overflow = false;  // lhs or rhs overflowed
};

// A product of atoms times an integer; `key` is the atoms' texts joined by '*'
// ("" for the constant term).
struct Term {
  int64_t coeff = 0;
  std::vector<std::shared_ptr<const Atom>> factors;  // sorted by text
  std::string key;
};

struct SymExpr::Rep {
  std::vector<Term> terms;  // sorted by key, no zero coefficients, constant term last
  std::string text;
  // Some coefficient of this expression or of one it was built from left int64 (the
  // arithmetic wrapped): Evaluate fails and the parser reports the dim.
  bool overflow = false;
};

namespace {

int64_t FloorDivInt(int64_t a, int64_t b) {
  // INT64_MIN / -1 traps in the hardware divide (SIGFPE on x86); -a is the quotient, and
  // negating in unsigned arithmetic wraps INT64_MIN to itself like the rest of the
  // construction-time arithmetic instead of being undefined. FloorDiv marks the overflow.
  if (b == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t FloorModInt(int64_t a, int64_t b) {
  if (b == -1) return 0;  // see FloorDivInt: a % -1 traps too for INT64_MIN
  return a - FloorDivInt(a, b) * b;
}

// The canonical text is an expression's identity (operator== and the hash compare it), so
// a symbol must print as one token: a name spelled `S+1` or `2` would equal an expression.
bool IsIdentifier(absl::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

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

// Builds canonical Reps from a map of terms keyed by their atom keys.
class SymExprBuilder {
 public:
  using TermMap = std::map<std::string, Term>;

  // `overflow`: the arithmetic that made `terms` (or an operand of it) overflowed.
  static SymExpr Make(TermMap terms, bool overflow = false) {
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

  static SymExpr FromAtom(std::shared_ptr<const Atom> atom) {
    TermMap m;
    Term t;
    t.coeff = 1;
    t.key = atom->text;
    t.factors.push_back(std::move(atom));
    m.emplace(t.key, std::move(t));
    return Make(std::move(m));
  }

  static TermMap ToMap(const SymExpr& e) {
    TermMap m;
    for (const Term& t : e.rep_->terms) m.emplace(t.key, t);
    return m;
  }

  static const std::vector<Term>& Terms(const SymExpr& e) { return e.rep_->terms; }
  static bool Overflowed(const SymExpr& e) { return e.rep_->overflow; }

  // `e`, marked as overflowed if `overflow` is set.
  static SymExpr MarkOverflow(SymExpr e, bool overflow) {
    if (!overflow || e.rep_->overflow) return e;
    auto rep = std::make_shared<SymExpr::Rep>(*e.rep_);
    rep->overflow = true;
    return SymExpr(std::move(rep));
  }

  // Coefficients combine with wrapping arithmetic (no undefined behaviour); `*overflow` is
  // set when a result does not fit in int64.
  static void AddTerm(TermMap* m, Term t, bool* overflow) {
    auto it = m->find(t.key);
    if (it == m->end()) {
      m->emplace(t.key, std::move(t));
    } else {
      *overflow |= __builtin_add_overflow(it->second.coeff, t.coeff, &it->second.coeff);
    }
  }

  static Term Multiply(const Term& a, const Term& b, bool* overflow) {
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

  static std::shared_ptr<const Atom> MakeAtom(AtomKind kind, SymExpr lhs, SymExpr rhs) {
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

  // Splits `a` into the terms whose coefficients `c` divides (returned divided by c)
  // and the rest; for integer-valued terms floor((c*q + r) / c) == q + floor(r / c).
  // (`c` > 0, so neither the division nor the sums of distinct terms overflow.)
  static std::pair<SymExpr, SymExpr> SplitDivisible(const SymExpr& a, int64_t c) {
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
};

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
  GJ_CHECK(IsIdentifier(name)) << "symbol name '" << name
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

namespace {

absl::Status OverflowError(absl::string_view text) {
  return absl::InvalidArgumentError(absl::StrCat("integer overflow evaluating '", text, "'"));
}

absl::StatusOr<int64_t> EvaluateAtom(const Atom& atom, const Bindings& bindings) {
  if (atom.kind == AtomKind::kSymbol) {
    auto it = bindings.find(atom.name);
    if (it == bindings.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("symbol '", atom.name, "' is not bound to a value"));
    }
    return it->second;
  }
  GJ_ASSIGN_OR_RETURN(int64_t a, atom.lhs.Evaluate(bindings));
  GJ_ASSIGN_OR_RETURN(int64_t b, atom.rhs.Evaluate(bindings));
  switch (atom.kind) {
    case AtomKind::kFloorDiv:
    case AtomKind::kMod:
      if (b == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("division by zero evaluating '", atom.text, "'"));
      }
      if (atom.kind == AtomKind::kFloorDiv && a == INT64_MIN && b == -1) {
        return OverflowError(atom.text);
      }
      return atom.kind == AtomKind::kFloorDiv ? FloorDivInt(a, b) : FloorModInt(a, b);
    case AtomKind::kMax:
      return std::max(a, b);
    case AtomKind::kMin:
      return std::min(a, b);
    case AtomKind::kSymbol:
      break;
  }
  GJ_FATAL() << "unreachable";
}

}  // namespace

absl::StatusOr<int64_t> SymExpr::Evaluate(const Bindings& bindings) const {
  // Values become buffer sizes and offsets, so a result that does not fit in int64 is an
  // error rather than a silently wrapped (and undefined) value.
  if (rep_->overflow) return OverflowError(rep_->text);
  int64_t sum = 0;
  for (const Term& t : rep_->terms) {
    int64_t product = t.coeff;
    for (const auto& f : t.factors) {
      GJ_ASSIGN_OR_RETURN(int64_t v, EvaluateAtom(*f, bindings));
      if (__builtin_mul_overflow(product, v, &product)) return OverflowError(rep_->text);
    }
    if (__builtin_add_overflow(sum, product, &sum)) return OverflowError(rep_->text);
  }
  return sum;
}

SymExpr SymExpr::Bind(const Bindings& bindings) const {
  SymExpr result = 0;
  for (const Term& t : rep_->terms) {
    SymExpr product = t.coeff;
    for (const auto& f : t.factors) {
      switch (f->kind) {
        case AtomKind::kSymbol: {
          auto it = bindings.find(f->name);
          product = product * (it == bindings.end() ? Symbol(f->name) : SymExpr(it->second));
          break;
        }
        case AtomKind::kFloorDiv:
          product = product * FloorDiv(f->lhs.Bind(bindings), f->rhs.Bind(bindings));
          break;
        case AtomKind::kMod:
          product = product * Mod(f->lhs.Bind(bindings), f->rhs.Bind(bindings));
          break;
        case AtomKind::kMax:
          product = product * Max(f->lhs.Bind(bindings), f->rhs.Bind(bindings));
          break;
        case AtomKind::kMin:
          product = product * Min(f->lhs.Bind(bindings), f->rhs.Bind(bindings));
          break;
      }
    }
    result = result + product;
  }
  return SymExprBuilder::MarkOverflow(result, rep_->overflow);
}

void SymExpr::CollectSymbols(std::set<std::string>* out) const {
  for (const Term& t : rep_->terms) {
    for (const auto& f : t.factors) {
      if (f->kind == AtomKind::kSymbol) {
        out->insert(f->name);
      } else {
        f->lhs.CollectSymbols(out);
        f->rhs.CollectSymbols(out);
      }
    }
  }
}

const std::string& SymExpr::ToString() const { return rep_->text; }

std::vector<SymExpr::TermView> SymExpr::Terms() const {
  std::vector<TermView> terms;
  for (const Term& t : rep_->terms) {
    TermView out{t.coeff, {}};
    for (const auto& f : t.factors) {
      AtomView a;
      a.kind = static_cast<AtomView::Kind>(f->kind);
      a.name = f->name;
      if (f->kind != AtomKind::kSymbol) {
        a.lhs = std::make_shared<const SymExpr>(f->lhs);
        a.rhs = std::make_shared<const SymExpr>(f->rhs);
      }
      out.factors.push_back(std::move(a));
    }
    terms.push_back(std::move(out));
  }
  return terms;
}

std::string ShapeToString(const Shape& shape) {
  std::vector<std::string> dims;
  for (const SymExpr& d : shape) dims.push_back(d.ToString());
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

SymExpr NumElements(const Shape& shape) {
  SymExpr n = 1;
  for (const SymExpr& d : shape) n = n * d;
  return n;
}

absl::StatusOr<std::vector<int64_t>> EvaluateShape(const Shape& shape, const Bindings& bindings) {
  std::vector<int64_t> dims;
  dims.reserve(shape.size());
  for (const SymExpr& d : shape) {
    GJ_ASSIGN_OR_RETURN(int64_t v, d.Evaluate(bindings));
    dims.push_back(v);
  }
  return dims;
}

Shape ConstShape(const std::vector<int64_t>& dims) { return Shape(dims.begin(), dims.end()); }

// ---------------------------------------------------------------------------------------
// Parser: expr := term (('+'|'-') term)*; term := unary (('*'|'/'|'%') unary)*;
// unary := '-' unary | primary; primary := int | name | ('max'|'min') '(' expr ',' expr ')'
// | '(' expr ')'.
namespace {

// Bounds on parsed text, so hostile input fails cleanly instead of exhausting the stack or
// memory: the nesting depth (parentheses, max/min, unary minus, and chained '/' or '%',
// each of which nests an atom inside the next) and the size of every intermediate result
// (a product of sums multiplies out, so `(A+B+C)*(A+B+C)*...` grows exponentially in the
// length of the text). Real dims are nowhere near either.
constexpr int kMaxDepth = 200;
constexpr size_t kMaxProductTerms = 4096;
constexpr size_t kMaxTextSize = 4096;

class SymParser {
 public:
  SymParser(absl::string_view text, size_t pos) : text_(text), start_(pos), pos_(pos) {}

  absl::StatusOr<SymExpr> Expr(int depth = 0) {
    if (depth > kMaxDepth) return Error("expression nested too deeply");
    absl::StatusOr<SymExpr> lhs = Term(depth);
    if (!lhs.ok()) return lhs;
    SymExpr acc = *lhs;
    while (true) {
      SkipSpace();
      if (Peek() != '+' && Peek() != '-') return acc;
      char op = text_[pos_++];
      absl::StatusOr<SymExpr> rhs = Term(depth);
      if (!rhs.ok()) return rhs;
      acc = op == '+' ? acc + *rhs : acc - *rhs;
      GJ_RETURN_IF_ERROR(CheckSize(acc));
    }
  }

  size_t pos() const { return pos_; }

 private:
  absl::StatusOr<SymExpr> Term(int depth) {
    absl::StatusOr<SymExpr> lhs = Unary(depth);
    if (!lhs.ok()) return lhs;
    SymExpr acc = *lhs;
    while (true) {
      SkipSpace();
      char c = Peek();
      if (c != '*' && c != '/' && c != '%') return acc;
      ++pos_;
      absl::StatusOr<SymExpr> rhs = Unary(depth);
      if (!rhs.ok()) return rhs;
      if (c == '*') {
        if (SymExprBuilder::Terms(acc).size() * SymExprBuilder::Terms(*rhs).size() >
            kMaxProductTerms) {
          return Error("expression too large");
        }
        acc = acc * *rhs;
      } else {
        // (A divisor that wrapped to 0 is reported as the overflow it is.)
        if (rhs->IsConstant() && *rhs->AsConstant() == 0 && !rhs->Overflowed()) {
          return Error(c == '/' ? "division by zero" : "mod by zero");
        }
        if (++depth > kMaxDepth) return Error("expression nested too deeply");
        acc = c == '/' ? SymExpr::FloorDiv(acc, *rhs) : SymExpr::Mod(acc, *rhs);
      }
      GJ_RETURN_IF_ERROR(CheckSize(acc));
    }
  }

  absl::StatusOr<SymExpr> Unary(int depth) {
    SkipSpace();
    if (Peek() == '-') {
      ++pos_;
      if (depth > kMaxDepth) return Error("expression nested too deeply");
      absl::StatusOr<SymExpr> e = Unary(depth + 1);
      if (!e.ok()) return e;
      return -*e;
    }
    return Primary(depth);
  }

  absl::StatusOr<SymExpr> Primary(int depth) {
    SkipSpace();
    char c = Peek();
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(Peek()))) {
        int digit = text_[pos_] - '0';
        if (v > (INT64_MAX - digit) / 10) return Error("integer literal too large");
        v = v * 10 + digit;
        ++pos_;
      }
      return SymExpr(v);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (std::isalnum(static_cast<unsigned char>(Peek())) || Peek() == '_') ++pos_;
      std::string name(text_.substr(start, pos_ - start));
      SkipSpace();
      if ((name == "max" || name == "min") && Peek() == '(') {
        ++pos_;
        absl::StatusOr<SymExpr> a = Expr(depth + 1);
        if (!a.ok()) return a;
        GJ_RETURN_IF_ERROR(Expect(','));
        absl::StatusOr<SymExpr> b = Expr(depth + 1);
        if (!b.ok()) return b;
        GJ_RETURN_IF_ERROR(Expect(')'));
        SymExpr e = name == "max" ? SymExpr::Max(*a, *b) : SymExpr::Min(*a, *b);
        GJ_RETURN_IF_ERROR(CheckSize(e));
        return e;
      }
      return SymExpr::Symbol(name);
    }
    if (c == '(') {
      ++pos_;
      absl::StatusOr<SymExpr> e = Expr(depth + 1);
      if (!e.ok()) return e;
      GJ_RETURN_IF_ERROR(Expect(')'));
      return e;
    }
    return Error("expected an integer, a symbol name, max(, min( or '('");
  }

  absl::Status CheckSize(const SymExpr& e) const {
    if (e.ToString().size() <= kMaxTextSize) return absl::OkStatus();
    return Error("expression too large");
  }

 public:
  // A constant of the dim (a coefficient, or the constant term) left int64. The parse goes
  // on with wrapped values (they are defined, and marked) so that the error can quote the
  // whole dim, at its start.
  absl::Status OverflowError() const {
    absl::string_view text = absl::StripAsciiWhitespace(text_.substr(start_, pos_ - start_));
    std::string quoted =
        text.size() <= 60 ? std::string(text) : absl::StrCat(text.substr(0, 57), "...");
    return absl::InvalidArgumentError(
        absl::StrCat("offset ", start_, ": dim '", quoted,
                     "' overflows int64 (its constants must stay within +-2^63)"));
  }

 private:
  absl::Status Expect(char c) {
    SkipSpace();
    if (Peek() != c) return Error(absl::StrCat("expected '", std::string(1, c), "'"));
    ++pos_;
    return absl::OkStatus();
  }

  absl::Status Error(absl::string_view what) const {
    std::string found = pos_ < text_.size() ? absl::StrCat("'", text_.substr(pos_, 1), "'")
                                            : std::string("end of input");
    return absl::InvalidArgumentError(
        absl::StrCat("offset ", pos_, ": ", what, " in dim expression, found ", found));
  }

  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }

  absl::string_view text_;
  size_t start_;
  size_t pos_;
};

}  // namespace

absl::StatusOr<SymExpr> ParseSymExprAt(absl::string_view text, size_t* pos) {
  SymParser parser(text, *pos);
  absl::StatusOr<SymExpr> e = parser.Expr();
  if (e.ok() && e->Overflowed()) return parser.OverflowError();  // quotes up to pos()
  if (e.ok()) *pos = parser.pos();
  return e;
}

absl::StatusOr<SymExpr> ParseSymExpr(absl::string_view text) {
  size_t pos = 0;
  absl::StatusOr<SymExpr> e = ParseSymExprAt(text, &pos);
  if (!e.ok()) return e;
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
  if (pos != text.size()) {
    return absl::InvalidArgumentError(absl::StrCat("offset ", pos, ": unexpected '",
                                                   text.substr(pos, 1), "' after dim expression"));
  }
  return e;
}

}  // namespace graphjit::ir
