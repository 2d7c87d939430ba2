// winograd_convolutions: a 3 x 3 stride-1 convolution of known weights computes its output
// rows four at a time with Winograd's minimal filtering F(4, 3) along the image's height:
// 6 products per 4 rows and kernel column instead of 12, half the multiply-adds.
#ifndef GRAPHJIT_COMPILER_PASSES_WINOGRAD_CONVOLUTIONS_H_
#define GRAPHJIT_COMPILER_PASSES_WINOGRAD_CONVOLUTIONS_H_

#include "absl/status/statusor.h"
#include "compiler/passes/pass_context.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// Rewrites y = matmul(W, reshape(window(P))), an imported convolution (W a known
// parameter [1.., K, C * 9] of constant shape, P [N, C, H + 2, OW + 2] padded, the window
// 3 x 3 with strides and dilations 1, y [.., K, H * OW]), for OH = H rows in tiles of
// R = 4 (th = ceil(H / 4) tiles, rows past H computed from zero rows and dropped):
//   d_a    = rows a, a + 4, a + 8, .. of P (a window [6, 1] of strides [4, 1])    a < 6
//   V[x]   = sum_a BT[x, a] d_a                               [6, N, C, th, OW + 2]
//   M      = matmul(U, reshape(window(V) [1, 3]))             [6, N, K, th * OW]
//   y[4 i + r] = sum_x AT[r, x] M[x] at tile row i            [N, K, 4 th, OW] -> y
// with U[x, k, c * 3 + kw] = sum_kh G[x, kh] W[k, c, kh, kw] computed now in double and
// added to ctx->params as `winograd(<W>)`. BT, G, AT are Lavin and Gray's F(4, 3)
// matrices (points 0, +-1, +-2, infinity). The transforms are pointwise kernels over
// whole rows (vectors along the image's width, no strided loads), the product keeps its
// kernel column as the windows of a 1 x 3 window, and each element of y is a different
// but mathematically equal sum whose transforms round several times more than the direct
// sums do (torchvision's resnet50 within 1.3e-6 of torch's output, relative to its largest).
//
// Why: resnet-style networks spend most of their time in 3 x 3 stride-1 convolutions,
// which on a host whose FMA units the direct product already keeps ~80% busy cannot get
// faster by better code, only by fewer multiplies. Rows only (not 2-D tiles) because
// stepping by tiles along the width makes every transform's load strided, which cost more
// than the multiplies saved (64 channels at 56 x 56 as F(2x2, 3x3): 1.41 ms against 1.25
// direct; as F(4, 3) on rows: 0.92).
// Only where the product runs as tiles (ctx->tile_vector_bytes > 0: OpenBLAS would need the
// 1 x 3 windows copied out first) with enough work per transformed element: K >= 64 and C >= 16,
// H and OW >= 8, and at least 32 columns (tile rows x OW x N) per transformed weight,
// which is twice the direct one's size and streams from memory in a large model
// (resnet50's 14 x 14 convolutions, 56 columns, measured ~10% faster; at 7 x 7, 14
// columns, it was no faster). Needs ctx->params_are_constant. Returns whether anything
// changed.
absl::StatusOr<bool> WinogradConvolutions(ir::Graph* graph, PassContext* ctx);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_WINOGRAD_CONVOLUTIONS_H_
