#include "compiler/passes/pack_weight_rows.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "compiler/passes/packed_weights.h"
#include "compiler/passes/rewriter.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

using ir::OpCode;
using ir::ValueId;

// The rows MR to pack matmul `id`'s lhs into, or 0 to leave it.
int RowsToPack(const ir::Graph& g, ValueId id, const PassContext& ctx) {
  const ir::Node& m = g.node(id);
  if (m.op != OpCode::kMatmul || m.operands[0] == m.operands[1]) return 0;
  const ir::Node& w = g.node(m.operands[0]);
  if (w.op != OpCode::kParam || !ir::IsFloat(w.type.dtype)) return 0;
  // OpenBLAS's products read W as it is, and read a transposed x in place where the
  // tiles would copy it (ChooseProductKernel keeps those with OpenBLAS).
  const ir::Node& x = g.node(m.operands[1]);
  if (x.op == OpCode::kTranspose) return 0;
  const std::optional<std::vector<int64_t>> known = KnownParamDims(g, m.operands[0], ctx);
  if (!known || known->size() < 2) return 0;
  const int64_t rows = (*known)[known->size() - 2], depth = known->back();
  // N: 0 when not a constant, counting as 1 toward the product's size (as lowering does).
  const std::optional<int64_t> n = g.node(m.operands[1]).type.shape.back().AsConstant();
  const int64_t columns = n.value_or(0);
  // A depth of 1 (an outer product) lowers with k folded to 0, which the tiles would not
  // read as panels.
  if (columns == 1 || depth < 2 || rows * std::max<int64_t>(columns, 1) * depth < kMinPackedMacs) {
    return 0;
  }
  const int mr = ctx.tile_rows(rows, columns, ir::DTypeSize(w.type.dtype));
  // One panel is not packed: lowering drops its panel dim of 1, which the tiles then do not
  // read as panels.
  return mr > 0 && rows > mr ? mr : 0;
}

}  // namespace

absl::StatusOr<bool> PackWeightRows(ir::Graph* graph, PassContext* ctx) {
  if (!ctx->params_are_constant || !ctx->tile_rows) return false;
  const ir::Graph& g = *graph;
  bool any = false;
  for (ValueId id = 0; id < g.num_nodes() && !any; ++id) any = RowsToPack(g, id, *ctx) > 0;
  if (!any) return false;
  GraphRewriter rw(g);
  for (ValueId id = 0; id < g.num_nodes(); ++id) {
    const int mr = RowsToPack(g, id, *ctx);
    if (mr == 0) {
      rw.Copy(id);
      continue;
    }
    const ir::Node& m = g.node(id);
    GJ_ASSIGN_OR_RETURN(const ValueId w,
                        PackedWeights(&rw, g.node(m.operands[0]), mr, /*transposed=*/false, ctx));
    rw.Map(id, rw.Emit(OpCode::kMatmul, {w, rw.Get(m.operands[1])}));
  }
  GJ_ASSIGN_OR_RETURN(*graph, std::move(rw).Finish());
  return true;
}

}  // namespace graphjit::compiler
