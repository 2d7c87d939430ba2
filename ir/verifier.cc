#include "ir/verifier.h"

#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/regions.h"

namespace graphjit::ir {
namespace {

absl::Status NodeError(ValueId id, const Node& n, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("%", id, " (", OpName(n.op), "): ", what));
}

// A loop_result names a while (or a scan) among its operands and its carried operand.
absl::Status CheckLoopResult(const Graph& graph, ValueId id, const Node& n) {
  const Node& loop = graph.node(n.operands[0]);
  const int64_t index = n.attrs.GetInt("index");
  if (loop.op != OpCode::kWhile && loop.op != OpCode::kScan) {
    return NodeError(id, n,
                     absl::StrCat("operand %", n.operands[0], " is a ", OpName(loop.op),
                                  ", expected a while or a scan"));
  }
  if (index >= loop.attrs.GetInt("carried") || loop.operands[index] != n.operands[1]) {
    return NodeError(id, n,
                     absl::StrCat("index=", index, " with operand %", n.operands[1],
                                  " does not name a carried value of while %", n.operands[0]));
  }
  return absl::OkStatus();
}

// A scan_output names a scan and one of its per-row values, stacked: [length, ..].
absl::Status CheckScanOutput(const Graph& graph, ValueId id, const Node& n) {
  const Node& scan = graph.node(n.operands[0]);
  if (scan.op != OpCode::kScan || scan.regions.size() != 1) {
    return NodeError(
        id, n,
        absl::StrCat("operand %", n.operands[0], " is a ", OpName(scan.op), ", expected a scan"));
  }
  const int64_t index = n.attrs.GetInt("index");
  if (index >= NumScanOutputs(scan)) {
    return NodeError(id, n,
                     absl::StrCat("index=", index, ", but scan %", n.operands[0], " has ",
                                  NumScanOutputs(scan), " per-row values"));
  }
  const Graph& body = *scan.regions[0];
  ValueType want = body.type(body.outputs()[scan.attrs.GetInt("carried") + index]);
  want.shape.insert(want.shape.begin(),
                    graph.type(scan.operands[scan.attrs.GetInt("carried")]).shape[0]);
  if (!(want == n.type)) {
    return NodeError(id, n,
                     absl::StrCat("declares ", TypeToString(n.type), ", but the stacked ",
                                  "value is ", TypeToString(want)));
  }
  return absl::OkStatus();
}

absl::Status VerifyAtDepth(const Graph& graph, int depth);

// Node `id`'s regions: their signatures against its operands, then each region itself.
absl::Status VerifyRegions(const Graph& graph, ValueId id, const Node& n, int depth) {
  if (n.regions.empty() && NumRegions(n.op) == 0) return absl::OkStatus();
  if (depth >= kMaxRegionDepth) {
    return NodeError(id, n, absl::StrCat("regions nest deeper than ", kMaxRegionDepth));
  }
  std::vector<ValueType> operand_types;
  for (ValueId v : n.operands) operand_types.push_back(graph.node(v).type);
  if (absl::Status s = CheckRegionSignatures(n.op, operand_types, n.attrs, n.regions); !s.ok()) {
    return NodeError(id, n, s.message());
  }
  for (size_t i = 0; i < n.regions.size(); ++i) {
    if (absl::Status s = VerifyAtDepth(*n.regions[i], depth + 1); !s.ok()) {
      return NodeError(
          id, n,
          absl::StrCat("in region ", RegionName(n.op, static_cast<int>(i)), ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status VerifyAtDepth(const Graph& graph, int depth) {
  absl::flat_hash_set<std::string> input_names, param_names;
  // The symbols of the nodes so far: a data-dependent node's symbol must be new, so that it
  // is bound by that node's run alone (not by an input, not twice).
  std::set<std::string> seen;
  absl::flat_hash_map<std::string, ValueId> defined;  // unbacked symbol -> its node
  for (ValueId id = 0; id < graph.num_nodes(); ++id) {
    const Node& n = graph.node(id);
    const std::string* symbol = DefinedSymbolOf(n);
    if (symbol != nullptr && seen.contains(*symbol)) {
      return NodeError(id, n,
                       absl::StrCat("symbol '", *symbol,
                                    "' is used before this node, which defines it: an unbacked ",
                                    "symbol needs a name of its own"));
    }
    if (symbol != nullptr) defined.emplace(*symbol, id);
    if ((n.op == OpCode::kInput || n.op == OpCode::kParam) && !defined.empty()) {
      std::set<std::string> mentioned;
      CollectNodeSymbols(n, &mentioned);
      for (const std::string& s : mentioned) {
        if (auto it = defined.find(s); it != defined.end()) {
          return NodeError(id, n,
                           absl::StrCat("its shape mentions '", s, "', the count that %",
                                        it->second, " defines: the caller binds an input's dims"));
        }
      }
    }
    CollectNodeSymbols(n, &seen);
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
    if (absl::Status s = VerifyRegions(graph, id, n, depth); !s.ok()) return s;
    if (n.op == OpCode::kLoopResult) {
      if (absl::Status s = CheckLoopResult(graph, id, n); !s.ok()) return s;
    }
    if (n.op == OpCode::kScanOutput) {
      if (absl::Status s = CheckScanOutput(graph, id, n); !s.ok()) return s;
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

}  // namespace

absl::Status VerifyGraph(const Graph& graph) { return VerifyAtDepth(graph, 0); }

}  // namespace graphjit::ir
