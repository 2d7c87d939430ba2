// sink_row_scale: divides (or multiplies) a matmul's result instead of its lhs when the
// factor is the same along the contracted axis.
#ifndef GRAPHJIT_COMPILER_PASSES_SINK_ROW_SCALE_H_
#define GRAPHJIT_COMPILER_PASSES_SINK_ROW_SCALE_H_

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// Rewrites matmul(a / s, b) into matmul(a, b) / s, and matmul(a * s, b) (or s * a) into
// matmul(a, b) * s, where a is a float [.., M, K] value with rank >= 2 and s is constant
// along a's last axis (a scalar, or a last dim of 1), so that it factors out of the sum
// over k. Softmax followed by P @ V is the case this is for: p = e / sum(e) is divided
// once per M * K probabilities, the result once per M * N outputs (a decode step's 4096
// divisions become 128).
//
// Fires only when
//   - a / s has no other user and is not a graph output (else it is computed anyway);
//   - s does not broadcast a (a / s has a's type), so that the rewritten result has the
//     original's type (s's dims are 1 or a's, and so 1 or the product's);
//   - the division count does not grow: N <= K with both constant, or K symbolic and N
//     constant (a symbolic contracted axis is a sequence length; at worst the rewrite
//     adds one division per output element).
// The results round differently (one rounding of each p is gone), within the usual
// float tolerance; the compiled code and the interpreter both run the rewritten graph.
// As with fast-math reassociation, the unscaled product can overflow where the scaled
// one did not (entries of a near the dtype's maximum); a softmax's e <= 1 cannot.
// Returns whether anything changed.
absl::StatusOr<bool> SinkRowScale(ir::Graph* graph);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_SINK_ROW_SCALE_H_
