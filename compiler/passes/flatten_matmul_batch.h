// flatten_matmul_batch: a batched product by an unbatched right operand becomes one
// product with the batch dims folded into its rows.
#ifndef GRAPHJIT_COMPILER_PASSES_FLATTEN_MATMUL_BATCH_H_
#define GRAPHJIT_COMPILER_PASSES_FLATTEN_MATMUL_BATCH_H_

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// Rewrites matmul(a, W), a float [B..., M, K] of rank >= 3 and W a [K, N] matrix, into
// reshape(matmul(reshape(a, [B...*M, K]), W), [B..., M, N]). A Linear layer on a
// [batch, seq, d] activation, as models exported from torch have them, is then one
// [batch*seq, d] @ [d, N] product the lowering can give to BLAS, instead of batch * seq
// small products (with batch 1 per row of a transposed [seq, batch, d] activation, a
// matrix-vector product per row). The values are the same bits: each output is the same
// sum over k in the same order. Fires only when the batch dims are not all constant 1
// (nothing to fold). Returns whether anything changed.
absl::StatusOr<bool> FlattenMatmulBatch(ir::Graph* graph);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_FLATTEN_MATMUL_BATCH_H_
