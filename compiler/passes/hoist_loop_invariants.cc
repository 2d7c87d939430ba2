#include "compiler/passes/hoist_loop_invariants.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "compiler/passes/dce.h"
#include "compiler/passes/rewriter.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

using ir::OpCode;

// Ops that may fail on some values (an index out of range, an empty reduction): kept in
// the loop, which may run no trip.
bool MayFail(OpCode op) {
  return op == OpCode::kGather || op == OpCode::kScatterAdd || op == OpCode::kKvWrite ||
         op == OpCode::kArgMin || op == OpCode::kArgMax || op == OpCode::kCrossEntropy;
}

// Which nodes of `region` depend only on inputs from `first_invariant` on, params and
// constants; and, of those that compute, the frontier: the ones a node that is not
// invariant (or the region's outputs) reads.
struct Invariants {
  std::vector<bool> invariant;
  std::vector<ValueId> frontier;
};

Invariants FindInvariants(const ir::Graph& region, int first_invariant) {
  Invariants r;
  r.invariant.assign(region.num_nodes(), false);
  const std::vector<ValueId> inputs = region.Inputs();
  for (size_t k = first_invariant; k < inputs.size(); ++k) r.invariant[inputs[k]] = true;
  for (ValueId id = 0; id < region.num_nodes(); ++id) {
    const ir::Node& n = region.node(id);
    if (n.op == OpCode::kInput) continue;
    if (ir::IsSourceOp(n.op)) {
      r.invariant[id] = true;
      continue;
    }
    if (!n.regions.empty() || ir::LoweringOf(n.op) == ir::OpLowering::kRegion ||
        ir::IsRuntimeOp(n.op) || MayFail(n.op)) {
      continue;
    }
    bool all = true;
    for (ValueId v : n.operands) all &= r.invariant[v];
    r.invariant[id] = all;
  }
  const std::vector<std::vector<ValueId>> users = region.Users();
  for (ValueId id = 0; id < region.num_nodes(); ++id) {
    const ir::Node& n = region.node(id);
    if (!r.invariant[id] || ir::IsSourceOp(n.op)) continue;
    bool read_by_variant = false;
    for (ValueId u : users[id]) read_by_variant |= u >= region.num_nodes() || !r.invariant[u];
    if (read_by_variant) r.frontier.push_back(id);
  }
  return r;
}

// `region` with its inputs first, then one new input per type of `new_types` (named h<k>,
// avoiding its names); its `hoisted` nodes read from the new inputs from `first_new` on
// (the others are the other region's hoisted values), and what only they read dropped.
absl::StatusOr<std::shared_ptr<const ir::Graph>> Rewire(const ir::Graph& region,
                                                        const std::vector<ValueId>& hoisted,
                                                        const std::vector<ir::ValueType>& new_types,
                                                        int first_new) {
  ir::GraphBuilder b(region.name());
  std::vector<ValueId> map(region.num_nodes(), ir::kInvalidValue);
  absl::flat_hash_set<std::string> names;
  for (ValueId id : region.Inputs()) {
    map[id] = b.Input(region.node(id).name(), region.type(id).dtype, region.type(id).shape);
    names.insert(region.node(id).name());
  }
  std::vector<ValueId> new_inputs;
  for (size_t k = 0; k < new_types.size(); ++k) {
    std::string name = absl::StrCat("h", k);
    while (names.contains(name)) name += "_";
    new_inputs.push_back(b.Input(name, new_types[k].dtype, new_types[k].shape));
  }
  for (size_t k = 0; k < hoisted.size(); ++k) map[hoisted[k]] = new_inputs[first_new + k];
  for (ValueId id = 0; id < region.num_nodes(); ++id) {
    if (map[id] != ir::kInvalidValue) continue;
    const ir::Node& n = region.node(id);
    std::vector<ValueId> operands;
    for (ValueId v : n.operands) operands.push_back(map[v]);
    map[id] = b.Add(n.op, operands, n.attrs, n.regions);
  }
  for (ValueId v : region.outputs()) b.Output(map[v]);
  GJ_ASSIGN_OR_RETURN(ir::Graph g, std::move(b).Build());
  GJ_RETURN_IF_ERROR(Dce(&g).status());  // what only the hoisted values read
  return std::make_shared<const ir::Graph>(std::move(g));
}

}  // namespace

absl::StatusOr<bool> HoistLoopInvariants(ir::Graph* graph) {
  if (!graph->HasRegions()) return false;
  GraphRewriter rw(*graph);
  bool changed = false;
  for (ValueId id = 0; id < graph->num_nodes(); ++id) {
    if (rw.IsMapped(id)) continue;  // a param a hoisted node needed early
    const ir::Node& loop = graph->node(id);
    if (loop.op != OpCode::kWhile) {
      rw.Copy(id);
      continue;
    }
    const int first_invariant = static_cast<int>(loop.attrs.GetInt("carried"));
    std::vector<ValueId> operands;
    for (ValueId v : loop.operands) operands.push_back(rw.Get(v));
    // Each region's frontier, computed before the loop: its nodes copied into the
    // enclosing graph with the region's inputs read as the loop's operands.
    std::vector<std::vector<ValueId>> hoisted(loop.regions.size());
    std::vector<ir::ValueType> new_types;
    std::vector<int> first_new;
    for (size_t r = 0; r < loop.regions.size(); ++r) {
      const ir::Graph& region = *loop.regions[r];
      const Invariants inv = FindInvariants(region, first_invariant);
      first_new.push_back(static_cast<int>(new_types.size()));
      if (inv.frontier.empty()) continue;
      std::vector<ValueId> outer(region.num_nodes(), ir::kInvalidValue);
      const std::vector<ValueId> inputs = region.Inputs();
      for (size_t k = 0; k < inputs.size(); ++k) outer[inputs[k]] = operands[k];
      for (ValueId n = 0; n <= inv.frontier.back(); ++n) {
        const ir::Node& node = region.node(n);
        if (!inv.invariant[n] || outer[n] != ir::kInvalidValue) continue;
        if (node.op == OpCode::kParam) {
          // The enclosing graph's param of that name (copied now if it comes later).
          const ValueId source = graph->FindParam(node.name());
          if (source == ir::kInvalidValue) {
            outer[n] = rw.Emit(OpCode::kParam, {}, node.attrs);
          } else {
            if (!rw.IsMapped(source)) rw.Copy(source);
            outer[n] = rw.Get(source);
          }
          continue;
        }
        std::vector<ValueId> in;
        for (ValueId v : node.operands) in.push_back(outer[v]);
        outer[n] = rw.Emit(node.op, in, node.attrs);
      }
      for (ValueId f : inv.frontier) {
        operands.push_back(outer[f]);
        new_types.push_back(region.type(f));
      }
      hoisted[r] = inv.frontier;
    }
    if (new_types.empty()) {
      rw.Copy(id);
      continue;
    }
    std::vector<std::shared_ptr<const ir::Graph>> regions;
    for (size_t r = 0; r < loop.regions.size(); ++r) {
      GJ_ASSIGN_OR_RETURN(std::shared_ptr<const ir::Graph> g,
                          Rewire(*loop.regions[r], hoisted[r], new_types, first_new[r]));
      regions.push_back(std::move(g));
    }
    rw.Map(id, rw.Emit(OpCode::kWhile, operands, loop.attrs, std::move(regions)));
    changed = true;
  }
  GJ_ASSIGN_OR_RETURN(*graph, std::move(rw).Finish());
  return changed;
}

}  // namespace graphjit::compiler
