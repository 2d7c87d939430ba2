#include "compiler/lower/index_exprs.h"

#include <algorithm>

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

std::vector<ExprPtr> ReshapeIndex(const ir::Shape& in, const ir::Shape& out,
                                  const std::vector<ExprPtr>& idx,
                                  const std::vector<std::string>& symbols) {
  std::vector<size_t> in_pos, out_pos;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!IsConstOne(in[d])) in_pos.push_back(d);
  }
  for (size_t d = 0; d < out.size(); ++d) {
    if (!IsConstOne(out[d])) out_pos.push_back(d);
  }
  bool same = in_pos.size() == out_pos.size();
  for (size_t i = 0; same && i < in_pos.size(); ++i) same = in[in_pos[i]] == out[out_pos[i]];
  std::vector<ExprPtr> r(in.size(), ConstI(0));
  if (same) {
    for (size_t i = 0; i < in_pos.size(); ++i) r[in_pos[i]] = idx[out_pos[i]];
    return r;
  }
  ExprPtr flat = ConstI(0);
  for (size_t d = 0; d < out.size(); ++d) {
    flat = Op(ScalarOp::kAdd, Op(ScalarOp::kMul, flat, SymToExpr(out[d], symbols)), idx[d]);
  }
  ExprPtr stride = ConstI(1);
  for (size_t d = in.size(); d-- > 0;) {
    ExprPtr q = Op(ScalarOp::kDiv, flat, stride);
    r[d] = d == 0 ? q : Op(ScalarOp::kMod, q, SymToExpr(in[d], symbols));
    stride = Op(ScalarOp::kMul, stride, SymToExpr(in[d], symbols));
  }
  return r;
}

}  // namespace graphjit::compiler
