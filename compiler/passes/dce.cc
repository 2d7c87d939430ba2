#include "compiler/passes/dce.h"

#include "compiler/passes/rewriter.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {

absl::StatusOr<bool> Dce(ir::Graph* graph) {
  std::vector<bool> live(graph->num_nodes(), false);
  for (ValueId out : graph->outputs()) live[out] = true;
  for (ValueId id = graph->num_nodes() - 1; id >= 0; --id) {
    const ir::Node& n = graph->node(id);
    if (n.op == ir::OpCode::kInput) live[id] = true;
    if (!live[id]) continue;
    for (ValueId v : n.operands) live[v] = true;
  }
  bool changed = false;
  GraphRewriter rw(*graph);
  for (ValueId id = 0; id < graph->num_nodes(); ++id) {
    if (live[id]) {
      rw.Copy(id);
    } else {
      changed = true;
    }
  }
  if (!changed) return false;
  GJ_ASSIGN_OR_RETURN(*graph, std::move(rw).Finish());
  return true;
}

}  // namespace graphjit::compiler
