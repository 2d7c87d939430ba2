#include "compiler/lower/constant_fills.h"

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "compiler/lower/index_exprs.h"
#include "compiler/lower/simplify_index.h"

namespace graphjit::compiler {
namespace {

// Per dim of the buffer, the least and greatest index a kernel stores at (nullopt: not
// known, a symbolic extent or a loaded index).
using Box = std::vector<std::optional<std::pair<int64_t, int64_t>>>;

// The box kernel `k` stores to `out` in.
Box StoreBox(const Kernel& k) {
  const std::vector<ExprPtr> indices =
      k.store_indices.empty() ? LoopVars(DefaultStoreRank(k)) : k.store_indices;
  std::vector<ExprPtr> extents = k.loops;
  if (ExprPtr var_extent = VarExtent(k)) extents.push_back(std::move(var_extent));
  Box box;
  for (const ExprPtr& index : indices) box.push_back(IndexBounds(index, extents));
  return box;
}

// Disjoint in some dim where both are known (the batch dim of a symbolic N is not).
bool Disjoint(const Box& a, const Box& b) {
  if (a.size() != b.size()) return false;
  for (size_t d = 0; d < a.size(); ++d) {
    if (a[d] && b[d] && (a[d]->second < b[d]->first || b[d]->second < a[d]->first)) return true;
  }
  return false;
}

bool IsConstantFill(const Program& p, const Kernel& k) {
  return k.kind == KernelKind::kPointwise && k.value != nullptr &&
         k.value->kind == ExprKind::kConst && k.out >= 0 &&
         p.buffers[k.out].kind == BufferKind::kTemp && KernelLoads(k).empty();
}

}  // namespace

void MarkConstantFills(Program* program) {
  Program& p = *program;
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    Kernel& fill = p.kernels[i];
    fill.once = false;
    if (!IsConstantFill(p, fill)) continue;
    const Box filled = StoreBox(fill);
    bool alone = true;
    for (size_t j = 0; j < p.kernels.size() && alone; ++j) {
      if (j == i) continue;
      const Kernel& other = p.kernels[j];
      for (int w : KernelWrites(other)) {
        if (w != fill.out) continue;
        // Only its main store has store indices to bound (a kAttention's scores and
        // sums have others): any other write of the buffer keeps the fill per call.
        alone = alone && other.out == fill.out && Disjoint(filled, StoreBox(other));
      }
    }
    fill.once = alone;
  }
}

}  // namespace graphjit::compiler
