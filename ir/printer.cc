#include "ir/printer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace graphjit::ir {

std::string PrintNode(const Graph& graph, ValueId id) {
  const Node& n = graph.node(id);
  std::string line = absl::StrCat("%", id, " = ", OpName(n.op));
  if (!n.operands.empty()) {
    absl::StrAppend(
        &line, "(",
        absl::StrJoin(n.operands, ", ",
                      [](std::string* out, ValueId v) { absl::StrAppend(out, "%", v); }),
        ")");
  }
  std::vector<std::string> attrs;
  for (const auto& [name, value] : n.attrs.items()) {
    if (IsSourceOp(n.op) && (name == "dtype" || name == "shape")) continue;
    attrs.push_back(absl::StrCat(name, "=", AttrValueToString(value)));
  }
  if (!attrs.empty()) absl::StrAppend(&line, " {", absl::StrJoin(attrs, ", "), "}");
  absl::StrAppend(&line, " : ", TypeToString(n.type));
  return line;
}

namespace {

// The graph's text with every line after the first indented by `indent` (a region's
// text starts after its `region ` keyword).
std::string PrintIndented(const Graph& graph, const std::string& indent) {
  std::string out = absl::StrCat("graph ", graph.name(), " {\n");
  for (ValueId id = 0; id < graph.num_nodes(); ++id) {
    absl::StrAppend(&out, indent, "  ", PrintNode(graph, id), "\n");
    for (const auto& region : graph.node(id).regions) {
      absl::StrAppend(&out, indent, "    region ", PrintIndented(*region, indent + "    "));
    }
  }
  absl::StrAppend(&out, indent, "  return ",
                  absl::StrJoin(graph.outputs(), ", ",
                                [](std::string* o, ValueId v) { absl::StrAppend(o, "%", v); }),
                  "\n", indent, "}\n");
  return out;
}

}  // namespace

std::string PrintGraph(const Graph& graph) { return PrintIndented(graph, ""); }

}  // namespace graphjit::ir
