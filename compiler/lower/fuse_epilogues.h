// fuse_epilogues: the pointwise ops after a generated product (a bias, a folded
// BatchNorm's shift, relu / clip / hardswish / silu, a residual add, a write into a
// concat's slice) applied by the product's kernel as it stores each tile, instead of by a
// kernel of their own that reads the whole product back from memory.
//
// Lowering gives y = f(A @ B, ...) as a kMatmul into a temp T and a kPointwise over T's
// elements storing f(T[i..], ...) to y. The fused kernel is the product with out = y,
// y's store indices, and epilogue = f with its loads of T read from y at the store
// indices (the tiles store each finished sum there, then apply f while the tile is in
// cache: compiler/codegen/codegen_tiles.cc).
#ifndef GRAPHJIT_COMPILER_LOWER_FUSE_EPILOGUES_H_
#define GRAPHJIT_COMPILER_LOWER_FUSE_EPILOGUES_H_

#include "compiler/lower/kernel_ir.h"

namespace graphjit::compiler {

// Fuses each tiled kMatmul (order kTiles, no epilogue yet, default store) into temp T
// with the one kernel that reads T when that kernel is a kPointwise over T's elements (its
// loops T's dims, or a reshape of them) reading T only at its own element, storing a float
// of T's dtype contiguously along the product's n (in memory: also through indices that
// split n over an image's rows, [m, n / W, n % W]) or at f(m) + g(n) (a padded buffer's
// interior: the tiles scatter there); nothing between them reads what the consumer writes
// or writes what it reads, except fills of its output (a pad's border), which move before
// the product. T is dropped, kernel names renumbered. Must not fire on anything else: T
// read by a second kernel or at another element (a transpose), a reduction over T, a
// product by BLAS or in dot order.
void FuseEpilogues(Program* program);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_FUSE_EPILOGUES_H_
