#include "ir/graph.h"

#include "ir/check.h"

namespace graphjit::ir {

const std::string& Node::name() const {
  static const std::string* empty = new std::string();
  const AttrValue* v = attrs.Find("name");
  return v != nullptr && std::holds_alternative<std::string>(*v) ? std::get<std::string>(*v)
                                                                 : *empty;
}

ValueId Graph::Append(OpCode op, std::vector<ValueId> operands, Attrs attrs, ValueType type,
                      std::vector<std::shared_ptr<const Graph>> regions) {
  for (ValueId v : operands) {
    GJ_CHECK(v >= 0 && v < num_nodes())
        << "operand %" << v << " of new " << OpName(op) << " node does not exist";
  }
  nodes_.push_back(
      Node{op, std::move(operands), std::move(attrs), std::move(type), std::move(regions)});
  types_inferred_ = false;  // GraphBuilder::Add restores it for the types it inferred
  return num_nodes() - 1;
}

void Graph::AddOutput(ValueId id) {
  GJ_CHECK(id >= 0 && id < num_nodes()) << "output %" << id << " does not exist";
  outputs_.push_back(id);
}

const Node& Graph::node(ValueId id) const {
  GJ_CHECK(id >= 0 && id < num_nodes()) << "no node %" << id;
  return nodes_[id];
}

Node& Graph::mutable_node(ValueId id) {
  GJ_CHECK(id >= 0 && id < num_nodes()) << "no node %" << id;
  types_inferred_ = false;
  return nodes_[id];
}

namespace {
std::vector<ValueId> NodesWithOp(const std::vector<Node>& nodes, OpCode op) {
  std::vector<ValueId> ids;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].op == op) ids.push_back(static_cast<ValueId>(i));
  }
  return ids;
}
}  // namespace

std::vector<ValueId> Graph::Inputs() const { return NodesWithOp(nodes_, OpCode::kInput); }
std::vector<ValueId> Graph::Params() const { return NodesWithOp(nodes_, OpCode::kParam); }

ValueId Graph::FindInput(absl::string_view name) const {
  for (ValueId id : Inputs()) {
    if (nodes_[id].name() == name) return id;
  }
  return kInvalidValue;
}

ValueId Graph::FindParam(absl::string_view name) const {
  for (ValueId id : Params()) {
    if (nodes_[id].name() == name) return id;
  }
  return kInvalidValue;
}

void CollectNodeSymbols(const Node& n, std::set<std::string>* symbols) {
  for (const SymExpr& d : n.type.shape) d.CollectSymbols(symbols);
  for (const auto& [name, value] : n.attrs.items()) {
    if (const auto* dim = std::get_if<SymExpr>(&value)) dim->CollectSymbols(symbols);
    if (const auto* dims = std::get_if<std::vector<SymExpr>>(&value)) {
      for (const SymExpr& d : *dims) d.CollectSymbols(symbols);
    }
  }
  for (const auto& region : n.regions) symbols->merge(region->Symbols());
}

const std::string* DefinedSymbolOf(const Node& n) {
  if (!IsRuntimeOp(n.op) || !n.attrs.Has("symbol")) return nullptr;
  return &n.attrs.Get<std::string>("symbol");
}

void BindDefinedSymbol(const Node& n, const std::function<std::optional<int64_t>(int)>& dim,
                       Bindings* bindings) {
  const std::string* symbol = DefinedSymbolOf(n);
  if (symbol == nullptr) return;
  for (int i = 0; i < n.type.rank(); ++i) {
    std::set<std::string> mentioned;
    n.type.shape[i].CollectSymbols(&mentioned);
    std::optional<int64_t> value = dim(i);
    if (!mentioned.contains(*symbol) || !value) continue;
    if (std::optional<int64_t> v = SolveFor(n.type.shape[i], *symbol, *value, *bindings)) {
      (*bindings)[*symbol] = *v;
    }
    return;
  }
}

std::set<std::string> Graph::Symbols() const {
  std::set<std::string> symbols;
  for (const Node& n : nodes_) CollectNodeSymbols(n, &symbols);
  return symbols;
}

std::set<std::string> Graph::DefinedSymbols() const {
  std::set<std::string> symbols;
  for (const Node& n : nodes_) {
    if (const std::string* s = DefinedSymbolOf(n)) symbols.insert(*s);
    for (const auto& region : n.regions) symbols.merge(region->DefinedSymbols());
  }
  return symbols;
}

bool Graph::HasRuntimeOps() const {
  for (const Node& n : nodes_) {
    if (IsRuntimeOp(n.op)) return true;
  }
  return false;
}

std::vector<std::vector<ValueId>> Graph::Users() const {
  std::vector<std::vector<ValueId>> users(nodes_.size());
  for (ValueId id = 0; id < num_nodes(); ++id) {
    for (ValueId v : nodes_[id].operands) users[v].push_back(id);
  }
  for (ValueId out : outputs_) users[out].push_back(num_nodes());
  return users;
}

bool Graph::HasRegions() const {
  for (const Node& node : nodes_) {
    if (!node.regions.empty()) return true;
  }
  return false;
}

int Graph::NumComputeNodes() const {
  int n = 0;
  for (const Node& node : nodes_) n += IsSourceOp(node.op) ? 0 : 1;
  return n;
}

}  // namespace graphjit::ir
