// Internal to compiler/codegen: what EmitTiles (codegen_tiles.cc) decided for one tiled
// product, shared with the packing of its operands (codegen_tile_packing.cc), and the
// small address computations both make.
#ifndef GRAPHJIT_COMPILER_CODEGEN_TILE_FRAME_H_
#define GRAPHJIT_COMPILER_CODEGEN_TILE_FRAME_H_

#include <cstdint>

#include "compiler/codegen/tiles_plan.h"
#include "compiler/lower/kernel_ir.h"
#include "ir/dtype.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"

namespace graphjit::compiler::codegen_internal {

struct TileFrame {
  llvm::IRBuilder<>* body = nullptr;  // the kernel's builder (KernelEmitter::body_)
  // The product C[m, n] = sum_k A[m, k] B[k, n]: its loop variables and operands.
  int m = 0, n = 0, k = 0;
  ir::DType dtype = ir::DType::kF32;
  const Expr* lhs = nullptr;
  const Expr* rhs = nullptr;
  int64_t size = 0;  // bytes per element
  int lanes = 0;
  TilePlan plan;
  llvm::Type* type = nullptr;   // the element
  llvm::Type* vtype = nullptr;  // a vector of `lanes` elements
  llvm::Align valign, ealign;   // a vector's alignment and an element's
  llvm::Value* zero = nullptr;  // a vector of zeros
  // A: rows contiguous along k (packed a vector of k at a time), or at f(m) + g(k)
  // (turned windows, gathered per tile); otherwise evaluated element by element.
  bool lhs_rows_contiguous = false, gather_a = false;
  // B: weights packed when the code was built (panels of packed_nr columns, read in
  // place: no packing), else packed per call into packed_b: gathered at f(k) + g(n) (a
  // convolution's windows), with row_at holding f(k) per block of k (b_rows), in runs
  // per image row (pack_runs, run_plan), prefetched ahead where it outgrows the caches.
  int64_t packed_nr = 0;
  bool gather_b = false, b_rows = false, pack_runs = false, prefetch_b = false;
  RowRunPlan run_plan{0, 1};
  llvm::AllocaInst* packed_b = nullptr;
  llvm::AllocaInst* row_at = nullptr;
  llvm::AllocaInst* offset_slot = nullptr;  // LaneOffsets' slot
  // Lane j's j * size, and 2 j * size (a stride-2 convolution's windows along a row).
  llvm::Value* consecutive = nullptr;
  llvm::Value* every_other = nullptr;
  // The thread's row and column ranges' ends (set inside the batch loops).
  llvm::Value* m_end = nullptr;
  llvm::Value* n_end = nullptr;

  llvm::Value* At(llvm::Value* base, llvm::Value* index) const {
    return body->CreateInBoundsGEP(type, base, index);
  }
  llvm::Value* Add(llvm::Value* x, int64_t y) const {
    return body->CreateAdd(x, body->getInt64(y));
  }
  llvm::Value* Mul(llvm::Value* x, int64_t y) const {
    return body->CreateMul(x, body->getInt64(y));
  }
  llvm::Value* Smin(llvm::Value* x, llvm::Value* y) const {
    return body->CreateBinaryIntrinsic(llvm::Intrinsic::smin, x, y);
  }
  // Row i of the tile at m0, or the range's last row past it (computed, never stored).
  llvm::Value* ClampedRow(llvm::Value* m0, int i) const { return Smin(Add(m0, i), Add(m_end, -1)); }
  // A column of B or C that is in bounds: `col` if it is, else `first` (the block's).
  llvm::Value* SafeColumn(llvm::Value* col, llvm::Value* first) const {
    return body->CreateSelect(body->CreateICmpSLT(col, n_end), col, first);
  }
  // Vector v of a panel whose first column (col0 < n_end) is at `first`, contiguous
  // along n: at column col = col0 + v * lanes if in bounds, else at the first column
  // (every lane masked off then).
  llvm::Value* InPanel(llvm::Value* first, llvm::Value* col, int v) const {
    if (v == 0) return first;
    return body->CreateGEP(
        type, first,
        body->CreateSelect(body->CreateICmpSLT(col, n_end), body->getInt64(int64_t{v} * lanes),
                           body->getInt64(0)));
  }
  // A packing loop's trip count: `kc` where `taken` holds, else none (each way of
  // packing is a loop of its own, and only the one taken runs).
  llvm::Value* TripsIf(llvm::Value* taken, llvm::Value* kc) const {
    return body->CreateSelect(taken, kc, body->getInt64(0));
  }
};

}  // namespace graphjit::compiler::codegen_internal

#endif  // GRAPHJIT_COMPILER_CODEGEN_TILE_FRAME_H_
