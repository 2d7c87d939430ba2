// Symbolic integer expressions for tensor dims: shapes, guards, loop bounds and FLOP
// formulas are all SymExprs, so one graph can serve every value of a symbol such as S.
#ifndef GRAPHJIT_IR_SYM_EXPR_H_
#define GRAPHJIT_IR_SYM_EXPR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace graphjit::ir {

// Values for named symbols, e.g. {"S": 128, "P": 127}.
using Bindings = absl::flat_hash_map<std::string, int64_t>;

// An immutable integer expression over named symbols with +, -, *, floor division, mod,
// max and min. Every value is kept in a canonical form (a sum of integer-weighted
// products of atoms, where an atom is a symbol or an irreducible div/mod/max/min), so
// structurally equal expressions compare equal: `S+1-1` is `S` and `2*S/2` is `S`.
// Division and mod are floor semantics (as Python's // and %).
class SymExpr {
 public:
  SymExpr();               // the constant 0
  SymExpr(int64_t value);  // NOLINT: a constant converts implicitly
  SymExpr(int value) : SymExpr(static_cast<int64_t>(value)) {}  // NOLINT
  // `name` must be an identifier ([A-Za-z_][A-Za-z0-9_]*); CHECK-fails otherwise.
  static SymExpr Symbol(absl::string_view name);
  static SymExpr FloorDiv(const SymExpr& a, const SymExpr& b);
  static SymExpr Mod(const SymExpr& a, const SymExpr& b);
  static SymExpr Max(const SymExpr& a, const SymExpr& b);
  static SymExpr Min(const SymExpr& a, const SymExpr& b);

  friend SymExpr operator+(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator-(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator*(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator/(const SymExpr& a, const SymExpr& b) { return FloorDiv(a, b); }
  friend SymExpr operator%(const SymExpr& a, const SymExpr& b) { return Mod(a, b); }
  SymExpr operator-() const;

  bool IsConstant() const;
  // The value of a constant expression, or nullopt if it mentions a symbol.
  std::optional<int64_t> AsConstant() const;
  // True if this is exactly one symbol (e.g. `S`); `name` receives it.
  bool IsSymbol(std::string* name = nullptr) const;
  // True if building this expression (or one it was built from) overflowed int64: the
  // coefficients wrapped, e.g. `3037000500*3037000500`. Such an expression prints its
  // wrapped value; Evaluate fails on it and the parsers reject it.
  bool Overflowed() const;

  // The value under `bindings`; InvalidArgument names an unbound symbol, a division
  // by zero or a result that overflows int64.
  absl::StatusOr<int64_t> Evaluate(const Bindings& bindings) const;
  // Replaces the bound symbols by constants and re-simplifies (partial evaluation).
  SymExpr Bind(const Bindings& bindings) const;
  // Adds every symbol the expression mentions to `out`.
  void CollectSymbols(std::set<std::string>* out) const;

  // Canonical text, e.g. `2*S+1`, `(S+1)/2`, `max(S, 4)`. Parsed back by ParseSymExpr.
  const std::string& ToString() const;

  friend bool operator==(const SymExpr& a, const SymExpr& b) {
    return a.rep_ == b.rep_ || a.ToString() == b.ToString();
  }
  friend bool operator!=(const SymExpr& a, const SymExpr& b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, const SymExpr& e) {
    return H::combine(std::move(h), e.ToString());
  }

  // The canonical form, for consumers that rebuild an expression in another language
  // (the kernel IR): a sum of terms, each an integer times a product of atoms.
  struct AtomView {
    enum class Kind { kSymbol, kFloorDiv, kMod, kMax, kMin };
    Kind kind;
    std::string name;                         // kSymbol
    std::shared_ptr<const SymExpr> lhs, rhs;  // the other kinds
  };
  struct TermView {
    int64_t coeff;
    std::vector<AtomView> factors;  // empty for the constant term
  };
  std::vector<TermView> Terms() const;

  struct Rep;  // defined in sym_expr_internal.h

 private:
  explicit SymExpr(std::shared_ptr<const Rep> rep) : rep_(std::move(rep)) {}
  std::shared_ptr<const Rep> rep_;
  friend class SymExprBuilder;
};

// Whether `name` can name a symbol: [A-Za-z_][A-Za-z0-9_]* (one token of the canonical
// text, so a symbol never prints like an expression).
bool IsSymbolName(absl::string_view name);

// The value of `symbol` at which `dim`, read as a * symbol + b (a != 0, the other symbols
// bound by `bindings`), evaluates to `value`: (value - b) / a. nullopt when `dim` does not
// mention the symbol or does not evaluate. For dims that bind a symbol they compute (a
// count, an image side's multiple).
std::optional<int64_t> SolveFor(const SymExpr& dim, const std::string& symbol, int64_t value,
                                const Bindings& bindings);
// `text` made a symbol name: characters a symbol cannot hold become '_', and a '_' goes in
// front of a leading digit (or of nothing). For names that come from elsewhere (an ONNX
// dim_param, `<input>_<axis>`).
std::string ToSymbolName(absl::string_view text);

// A tensor shape: one SymExpr per dim.
using Shape = std::vector<SymExpr>;

// `[2, S+1, 16]`.
std::string ShapeToString(const Shape& shape);
// Number of elements (the product of the dims).
SymExpr NumElements(const Shape& shape);
// Every dim evaluated under `bindings`.
absl::StatusOr<std::vector<int64_t>> EvaluateShape(const Shape& shape, const Bindings& bindings);
// A shape of constants.
Shape ConstShape(const std::vector<int64_t>& dims);

// Parses the text form written by ToString (and ordinary infix input such as `S + 1 - 1`).
// Errors give the column and what was expected; so do input nested or multiplied out
// beyond fixed bounds far past any real dim (an error rather than exhausted memory), and a
// dim whose constants overflow int64 (the error gives the offset where the dim starts).
absl::StatusOr<SymExpr> ParseSymExpr(absl::string_view text);
// Parses the longest expression starting at `*pos` in `text` and advances `*pos` past it
// (used by the IR parser for dims inside a larger text). Errors carry the offset.
absl::StatusOr<SymExpr> ParseSymExprAt(absl::string_view text, size_t* pos);

}  // namespace graphjit::ir

#endif  // GRAPHJIT_IR_SYM_EXPR_H_
