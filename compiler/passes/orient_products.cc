#include "compiler/passes/orient_products.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/passes/packed_weights.h"
#include "compiler/passes/rewriter.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

using ir::OpCode;

// A 1 x 1 convolution over at most this many positions (a CNN's 7 x 7 stage: 49) runs
// turned: its weights become panels packed at compile time (as the lhs they were packed
// again on every call, 0.9-1.6 MB streamed from memory per layer) and its few columns no
// longer leave a vector mostly empty (49 of 64 lanes); the transpose of its input is a
// small copy and a pass that follows reads the turned result at little cost. Alternated
// with the pass off (`graphjit-dump --profile`, one thread): a 160 -> 960 expansion at
// 7 x 7 108 -> 68 us; shufflenet_v2_x1_0 -9%, efficientnet_b0, mobilenet_v2, regnet,
// mobilenet_v3_small, resnet50 -5%, googlenet level. At 14 x 14 (196 columns) the product
// gained 18% but the pass reading it turned took 8 -> 71 us: activations with more columns
// (turned for all of them: shufflenet_v2_x1_0 1.90 -> 2.42 ms, mnasnet0_5 2.0 -> 2.7)
// stay as they are.
constexpr int64_t kMaxTurnedActivationColumns = 64;

// The permutation swapping the last two of `rank` axes.
std::vector<int64_t> SwapLastTwo(int rank) {
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return perm;
}

// Whether matmul `id` should run the other way round: its lhs a known parameter of
// constant shape, its rhs's column count a constant below the lhs's row count.
bool ShouldOrient(const ir::Graph& g, ValueId id, const PassContext& ctx) {
  const ir::Node& m = g.node(id);
  if (m.op != OpCode::kMatmul || m.operands[0] == m.operands[1]) return false;
  if (!ir::IsFloat(g.node(m.operands[0]).type.dtype)) return false;
  const std::optional<std::vector<int64_t>> known = KnownParamDims(g, m.operands[0], ctx);
  if (!known) return false;
  const std::vector<int64_t>& shape = *known;
  const ir::Shape& xs = g.node(m.operands[1]).type.shape;
  std::optional<int64_t> n = xs.back().AsConstant();
  // Windows (a convolution's patches), which lowering materializes anyway and then
  // materializes turned at the same cost; an activation (a 1 x 1 convolution's input)
  // only with few columns (see kMaxTurnedActivationColumns).
  if (!IsWindows(g, m.operands[1]) && !(n && *n <= kMaxTurnedActivationColumns)) return false;
  const int64_t rows = shape[shape.size() - 2], depth = shape.back();
  return n && *n >= 2 && *n < rows && rows * *n * depth >= kMinPackedMacs;
}

}  // namespace

absl::StatusOr<bool> OrientProducts(ir::Graph* graph, PassContext* ctx) {
  if (!ctx->params_are_constant || ctx->tile_vector_bytes <= 0) return false;
  const ir::Graph& g = *graph;
  bool any = false;
  for (ValueId id = 0; id < g.num_nodes() && !any; ++id) any = ShouldOrient(g, id, *ctx);
  if (!any) return false;
  GraphRewriter rw(g);
  for (ValueId id = 0; id < g.num_nodes(); ++id) {
    if (!ShouldOrient(g, id, *ctx)) {
      rw.Copy(id);
      continue;
    }
    const ir::Node& m = g.node(id);
    const ir::Node& w = g.node(m.operands[0]);
    const int64_t nr = 2 * ctx->tile_vector_bytes / ir::DTypeSize(w.type.dtype);
    GJ_ASSIGN_OR_RETURN(const ValueId wt, PackedWeights(&rw, w, nr, /*transposed=*/true, ctx));
    const ValueId x = rw.Get(m.operands[1]);
    const int x_rank = g.node(m.operands[1]).type.rank();
    const ValueId xt = rw.Emit(OpCode::kTranspose, {x}, ir::Attrs{{"perm", SwapLastTwo(x_rank)}});
    const ValueId yt = rw.Emit(OpCode::kMatmul, {xt, wt});
    rw.Map(id, rw.Emit(OpCode::kTranspose, {yt}, ir::Attrs{{"perm", SwapLastTwo(m.type.rank())}}));
  }
  GJ_ASSIGN_OR_RETURN(*graph, std::move(rw).Finish());
  return true;
}

}  // namespace graphjit::compiler
