// The tiled products' plan (compiler/codegen/codegen_tiles.cc): the register tile, the
// blocks of k, rows and columns sized for the caches, and whether A is packed once per
// call, from the product's constant extents and the host's vectors. No LLVM here: the
// numbers the emitted loops run by.
#ifndef GRAPHJIT_COMPILER_CODEGEN_TILES_PLAN_H_
#define GRAPHJIT_COMPILER_CODEGEN_TILES_PLAN_H_

#include <cstdint>
#include <vector>

#include "compiler/lower/kernel_ir.h"

namespace graphjit::compiler::codegen_internal {

struct TilePlan {
  int rows = 0, vectors = 0;  // the register tile: MR rows of V vectors
  int64_t nr = 0;             // V * lanes: a panel's columns
  int64_t kc_max = 0;         // a block of k (blocks of equal size)
  int64_t tiles_total = 0;    // tiles of MR rows over a constant M (0: M not constant)
  bool whole_a = false;       // A (constant M and K, small) packed once per call
  int64_t nc_max = 0;         // a block of columns (whole panels)
  int64_t mc_max = 0;         // a block of rows (whole tiles)
  // The vectors of N's last panel where a known N leaves it part full and that wastes at
  // least 5% of the vectors (196 columns in panels of 48: 4 of the last one's 48), else 0:
  // that panel's tiles compute those vectors only. A tile kernel with that variant ran its
  // other tiles up to 8% slower where the waste was 2-3% (resnet18, 12544 and 512 columns).
  int edge_vectors = 0;
};

// The plan for an M x N x K product (constants, 0 when not) of `element_bytes` elements
// on vectors of `vector_bytes` (32 registers of 64 bytes, else 16); `packed_vectors` > 0
// takes that panel width (weights packed into panels at compile time as the rhs),
// `packed_rows` > 0 a tile of that many rows where there is one (weights packed as the lhs:
// the caller checks plan.rows).
TilePlan PlanTiles(int64_t m, int64_t n, int64_t k, int vector_bytes, int packed_vectors,
                   int packed_rows, int64_t element_bytes);

// The vector registers of vectors of `vector_bytes`: AVX-512's 32, else 16.
int RegistersFor(int vector_bytes);

// The rows of the register tile PlanTiles takes for an M x N product (N 0 when not a
// constant) with no packed operand: the panels pack_weight_rows packs weights into.
int TileRowsFor(int64_t m, int64_t n, int vector_bytes, int64_t element_bytes);

// How a vector of `lanes` consecutive values of loop variable `n` reads through `rhs` (a
// convolution's windows: n splits into an image's rows of W at n % W, so a vector crosses
// up to ceil((lanes - 1) / W) row ends): in `runs` runs (2 for rows of `lanes` or more, 1
// where no index takes n modulo a constant, at most `max`, 0 for no runs) of elements
// `stride` apart (the convolution's stride where (n % W) is multiplied by 2; 1 or 2).
struct RowRunPlan {
  int runs;
  int stride;
};
RowRunPlan PlanRunsPerVector(const Expr* rhs, int n, int lanes, int max);

}  // namespace graphjit::compiler::codegen_internal

#endif  // GRAPHJIT_COMPILER_CODEGEN_TILES_PLAN_H_
