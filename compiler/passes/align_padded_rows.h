// align_padded_rows: a buffer padded along its rows (a convolution's zero border) gets
// a border wide enough on the left that each row's interior starts on a vector, so the
// code writing the interior stores whole aligned vectors.
#ifndef GRAPHJIT_COMPILER_PASSES_ALIGN_PADDED_ROWS_H_
#define GRAPHJIT_COMPILER_PASSES_ALIGN_PADDED_ROWS_H_

#include "absl/status/statusor.h"
#include "compiler/passes/pass_context.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// Rewrites concat([full(l), x, full(r)], last axis), x float with a constant last dim W
// of at least a vector's lanes (ctx->tile_vector_bytes wide) and l not a multiple of
// them, into
//   slice(concat([full(l + a), x, full(r + b)]), last axis, a, a + l + W + r)
// with a and b the fewest elements that put x's first column and the row's end on
// vector boundaries. The slice is a view: the consumers (a depthwise convolution's
// shifted taps, a convolution's windows) read the same elements at other offsets.
// Why: a 1-element border puts every interior row one element past a vector boundary,
// so each vector the producer stores (a 1 x 1 convolution's tiles with their fused clip,
// writing into the next depthwise convolution's input) spans two cache lines; that
// product took twice as long as the same product stored unpadded (mobilenet_v2's 16 ->
// 96 expansion at 112 x 112: 994 us padded by 1, 518 us padded by 16). Needs
// ctx->tile_vector_bytes > 0. Returns whether anything changed.
absl::StatusOr<bool> AlignPaddedRows(ir::Graph* graph, PassContext* ctx);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_ALIGN_PADDED_ROWS_H_
