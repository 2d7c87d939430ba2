// fold_channel_affine: folds a chain of per-channel affine ops into one multiply and one
// add, and the multiply into a preceding matmul's weight (BatchNormalization into a
// Conv or Gemm, as ONNX Runtime does).
#ifndef GRAPHJIT_COMPILER_PASSES_FOLD_CHANNEL_AFFINE_H_
#define GRAPHJIT_COMPILER_PASSES_FOLD_CHANNEL_AFFINE_H_

#include "absl/status/statusor.h"
#include "compiler/passes/pass_context.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// An imported inference BatchNormalization is, after constant folding, the chain
// `(x - mean) * scale / std + bias` with known tensors that vary along the channel axis
// only. Rewrites every chain of two or more add / sub / mul / div steps by known tensors
// that vary along one axis of the result at most (each step's other operand has the
// result's type; a divisor must be the known one) into `x * a + b`, a and b computed now
// in double precision (one rounding instead of one per step), the multiply or add left
// out when a is all ones or b all zeros. When x is `matmul(W, p)` with W a known weight
// whose rows are the channels (directly, or through a reshape that keeps the channel
// axis's elements in the matmul's rows, as an imported Conv's im2col product is), the
// multiply goes into the weight instead: `matmul(W', p) + b` with W' the rows of W scaled
// (added to ctx->params as `<W>.affine<N>`). A single step folds only into such a matmul.
// Intermediate values with another use, or that are graph outputs, end a chain there.
// Needs ctx->params_are_constant. Returns whether anything changed.
absl::StatusOr<bool> FoldChannelAffine(ir::Graph* graph, PassContext* ctx);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_FOLD_CHANNEL_AFFINE_H_
