#include "compiler/lower/order_loops.h"

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "compiler/lower/index_exprs.h"

namespace graphjit::compiler {
namespace {

// Below this many iterations a loop fills less than one vector of f64 on AVX-512: not
// worth running innermost.
constexpr int64_t kMinInnerExtent = 8;

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

}  // namespace

void OrderLoops(Program* program) {
  for (Kernel& k : program->kernels) {
    if (Eligible(*program, k)) OrderKernel(&k);
  }
}

}  // namespace graphjit::compiler
