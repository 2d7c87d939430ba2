// Index simplification: the entry points, and the rewrites of expressions that are not i64
// (comparisons, conditions and selects); simplify_index_linear.cc and
// simplify_index_ranges.cc hold the rest of the Simplifier.
#include "compiler/lower/simplify_index.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "compiler/lower/simplify_index_internal.h"

namespace graphjit::compiler {
namespace simplify_index_internal {

using ir::DType;

void Simplifier::SetLoopRanges(std::vector<Range> vars) {
  scopes_.clear();
  scopes_.push_back(std::make_unique<Scope>());
  scopes_.back()->vars = std::move(vars);
}

ExprPtr Simplifier::Simplify(const ExprPtr& e) {
  if (e == nullptr) return nullptr;
  if (e->dtype == DType::kI64) return Build(SimplifyInt(e));
  return SimplifyAny(e);
}

Lin Simplifier::SimplifyInt(const ExprPtr& e) {
  Scope& s = *scopes_.back();
  if (auto it = s.int_memo.find(e.get()); it != s.int_memo.end()) return it->second;
  Lin l = SimplifyIntUncached(e);
  scopes_.back()->int_memo[e.get()] = l;
  return l;
}

// ---- other expressions -----------------------------------------------------------------

ExprPtr Simplifier::SimplifyOperands(const Expr& e) {
  std::vector<ExprPtr> operands;
  for (const ExprPtr& o : e.operands) operands.push_back(Simplify(o));
  return Rebuild(e, std::move(operands));
}

ExprPtr Simplifier::SimplifyAny(const ExprPtr& e) {
  if (e->dtype == DType::kI64) return Build(SimplifyInt(e));
  Scope& s = *scopes_.back();
  if (auto it = s.any_memo.find(e.get()); it != s.any_memo.end()) return it->second;
  ExprPtr out = SimplifyAnyUncached(e);
  scopes_.back()->any_memo[e.get()] = out;
  return out;
}

ExprPtr Simplifier::SimplifyAnyUncached(const ExprPtr& e) {
  if (!WellFormed(*e)) return SimplifyOperands(*e);
  switch (e->kind) {
    case ExprKind::kConst:
    case ExprKind::kLoopVar:
    case ExprKind::kSymbol:
      return Intern(*e);
    case ExprKind::kLoad:
      return SimplifyOperands(*e);
    case ExprKind::kCast: {
      if (e->operands.size() != 1) return SimplifyOperands(*e);
      ExprPtr x = Simplify(e->operands[0]);
      int64_t v;
      if (e->dtype == DType::kBool && IsConstI64(x, &v)) return BConst(v != 0);
      return Rebuild(*e, {x});
    }
    case ExprKind::kSelect: {
      if (e->operands.size() != 3) return SimplifyOperands(*e);
      ExprPtr cond = Simplify(e->operands[0]);
      if (cond->kind == ExprKind::kConst) return Simplify(e->operands[cond->i_value != 0 ? 1 : 2]);
      ExprPtr t = InScope(cond, true, *e->operands[1], [&] { return Simplify(e->operands[1]); });
      ExprPtr f = InScope(cond, false, *e->operands[2], [&] { return Simplify(e->operands[2]); });
      if (t == f) return t;
      return Rebuild(*e, {cond, t, f});
    }
    case ExprKind::kOp:
      break;
  }
  if (e->operands.empty()) return SimplifyOperands(*e);
  if (IsComparison(e->op) && e->operands.size() == 2 && e->operands[0]->dtype == DType::kI64 &&
      e->operands[1]->dtype == DType::kI64) {
    Lin a = SimplifyInt(e->operands[0]), b = SimplifyInt(e->operands[1]);
    if (RangeOf(a).exact && RangeOf(b).exact) {
      if (std::optional<bool> v = Decide(e->op, RangeOf(Combine(a, b, -1)))) return BConst(*v);
    }
    return MakeOp(e->op, Build(a), Build(b));
  }
  if (e->dtype == DType::kBool && e->operands[0]->dtype == DType::kBool &&
      (e->op == ScalarOp::kAnd || e->op == ScalarOp::kOr || e->op == ScalarOp::kNot)) {
    ExprPtr x = Simplify(e->operands[0]);
    auto is = [](const ExprPtr& c, bool v) {
      return c->kind == ExprKind::kConst && (c->i_value != 0) == v;
    };
    if (e->op == ScalarOp::kNot) {
      if (x->kind == ExprKind::kConst) return BConst(x->i_value == 0);
      return MakeOp(ScalarOp::kNot, x);
    }
    if (e->operands.size() != 2) return SimplifyOperands(*e);
    ExprPtr y = Simplify(e->operands[1]);
    const bool land = e->op == ScalarOp::kAnd;
    // and: false absorbs, true is neutral; or the other way round.
    if (is(x, !land) || is(y, !land)) return BConst(!land);
    if (is(x, land)) return y;
    if (is(y, land)) return x;
    return MakeOp(e->op, x, y);
  }
  return SimplifyOperands(*e);
}

}  // namespace simplify_index_internal

using simplify_index_internal::kMax;
using simplify_index_internal::Lin;
using simplify_index_internal::Range;
using simplify_index_internal::Simplifier;

namespace {

using ir::DType;

// Counts the distinct nodes of `e` not seen yet; returns its size as printed.
int64_t CountNodes(const ExprPtr& e, absl::flat_hash_map<const Expr*, int64_t>* printed,
                   ExprNodeCounts* counts) {
  if (e == nullptr) return 0;
  if (auto it = printed->find(e.get()); it != printed->end()) return it->second;
  ++counts->nodes;
  if (e->dtype == DType::kI64) ++counts->i64_nodes;
  int64_t size = 1;
  for (const ExprPtr& o : e->operands) {
    int64_t s = CountNodes(o, printed, counts);
    size = s > kMax - size ? kMax : size + s;
  }
  (*printed)[e.get()] = size;
  return size;
}

}  // namespace

void SimplifyKernel(Kernel* k) {
  // The simplifier memoizes by input node: the input must outlive it.
  const Kernel input = *k;
  Simplifier s;
  // Extents are evaluated outside the loops they bound: no loop variable ranges there.
  std::vector<Range> vars;
  for (ExprPtr& extent : k->loops) {
    if (extent == nullptr) continue;
    Lin l = s.SimplifyInt(extent);
    extent = s.Build(l);
    vars.push_back(s.LoopRange(l));
  }
  // The variable past the loops (a reduction's r, attention's column e) is variable
  // loops.size(), over its extent.
  if (ExprPtr* extent = MutableVarExtent(k); extent != nullptr && *extent != nullptr) {
    Lin l = s.SimplifyInt(*extent);
    *extent = s.Build(l);
    if (vars.size() == k->loops.size()) vars.push_back(s.LoopRange(l));
  }
  if (vars.size() < k->loops.size()) vars.clear();  // malformed (null extents): no ranges
  s.SetLoopRanges(std::move(vars));
  for (ExprPtr& e : k->store_indices) e = s.Simplify(e);
  for (ExprPtr* e : {&k->value, &k->finish_scale, &k->lhs, &k->rhs, &k->values, &k->epilogue}) {
    *e = s.Simplify(*e);
  }
  for (ExprPtr& e : k->sum_indices) e = s.Simplify(e);
}

void SimplifyKernelIndices(Program* program) {
  for (Kernel& k : program->kernels) SimplifyKernel(&k);
}

namespace {

// Loop variable k of `s` ranges over [0, loop_extents[k]).
void SetLoopExtents(Simplifier& s, const std::vector<ExprPtr>& loop_extents) {
  std::vector<Range> vars;
  for (const ExprPtr& extent : loop_extents) vars.push_back(s.LoopRange(s.SimplifyInt(extent)));
  s.SetLoopRanges(std::move(vars));
}

}  // namespace

ExprPtr SimplifyIndexExpr(const ExprPtr& e, const std::vector<ExprPtr>& loop_extents) {
  Simplifier s;
  SetLoopExtents(s, loop_extents);
  return s.Simplify(e);
}

std::optional<std::pair<int64_t, int64_t>> IndexBounds(const ExprPtr& e,
                                                       const std::vector<ExprPtr>& loop_extents) {
  if (e == nullptr || e->dtype != ir::DType::kI64) return std::nullopt;
  Simplifier s;
  SetLoopExtents(s, loop_extents);
  const Range r = s.ValuesOf(e);
  if (!r.exact || r.lo_inf || r.hi_inf) return std::nullopt;
  return std::pair{r.lo, r.hi};
}

IndexBox IndexBoxOf(const std::vector<ExprPtr>& indices, const std::vector<ExprPtr>& loop_extents) {
  IndexBox box;
  for (const ExprPtr& index : indices) box.push_back(IndexBounds(index, loop_extents));
  return box;
}

void WidenIndexBox(const IndexBox& other, IndexBox* box) {
  for (size_t d = 0; d < box->size() && d < other.size(); ++d) {
    auto& range = (*box)[d];
    if (!range || !other[d]) {
      range = std::nullopt;
      continue;
    }
    range = std::pair{std::min(range->first, other[d]->first),
                      std::max(range->second, other[d]->second)};
  }
}

bool ConsecutiveInMemory(const std::vector<ExprPtr>& indices, const std::vector<ExprPtr>& dims,
                         int var, const std::vector<ExprPtr>& loop_extents) {
  if (indices.empty() || indices.size() != dims.size()) return false;
  ExprPtr offset = ConstI(0), stride = ConstI(1);
  for (size_t d = indices.size(); d-- > 0;) {
    offset = Op(ScalarOp::kAdd, offset, Op(ScalarOp::kMul, indices[d], stride));
    stride = Op(ScalarOp::kMul, stride, dims[d]);
  }
  const ExprPtr rest = SimplifyIndexExpr(Op(ScalarOp::kSub, offset, LoopVar(var)), loop_extents);
  return !UsesLoopVar(rest.get(), var);
}

ExprNodeCounts CountKernelExprNodes(const Program& program) {
  ExprNodeCounts counts;
  for (const Kernel& k : program.kernels) {
    absl::flat_hash_map<const Expr*, int64_t> printed;
    for (const ExprPtr* e : KernelExprs(k)) {
      int64_t s = CountNodes(*e, &printed, &counts);
      counts.printed_nodes = s > kMax - counts.printed_nodes ? kMax : counts.printed_nodes + s;
    }
  }
  return counts;
}

}  // namespace graphjit::compiler
