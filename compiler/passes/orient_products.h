// orient_products: a product of known weights by a narrow operand is computed the other
// way round, so the wide dim runs along the vector lanes and the weights are the operand
// that is packed cheaply.
#ifndef GRAPHJIT_COMPILER_PASSES_ORIENT_PRODUCTS_H_
#define GRAPHJIT_COMPILER_PASSES_ORIENT_PRODUCTS_H_

#include "absl/status/statusor.h"
#include "compiler/passes/pass_context.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// Rewrites y = matmul(W, x), W a known parameter [b.., M, K] of constant shape and x
// [.., K, N] sliding windows (a convolution's patches: a `window`, through reshapes) or,
// with N <= 64, any operand (a 1 x 1 convolution's activation over a 7 x 7 map), with
// constant N, 2 <= N < M and M N K >= 4096 (the smallest product lowering gives to tiles
// or BLAS), into
//   y = transpose(matmul(transpose(x), W^T))
// with W packed now into the tiles' panels (two vectors of rows, ctx->tile_vector_bytes
// wide, zero past M), added to ctx->params as `panels<NR>(<W>)` and read as W^T through
// slice(reshape(transpose(panels))), a view the tiles read in place: the weights are
// packed once, not on every call.
//
// Why: a convolution lowered as weights [C_out, C_in k..] @ patches [C_in k.., positions]
// has N = positions, which in a CNN's last stages is small (49 at 7 x 7) while M (the
// channels) is large (512). The generated tiles put N along the vector lanes (49 fills 49
// of 64) and pack the lhs a scalar at a time each call, which for so few columns costs as
// much as the product (512 x 4608 x 49: 1.91 ms, OpenBLAS 1.27); the other way round the
// channels fill the lanes and the patches (materialized anyway, now turned) are the lhs
// (1.18 ms; over the packed weights, inside resnet18, 1.36 ms against OpenBLAS's 1.56).
// The turned result is read in place by its consumers (an index rewrite). Every element is
// the same sum over k in the same order. Needs ctx->params_are_constant and
// ctx->tile_vector_bytes > 0 (products run as tiles): with OpenBLAS's products the turn
// only added transposes (torchvision zoo, one thread: resnet50 46.4 -> 50.4 ms, mnasnet0_5
// 2.57 -> 2.93). Returns whether anything changed.
absl::StatusOr<bool> OrientProducts(ir::Graph* graph, PassContext* ctx);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_ORIENT_PRODUCTS_H_
