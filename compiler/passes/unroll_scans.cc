#include "compiler/passes/unroll_scans.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "compiler/passes/rewriter.h"
#include "ir/regions.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

using ir::OpCode;
using ir::Shape;
using ir::SymExpr;

// The body of `scan` (node `id`) inlined `rows` times into `rw`: the final carried values,
// then each per-row value concatenated along a new dim 0.
// `params`: the new graph's params by name (a body's param is the enclosing graph's).
std::vector<ValueId> Unroll(const ir::Graph& graph, ValueId id, int64_t rows, GraphRewriter& rw,
                            absl::flat_hash_map<std::string, ValueId>& params) {
  const ir::Node& scan = graph.node(id);
  const ir::Graph& body = *scan.regions[0];
  const int64_t carried = scan.attrs.GetInt("carried"), scanned = scan.attrs.GetInt("scanned");
  const std::vector<ValueId> inputs = body.Inputs();
  std::vector<ValueId> operands;
  for (ValueId v : scan.operands) operands.push_back(rw.Get(v));
  std::vector<ValueId> state(operands.begin(), operands.begin() + carried);
  const int outputs = ir::NumScanOutputs(scan);
  std::vector<std::vector<ValueId>> stacked(outputs);
  for (int64_t t = 0; t < rows; ++t) {
    std::vector<ValueId> map(body.num_nodes(), ir::kInvalidValue);
    for (size_t k = 0; k < inputs.size(); ++k) {
      ValueId v = k < static_cast<size_t>(carried) ? state[k] : operands[k];
      if (k >= static_cast<size_t>(carried) && k < static_cast<size_t>(carried + scanned)) {
        const ValueId slice =
            rw.Emit(OpCode::kSlice, {v},
                    {{"axis", int64_t{0}}, {"start", SymExpr(t)}, {"end", SymExpr(t + 1)}});
        v = rw.Emit(OpCode::kReshape, {slice}, {{"shape", body.type(inputs[k]).shape}});
      }
      map[inputs[k]] = v;
    }
    for (ValueId n = 0; n < body.num_nodes(); ++n) {
      if (map[n] != ir::kInvalidValue) continue;
      const ir::Node& node = body.node(n);
      if (node.op == OpCode::kParam) {
        auto [it, fresh] = params.try_emplace(node.name(), ir::kInvalidValue);
        if (fresh) it->second = rw.Emit(OpCode::kParam, {}, node.attrs);
        map[n] = it->second;
        continue;
      }
      std::vector<ValueId> in;
      for (ValueId v : node.operands) in.push_back(map[v]);
      map[n] = rw.Emit(node.op, in, node.attrs, node.regions);
    }
    for (int64_t k = 0; k < carried; ++k) state[k] = map[body.outputs()[k]];
    for (int j = 0; j < outputs; ++j) {
      const ValueId y = map[body.outputs()[carried + j]];
      Shape shape = body.type(body.outputs()[carried + j]).shape;
      shape.insert(shape.begin(), SymExpr(1));
      stacked[j].push_back(rw.Emit(OpCode::kReshape, {y}, {{"shape", shape}}));
    }
  }
  std::vector<ValueId> results = state;
  for (const std::vector<ValueId>& parts : stacked) {
    results.push_back(parts.size() == 1 ? parts[0]
                                        : rw.Emit(OpCode::kConcat, parts, {{"axis", int64_t{0}}}));
  }
  return results;
}

}  // namespace

namespace {

// The rows of scan `n` if it is one to unroll.
std::optional<int64_t> RowsToUnroll(const ir::Graph& graph, const ir::Node& n) {
  if (n.op != OpCode::kScan) return std::nullopt;
  const std::optional<int64_t> rows =
      graph.type(n.operands[n.attrs.GetInt("carried")]).shape[0].AsConstant();
  if (!rows || *rows < 1 || *rows > kMaxUnrolledRows) return std::nullopt;
  return rows;
}

}  // namespace

absl::StatusOr<bool> UnrollScans(ir::Graph* graph) {
  bool any = false;
  for (const ir::Node& n : graph->nodes()) any |= RowsToUnroll(*graph, n).has_value();
  if (!any) return false;
  GraphRewriter rw(*graph);
  // Params first: an unrolled body reads the enclosing graph's by name.
  absl::flat_hash_map<std::string, ValueId> params;
  for (ValueId id : graph->Params()) params[graph->node(id).name()] = rw.Copy(id);
  absl::flat_hash_map<ValueId, std::vector<ValueId>> unrolled;
  for (ValueId id = 0; id < graph->num_nodes(); ++id) {
    if (rw.IsMapped(id)) continue;
    const ir::Node& n = graph->node(id);
    if (const std::optional<int64_t> rows = RowsToUnroll(*graph, n)) {
      unrolled[id] = Unroll(*graph, id, *rows, rw, params);
      rw.Map(id, unrolled[id][0]);
      continue;
    }
    if ((n.op == OpCode::kLoopResult || n.op == OpCode::kScanOutput) &&
        unrolled.contains(n.operands[0])) {
      int64_t index = n.attrs.GetInt("index");
      if (n.op == OpCode::kScanOutput) {
        index += graph->node(n.operands[0]).attrs.GetInt("carried");
      }
      rw.Map(id, unrolled[n.operands[0]][index]);
      continue;
    }
    rw.Copy(id);
  }
  GJ_ASSIGN_OR_RETURN(*graph, std::move(rw).Finish());
  return true;
}

}  // namespace graphjit::compiler
