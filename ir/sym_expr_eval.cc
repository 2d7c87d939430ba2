// SymExpr evaluation, substitution (Bind), symbols, term views and the Shape helpers.
#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/check.h"
#include "ir/status_macros.h"
#include "ir/sym_expr.h"
#include "ir/sym_expr_internal.h"

namespace graphjit::ir {

using sym_expr_internal::Atom;
using sym_expr_internal::AtomKind;
using sym_expr_internal::FloorDivInt;
using sym_expr_internal::FloorModInt;
using sym_expr_internal::Term;

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

std::optional<int64_t> SolveFor(const SymExpr& dim, const std::string& symbol, int64_t value,
                                const Bindings& bindings) {
  Bindings at = bindings;
  at[symbol] = 0;
  absl::StatusOr<int64_t> b = dim.Evaluate(at);
  at[symbol] = 1;
  absl::StatusOr<int64_t> a_plus_b = dim.Evaluate(at);
  if (!b.ok() || !a_plus_b.ok() || *a_plus_b == *b) return std::nullopt;
  return (value - *b) / (*a_plus_b - *b);
}

}  // namespace graphjit::ir
