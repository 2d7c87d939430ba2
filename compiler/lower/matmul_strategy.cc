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

bool ProductsRunAsTiles(ProductKernels policy) {
  return policy == ProductKernels::kTiles ||
         (policy == ProductKernels::kAuto && runtime::BlasNarrowerThanHost());
}

bool IsPackedPanels(const ir::Graph& graph, ir::ValueId v) {
  const ir::Node* n = &graph.node(v);
  if (n->op == ir::OpCode::kSlice) n = &graph.node(n->operands[0]);
  if (n->op != ir::OpCode::kReshape) return false;
  n = &graph.node(n->operands[0]);
  if (n->op != ir::OpCode::kTranspose) return false;
  const ir::Node& p = graph.node(n->operands[0]);
  return p.op == ir::OpCode::kParam && p.type.rank() >= 3;
}

bool TilesReadInPlace(const ir::Graph& graph, ir::ValueId v) {
  bool reshaped = false, transposed = false;
  for (;; v = graph.node(v).operands[0]) {
    const ir::OpCode op = graph.node(v).op;
    if (op == ir::OpCode::kReshape) {
      reshaped = true;
    } else if (op == ir::OpCode::kTranspose) {
      transposed = true;
    } else {
      return op == ir::OpCode::kWindow || (reshaped && !transposed);
    }
  }
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
  // Measured on znver5 (AVX-512), one thread, graphjit-dump --profile of resnet18 at N = 1
  // (20 products after im2col; the whole call, ms): tiles 28.4 vs OpenBLAS 37.9 with
  // OpenBLAS's AVX2 kernels (OPENBLAS_CORETYPE=Haswell), 28.0 vs 24.4 with its own choice,
  // Cooperlake's AVX-512 kernels. Alone, the tiles reach ~210 GFLOP/s on 64x576x3136 and
  // 128x1152x784 (OpenBLAS's AVX-512 kernels 195-217) but lose where a short N leaves
  // lanes idle (512x4608x49: 2.04 vs 1.37 ms); inside the model they lose on every shape.
  // Weights orient_products packed (it does where ProductsRunAsTiles): the tiles read them
  // in place; OpenBLAS would need them copied back out on every call.
  if (IsPackedPanels(graph, graph.node(id).operands[1])) return ProductKernel::kTiles;
  if (rhs_transposed || !runtime::BlasNarrowerThanHost()) return ProductKernel::kBlas;
  return ProductKernel::kTiles;
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
