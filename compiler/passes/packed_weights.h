// Weights packed at compile time into the generated tiles' layout (compiler/codegen/
// codegen_tiles.cc): panels of `nr` rows, [b.., ceil(M / nr), K, nr], which the tiles read
// in place as their packed rhs (orient_products: W^T) or their packed lhs (pack_weight_rows:
// W), so the weights are packed once, when the code is built, not on every call.
#ifndef GRAPHJIT_COMPILER_PASSES_PACKED_WEIGHTS_H_
#define GRAPHJIT_COMPILER_PASSES_PACKED_WEIGHTS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "compiler/passes/pass_context.h"
#include "compiler/passes/rewriter.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// Products below this many multiply-adds stay generated loops whichever way round, so their
// weights are not packed (kExternMatmulMinMacs in compiler/lower/matmul_strategy.h, which
// passes do not include).
inline constexpr int64_t kMinPackedMacs = 4096;

// Whether `v` is sliding windows (im2col's patches, a convolution's product's rhs),
// through reshapes: the products that run as tiles whichever kernels run the others.
bool IsWindows(const ir::Graph& graph, ir::ValueId v);

// Adds `w` (a parameter [b.., M, K] of constant dims that ctx->params holds) packed into
// panels of `nr` rows to ctx->params as `panels<nr>(<w>)` ([b.., ceil(M / nr), K, nr],
// panel p, row k, lane j holding w[p * nr + j, k], zero past M) unless it is there, and
// emits a view of it:
//   transposed: W^T [b.., K, M] = slice(reshape(transpose(panels, K before the panel
//     axis), [b.., K, panels * nr]), :M), read by the tiles as [.., n / nr, k, n % nr];
//   else:       W [b.., M, K] = slice(reshape(transpose(panels, lanes before K),
//     [b.., panels * nr, K]), :M), read as [.., m / nr, k, m % nr].
absl::StatusOr<ir::ValueId> PackedWeights(GraphRewriter* rw, const ir::Node& w, int64_t nr,
                                          bool transposed, PassContext* ctx);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_PACKED_WEIGHTS_H_
