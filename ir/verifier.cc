#include "ir/verifier.h"

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace graphjit::ir {
namespace {

absl::Status NodeError(ValueId id, const Node& n, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("%", id, " (", OpName(n.op), "): ", what));
}

}  // namespace

absl::Status VerifyGraph(const Graph& graph) {
  absl::flat_hash_set<std::string> input_names, param_names;
  for (ValueId id = 0; id < graph.num_nodes(); ++id) {
    const Node& n = graph.node(id);
    for (ValueId v : n.operands) {
      if (v < 0 || v >= id) {
        return NodeError(id, n, absl::StrCat("operand %", v, " is not defined before use"));
      }
    }
    if (!graph.types_inferred()) {
      std::vector<ValueType> operand_types;
      for (ValueId v : n.operands) operand_types.push_back(graph.node(v).type);
      absl::StatusOr<ValueType> inferred = InferType(n.op, operand_types, n.attrs);
      if (!inferred.ok()) return NodeError(id, n, inferred.status().message());
      if (!(*inferred == n.type)) {
        return NodeError(id, n,
                         absl::StrCat("stored type ", TypeToString(n.type),
                                      " differs from inferred type ", TypeToString(*inferred)));
      }
    }
    if (n.op == OpCode::kInput || n.op == OpCode::kParam) {
      auto& names = n.op == OpCode::kInput ? input_names : param_names;
      if (!names.insert(n.name()).second) {
        return NodeError(id, n, absl::StrCat("duplicate name '", n.name(), "'"));
      }
    }
  }
  if (graph.outputs().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("graph ", graph.name(), " has no outputs"));
  }
  for (ValueId out : graph.outputs()) {
    if (out < 0 || out >= graph.num_nodes()) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph ", graph.name(), ": output %", out, " does not exist"));
    }
  }
  return absl::OkStatus();
}

}  // namespace graphjit::ir
