// sink_channel_scale: a per-channel scale of a product's rhs applied to the lhs's columns
// instead (squeeze-and-excitation's scale folded into the 1 x 1 convolution after it).
#ifndef GRAPHJIT_COMPILER_PASSES_SINK_CHANNEL_SCALE_H_
#define GRAPHJIT_COMPILER_PASSES_SINK_CHANNEL_SCALE_H_

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// Rewrites matmul(a, reshape(x * s)) into matmul(a * s', reshape(x)), where x is a float
// [n, C, spatial..] value, s is [1 or n, C, 1..] (one factor per image and channel, s * x
// as well), the reshape makes [n.., C, P] of it (a convolution's rhs, P the pixels) and a
// is [.., M, C]: the factor of channel c multiplies every term of the sum over c, so it
// scales the lhs's column c instead (s' is s reshaped to [.., 1, C], with the images'
// batch dims when s has one factor per image).
//
// Why: a squeeze-and-excitation block (efficientnet, mobilenet_v3) scales its activation
// by a per-channel gate and feeds it to a 1 x 1 convolution; the scaled activation was a
// pass of its own over C x P elements (efficientnet_b0: 16 such kernels, ~6% of a call),
// while the scaled lhs is M x C elements evaluated as the product packs them.
//
// Fires only when x * s has no other user (the reshape) and the reshape none but the
// product, and when the lhs has fewer elements to scale than the rhs (M x n_s < P x n,
// constants): a late block's 7 x 7 pixels against 1152 channels stays as it was. The sums
// round differently (a * s rounded once per weight instead of x * s once per pixel),
// within the usual float tolerance. Returns whether anything changed.
absl::StatusOr<bool> SinkChannelScale(ir::Graph* graph);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_SINK_CHANNEL_SCALE_H_
