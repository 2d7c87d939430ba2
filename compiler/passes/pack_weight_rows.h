// pack_weight_rows: the weights of a product the generated tiles compute as their lhs
// (W @ x, W a known parameter: a convolution's weights against its input) are packed now,
// when the code is built, into the tiles' layout of A, instead of on every call.
#ifndef GRAPHJIT_COMPILER_PASSES_PACK_WEIGHT_ROWS_H_
#define GRAPHJIT_COMPILER_PASSES_PACK_WEIGHT_ROWS_H_

#include "absl/status/statusor.h"
#include "compiler/passes/pass_context.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// Rewrites y = matmul(W, x), W a known float parameter [b.., M, K] of constant shape with
// M N K >= 4096 (the products lowering gives to tiles), N not 1, K at least 2, M more
// than the tile's rows and x anything but a transpose (which OpenBLAS reads in place), into
// y = matmul(W', x) with W' the view of W packed into panels of MR = ctx->tile_rows(M, N,
// element size) rows (PackedWeights, not transposed): [b.., ceil(M / MR), K, MR], lane j of panel t
// at row k holding W[t * MR + j, k]. The tiles read a tile's A there in place (k-major, MR values
// per k: the layout they packed A into on every call), so a call reads the weights once, as the
// FMAs consume them, rather than copying them first (resnet50's 1 x 1 convolutions at 14 x 14, 1 MB
// of weights each: a serial read from memory before any FMA). Every element is the same sum over k
// in the same order. Runs after orient_products (which turns the products whose weights become the
// rhs); needs ctx->params_are_constant and ctx->tile_rows. Returns whether anything changed.
absl::StatusOr<bool> PackWeightRows(ir::Graph* graph, PassContext* ctx);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_PACK_WEIGHT_ROWS_H_
