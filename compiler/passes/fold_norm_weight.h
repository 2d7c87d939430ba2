// fold_norm_weight: moves a norm's per-channel weight into the matmuls that consume it.
#ifndef GRAPHJIT_COMPILER_PASSES_FOLD_NORM_WEIGHT_H_
#define GRAPHJIT_COMPILER_PASSES_FOLD_NORM_WEIGHT_H_

#include "absl/status/statusor.h"
#include "compiler/passes/pass_context.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// Rewrites matmul(n * w, W) into matmul(n, W') with W' = diag(w) W computed now, where w
// is a known 1-D weight along the contraction axis and W a known 2-D parameter: after
// decompose, `rmsnorm(x, w) @ W` is exactly this shape, so every projection that reads
// the normalized value saves the per-element multiply. Fires only when *every* user of
// n * w is such a matmul (the q, k, v projections; gate and up) and n * w is not a graph
// output; otherwise the product is still needed and nothing is gained. Needs
// ctx->params_are_constant. New weights are added to ctx->params as `<W>.scaled.<w>`.
// Returns whether anything changed.
absl::StatusOr<bool> FoldNormWeight(ir::Graph* graph, PassContext* ctx);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_FOLD_NORM_WEIGHT_H_
