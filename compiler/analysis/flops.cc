#include "compiler/analysis/flops.h"

namespace graphjit::compiler {

// The count below is matmul's formula: another op with Flops = Matmul in ir/ops.def needs
// its own before it builds.
static_assert([] {
  for (int i = 0; i < ir::kNumOps; ++i) {
    const auto op = static_cast<ir::OpCode>(i);
    if (ir::FlopClassOf(op) == ir::FlopClass::kMatmul && op != ir::OpCode::kMatmul) return false;
  }
  return true;
}());

ir::SymExpr NodeFlops(const ir::Graph& graph, ir::ValueId id) {
  const ir::Node& n = graph.node(id);
  // Which ops count is the Flops column of ir/ops.def.
  if (ir::FlopClassOf(n.op) == ir::FlopClass::kFree) return 0;
  // The result is [batch.., M, N]: its element count is B*M*N, and K is the lhs's last dim.
  const ir::Shape& lhs = graph.type(n.operands[0]).shape;
  return 2 * ir::NumElements(n.type.shape) * lhs.back();
}

FlopCount CountFlops(const ir::Graph& graph) {
  FlopCount count;
  count.per_node.reserve(graph.num_nodes());
  for (ir::ValueId id = 0; id < graph.num_nodes(); ++id) {
    count.per_node.push_back(NodeFlops(graph, id));
    count.total = count.total + count.per_node.back();
  }
  return count;
}

}  // namespace graphjit::compiler
