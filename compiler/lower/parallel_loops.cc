#include "compiler/lower/parallel_loops.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "runtime/jit_helpers.h"

namespace graphjit::compiler {
namespace {

// codegen_matmul.cc keeps an output row of at most 8 vectors of the widest vector (8 x 64
// bytes) in registers across K, which a range of N cannot cut: such rows stay whole.
constexpr int64_t kMaxStripBytes = 8 * 64;
// Split points along a contiguous axis: whole vectors (16 f32 or 8 f64 with AVX-512, the
// widest), so the vectorized loops have no scalar tail but the last part's. Not coarser:
// w1's 344 columns in 32s split 160 / 184, in 16s 176 / 168, and a join waits for the
// larger part.
constexpr int64_t kContiguousAlign = 16;
// Split points of a BLAS product's columns: OpenBLAS computes C in blocks of its
// kernel's unrolls (4, 8, 16 or 24 rows or columns, by CPU and type), and a block cut
// short is computed by a remainder kernel that sums in another order (seen on Zen 5: a
// 96-row sgemm split at 32 rows changed rows 24-95 in the last bits). Multiples of 48 are
// whole blocks for each; the last part ends where the whole product does. Rows split at
// runtime::BlasRowSplitAlign(), the unroll measured on the host (24 on Zen 3, where 48
// split convnext_tiny's 49-row linear layers 48 / 1).
constexpr int64_t kBlasAlign = 48;
// Split points of a tiled product's rows: whole blocks of the 8-row tile, and few rows
// computed and dropped at a range's end for the 12- and 6-row ones (the bits do not
// depend on the split: every element is summed in k order whatever its block).
constexpr int64_t kTileRowAlign = 8;
// Split points of a tiled product's columns: whole panels of every tile width (2, 3 or 4
// vectors: multiples of 32, 48 and 64 f32 lanes with AVX-512, of 16, 24 and 32 with AVX2
// or f64), so that no range ends on a part-full panel, where the rhs is packed per call.
constexpr int64_t kTileColumnAlign = 192;

// Split points of a tiled product's loop `var` (its M or N): whole panels where `operand`
// (its lhs or rhs) is weights packed into panels along it, whose tiles or ranges must
// start at a panel (pack_weight_rows' rows, orient_products' columns), else `fallback`.
// The panel's own width rather than the fallback: resnet18's last layers (N = 512 in
// panels of 32) split 192 / 320 by 192s, the larger part 1.25x an even one's on two threads.
int64_t PanelAlign(const Program& program, const Kernel& k, const Expr* operand, int var,
                   int64_t fallback) {
  if (operand == nullptr || operand->kind != ExprKind::kLoad) return fallback;
  const int reduced = static_cast<int>(k.loops.size()) - 1;
  const int64_t width =
      PackedPanelWidth(operand, program.buffers[operand->index].dims, var, reduced);
  return width > 0 ? width : fallback;
}
int64_t TileRowAlign(const Program& program, const Kernel& k) {
  return PanelAlign(program, k, k.lhs.get(), static_cast<int>(k.loops.size()) - 3, kTileRowAlign);
}
int64_t TileColumnAlign(const Program& program, const Kernel& k) {
  return PanelAlign(program, k, k.rhs.get(), static_cast<int>(k.loops.size()) - 2,
                    kTileColumnAlign);
}

bool IsConstant(const ExprPtr& e, int64_t* value) {
  if (e == nullptr || e->kind != ExprKind::kConst) return false;
  *value = e->i_value;
  return true;
}

// Whether product kernel `k` (loops batch.., M at `nb`, N, K) has constant M and N with N
// at least twice M: a convolution's product (few output channels, many positions), which
// its threads split by columns.
bool ColumnsOutnumberRows(const Kernel& k, int nb) {
  int64_t m_extent, n_extent;
  return IsConstant(k.loops[nb], &m_extent) && IsConstant(k.loops[nb + 1], &n_extent) &&
         n_extent >= 2 * m_extent;
}

// The larger of two parts of `extent` cut at a multiple of `align` as KernelSet cuts it
// (the first part floor(chunks / 2) chunks of `align`), over half the extent: 1 for an
// even split, 2 when one part is all of it.
double TwoPartImbalance(int64_t extent, int64_t align) {
  const int64_t chunks = (extent + align - 1) / align;
  const int64_t first = std::min(extent, chunks / 2 * align);
  const int64_t larger = std::max(first, extent - first);
  return 2.0 * static_cast<double>(larger) / static_cast<double>(extent);
}

// Whether tiled product `k` (loops batch.., M at `nb`, N, K) splits by columns: where
// they outnumber the rows twice, unless whole panels (kTileColumnAlign) leave one part
// more than 1.5x the other's share and blocks of rows would cut more evenly
// (mobilenet_v2's 14 x 14 products, N = 196: 192 and 4 columns, one thread doing all,
// 62 -> 52 us by rows on two threads). Rows are the exception: each range reads and
// packs all of B (28 x 28 ones, M = 192, K = 32, by rows: 47 us against 25 as 384 and
// 400 columns).
bool TilesSplitByColumns(const Program& program, const Kernel& k, int nb) {
  if (!ColumnsOutnumberRows(k, nb)) return false;
  const int64_t m_extent = k.loops[nb]->i_value, n_extent = k.loops[nb + 1]->i_value;
  const double by_columns = TwoPartImbalance(n_extent, TileColumnAlign(program, k));
  return by_columns <= 1.5 || by_columns <= TwoPartImbalance(m_extent, TileRowAlign(program, k));
}

// What computing `e` once costs, as fusion counts it (shared subtrees once).
int ExprCost(const Expr* e, absl::flat_hash_set<const Expr*>* seen) {
  if (e == nullptr || !seen->insert(e).second) return 0;
  int cost = e->kind == ExprKind::kOp ? ScalarOpCost(e->op) : e->kind == ExprKind::kLoad ? 1 : 0;
  for (const ExprPtr& operand : e->operands) cost += ExprCost(operand.get(), seen);
  return cost;
}

// The first of loops [0, end) whose extent is not the constant 1, if all before it are.
int FirstNonUnitLoop(const Kernel& k, int end) {
  for (int i = 0; i < end; ++i) {
    int64_t extent;
    if (!IsConstant(k.loops[i], &extent)) return i;
    if (extent > 1) return i;
    if (extent < 1) return -1;  // an empty kernel: nothing to split
  }
  return -1;
}

// Whether iterations of loop `p` with distinct values store to distinct elements: some
// store index is the loop's variable, or the variable plus a constant (a pad's offset,
// a view's row). Then no two parts of a split write one element.
bool StoresDistinctAlong(const std::vector<ExprPtr>& indices, int p) {
  for (const ExprPtr& index : indices) {
    const Expr* e = index.get();
    if (e->kind == ExprKind::kOp && e->op == ScalarOp::kAdd) {
      const Expr* a = e->operands[0].get();
      const Expr* b = e->operands[1].get();
      if (a->kind == ExprKind::kConst) std::swap(a, b);
      if (b->kind != ExprKind::kConst) continue;
      e = a;
    }
    if (e->kind == ExprKind::kLoopVar && e->index == p) return true;
  }
  return false;
}

bool LoadsBuffer(const Expr* e, int buffer) {
  if (e == nullptr) return false;
  if (e->kind == ExprKind::kLoad && e->index == buffer) return true;
  for (const ExprPtr& operand : e->operands) {
    if (LoadsBuffer(operand.get(), buffer)) return true;
  }
  return false;
}

int ChooseLoop(const Program& program, const Kernel& k) {
  const int nb = static_cast<int>(k.loops.size()) - 3;
  switch (k.kind) {
    case KernelKind::kPointwise:
    case KernelKind::kReduce:
    case KernelKind::kArgReduce:
    case KernelKind::kScan: {
      // The default store indices are the loops themselves, one element per iteration.
      // Custom ones (a pad's interior, a reshape into a product's layout, kv_write's rows)
      // split where the loop's variable picks the element; in a conv net they carry as
      // much data as the products, and leaving them to the caller's thread made it read
      // what the other core's part of the kernel before had just written (the OCR
      // recognizer: 36 -> 300 us for one reshape). In-place outputs stay whole.
      if (program.buffers[k.out].alias_of >= 0) return -1;
      const int loop = FirstNonUnitLoop(k, static_cast<int>(k.loops.size()));
      if (loop < 0 || k.store_indices.empty()) return loop;
      if (!StoresDistinctAlong(k.store_indices, loop) || LoadsBuffer(k.value.get(), k.out)) {
        return -1;
      }
      return loop;
    }
    case KernelKind::kMatmul: {
      if (nb < 0) return -1;
      // Tiles: batch loops, else M, or N where it is at least twice M and whole panels
      // split it evenly enough (TilesSplitByColumns). Each range packs
      // the blocks of the rhs it reads itself: a convolution's product has few rows (its
      // output channels) and many columns (its positions), and every row range would
      // gather all of its windows again; turned round (orient_products), every row range
      // would read all of the packed weights. The bits do not depend on the split.
      if (k.order == MatmulOrder::kTiles) {
        const int loop = FirstNonUnitLoop(k, nb + 1);
        return loop == nb && TilesSplitByColumns(program, k, nb) ? nb + 1 : loop;
      }
      int loop = FirstNonUnitLoop(k, nb + 2);
      if (loop != nb + 1) return loop;
      int64_t n_extent;
      const int64_t size = ir::DTypeSize(program.buffers[k.out].dtype);
      if (IsConstant(k.loops[nb + 1], &n_extent) && n_extent * size <= kMaxStripBytes) return -1;
      return loop;
    }
    case KernelKind::kAttention:
      return nb < 0 ? -1 : FirstNonUnitLoop(k, nb + 1);
    case KernelKind::kExternMatmul: {
      // Batch loops, else M or N: each part calls BLAS on a block of rows or columns
      // (KernelSet keeps the parts large enough that OpenBLAS sums every element the same
      // way). N where it is at least twice M and OpenBLAS's kernels give a block of
      // columns the bits of the whole (runtime::BlasColumnSplitsExact): a convolution's
      // product has few rows (its output channels) and many columns (its positions), and
      // every row-part packs all of B again (squeezenet1_1 on two threads: 3.77 -> 2.90
      // ms by columns, one thread 5.06).
      if (nb < 0) return -1;
      const int loop = FirstNonUnitLoop(k, nb + 1);
      if (loop != nb) return loop;
      return ColumnsOutnumberRows(k, nb) && runtime::BlasColumnSplitsExact() ? nb + 1 : loop;
    }
  }
  return -1;
}

// Work of one iteration of loop `p` (-1: of the whole kernel): the other loops' extents (with the
// reduced or column variable's), times what one innermost step computes.
ExprPtr WorkPerIteration(const Kernel& k, int p) {
  absl::flat_hash_set<const Expr*> seen;
  int64_t step = 1;
  switch (FactsOf(k.kind).loops) {
    case KernelKindLoops::kNest:
      step = 1 + ExprCost(k.value.get(), &seen);
      break;
    case KernelKindLoops::kProduct:
      step = 2;  // a multiply-add
      break;
  }
  ExprPtr work = ConstI(step);
  for (int i = 0; i < static_cast<int>(k.loops.size()); ++i) {
    if (i != p) work = Op(ScalarOp::kMul, work, k.loops[i]);
  }
  if (k.kind == KernelKind::kAttention && k.values_width != nullptr) {
    // Scores (D per position), then P @ V (values_width per position).
    work = Op(ScalarOp::kMul, Op(ScalarOp::kAdd, ConstI(1), k.values_width), work);
  } else if (FactsOf(k.kind).var == KernelKindVar::kReduce && k.reduce_extent != nullptr) {
    work = Op(ScalarOp::kMul, work, k.reduce_extent);
  }
  return work;
}

}  // namespace

void MarkParallelLoops(Program* program) {
  for (Kernel& k : program->kernels) {
    k.parallel_loop = ChooseLoop(*program, k);
    k.parallel_work = nullptr;
    k.parallel_align = 1;
    if (k.parallel_loop < 0) continue;
    k.parallel_work = WorkPerIteration(k, k.parallel_loop);
    const int contiguous = FactsOf(k.kind).loops == KernelKindLoops::kProduct
                               ? static_cast<int>(k.loops.size()) - 2  // N
                               : static_cast<int>(k.loops.size()) - 1;
    if (k.parallel_loop == contiguous) k.parallel_align = kContiguousAlign;
    const int rows = static_cast<int>(k.loops.size()) - 3;  // M of a product
    if (k.kind == KernelKind::kExternMatmul && k.parallel_loop == rows) {
      k.parallel_align = runtime::BlasRowSplitAlign();
    }
    if (k.kind == KernelKind::kExternMatmul && k.parallel_loop == rows + 1) {
      k.parallel_align = kBlasAlign;
    }
    if (k.kind == KernelKind::kMatmul && k.order == MatmulOrder::kTiles) {
      if (k.parallel_loop == rows) k.parallel_align = TileRowAlign(*program, k);
      if (k.parallel_loop == rows + 1) k.parallel_align = TileColumnAlign(*program, k);
    }
  }
}

ExprPtr KernelWork(const Kernel& kernel) { return WorkPerIteration(kernel, -1); }

}  // namespace graphjit::compiler
