// Private to compiler/lower/simplify_index*.cc: value ranges, linear forms, the Simplifier.
#ifndef GRAPHJIT_COMPILER_LOWER_SIMPLIFY_INDEX_INTERNAL_H_
#define GRAPHJIT_COMPILER_LOWER_SIMPLIFY_INDEX_INTERNAL_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "compiler/lower/kernel_ir.h"
#include "runtime/scalar_semantics.h"

namespace graphjit::compiler::simplify_index_internal {

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

inline bool Fits(__int128 v) { return v >= kMin && v <= kMax; }

// ---- ranges (simplify_index_ranges.cc) -------------------------------------------------

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

// Whether d (a difference a - b, exact) decides `op` on (a, b).
std::optional<bool> Decide(ScalarOp op, const Range& d);

// ---- nodes and linear forms (simplify_index_linear.cc) ---------------------------------

// The hash-consing key of a node whose operands are already hash-consed.
struct NodeKey {
  ExprKind kind;
  ir::DType dtype;
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

inline void AddTerm(Lin* l, const ExprPtr& atom, int64_t coeff) {
  if (coeff == 0) return;
  for (size_t i = 0; i < l->terms.size(); ++i) {
    if (l->terms[i].atom == atom) {
      l->terms[i].coeff = runtime::WrapAdd(l->terms[i].coeff, coeff);
      if (l->terms[i].coeff == 0) l->terms.erase(l->terms.begin() + i);
      return;
    }
  }
  l->terms.push_back({atom, coeff});
}

// a + scale * b (i64 wrap-around: the ring identities hold exactly).
inline Lin Combine(const Lin& a, const Lin& b, int64_t scale) {
  Lin r = a;
  for (const Term& t : b.terms) AddTerm(&r, t.atom, runtime::WrapMul(t.coeff, scale));
  r.k = runtime::WrapAdd(r.k, runtime::WrapMul(b.k, scale));
  return r;
}

inline Lin Scale(const Lin& a, int64_t c) { return Combine(Lin{}, a, c); }
inline Lin ConstLin(int64_t v) { return Lin{{}, v}; }

inline bool IsConstI64(const ExprPtr& e, int64_t* v) {
  if (e->kind != ExprKind::kConst || e->dtype != ir::DType::kI64) return false;
  *v = e->i_value;
  return true;
}

// ---- the simplifier --------------------------------------------------------------------

// Simplifies the expressions of one kernel. Its methods are spread over three files:
// simplify_index.cc (the entry points, and the expressions that are not i64: comparisons,
// conditions, selects), simplify_index_linear.cc (hash-consed nodes, linear forms and the
// i64 rewrites) and simplify_index_ranges.cc (value ranges, and the narrowing of loop
// variables inside select arms).
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

  void SetLoopRanges(std::vector<Range> vars);
  // The range loop variable with extent `extent` (a simplified extent) takes.
  Range LoopRange(const Lin& extent);
  ExprPtr Simplify(const ExprPtr& e);
  Lin SimplifyInt(const ExprPtr& e);
  // The canonical expression of a linear form: terms in structural order, then the
  // constant; `x + (a * c)`, `x - a`, `x - (a * c)`.
  ExprPtr Build(const Lin& l);
  // The values an i64 expression takes over the loop ranges set.
  Range ValuesOf(const ExprPtr& e) { return RangeOf(SimplifyInt(e)); }

 private:
  // ---- nodes ---------------------------------------------------------------------------

  ExprPtr Intern(Expr e);
  ExprPtr IConst(int64_t v);
  ExprPtr BConst(bool v);
  ExprPtr MakeOp(ScalarOp op, ExprPtr a, ExprPtr b = nullptr);
  // A copy of `e` with `operands`, hash-consed.
  ExprPtr Rebuild(const Expr& e, std::vector<ExprPtr> operands);
  // The two operands of a commutative op in structural order.
  std::pair<ExprPtr, ExprPtr> Ordered(ExprPtr a, ExprPtr b);
  Lin Atom(ExprPtr node);
  // The linear form of an output node (Build records the sums it makes).
  Lin LinOf(const ExprPtr& node);

  // ---- ranges --------------------------------------------------------------------------

  Range RangeOf(const Lin& l);
  // The range of an output node's runtime value (wrapped sums: any i64).
  Range ValueRange(const ExprPtr& node);
  Range AtomRange(const ExprPtr& atom);
  Range AtomRangeUncached(const Expr& e);

  // ---- i64 expressions -----------------------------------------------------------------

  // Operand counts as the kinds need them (codegen reports malformed trees; here they
  // are only copied).
  static bool WellFormed(const Expr& e);
  Lin SimplifyIntUncached(const ExprPtr& e);
  // Collects c*k*(y / c) + k*(y % c) into k*y (exact for every y).
  Lin Normalize(Lin l);
  // x = c*A + r, A the terms whose coefficient c divides, r the others and the constant.
  void Split(const Lin& x, int64_t c, Lin* a, Lin* r);
  // The gcd of c and every coefficient and the constant of r.
  static int64_t CommonFactor(const Lin& r, int64_t c);
  // The block [m*c, (m+1)*c) holding all of r's values, if there is one.
  std::optional<int64_t> Block(const Lin& r, int64_t c);
  // x / c, c > 0.
  Lin DivConst(const Lin& x, int64_t c);
  // x % c, c > 0.
  Lin ModConst(const Lin& x, int64_t c);
  Lin MinMax(ScalarOp op, const Lin& a, const Lin& b);

  // ---- other expressions ---------------------------------------------------------------

  ExprPtr SimplifyOperands(const Expr& e);
  ExprPtr SimplifyAny(const ExprPtr& e);
  ExprPtr SimplifyAnyUncached(const ExprPtr& e);

  // ---- narrowing inside select arms ----------------------------------------------------

  // The loop variables `e` (an input node) reads, as bits (bit 63: any of 63 and up).
  uint64_t VarsUsed(const Expr& e);
  // Narrows `vars` by `cond` being `truth`; returns the variables narrowed (as bits).
  uint64_t Narrow(const ExprPtr& cond, bool truth, std::vector<Range>* vars);

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

}  // namespace graphjit::compiler::simplify_index_internal

#endif  // GRAPHJIT_COMPILER_LOWER_SIMPLIFY_INDEX_INTERNAL_H_
