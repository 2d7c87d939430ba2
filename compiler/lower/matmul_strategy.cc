#include "compiler/lower/matmul_strategy.h"

#include <optional>

#include "runtime/jit_helpers.h"

namespace graphjit::compiler {
namespace {

// True if the first load in `e` indexes its last dim by exactly loop variable `var`
// (so consecutive `var` values read consecutive elements).
bool InnermostIsVar(const ExprPtr& e, int var) {
  if (e->kind == ExprKind::kLoad) {
    const ExprPtr& last = e->operands.back();
    return last->kind == ExprKind::kLoopVar && last->index == var;
  }
  for (const ExprPtr& o : e->operands) {
    if (o->kind == ExprKind::kLoad || o->kind == ExprKind::kOp || o->kind == ExprKind::kSelect ||
        o->kind == ExprKind::kCast) {
      return InnermostIsVar(o, var);
    }
  }
  return false;
}

}  // namespace

bool UseExternMatmul(const ir::Graph& graph, ir::ValueId id) {
  const ir::Node& n = graph.node(id);
  if (!ir::IsFloat(n.type.dtype)) return false;
  const ir::Shape& shape = n.type.shape;
  const ir::Shape& a = graph.type(n.operands[0]).shape;
  if (shape[shape.size() - 2].AsConstant() == 1) return false;
  int64_t macs = 1;
  for (const ir::SymExpr* d : {&shape[shape.size() - 2], &shape.back(), &a.back()}) {
    if (std::optional<int64_t> c = d->AsConstant()) macs *= *c;
  }
  return macs >= kExternMatmulMinMacs;
}

const char* ProductKernelsName(ProductKernels p) {
  switch (p) {
    case ProductKernels::kAuto:
      return "auto";
    case ProductKernels::kTiles:
      return "tiles";
    case ProductKernels::kBlas:
      return "blas";
  }
  return "?";
}

std::optional<ProductKernels> ParseProductKernels(std::string_view name) {
  for (ProductKernels p : {ProductKernels::kAuto, ProductKernels::kTiles, ProductKernels::kBlas}) {
    if (name == ProductKernelsName(p)) return p;
  }
  return std::nullopt;
}

ProductKernel ChooseProductKernel(const ir::Graph& graph, ir::ValueId id, ProductKernels policy,
                                  bool rhs_transposed) {
  if (!UseExternMatmul(graph, id)) return ProductKernel::kLoops;
  switch (policy) {
    case ProductKernels::kTiles:
      return ProductKernel::kTiles;
    case ProductKernels::kBlas:
      return ProductKernel::kBlas;
    case ProductKernels::kAuto:
      break;
  }
  // The tiles vectorize along N: they match or beat OpenBLAS's AVX-512 kernels where N is
  // long (rows of whole vectors; a convolution's positions), and lose where a short N
  // leaves lanes idle (49 columns fill 64 lanes). Measured on znver5, one thread, us
  // (graphjit-dump --profile of one f32 product, tiles vs Debian's OpenBLAS 0.3.21 with
  // its Cooperlake kernels): 64x576x3136 1104 vs 1182; 128x1152x784 1099 vs 1064;
  // 256x2304x196 1335 vs 1038; 512x4608x49 2040 vs 1366. With OpenBLAS's AVX2 kernels
  // (OPENBLAS_CORETYPE=Haswell, or an AVX2 host) the tiles win on all four.
  if (rhs_transposed) return ProductKernel::kBlas;
  if (runtime::BlasNarrowerThanHost()) return ProductKernel::kTiles;
  const std::optional<int64_t> n = graph.node(id).type.shape.back().AsConstant();
  return n.has_value() && *n >= kTilesMinColumns ? ProductKernel::kTiles : ProductKernel::kBlas;
}

bool SwapsLastTwoAxes(const std::vector<int64_t>& perm) {
  const int64_t r = static_cast<int64_t>(perm.size());
  bool last_two = r >= 2 && perm[r - 2] == r - 1 && perm[r - 1] == r - 2;
  for (int64_t i = 0; i + 2 < r; ++i) last_two = last_two && perm[i] == i;
  return last_two;
}

MatmulOrder ChooseMatmulOrder(const ExprPtr& rhs, int n_var) {
  return InnermostIsVar(rhs, n_var) ? MatmulOrder::kAxpy : MatmulOrder::kDot;
}

}  // namespace graphjit::compiler
