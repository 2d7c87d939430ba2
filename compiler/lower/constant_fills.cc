#include "compiler/lower/constant_fills.h"

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "compiler/lower/index_exprs.h"
#include "compiler/lower/simplify_index.h"

namespace graphjit::compiler {
namespace {

// The box kernel `k` stores to `out` in (a dim not known: a symbolic extent or a loaded
// index).
IndexBox StoreBox(const Kernel& k) {
  return IndexBoxOf(k.store_indices.empty() ? LoopVars(DefaultStoreRank(k)) : k.store_indices,
                    KernelExtents(k));
}

// Disjoint in some dim where both are known (the batch dim of a symbolic N is not).
bool Disjoint(const IndexBox& a, const IndexBox& b) {
  if (a.size() != b.size()) return false;
  for (size_t d = 0; d < a.size(); ++d) {
    if (a[d] && b[d] && (a[d]->second < b[d]->first || b[d]->second < a[d]->first)) return true;
  }
  return false;
}

// A buffer whose fills store fewer of its elements than this share keeps them per call.
// Filled once, its buffer shares bytes only with buffers of the same constants, which no
// other kernel of a call touches, so each call writes its interior into memory gone cold
// since the last (mnasnet0_5's stem 112 us alone, 257 in the model). Filled per call, it
// shares the workspace's warm bytes (buffer_plan.h), and a thin border costs less than
// the cold writes it saves: one thread, alternating, mobilenet_v2 5.1-5.6 -> 4.8-4.9 ms,
// mnasnet0_5 2.15-2.38 -> 2.04-2.13, efficientnet_b0 7.9-9.2 -> 7.8-8.9 (the 112 x 112
// maps' rows aligned to 144: a fifth of them border). Small maps' borders (7 x 7 padded
// to 9 x 9: 40%) stay filled once.
constexpr double kMinOnceShare = 0.3;

}  // namespace

bool IsConstantFill(const Program& p, const Kernel& k) {
  return k.kind == KernelKind::kPointwise && k.value != nullptr &&
         k.value->kind == ExprKind::kConst && k.out >= 0 &&
         p.buffers[k.out].kind == BufferKind::kTemp && KernelLoads(k).empty();
}

void MarkConstantFills(Program* program) {
  Program& p = *program;
  // Per buffer, the kernels writing it and the box each stores in; null where a kernel
  // writes it other than by its main store (a kAttention's scores and sums), which has no
  // store indices to bound: the buffer's fills then stay per call.
  std::vector<std::vector<std::pair<size_t, std::optional<IndexBox>>>> writers(p.buffers.size());
  for (size_t j = 0; j < p.kernels.size(); ++j) {
    const Kernel& k = p.kernels[j];
    for (int w : KernelWrites(k)) {
      if (w < 0) continue;  // an attention kernel without its scratch buffers
      writers[w].emplace_back(j, w == k.out ? std::optional<IndexBox>(StoreBox(k)) : std::nullopt);
    }
  }
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    Kernel& fill = p.kernels[i];
    fill.once = false;
    if (!IsConstantFill(p, fill)) continue;
    const IndexBox* filled = nullptr;  // its own entry (a fill writes by its main store alone)
    for (const auto& [j, box] : writers[fill.out]) {
      if (j == i && box) filled = &*box;
    }
    bool alone = filled != nullptr;
    for (const auto& [j, box] : writers[fill.out]) {
      if (j != i) alone = alone && box && Disjoint(*filled, *box);
    }
    fill.once = alone;
  }
  // Per buffer, the elements its once fills store (-1: not a constant count).
  std::vector<int64_t> filled(p.buffers.size(), 0);
  for (const Kernel& k : p.kernels) {
    if (!k.once) continue;
    int64_t n = filled[k.out] < 0 ? -1 : 1;
    for (const ExprPtr& e : k.loops) {
      n = e->kind == ExprKind::kConst && n >= 0 ? n * e->i_value : -1;
    }
    filled[k.out] = n < 0 ? -1 : filled[k.out] + n;
  }
  for (Kernel& k : p.kernels) {
    if (!k.once) continue;
    const std::optional<int64_t> size = ir::NumElements(p.buffers[k.out].shape).AsConstant();
    if (filled[k.out] >= 0 && size &&
        static_cast<double>(filled[k.out]) < kMinOnceShare * static_cast<double>(*size)) {
      k.once = false;
    }
  }
}

}  // namespace graphjit::compiler
