#include "compiler/lower/matmul_strategy.h"

#include <optional>

#include "runtime/jit_helpers.h"

namespace graphjit::compiler {
namespace {

// The first node under `v` that is neither a reshape nor a transpose; whether the way
// down passed a reshape and a transpose in *reshaped and *transposed.
ir::ValueId UnderLayouts(const ir::Graph& graph, ir::ValueId v, bool* reshaped, bool* transposed) {
  for (;; v = graph.node(v).operands[0]) {
    const ir::OpCode op = graph.node(v).op;
    if (op != ir::OpCode::kReshape && op != ir::OpCode::kTranspose) return v;
    *(op == ir::OpCode::kReshape ? reshaped : transposed) = true;
  }
}

// Whether `v` is a convolution's sliding windows (im2col's patches), seen through
// reshapes and transposes.
bool IsConvolutionWindows(const ir::Graph& graph, ir::ValueId v) {
  bool reshaped = false, transposed = false;
  return graph.node(UnderLayouts(graph, v, &reshaped, &transposed)).op == ir::OpCode::kWindow;
}

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

// Weights scaled per call (sink_channel_scale's squeeze-and-excitation gate folded into a
// 1 x 1 convolution's weights): mul(param, x).
bool IsScaledWeights(const ir::Graph& graph, ir::ValueId v) {
  const ir::Node& n = graph.node(v);
  if (n.op != ir::OpCode::kMul) return false;
  for (ir::ValueId o : n.operands) {
    if (graph.node(o).op == ir::OpCode::kParam) return true;
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

bool ProductsRunAsTiles(ProductKernels policy) { return policy != ProductKernels::kBlas; }

bool PlainProductsRunAsTiles(ProductKernels policy) {
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
  const ir::ValueId under = UnderLayouts(graph, v, &reshaped, &transposed);
  return graph.node(under).op == ir::OpCode::kWindow || (reshaped && !transposed);
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
  // Weights orient_products or pack_weight_rows packed: the tiles read them in place;
  // OpenBLAS would need them copied back out on every call. A convolution's windows: the tiles
  // gather them as they pack, OpenBLAS needs them copied out first (im2col). Measured on znver5
  // with OpenBLAS's own AVX-512 kernels (Cooperlake), one thread, graphjit-dump --profile,
  // alternating, sum of kernel medians (ms): resnet18 25.7 with every product OpenBLAS after
  // im2col, 18.1 with these two as tiles; resnet50 55.4 / 47.5, densenet121 49.0 / 41.4.
  // A 1 x 1 convolution's weights are packed too (pack_weight_rows): over the 185 distinct
  // 1 x 1 convolutions (with their relu) of twelve torchvision CNNs, counted as often as they
  // occur, 46.9 ms as tiles over packed weights against 51.0 with OpenBLAS and a pass of its
  // own for the relu; 0.55-0.84x at 56 x 56 and larger, 0.95-0.99x at 14 x 14 and 7 x 7.
  // (Measured on convolutions, N >= 49: a W @ x of fewer columns, rare in models that
  // import, follows the same rule unmeasured.)
  const ir::Node& n = graph.node(id);
  if (IsPackedPanels(graph, n.operands[0]) || IsPackedPanels(graph, n.operands[1]) ||
      IsConvolutionWindows(graph, n.operands[1])) {
    return ProductKernel::kTiles;
  }
  // Weights scaled per call: the tiles pack them as they scale them, once per call;
  // OpenBLAS reads them after a kernel of their own wrote them, and leaves the bias and
  // residual after the product to another pass. Profile per call, one thread, three
  // alternations: efficientnet_b0 7.46 / 7.27 / 7.25 -> 7.11 / 7.22 / 7.13 ms,
  // regnet_y_400mf 6.63 / 6.36 / 6.50 -> 6.28 / 5.94 / 6.18, mobilenet_v3_small level.
  if (IsScaledWeights(graph, n.operands[0])) return ProductKernel::kTiles;
  // Any other product (a linear layer's, attention's, a 1 x 1 convolution's over a
  // transposed input) is plain BLAS work: OpenBLAS's AVX-512 kernels match the tiles there
  // when both pack per call (a 480 x 480 x 480 product 0.99 against 1.06 ms; the PP-OCR
  // recognizer at 1 x 320 with them all as tiles 11.1 against 9.6 ms), and a BLAS call
  // costs nothing to compile. Where OpenBLAS runs narrower kernels than the host's (AVX2 on
  // an AVX-512 host, as OPENBLAS_CORETYPE=Haswell makes it), the tiles win those too, except
  // over a transposed rhs that BLAS reads in place and the tiles would copy.
  if (rhs_transposed || !PlainProductsRunAsTiles(policy)) return ProductKernel::kBlas;
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
