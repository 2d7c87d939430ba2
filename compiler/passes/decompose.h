// decompose: rewrites composite ops into primitive ones so later passes and the lowering
// only see elementwise ops, reductions, layout ops, matmul, gather and kv_write.
#ifndef GRAPHJIT_COMPILER_PASSES_DECOMPOSE_H_
#define GRAPHJIT_COMPILER_PASSES_DECOMPOSE_H_

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// Expands softmax, rmsnorm, layernorm, silu, gelu_tanh, rope, cross_entropy, causal_mask
// and scatter_add (docs/OPS.md gives each expansion's formula). Numerically careful:
// softmax and cross entropy subtract the row max before exp (log-sum-exp). causal_mask
// stays composite when its key/query length difference is not a constant. Returns whether
// anything changed.
absl::StatusOr<bool> Decompose(ir::Graph* graph);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_DECOMPOSE_H_
