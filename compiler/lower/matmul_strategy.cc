#include "compiler/lower/matmul_strategy.h"

#include <optional>

namespace graphjit::compiler {
namespace {

// True if the first load in `e` indexes its last dim by exactly loop variable `var`
// (so consecutive `var` values read consecutive elements).
bool InnermostIsVar(const ExprPtr& e, int var) {
  if (e->kind == ExprKind::kLoad) {
    const ExprPtr& last = e->operands.back();
    return last->kind == ExprKind::kLoopVar && last->index == var;
  }
  for (const ExprPtr& o : e->operands) {
    if (o->kind == ExprKind::kLoad || o->kind == ExprKind::kOp || o->kind == ExprKind::kSelect ||
        o->kind == ExprKind::kCast) {
      return InnermostIsVar(o, var);
    }
  }
  return false;
}

}  // namespace

bool UseExternMatmul(const ir::Graph& graph, ir::ValueId id) {
  const ir::Node& n = graph.node(id);
  if (!ir::IsFloat(n.type.dtype)) return false;
  const ir::Shape& shape = n.type.shape;
  const ir::Shape& a = graph.type(n.operands[0]).shape;
  if (shape[shape.size() - 2].AsConstant() == 1) return false;
  int64_t macs = 1;
  for (const ir::SymExpr* d : {&shape[shape.size() - 2], &shape.back(), &a.back()}) {
    if (std::optional<int64_t> c = d->AsConstant()) macs *= *c;
  }
  return macs >= kExternMatmulMinMacs;
}

bool SwapsLastTwoAxes(const std::vector<int64_t>& perm) {
  const int64_t r = static_cast<int64_t>(perm.size());
  bool last_two = r >= 2 && perm[r - 2] == r - 1 && perm[r - 1] == r - 2;
  for (int64_t i = 0; i + 2 < r; ++i) last_two = last_two && perm[i] == i;
  return last_two;
}

MatmulOrder ChooseMatmulOrder(const ExprPtr& rhs, int n_var) {
  return InnermostIsVar(rhs, n_var) ? MatmulOrder::kAxpy : MatmulOrder::kDot;
}

}  // namespace graphjit::compiler
