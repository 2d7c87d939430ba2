#include "compiler/lower/index_exprs.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "ir/check.h"

namespace graphjit::compiler {
namespace {

bool IsConstOne(const ir::SymExpr& d) { return d.AsConstant() == 1; }

}  // namespace

ExprPtr SymToExpr(const ir::SymExpr& e, const std::vector<std::string>& symbols) {
  auto sym = [&](const ir::SymExpr& s) { return SymToExpr(s, symbols); };
  ExprPtr sum = ConstI(0);
  for (const ir::SymExpr::TermView& t : e.Terms()) {
    ExprPtr product = ConstI(t.coeff);
    for (const ir::SymExpr::AtomView& a : t.factors) {
      ExprPtr atom;
      switch (a.kind) {
        case ir::SymExpr::AtomView::Kind::kSymbol: {
          auto it = std::find(symbols.begin(), symbols.end(), a.name);
          GJ_CHECK(it != symbols.end()) << "symbol " << a.name << " not collected";
          atom = SymbolValue(static_cast<int>(it - symbols.begin()));
          break;
        }
        case ir::SymExpr::AtomView::Kind::kFloorDiv:
          atom = Op(ScalarOp::kDiv, sym(*a.lhs), sym(*a.rhs));
          break;
        case ir::SymExpr::AtomView::Kind::kMod:
          atom = Op(ScalarOp::kMod, sym(*a.lhs), sym(*a.rhs));
          break;
        case ir::SymExpr::AtomView::Kind::kMax:
          atom = Op(ScalarOp::kMax, sym(*a.lhs), sym(*a.rhs));
          break;
        case ir::SymExpr::AtomView::Kind::kMin:
          atom = Op(ScalarOp::kMin, sym(*a.lhs), sym(*a.rhs));
          break;
      }
      product = Op(ScalarOp::kMul, product, atom);
    }
    sum = Op(ScalarOp::kAdd, sum, product);
  }
  return sum;
}

std::vector<ExprPtr> LoopVars(size_t n) {
  std::vector<ExprPtr> vars;
  for (size_t i = 0; i < n; ++i) vars.push_back(LoopVar(static_cast<int>(i)));
  return vars;
}

bool VarPlusOffset(const Expr* e, int var) {
  if (e->kind == ExprKind::kLoopVar) return e->index == var;
  if (e->kind != ExprKind::kOp || (e->op != ScalarOp::kAdd && e->op != ScalarOp::kSub)) {
    return false;
  }
  const Expr* x = e->operands[0].get();
  const Expr* y = e->operands[1].get();
  return (VarPlusOffset(x, var) && !UsesLoopVar(y, var)) ||
         (e->op == ScalarOp::kAdd && VarPlusOffset(y, var) && !UsesLoopVar(x, var));
}

namespace {

ExprPtr ReplaceIn(const ExprPtr& e, absl::FunctionRef<ExprPtr(const Expr&)> replace,
                  absl::flat_hash_map<const Expr*, ExprPtr>* memo) {
  if (e == nullptr) return nullptr;
  if (auto it = memo->find(e.get()); it != memo->end()) return it->second;
  ExprPtr out = replace(*e);
  if (out == nullptr) {
    out = e;
    if (!e->operands.empty()) {
      Expr copy = *e;
      for (ExprPtr& o : copy.operands) o = ReplaceIn(o, replace, memo);
      out = std::make_shared<const Expr>(std::move(copy));
    }
  }
  return (*memo)[e.get()] = out;
}

}  // namespace

ExprPtr ReplaceSubexprs(const ExprPtr& e, absl::FunctionRef<ExprPtr(const Expr&)> replace) {
  absl::flat_hash_map<const Expr*, ExprPtr> memo;
  return ReplaceIn(e, replace, &memo);
}

ExprPtr RenameLoopVars(const ExprPtr& e, const absl::flat_hash_map<int, int>& vars) {
  return ReplaceSubexprs(e, [&](const Expr& x) -> ExprPtr {
    if (x.kind != ExprKind::kLoopVar) return nullptr;
    auto it = vars.find(x.index);
    return it == vars.end() ? nullptr : LoopVar(it->second);
  });
}

std::vector<ExprPtr> BroadcastIndex(const ir::Shape& in, const ir::Shape& out,
                                    const std::vector<ExprPtr>& idx) {
  std::vector<ExprPtr> r;
  const size_t offset = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    const bool broadcast = IsConstOne(in[d]) && !IsConstOne(out[d + offset]);
    r.push_back(broadcast ? ConstI(0) : idx[d + offset]);
  }
  return r;
}

std::vector<ExprPtr> WindowIndex(const std::vector<ExprPtr>& idx,
                                 const std::vector<int64_t>& kernel,
                                 const std::vector<int64_t>& strides,
                                 const std::vector<int64_t>& dilations) {
  const size_t k = kernel.size(), batch = idx.size() - 2 * k;
  std::vector<ExprPtr> in(idx.begin(), idx.begin() + batch);
  for (size_t i = 0; i < k; ++i) {
    in.push_back(Op(ScalarOp::kAdd, Op(ScalarOp::kMul, idx[batch + k + i], ConstI(strides[i])),
                    Op(ScalarOp::kMul, idx[batch + i], ConstI(dilations[i]))));
  }
  return in;
}

std::vector<ExprPtr> ReshapeIndex(const ir::Shape& in, const ir::Shape& out,
                                  const std::vector<ExprPtr>& idx,
                                  const std::vector<std::string>& symbols) {
  auto sym = [&](const ir::SymExpr& e) { return SymToExpr(e, symbols); };
  std::vector<ExprPtr> r(in.size(), ConstI(0));
  // Groups: runs of operand dims [a, b) and result dims [c, d) with equal products, cut
  // wherever the prefix products agree (as SymExprs, so symbolic dims group too). A
  // reshape that splits or merges dims then maps group by group, and div / mod appear
  // only where a group has several operand dims (an operand dim split over result dims
  // needs none: [n, 12 * w] -> [n, 12, w] reads (i0, i1 * w + i2)).
  std::vector<ir::SymExpr> in_prefix = {1}, out_prefix = {1};
  for (const ir::SymExpr& d : in) in_prefix.push_back(in_prefix.back() * d);
  for (const ir::SymExpr& d : out) out_prefix.push_back(out_prefix.back() * d);
  size_t a = 0, c = 0;
  auto emit_group = [&](size_t b, size_t d) {
    ExprPtr flat = ConstI(0);
    for (size_t j = c; j < d; ++j) {
      flat = IsConstOne(out[j]) ? flat
                                : Op(ScalarOp::kAdd, Op(ScalarOp::kMul, flat, sym(out[j])), idx[j]);
    }
    std::vector<size_t> dims;  // the operand's non-1 dims of the group
    for (size_t i = a; i < b; ++i) {
      if (!IsConstOne(in[i])) dims.push_back(i);
    }
    // flat < the group's product, so the outermost dim needs no mod.
    ExprPtr stride = ConstI(1);
    for (size_t k = dims.size(); k-- > 0;) {
      ExprPtr q = k + 1 == dims.size() ? flat : Op(ScalarOp::kDiv, flat, stride);
      r[dims[k]] = k == 0 ? q : Op(ScalarOp::kMod, q, sym(in[dims[k]]));
      stride = Op(ScalarOp::kMul, stride, sym(in[dims[k]]));
    }
  };
  for (size_t b = 1; b <= in.size(); ++b) {
    if (b < in.size() && IsConstOne(in[b])) continue;  // 1-dims join the group before them
    for (size_t d = c + 1; d <= out.size(); ++d) {
      if (!(in_prefix[b] == out_prefix[d])) continue;
      // Trailing result 1-dims join this group too (they read nothing).
      while (b == in.size() && d < out.size()) ++d;
      emit_group(b, d);
      a = b;
      c = d;
      break;
    }
  }
  if (a < in.size() || c < out.size()) emit_group(in.size(), out.size());  // no cut at all
  return r;
}

}  // namespace graphjit::compiler
