// The packing of a tiled product's operands (EmitTiles, codegen_tiles.cc): A's tiles of
// MR rows, k-major, and B's panels of NR columns, each the fastest way its expression
// allows (vectors where contiguous, runs of an image's rows, gathers).
#include <algorithm>
#include <vector>

#include "compiler/codegen/codegen_emitter.h"
#include "compiler/codegen/tile_frame.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"

namespace graphjit::compiler::codegen_internal {

// How many panels ahead of the one being packed the packing of B prefetches its rows.
constexpr int64_t kPackAheadPanels = 2;

void KernelEmitter::StoreGroup(const TileFrame& f, llvm::Value* x, llvm::Value* dst,
                               llvm::Value* group_lanes) {
  // Where masked stores are slow, a tile's only group of rows stores a whole vector in the
  // order of k: the lanes past the group land on the next k's rows (or past the tile's k,
  // the tile's slack), which are stored after; with more groups StoreMasked's pieces.
  if (MaskedStoresAreSlow() && f.plan.rows <= f.lanes) {
    body_.CreateAlignedStore(x, dst, f.ealign);
  } else {
    StoreMasked(x, dst, f.ealign, group_lanes);
  }
}

void KernelEmitter::PackTileA(const TileFrame& f, llvm::Value* m0, llvm::Value* k0, llvm::Value* kc,
                              llvm::Value* tile_a) {
  const int m = f.m, k = f.k, lanes = f.lanes, rows = f.plan.rows;
  const Expr* lhs = f.lhs;
  if (f.lhs_rows_contiguous) {
    // Per `lanes` values of k, each group of `lanes` rows loaded as vectors (masked past
    // kc), transposed, and the group's lanes of each k stored at tile_a[kk * MR + group's
    // first row]. A scalar per element took about as long as the FMAs of a product with
    // 49 columns.
    EmitCountedLoop(body_.getInt64(0), kc, lanes, "pack_av", [&](llvm::Value* kk0) {
      llvm::Value* in_k = LanesBelow(lanes, body_.CreateSub(kc, kk0));
      loop_vars_[k] = body_.CreateAdd(k0, kk0);
      for (int g = 0; g < rows; g += lanes) {
        const int count = std::min(lanes, rows - g);
        std::vector<llvm::Value*> r(lanes, f.zero);
        for (int i = 0; i < count; ++i) {
          loop_vars_[m] = f.ClampedRow(m0, g + i);
          llvm::Value* src = TargetPtr(lhs->index, lhs->operands);
          if (src == nullptr) return;
          r[i] = body_.CreateMaskedLoad(f.vtype, src, f.ealign, in_k, f.zero);
        }
        std::vector<llvm::Value*> cols = TransposeLanes(std::move(r));
        llvm::Value* group_lanes = LanesBelow(lanes, body_.getInt64(count));
        for (int j = 0; j < lanes; ++j) {
          llvm::Value* dst = f.At(tile_a, f.Add(f.Mul(f.Add(kk0, j), rows), g));
          StoreGroup(f, cols[j], dst, group_lanes);
        }
      }
    });
    return;
  }
  if (f.gather_a) {
    // A at f(m) + g(k): per group of `lanes` rows their offsets once, then per k one load
    // of the group where the rows are consecutive elements (a tile inside one output row
    // of a stride-1 convolution), else one gather.
    for (int g = 0; g < rows; g += lanes) {
      const int count = std::min(lanes, rows - g);
      loop_vars_[k] = k0;
      llvm::Value* offsets = LaneOffsets(
          lhs, m, f.ClampedRow(m0, g), count,
          [&](llvm::Value* i) {
            return f.Smin(body_.CreateAdd(f.Add(m0, g), i), f.Add(f.m_end, -1));
          },
          f.offset_slot);
      if (offsets == nullptr) return;
      llvm::Value* group_lanes = LanesBelow(lanes, body_.getInt64(count));
      llvm::Value* loads = ConsecutiveLanes(offsets, count, 0, f.size);
      auto pack = [&](bool as_load) {
        EmitCountedLoop(body_.getInt64(0), f.TripsIf(as_load ? loads : body_.CreateNot(loads), kc),
                        1, as_load ? "pack_al" : "pack_ag", [&](llvm::Value* kk) {
                          loop_vars_[m] = f.ClampedRow(m0, g);
                          loop_vars_[k] = body_.CreateAdd(k0, kk);
                          llvm::Value* src = TargetPtr(lhs->index, lhs->operands);
                          if (src == nullptr) return;
                          llvm::Value* x =
                              as_load ? body_.CreateMaskedLoad(f.vtype, src, f.ealign, group_lanes,
                                                               f.zero)
                                      : LoadLanes(f.vtype, src, offsets, nullptr, group_lanes);
                          StoreGroup(f, x, f.At(tile_a, f.Add(f.Mul(kk, rows), g)), group_lanes);
                        });
      };
      pack(true);
      pack(false);
    }
    return;
  }
  for (int i = 0; i < rows; ++i) {
    llvm::Value* row = f.ClampedRow(m0, i);
    EmitCountedLoop(body_.getInt64(0), kc, 1, "pack_a", [&](llvm::Value* kk) {
      loop_vars_[m] = row;
      loop_vars_[k] = body_.CreateAdd(k0, kk);
      llvm::Value* x = EvalTop(kernel_.lhs, f.dtype, "lhs");
      body_.CreateAlignedStore(x, f.At(tile_a, f.Add(f.Mul(kk, rows), i)), f.ealign);
    });
  }
}

void KernelEmitter::PackTileB(const TileFrame& f, llvm::Value* n0, llvm::Value* k0, llvm::Value* kc,
                              llvm::Value* panels) {
  const int n = f.n, k = f.k, lanes = f.lanes, vectors = f.plan.vectors;
  const int64_t nr = f.plan.nr, kc_max = f.plan.kc_max, size = f.size;
  const Expr* rhs = f.rhs;
  llvm::Type* ptr = body_.getPtrTy();
  // Panel p, row kk at packed_b[(p * KC + kk) * NR]. A gathered rhs: each vector's lane
  // offsets from the panel's first column once per panel, then per k a load where they
  // are consecutive for the whole panel, else a gather; one address per k either way, the
  // panel's first column's. That address is f(k) + g(n): with b_rows, f(k) (divisions of
  // k by a window's taps) is computed once per block of k into row_at and a panel adds
  // g(col0) - g(n0) to it (a 3 x 3 convolution 128 -> 32 channels at 56 x 56: 1.30-1.38
  // -> 1.23-1.34 ms).
  if (f.b_rows) {
    loop_vars_[n] = n0;
    EmitCountedLoop(body_.getInt64(0), kc, 1, "pack_rows", [&](llvm::Value* kk) {
      loop_vars_[k] = body_.CreateAdd(k0, kk);
      llvm::Value* first = TargetPtr(rhs->index, rhs->operands);
      if (first != nullptr) body_.CreateStore(first, body_.CreateGEP(ptr, f.row_at, kk));
    });
  }
  // With b_rows, g(col) - g(n0) in bytes: once per panel (hoisted by hand: the baseline
  // tier runs no LICM over these loops).
  auto column_offset = [&](llvm::Value* col) -> llvm::Value* {
    if (!f.b_rows) return nullptr;
    loop_vars_[k] = k0;
    loop_vars_[n] = col;
    llvm::Value* at_col = TargetPtr(rhs->index, rhs->operands);
    loop_vars_[n] = n0;
    llvm::Value* at_n0 = TargetPtr(rhs->index, rhs->operands);
    if (at_col == nullptr || at_n0 == nullptr) return nullptr;
    return body_.CreatePtrDiff(body_.getInt8Ty(), at_col, at_n0);
  };
  // The address of B's element at row k0 + kk of column `col` (`offset` its
  // column_offset).
  auto b_at = [&](llvm::Value* kk, llvm::Value* col, llvm::Value* offset) -> llvm::Value* {
    if (!f.b_rows) {
      loop_vars_[k] = body_.CreateAdd(k0, kk);
      loop_vars_[n] = col;
      return TargetPtr(rhs->index, rhs->operands);
    }
    if (offset == nullptr) return nullptr;
    llvm::Value* first = body_.CreateLoad(ptr, body_.CreateGEP(ptr, f.row_at, kk));
    return body_.CreateGEP(body_.getInt8Ty(), first, offset);
  };
  EmitCountedLoop(body_.getInt64(0), panels, 1, "pack_p", [&](llvm::Value* p) {
    llvm::Value* col0 = body_.CreateAdd(n0, f.Mul(p, nr));
    llvm::Value* ahead = f.SafeColumn(f.Add(col0, kPackAheadPanels * nr), col0);
    llvm::Value* col0_offset = column_offset(col0);
    llvm::Value* ahead_offset = f.prefetch_b ? column_offset(ahead) : nullptr;
    std::vector<llvm::Value*> offsets(vectors);
    std::vector<RowRuns> runs(vectors);
    llvm::Value* loads = body_.getTrue();
    llvm::Value* in_runs = body_.getInt1(f.pack_runs);
    if (f.gather_b) {
      loop_vars_[k] = k0;
      for (int v = 0; v < vectors; ++v) {
        llvm::Value* col = f.Add(col0, int64_t{v} * lanes);
        offsets[v] = LaneOffsets(
            rhs, n, col0, lanes,
            [&](llvm::Value* j) { return f.SafeColumn(body_.CreateAdd(col, j), n0); },
            f.offset_slot);
        if (offsets[v] == nullptr) return;
        loads =
            body_.CreateAnd(loads, ConsecutiveLanes(offsets[v], lanes, int64_t{v} * lanes, size));
        if (!f.pack_runs) continue;
        runs[v] = PlanRowRuns(offsets[v], LanesBelow(lanes, body_.CreateSub(f.n_end, col)),
                              f.run_plan.stride == 2 ? f.every_other : f.consecutive,
                              size * f.run_plan.stride, f.run_plan.runs);
        in_runs = body_.CreateAnd(in_runs, runs[v].complete);
      }
    }
    // Each panel packs by one of three loops (the others run no iteration): every vector
    // consecutive (loads), each vector a few runs across the image's rows (masked loads,
    // a quarter of a gather's cost; every other element for a stride of 2), else gathers.
    enum class Pack { kLoads, kRuns, kGathers };
    llvm::Value* way =
        body_.CreateSelect(loads, body_.getInt32(0),
                           body_.CreateSelect(in_runs, body_.getInt32(1), body_.getInt32(2)));
    auto pack = [&](Pack how) {
      llvm::Value* trips =
          f.gather_b ? f.TripsIf(body_.CreateICmpEQ(way, body_.getInt32(static_cast<int>(how))), kc)
                     : kc;
      EmitCountedLoop(
          body_.getInt64(0), trips, 1,
          how == Pack::kLoads  ? "pack_k"
          : how == Pack::kRuns ? "pack_kr"
                               : "pack_kg",
          [&](llvm::Value* kk) {
            llvm::Value* base = b_at(kk, col0, col0_offset);
            if (base == nullptr) return;
            llvm::Value* row = f.At(f.packed_b, f.Mul(body_.CreateAdd(f.Mul(p, kc_max), kk), nr));
            if (f.prefetch_b && how != Pack::kGathers) {
              llvm::Value* next = b_at(kk, ahead, ahead_offset);
              const int64_t stride = how == Pack::kRuns ? f.run_plan.stride : 1;
              if (next != nullptr) Prefetch(next, nr * size * stride, 3);
            }
            for (int v = 0; v < vectors; ++v) {
              llvm::Value* col = f.Add(col0, int64_t{v} * lanes);
              llvm::Value* in_n = LanesBelow(lanes, body_.CreateSub(f.n_end, col));
              llvm::Value* x = nullptr;
              if (how == Pack::kLoads) {
                x = body_.CreateMaskedLoad(f.vtype, f.InPanel(base, col, v), f.ealign, in_n,
                                           f.zero);
              } else if (how == Pack::kRuns) {
                x = LoadRuns(f.vtype, base, runs[v], f.run_plan.runs, f.run_plan.stride, nullptr);
              } else {
                x = LoadLanes(f.vtype, base, offsets[v], nullptr, in_n);
              }
              body_.CreateAlignedStore(x, f.At(row, body_.getInt64(int64_t{v} * lanes)), f.valign);
            }
          });
    };
    pack(Pack::kLoads);
    if (f.pack_runs) pack(Pack::kRuns);
    if (f.gather_b) pack(Pack::kGathers);
  });
}

}  // namespace graphjit::compiler::codegen_internal
