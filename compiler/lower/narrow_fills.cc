#include "compiler/lower/narrow_fills.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "compiler/lower/constant_fills.h"
#include "compiler/lower/index_exprs.h"
#include "compiler/lower/simplify_index.h"

namespace graphjit::compiler {
namespace {

// Widens `hulls` (per buffer, the indices read: nullopt where some read is unbounded) by
// every load in `e` (a kernel's expression over `extents`).
void AddReads(const Expr* e, const std::vector<ExprPtr>& extents, std::vector<IndexBox>* hulls,
              std::vector<bool>* read) {
  if (e == nullptr) return;
  if (e->kind == ExprKind::kLoad && e->index >= 0) {
    const IndexBox reads = IndexBoxOf(e->operands, extents);
    if ((*read)[e->index]) {
      WidenIndexBox(reads, &(*hulls)[e->index]);
    } else {
      (*hulls)[e->index] = reads;
    }
    (*read)[e->index] = true;
  }
  for (const ExprPtr& o : e->operands) AddReads(o.get(), extents, hulls, read);
}

// Index `e` as loop variable `*var` plus `*offset` (var -1: the constant `*offset`).
bool AsVarPlusConstant(const ExprPtr& e, int* var, int64_t* offset) {
  if (e->kind == ExprKind::kConst) {
    *var = -1;
    *offset = e->i_value;
    return true;
  }
  if (e->kind == ExprKind::kLoopVar) {
    *var = e->index;
    *offset = 0;
    return true;
  }
  if (e->kind != ExprKind::kOp || e->op != ScalarOp::kAdd || e->operands.size() != 2) return false;
  const ExprPtr& a = e->operands[0];
  const ExprPtr& b = e->operands[1];
  const ExprPtr& v = a->kind == ExprKind::kLoopVar ? a : b;
  const ExprPtr& c = a->kind == ExprKind::kLoopVar ? b : a;
  if (v->kind != ExprKind::kLoopVar || c->kind != ExprKind::kConst) return false;
  *var = v->index;
  *offset = c->i_value;
  return true;
}

// Whether a kernel of `kind` reads its buffers exactly at the indices its loads give over
// its loops. OpenBLAS's products are given their operands' origins and read whole
// matrices from there; attention's kernel reads its rows by its own plan. Those are taken
// to read every element of every buffer they load.
bool LoadsBoundReads(KernelKind kind) {
  switch (kind) {
    case KernelKind::kPointwise:
    case KernelKind::kReduce:
    case KernelKind::kMatmul:
    case KernelKind::kArgReduce:
    case KernelKind::kScan:
      return true;
    default:
      return false;
  }
}

// Narrows fill `k` to `hull` (its buffer's reads); false when nothing of it is read.
bool Narrow(Kernel* k, const IndexBox& hull) {
  std::vector<ExprPtr> indices =
      k->store_indices.empty() ? LoopVars(DefaultStoreRank(*k)) : k->store_indices;
  if (indices.size() != hull.size()) return true;
  std::vector<ExprPtr> loops = k->loops;
  std::vector<bool> used(loops.size(), false);
  for (size_t d = 0; d < indices.size(); ++d) {
    int var = -1;
    int64_t offset = 0;
    if (!AsVarPlusConstant(indices[d], &var, &offset)) return true;
    if (var >= static_cast<int>(loops.size()) || (var >= 0 && used[var])) return true;
    int64_t lo = offset, hi = offset;
    if (var >= 0) {
      used[var] = true;
      if (loops[var]->kind != ExprKind::kConst) continue;
      hi = offset + loops[var]->i_value - 1;
    }
    if (!hull[d]) continue;
    const int64_t read_lo = hull[d]->first, read_hi = hull[d]->second;
    const int64_t new_lo = std::max(lo, read_lo), new_hi = std::min(hi, read_hi);
    if (new_lo > new_hi) return false;
    if (var < 0 || (new_lo == lo && new_hi == hi)) continue;
    loops[var] = ConstI(new_hi - new_lo + 1);
    indices[d] = new_lo == 0 ? LoopVar(var) : Op(ScalarOp::kAdd, LoopVar(var), ConstI(new_lo));
  }
  k->loops = std::move(loops);
  k->store_indices = std::move(indices);
  return true;
}

}  // namespace

void NarrowFills(Program* program) {
  Program& p = *program;
  std::vector<IndexBox> hulls(p.buffers.size());
  std::vector<bool> read(p.buffers.size(), false);
  for (const Kernel& k : p.kernels) {
    if (!LoadsBoundReads(k.kind)) {
      for (int b : KernelLoads(k)) {
        read[b] = true;
        hulls[b].assign(p.buffers[b].dims.size(), std::nullopt);
      }
      continue;
    }
    const std::vector<ExprPtr> extents = KernelExtents(k);
    for (const ExprPtr* e : KernelExprs(k)) AddReads(e->get(), extents, &hulls, &read);
  }
  std::vector<Kernel> kept;
  kept.reserve(p.kernels.size());
  for (Kernel& k : p.kernels) {
    // A fill of a buffer nothing reads is left alone: it has no readers to narrow it to.
    if (IsConstantFill(p, k) && read[k.out] && !Narrow(&k, hulls[k.out])) continue;
    kept.push_back(std::move(k));
  }
  p.kernels = std::move(kept);
}

}  // namespace graphjit::compiler
