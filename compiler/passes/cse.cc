#include "compiler/passes/cse.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "compiler/passes/rewriter.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

// The structural key of a node whose operands are already rewritten: op, new operand ids,
// attributes and type, all in their canonical printed forms.
std::string Key(const ir::Node& n, const GraphRewriter& rw) {
  std::string key(ir::OpName(n.op));
  for (ValueId v : n.operands) absl::StrAppend(&key, " %", rw.Get(v));
  for (const auto& [name, value] : n.attrs.items()) {
    absl::StrAppend(&key, " ", name, "=", ir::AttrValueToString(value));
  }
  absl::StrAppend(&key, " : ", ir::TypeToString(n.type));
  return key;
}

}  // namespace

absl::StatusOr<bool> Cse(ir::Graph* graph) {
  GraphRewriter rw(*graph);
  absl::flat_hash_map<std::string, ValueId> seen;
  bool changed = false;
  for (ValueId id = 0; id < graph->num_nodes(); ++id) {
    if (!graph->node(id).regions.empty()) {  // two loops are one only if their regions are
      rw.Copy(id);
      continue;
    }
    std::string key = Key(graph->node(id), rw);
    auto it = seen.find(key);
    if (it != seen.end()) {
      rw.Map(id, it->second);
      changed = true;
    } else {
      seen.emplace(std::move(key), rw.Copy(id));
    }
  }
  GJ_ASSIGN_OR_RETURN(*graph, std::move(rw).Finish());
  return changed;
}

}  // namespace graphjit::compiler
