#include "compiler/lower/order_loops.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "compiler/lower/index_exprs.h"
#include "compiler/lower/simplify_index.h"

namespace graphjit::compiler {
namespace {

// Below this many iterations a loop fills less than one vector of f64 on AVX-512: not
// worth running innermost.
constexpr int64_t kMinInnerExtent = 8;

// A pointwise kernel whose innermost loop is shorter than this (a CNN's 7 x 7 to 56 x 56
// maps) runs its trailing loops as one where every access walks them as whole rows: rows
// of 7 filled 7 of a vector's 16 f32 lanes (efficientnet_b0's SiLU over 1152 x 7 x 7).
constexpr int64_t kMaxMergedRow = 64;

// +1: consecutive values of var address consecutive elements; -1: they move the access
// otherwise; 0: the access does not move with var.
int AccessScore(const std::vector<ExprPtr>& indices, int var) {
  bool uses = false;
  for (const ExprPtr& index : indices) uses = uses || UsesLoopVar(index.get(), var);
  if (!uses) return 0;
  for (size_t d = 0; d + 1 < indices.size(); ++d) {
    if (UsesLoopVar(indices[d].get(), var)) return -1;
  }
  return VarPlusOffset(indices.back().get(), var) ? 1 : -1;
}

void CollectLoads(const Expr* e, absl::flat_hash_set<const Expr*>* seen,
                  std::vector<const Expr*>* loads) {
  if (!seen->insert(e).second) return;
  if (e->kind == ExprKind::kLoad) loads->push_back(e);
  for (const ExprPtr& o : e->operands) CollectLoads(o.get(), seen, loads);
}

bool Eligible(const Program& program, const Kernel& k) {
  if (k.kind != KernelKind::kPointwise || k.loops.size() < 2 || k.value == nullptr) return false;
  const int n = static_cast<int>(k.loops.size());
  for (const ExprPtr& extent : k.loops) {
    for (int v = 0; v < n; ++v) {
      if (UsesLoopVar(extent.get(), v)) return false;
    }
  }
  // In place: the order of the iterations may matter.
  const int out = k.out;
  const int alias = program.buffers[out].alias_of;
  for (int b : KernelLoads(k)) {
    if (b == out || (alias >= 0 && b == alias) || program.buffers[b].alias_of == out) return false;
  }
  return true;
}

void OrderKernel(Kernel* k) {
  const int n = static_cast<int>(k->loops.size());
  const std::vector<ExprPtr> store = k->store_indices.empty() ? LoopVars(n) : k->store_indices;
  absl::flat_hash_set<const Expr*> seen;
  std::vector<const Expr*> loads;
  CollectLoads(k->value.get(), &seen, &loads);
  auto score = [&](int var) {
    int s = AccessScore(store, var);
    for (const Expr* load : loads) s += AccessScore(load->operands, var);
    return s;
  };
  const int inner = n - 1;
  int best = inner;
  int best_score = score(inner);
  for (int v = 0; v < inner; ++v) {
    const ExprPtr& extent = k->loops[v];
    if (extent->kind == ExprKind::kConst && extent->i_value < kMinInnerExtent) continue;
    const int s = score(v);
    if (s > best_score) {
      best = v;
      best_score = s;
    }
  }
  if (best == inner) return;
  // Old variable -> new: best goes last, the ones after it move up by one.
  absl::flat_hash_map<int, int> rename;
  for (int v = best; v < n; ++v) rename[v] = v == best ? inner : v - 1;
  std::vector<ExprPtr> loops;
  for (int v = 0; v < n; ++v) {
    if (v != best) loops.push_back(k->loops[v]);
  }
  loops.push_back(k->loops[best]);
  k->loops = std::move(loops);
  k->store_indices.clear();
  for (const ExprPtr& index : store) k->store_indices.push_back(RenameLoopVars(index, rename));
  k->value = RenameLoopVars(k->value, rename);
}

// Whether an access at `indices` of a buffer of `dims` lets the last `count` loops of
// `loops` merge: it uses none of them, or its last `count` indices are exactly those loop
// variables in order (no other index using them) over whole rows (each of its dims after
// the first of them equals its loop's extent), so the merged variable steps it by one.
bool MergeableAccess(const std::vector<ExprPtr>& indices, const std::vector<ExprPtr>& dims,
                     const std::vector<ExprPtr>& loops, int count) {
  const int n = static_cast<int>(loops.size());
  bool uses = false;
  for (const ExprPtr& index : indices) {
    for (int v = n - count; v < n; ++v) uses = uses || UsesLoopVar(index.get(), v);
  }
  if (!uses) return true;
  const int r = static_cast<int>(indices.size());
  if (r < count || dims.size() != indices.size()) return false;
  for (int d = 0; d < r - count; ++d) {
    for (int v = n - count; v < n; ++v) {
      if (UsesLoopVar(indices[d].get(), v)) return false;
    }
  }
  for (int t = 0; t < count; ++t) {
    const Expr* index = indices[r - count + t].get();
    if (index->kind != ExprKind::kLoopVar || index->index != n - count + t) return false;
    const Expr* dim = dims[r - count + t].get();
    if (t > 0 && (dim->kind != ExprKind::kConst || dim->i_value != loops[n - count + t]->i_value)) {
      return false;
    }
  }
  return true;
}

// Whether every access of `k` (its store and each load) lets its last `count` loops merge,
// and no other expression uses their variables.
bool Mergeable(const Program& program, const Kernel& k, int count) {
  const int n = static_cast<int>(k.loops.size());
  const std::vector<ExprPtr> store = k.store_indices.empty() ? LoopVars(n) : k.store_indices;
  if (!MergeableAccess(store, program.buffers[k.out].dims, k.loops, count)) return false;
  std::vector<const Expr*> todo = {k.value.get()};
  while (!todo.empty()) {
    const Expr* e = todo.back();
    todo.pop_back();
    if (e->kind == ExprKind::kLoad) {
      if (!MergeableAccess(e->operands, program.buffers[e->index].dims, k.loops, count)) {
        return false;
      }
      continue;  // indices that use none of the loops hold nothing to check
    }
    if (e->kind == ExprKind::kLoopVar && e->index >= n - count) return false;
    for (const ExprPtr& o : e->operands) todo.push_back(o.get());
  }
  return true;
}

// Runs the last `count` loops of `k` as one over their elements in row-major order:
// loop variable v of them becomes (j / (the extents after v)) % (v's extent), j the
// merged variable.
void MergeLast(Kernel* k, int count) {
  const int n = static_cast<int>(k->loops.size());
  const int first = n - count;
  std::vector<int64_t> inner(count, 1);  // product of the extents after each
  for (int t = count - 2; t >= 0; --t) inner[t] = inner[t + 1] * k->loops[first + t + 1]->i_value;
  const int64_t total = inner[0] * k->loops[first]->i_value;
  auto replace = [&](const Expr& e) -> ExprPtr {
    if (e.kind != ExprKind::kLoopVar || e.index < first) return nullptr;
    const int t = e.index - first;
    ExprPtr v = LoopVar(first);
    if (inner[t] > 1) v = Op(ScalarOp::kDiv, v, ConstI(inner[t]));
    if (t > 0) v = Op(ScalarOp::kMod, v, ConstI(k->loops[e.index]->i_value));
    return v;
  };
  if (k->store_indices.empty()) k->store_indices = LoopVars(n);
  for (ExprPtr& index : k->store_indices) index = ReplaceSubexprs(index, replace);
  k->value = ReplaceSubexprs(k->value, replace);
  k->loops.resize(first + 1);
  k->loops[first] = ConstI(total);
}

// Whether every access of `k` addresses consecutive elements along its innermost loop,
// as codegen's vectors need (ConsecutiveInMemory: its simplifier sees (j / 7) * 7 + j % 7
// as j, not yet three levels of them).
bool InnerLoopConsecutive(const Program& program, const Kernel& k) {
  const int inner = static_cast<int>(k.loops.size()) - 1;
  auto consecutive = [&](const std::vector<ExprPtr>& indices, int buffer) {
    bool uses = false;
    for (const ExprPtr& index : indices) uses = uses || UsesLoopVar(index.get(), inner);
    return !uses || ConsecutiveInMemory(indices, program.buffers[buffer].dims, inner, k.loops);
  };
  if (!consecutive(k.store_indices, k.out)) return false;
  absl::flat_hash_set<const Expr*> seen;
  std::vector<const Expr*> loads;
  CollectLoads(k.value.get(), &seen, &loads);
  return std::all_of(loads.begin(), loads.end(),
                     [&](const Expr* load) { return consecutive(load->operands, load->index); });
}

// Merges the most trailing loops of `k` it can when its innermost is a short constant row
// (see kMaxMergedRow), and fewer than all of them: the first loop stays (threads split it).
void MergeShortRows(const Program& program, Kernel* k) {
  const int n = static_cast<int>(k->loops.size());
  const ExprPtr& last = k->loops.back();
  if (last->kind != ExprKind::kConst || last->i_value < 2 || last->i_value >= kMaxMergedRow) {
    return;
  }
  // Loops of one iteration gain nothing merged (and simplify_indices drops their
  // variables, which a merge would bring back).
  int count = 1;
  while (count + 1 < n && k->loops[n - count - 1]->kind == ExprKind::kConst &&
         k->loops[n - count - 1]->i_value > 1 && Mergeable(program, *k, count + 1)) {
    ++count;
  }
  for (; count > 1; --count) {
    Kernel merged = *k;
    MergeLast(&merged, count);
    if (InnerLoopConsecutive(program, merged)) {
      *k = std::move(merged);
      return;
    }
  }
}

}  // namespace

void OrderLoops(Program* program) {
  for (Kernel& k : program->kernels) {
    if (!Eligible(*program, k)) continue;
    OrderKernel(&k);
    MergeShortRows(*program, &k);
  }
}

}  // namespace graphjit::compiler
