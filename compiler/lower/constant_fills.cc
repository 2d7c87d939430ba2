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
  // Per buffer, the kernels writing it and the box each stores in; null where a kernel
  // writes it other than by its main store (a kAttention's scores and sums), which has no
  // store indices to bound: the buffer's fills then stay per call.
  std::vector<std::vector<std::pair<size_t, std::optional<Box>>>> writers(p.buffers.size());
  for (size_t j = 0; j < p.kernels.size(); ++j) {
    const Kernel& k = p.kernels[j];
    for (int w : KernelWrites(k)) {
      writers[w].emplace_back(j, w == k.out ? std::optional<Box>(StoreBox(k)) : std::nullopt);
    }
  }
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    Kernel& fill = p.kernels[i];
    fill.once = false;
    if (!IsConstantFill(p, fill)) continue;
    const Box* filled = nullptr;  // its own entry (a fill writes by its main store alone)
    for (const auto& [j, box] : writers[fill.out]) {
      if (j == i && box) filled = &*box;
    }
    bool alone = filled != nullptr;
    for (const auto& [j, box] : writers[fill.out]) {
      if (j != i) alone = alone && box && Disjoint(*filled, *box);
    }
    fill.once = alone;
  }
}

}  // namespace graphjit::compiler
