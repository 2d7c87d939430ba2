// Private to ir/sym_expr*.cc: the canonical form behind SymExpr and the builder of it.
#ifndef GRAPHJIT_IR_SYM_EXPR_INTERNAL_H_
#define GRAPHJIT_IR_SYM_EXPR_INTERNAL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/sym_expr.h"

namespace graphjit::ir {
namespace sym_expr_internal {

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

inline int64_t FloorDivInt(int64_t a, int64_t b) {
  // INT64_MIN / -1 traps in the hardware divide (SIGFPE on x86); -a is the quotient, and
  // negating in unsigned arithmetic wraps INT64_MIN to itself like the rest of the
  // construction-time arithmetic instead of being undefined. FloorDiv marks the overflow.
  if (b == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
inline int64_t FloorModInt(int64_t a, int64_t b) {
  if (b == -1) return 0;  // see FloorDivInt: a % -1 traps too for INT64_MIN
  return a - FloorDivInt(a, b) * b;
}

}  // namespace sym_expr_internal

struct SymExpr::Rep {
  // Sorted by key, no zero coefficients, constant term last.
  std::vector<sym_expr_internal::Term> terms;
  std::string text;
  // Some coefficient of this expression or of one it was built from left int64 (the
  // arithmetic wrapped): Evaluate fails and the parser reports the dim.
  bool overflow = false;
};

// Builds canonical Reps from a map of terms keyed by their atom keys (in graphjit::ir, not
// sym_expr_internal: SymExpr names it as its friend). Defined in sym_expr.cc.
class SymExprBuilder {
 public:
  using Atom = sym_expr_internal::Atom;
  using AtomKind = sym_expr_internal::AtomKind;
  using Term = sym_expr_internal::Term;
  using TermMap = std::map<std::string, Term>;

  // `overflow`: the arithmetic that made `terms` (or an operand of it) overflowed.
  static SymExpr Make(TermMap terms, bool overflow = false);
  static SymExpr FromAtom(std::shared_ptr<const Atom> atom);
  static TermMap ToMap(const SymExpr& e);

  static const std::vector<Term>& Terms(const SymExpr& e) { return e.rep_->terms; }
  static bool Overflowed(const SymExpr& e) { return e.rep_->overflow; }

  // `e`, marked as overflowed if `overflow` is set.
  static SymExpr MarkOverflow(SymExpr e, bool overflow);

  // Coefficients combine with wrapping arithmetic (no undefined behaviour); `*overflow` is
  // set when a result does not fit in int64.
  static void AddTerm(TermMap* m, Term t, bool* overflow);
  static Term Multiply(const Term& a, const Term& b, bool* overflow);

  static std::shared_ptr<const Atom> MakeAtom(AtomKind kind, SymExpr lhs, SymExpr rhs);

  // Splits `a` into the terms whose coefficients `c` divides (returned divided by c)
  // and the rest; for integer-valued terms floor((c*q + r) / c) == q + floor(r / c).
  // (`c` > 0, so neither the division nor the sums of distinct terms overflow.)
  static std::pair<SymExpr, SymExpr> SplitDivisible(const SymExpr& a, int64_t c);
};

}  // namespace graphjit::ir

#endif  // GRAPHJIT_IR_SYM_EXPR_INTERNAL_H_
