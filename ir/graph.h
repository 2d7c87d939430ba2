// The graph IR: SSA nodes over the one op list, with symbolic shapes.
#ifndef GRAPHJIT_IR_GRAPH_H_
#define GRAPHJIT_IR_GRAPH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "ir/attrs.h"
#include "ir/op.h"

namespace graphjit::ir {

// A node's index in its graph; operands always refer to earlier nodes (SSA, topological).
using ValueId = int32_t;
inline constexpr ValueId kInvalidValue = -1;

class Graph;

struct Node {
  OpCode op;
  std::vector<ValueId> operands;
  Attrs attrs;
  ValueType type;  // the result: every node has exactly one
  // The graphs a control-flow op runs (ir/regions.h: a while's cond and body), shared and
  // immutable; empty for every other op.
  std::vector<std::shared_ptr<const Graph>> regions = {};

  // The `name` attribute of an input or parameter ("" for other ops).
  const std::string& name() const;
};

// Adds the symbols `n` mentions (its type, its dim attributes, its regions') to `symbols`.
void CollectNodeSymbols(const Node& n, std::set<std::string>* symbols);

// The unbacked symbol runtime node `n` defines (its `symbol` attribute: nonzero, unique,
// factor_dim, ...), or nullptr for every node that defines none (assert_dim, top_k too).
const std::string* DefinedSymbolOf(const Node& n);

// Binds the symbol `n` defines from its result's dims as a run or a trace knows them
// (`dim(i)`, nullopt where unknown): the first dim of n's type that mentions the symbol
// (`a * symbol + b`: a count, or factor_dim's multiple) and has a value is solved for it
// (ir::SolveFor). Nothing when n defines none or no such dim has a value.
void BindDefinedSymbol(const Node& n, const std::function<std::optional<int64_t>(int)>& dim,
                       Bindings* bindings);

// Inputs (run-time tensors), named parameters (weights) and constants are nodes; a graph
// may have several outputs. Graphs are plain values: copy one to transform it.
class Graph {
 public:
  explicit Graph(std::string name = "main") : name_(std::move(name)) {}

  // Appends a node whose type the caller has already inferred (GraphBuilder does that and
  // more); CHECKs that the operands exist.
  ValueId Append(OpCode op, std::vector<ValueId> operands, Attrs attrs, ValueType type,
                 std::vector<std::shared_ptr<const Graph>> regions = {});
  void AddOutput(ValueId id);
  void set_outputs(std::vector<ValueId> outputs) { outputs_ = std::move(outputs); }

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const Node& node(ValueId id) const;
  Node& mutable_node(ValueId id);
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  const ValueType& type(ValueId id) const { return node(id).type; }

  // The input (or param) nodes in graph order.
  std::vector<ValueId> Inputs() const;
  std::vector<ValueId> Params() const;
  // The input (or param) node with this name, or kInvalidValue.
  ValueId FindInput(absl::string_view name) const;
  ValueId FindParam(absl::string_view name) const;
  // Every symbol mentioned by a type or a dim attribute (e.g. {"P", "S"}), regions included.
  std::set<std::string> Symbols() const;
  // The unbacked symbols: those data-dependent nodes define (ir/ops.def's `symbol`
  // attribute), bound by running them rather than by the inputs. Regions included.
  std::set<std::string> DefinedSymbols() const;
  // Number of nodes that compute something (not inputs, params or constants).
  int NumComputeNodes() const;
  // Whether some node holds regions (a while): such a graph is run by the interpreter or,
  // compiled, by compiler/compiled/control_flow.h, never lowered as one program.
  bool HasRegions() const;
  // Whether some node runs its eager kernel (ir::IsRuntimeOp): compiled, such a graph is
  // run by compiler/compiled/control_flow.h too.
  bool HasRuntimeOps() const;
  // For each value, the ids of the nodes that use it, in graph order; an output counts
  // as a use by the pseudo-node num_nodes(). The one users map of the passes and lowering.
  std::vector<std::vector<ValueId>> Users() const;

  // Every node's type is what InferType gives for it: each node came through
  // GraphBuilder::Add, and nothing (Append with a caller's type, mutable_node) has touched
  // a node since. VerifyGraph then skips re-inferring types, which was most of a pass's
  // cost.
  bool types_inferred() const { return types_inferred_; }

 private:
  friend class GraphBuilder;
  std::string name_;
  std::vector<Node> nodes_;
  std::vector<ValueId> outputs_;
  bool types_inferred_ = true;  // vacuously, while empty
};

}  // namespace graphjit::ir

#endif  // GRAPHJIT_IR_GRAPH_H_
