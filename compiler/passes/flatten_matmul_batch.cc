#include "compiler/passes/flatten_matmul_batch.h"

#include "compiler/passes/rewriter.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

using ir::OpCode;

bool Flattens(const ir::Graph& g, ValueId id) {
  const ir::Node& n = g.node(id);
  if (n.op != OpCode::kMatmul || !ir::IsFloat(n.type.dtype)) return false;
  const ir::ValueType& a = g.type(n.operands[0]);
  const ir::ValueType& w = g.type(n.operands[1]);
  if (a.rank() < 3 || w.rank() != 2) return false;
  const ir::Shape batch(a.shape.begin(), a.shape.end() - 2);
  return ir::NumElements(batch) != ir::SymExpr(1);
}

}  // namespace

absl::StatusOr<bool> FlattenMatmulBatch(ir::Graph* graph) {
  const ir::Graph& g = *graph;
  bool any = false;
  for (ValueId id = 0; id < g.num_nodes() && !any; ++id) any = Flattens(g, id);
  if (!any) return false;

  GraphRewriter rw(g);
  for (ValueId id = 0; id < g.num_nodes(); ++id) {
    if (!Flattens(g, id)) {
      rw.Copy(id);
      continue;
    }
    const ir::Node& n = g.node(id);
    const ir::Shape& a = g.type(n.operands[0]).shape;
    const ir::Shape rows_shape(a.begin(), a.end() - 1);
    const ir::Shape rows = {ir::NumElements(rows_shape), a.back()};
    ValueId flat = rw.Emit(OpCode::kReshape, {rw.Get(n.operands[0])}, ir::Attrs{{"shape", rows}});
    ValueId product = rw.Emit(OpCode::kMatmul, {flat, rw.Get(n.operands[1])});
    rw.Map(id, rw.Emit(OpCode::kReshape, {product}, ir::Attrs{{"shape", n.type.shape}}));
  }
  GJ_ASSIGN_OR_RETURN(*graph, std::move(rw).Finish());
  return true;
}

}  // namespace graphjit::compiler
