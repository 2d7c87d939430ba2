// concat_weights: matmuls that read one value through different known weights become one
// matmul over the weights side by side (horizontal fusion).
#ifndef GRAPHJIT_COMPILER_PASSES_CONCAT_WEIGHTS_H_
#define GRAPHJIT_COMPILER_PASSES_CONCAT_WEIGHTS_H_

#include "absl/status/statusor.h"
#include "compiler/passes/pass_context.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// Rewrites matmul(x, W1), .., matmul(x, Wn) (n >= 2, one x, each Wi a known 2-D parameter
// of constant shape) into y = matmul(x, [W1 | .. | Wn]) with the concatenated weight
// computed now, and each product into slice(y) along the last axis. A decode layer's q,
// k and v projections, and its gate and up projections, each become one kernel that
// reads its input once, and the whole graph has fewer kernels (20 -> 15). Every output
// element is the same sum of the same products as before. Needs ctx->params_are_constant.
// The new weight is added to ctx->params as `concat(<W1>,..,<Wn>)`. Returns whether
// anything changed.
//
// Not in the default pipeline (Pipeline::FromNames takes it): measured on the decode
// layer (2-core AMD EPYC, AVX2), the step is no faster (graphjit-dump --profile, S = 64
// and 512, alternating runs: within the noise; the matvecs are bound by reading the
// weights, which it does not change), a cold compile no faster (155-168 ms against
// 135-157: fewer but wider kernels), and a warm start 1.8 -> 2.6 ms, since every compile
// copies the 0.9 MB of weights it concatenates (bench_compile).
absl::StatusOr<bool> ConcatWeights(ir::Graph* graph, PassContext* ctx);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_CONCAT_WEIGHTS_H_
