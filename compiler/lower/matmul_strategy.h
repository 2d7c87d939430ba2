// How a matmul is computed: OpenBLAS (kExternMatmul) or generated loops, and in which
// loop order. Decided from shapes and the operand expressions only.
#ifndef GRAPHJIT_COMPILER_LOWER_MATMUL_STRATEGY_H_
#define GRAPHJIT_COMPILER_LOWER_MATMUL_STRATEGY_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "compiler/lower/kernel_ir.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// The product size (M*N*K of one batch) from which a float matmul goes to BLAS
// (kExternMatmul) instead of generated loops. Measured on the 2-core Zen 3 dev machine
// (one [M,K] @ [K,N] kernel, generated axpy loops vs graphjit_rt_matmul_*, medians, us):
//   f64 8x8x8 0.24 vs 0.05; 16^3 0.53 vs 0.13; 64^3 26.1 vs 7.2; 16x344x128 106 vs 23;
//       256^3 2357 vs 597; M=2 2x344x128 12.9 vs 3.3; N=1 64x1x64 2.2 vs 0.33
//   f32 16^3 0.38 vs 0.10; 64^3 21.1 vs 3.4; 64x344x128 227 vs 53; 256^3 1184 vs 237
//   M=1 (gemv, memory-bound) f64 1x344x128 10.8-12.8 vs 6.5-7.5, 1x128x344 4.3-6.1 vs
//       7.6; f32 1x344x128 3.1-4.1 vs 3.3; 1x1024x1024 165 vs 185; 1x2048x512 236 vs 209
// BLAS wins 1.5-12x on every matrix-matrix product tried, even 8^3; 4096 (16^3) leaves
// the tiniest products to loops, where the call and a forced operand copy would weigh
// most. Matrix-vector products with M = 1 are a tie either way, so they stay loops
// (which also read an inlined lhs without materializing it).
inline constexpr int64_t kExternMatmulMinMacs = 4096;

// Which kernels compute the large products (those UseExternMatmul picks): kAuto the
// measured choice per shape (ChooseProductKernel), kTiles graphjit's generated tiles
// (compiler/codegen/codegen_tiles.cc) wherever they apply, kBlas OpenBLAS. Set per compile
// (CompileGraphOptions::products) or by GRAPHJIT_PRODUCTS=auto|tiles|blas.
enum class ProductKernels : uint8_t { kAuto, kTiles, kBlas };
// "auto", "tiles" or "blas".
const char* ProductKernelsName(ProductKernels p);
// Parses a ProductKernelsName; nullopt for anything else.
std::optional<ProductKernels> ParseProductKernels(std::string_view name);

// Whether products of known weights by a narrow operand run as generated tiles under
// `policy` (so orient_products turns them and packs the weights into the tiles' panels,
// and winograd_convolutions rewrites 3 x 3 convolutions for them): kTiles and kAuto. The
// tiles' compile costs more than a BLAS call (resnet18's cold compile 0.57 s against 0.18
// s all OpenBLAS, znver5), but they save 7 ms of its 25 on every call.
bool ProductsRunAsTiles(ProductKernels policy);

// Whether the products no rule gives to the tiles (a linear layer's x @ W^T where
// orient_products left it, a product of two activations) run as tiles under `policy`
// (unless their rhs is a transpose OpenBLAS reads in place): kTiles, and kAuto where
// OpenBLAS runs kernels narrower than the host's vectors (runtime::BlasNarrowerThanHost).
bool PlainProductsRunAsTiles(ProductKernels policy);

// Whether `v` is weights orient_products (a product's rhs) or pack_weight_rows (its lhs)
// packed into the tiles' panels: [slice of] reshape(transpose(param of rank >= 3)). Tiles
// read those panels in place; anything else would copy the weights back out on every call.
bool IsPackedPanels(const ir::Graph& graph, ir::ValueId v);

// Whether generated tiles read product operand `v` in place when it lowers to a load at
// f(row) + g(k) (SeparableLoad), gathering it as they pack instead of reading a copy: a
// convolution's sliding windows (im2col's patches) seen through reshapes and transposes,
// and a reshape of a buffer (a 1 x 1 convolution's input). Not a plain transpose: a copy
// reads it faster than gathers with a stride of a row.
bool TilesReadInPlace(const ir::Graph& graph, ir::ValueId v);

// How one product node is computed.
enum class ProductKernel : uint8_t { kLoops, kTiles, kBlas };
// For matmul node `id` under `policy`: kLoops where UseExternMatmul says no (small
// products, matrix-vector); else kBlas or kTiles by `policy`, where kAuto takes the tiles
// for packed weights (IsPackedPanels, either operand) and a convolution's windows (which they
// gather in place, where BLAS needs an im2col copy), and for the other products where OpenBLAS runs
// kernels narrower than the host's vectors (runtime::BlasNarrowerThanHost), unless the rhs
// is a transpose BLAS reads in place (`rhs_transposed`: the tiles would copy it).
ProductKernel ChooseProductKernel(const ir::Graph& graph, ir::ValueId id, ProductKernels policy,
                                  bool rhs_transposed);

// Whether matmul node `id` should call BLAS: float, M not the constant 1, and M*N*K known
// to reach kExternMatmulMinMacs. Symbolic dims count as 1, so a product only goes to BLAS
// when its constant dims alone are big enough (the helper handles any run-time size, 0
// and 1 included).
bool UseExternMatmul(const ir::Graph& graph, ir::ValueId id);

// Whether `perm` swaps exactly the last two axes (a transpose BLAS reads through its
// trans flag instead of a copy).
bool SwapsLastTwoAxes(const std::vector<int64_t>& perm);

// The loop order of a generated matmul whose rhs expression is `rhs` (loop variable
// `n_var` is n): kAxpy (n innermost) when the rhs's first load is contiguous along n,
// else kDot (k innermost, scalar accumulator).
MatmulOrder ChooseMatmulOrder(const ExprPtr& rhs, int n_var);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_MATMUL_STRATEGY_H_
