// The graph interpreter: binds symbols from the inputs, checks every supplied tensor
// against its declared type, then runs the nodes in order with the eager kernels and
// frees each intermediate after its last use.
#include "runtime/interpreter.h"

#include <cstring>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/regions.h"
#include "ir/status_macros.h"
#include "runtime/eager.h"

namespace graphjit::runtime {
namespace {

std::string TypeOf(const ir::Node& n) { return ir::TypeToString(n.type); }

// " with P=3, S=128" for the symbols in `shape` that `bindings` binds ("" if none).
std::string SymbolValues(const ir::Shape& shape, const ir::Bindings& bindings) {
  std::set<std::string> symbols;
  for (const ir::SymExpr& d : shape) d.CollectSymbols(&symbols);
  std::vector<std::string> parts;
  for (const std::string& s : symbols) {
    auto it = bindings.find(s);
    if (it != bindings.end()) parts.push_back(absl::StrCat(s, "=", it->second));
  }
  return parts.empty() ? "" : absl::StrCat(" with ", absl::StrJoin(parts, ", "));
}

// The tensor supplied for source node `n` ("input" or "parameter"), after checking it
// exists and has the declared dtype and rank.
absl::StatusOr<const Tensor*> FindSupplied(absl::string_view kind, const ir::Node& n,
                                           const TensorMap& tensors) {
  auto it = tensors.find(n.name());
  if (it == tensors.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("missing ", kind, " '", n.name(), "' (expected ", TypeOf(n), ")"));
  }
  const Tensor& t = it->second;
  if (!t.valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kind, " '", n.name(), "': expected ", TypeOf(n), ", got an empty Tensor"));
  }
  if (t.dtype() != n.type.dtype || t.rank() != n.type.rank()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kind, " '", n.name(), "': expected ", TypeOf(n), ", got ", t.TypeString()));
  }
  return &t;
}

// Binds each bare-symbol dim (`S` in `[2, S, 16]`) not bound yet from the tensor.
void BindBareSymbols(const ir::Node& n, const Tensor& t, ir::Bindings* bindings) {
  std::string name;
  for (int i = 0; i < n.type.rank(); ++i) {
    if (n.type.shape[i].IsSymbol(&name) && !bindings->contains(name)) {
      bindings->emplace(name, t.dim(i));
    }
  }
}

// Checks every declared dim of source node `n`, evaluated under `bindings`, against `t`.
absl::Status CheckDims(absl::string_view kind, const ir::Node& n, const Tensor& t,
                       const ir::Bindings& bindings) {
  for (int i = 0; i < n.type.rank(); ++i) {
    absl::StatusOr<int64_t> want = n.type.shape[i].Evaluate(bindings);
    if (!want.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(kind, " '", n.name(), "' of type ", TypeOf(n),
                                                     ": ", want.status().message()));
    }
    if (*want != t.dim(i)) {
      return absl::InvalidArgumentError(
          absl::StrCat(kind, " '", n.name(), "': expected ", TypeOf(n),
                       SymbolValues(n.type.shape, bindings), ", got ", t.TypeString()));
    }
  }
  return absl::OkStatus();
}

// Operands must name earlier nodes and outputs existing ones (the verifier's rules), so an
// unverified graph gives an error here rather than an out-of-range access.
absl::Status CheckStructure(const ir::Graph& graph) {
  for (ir::ValueId id = 0; id < graph.num_nodes(); ++id) {
    for (ir::ValueId v : graph.node(id).operands) {
      if (v < 0 || v >= id) {
        return absl::InvalidArgumentError(
            absl::StrCat("%", id, ": operand %", v, " is not defined before use"));
      }
    }
  }
  for (ir::ValueId v : graph.outputs()) {
    if (v < 0 || v >= graph.num_nodes()) {
      return absl::InvalidArgumentError(absl::StrCat("output %", v, " does not exist"));
    }
  }
  return absl::OkStatus();
}

// Node `node` on `args`: an eager kernel, or for a while its regions (its results other
// than the first kept in `loop_results` for the loop_result nodes that read them).
absl::StatusOr<Tensor> EvalOrRun(
    const ir::Graph& graph, ir::ValueId id, absl::Span<const Tensor* const> args,
    const TensorMap& params, const ir::Bindings& bound,
    absl::flat_hash_map<ir::ValueId, std::vector<Tensor>>* loop_results);

}  // namespace

void BindDefinedSymbol(const ir::Node& n, const Tensor& result, ir::Bindings* bindings) {
  ir::BindDefinedSymbol(
      n,
      [&](int i) {
        return i < result.rank() ? std::optional<int64_t>(result.dim(i)) : std::nullopt;
      },
      bindings);
}

absl::StatusOr<ir::Bindings> BindInputs(const ir::Graph& graph, const TensorMap& inputs,
                                        const ir::Bindings& bindings) {
  ir::Bindings bound = bindings;
  // Two passes: an input's dim such as `S+1` may use a symbol another input binds later.
  std::vector<std::pair<const ir::Node*, const Tensor*>> supplied;
  for (ir::ValueId id : graph.Inputs()) {
    const ir::Node& n = graph.node(id);
    GJ_ASSIGN_OR_RETURN(const Tensor* t, FindSupplied("input", n, inputs));
    BindBareSymbols(n, *t, &bound);
    supplied.emplace_back(&n, t);
  }
  for (const auto& [n, t] : supplied) {
    GJ_RETURN_IF_ERROR(CheckDims("input", *n, *t, bound));
  }
  return bound;
}

namespace {

absl::StatusOr<std::vector<Tensor>> RunScan(const ir::Node& node,
                                            absl::Span<const Tensor* const> operands,
                                            const TensorMap& params, const ir::Bindings& bindings) {
  if (node.regions.size() != 1) {
    return absl::InvalidArgumentError("scan is not a control-flow op with its region");
  }
  const ir::Graph& body = *node.regions[0];
  const int64_t carried = node.attrs.GetInt("carried"), scanned = node.attrs.GetInt("scanned");
  const std::vector<ir::ValueId> names = body.Inputs();
  if (names.size() != operands.size()) {
    return absl::InvalidArgumentError("scan: its body does not take its operands");
  }
  const int64_t length = operands[carried]->dim(0);
  std::vector<Tensor> state;
  for (int64_t k = 0; k < carried; ++k) state.push_back(*operands[k]);
  std::vector<Tensor> stacked;  // made at the first row (their row shapes come from it)
  const int num_outputs = ir::NumScanOutputs(node);
  TensorMap in;
  for (size_t k = carried + scanned; k < operands.size(); ++k) {
    in[body.node(names[k]).name()] = *operands[k];
  }
  for (int64_t t = 0; t < length; ++t) {
    for (int64_t k = 0; k < carried; ++k) in[body.node(names[k]).name()] = state[k];
    for (int64_t k = carried; k < carried + scanned; ++k) {
      const Tensor& xs = *operands[k];
      std::vector<int64_t> row(xs.shape().begin() + 1, xs.shape().end());
      GJ_ASSIGN_OR_RETURN(Tensor x, Tensor::Zeros(xs.dtype(), row));
      std::memcpy(x.raw_data(), static_cast<const char*>(xs.raw_data()) + t * x.nbytes(),
                  x.nbytes());
      in[body.node(names[k]).name()] = std::move(x);
    }
    absl::StatusOr<std::vector<Tensor>> out = Interpret(body, in, params, bindings);
    if (!out.ok()) {
      return absl::Status(out.status().code(),
                          absl::StrCat("scan body, row ", t, ": ", out.status().message()));
    }
    for (int64_t k = 0; k < carried; ++k) state[k] = std::move((*out)[k]);
    for (int j = 0; j < num_outputs; ++j) {
      const Tensor& y = (*out)[carried + j];
      if (t == 0) {
        std::vector<int64_t> shape = y.shape();
        shape.insert(shape.begin(), length);
        GJ_ASSIGN_OR_RETURN(Tensor all, Tensor::Zeros(y.dtype(), shape));
        stacked.push_back(std::move(all));
      }
      std::memcpy(static_cast<char*>(stacked[j].raw_data()) + t * y.nbytes(), y.raw_data(),
                  y.nbytes());
    }
  }
  if (length == 0) {  // no row ran: the stacked values are empty, shaped as declared
    for (int j = 0; j < num_outputs; ++j) {
      const ir::ValueType& t = body.type(body.outputs()[carried + j]);
      GJ_ASSIGN_OR_RETURN(std::vector<int64_t> row, ir::EvaluateShape(t.shape, bindings));
      row.insert(row.begin(), 0);
      GJ_ASSIGN_OR_RETURN(Tensor none, Tensor::Zeros(t.dtype, row));
      stacked.push_back(std::move(none));
    }
  }
  for (Tensor& y : stacked) state.push_back(std::move(y));
  return state;
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> RunRegionOp(const ir::Node& node,
                                                absl::Span<const Tensor* const> operands,
                                                const TensorMap& params,
                                                const ir::Bindings& bindings) {
  if (node.op == ir::OpCode::kScan) return RunScan(node, operands, params, bindings);
  if ((node.op != ir::OpCode::kWhile && node.op != ir::OpCode::kIf) || node.regions.size() != 2 ||
      operands.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(ir::OpName(node.op), " is not a control-flow op with its regions"));
  }
  if (node.op == ir::OpCode::kIf) {
    const Tensor& pred = *operands[0];
    if (pred.dtype() != ir::DType::kBool || pred.numel() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("if: the condition is ", pred.TypeString(), ", expected bool[]"));
    }
    const bool taken = pred.data<bool>()[0];
    const ir::Graph& branch = *node.regions[taken ? 0 : 1];
    const std::vector<ir::ValueId> inputs = branch.Inputs();
    if (inputs.size() + 1 != operands.size()) {
      return absl::InvalidArgumentError("if: its branches do not take its operands");
    }
    TensorMap in;
    for (size_t k = 0; k < inputs.size(); ++k) in[branch.node(inputs[k]).name()] = *operands[k + 1];
    absl::StatusOr<std::vector<Tensor>> out = Interpret(branch, in, params, bindings);
    if (!out.ok()) {
      return absl::Status(out.status().code(), absl::StrCat("if ", taken ? "then" : "else", ": ",
                                                            out.status().message()));
    }
    return out;
  }
  const ir::Graph& cond = *node.regions[0];
  const ir::Graph& body = *node.regions[1];
  const int64_t carried = node.attrs.GetInt("carried");
  const int64_t max_trips =
      node.attrs.Has("max_trips") ? node.attrs.GetInt("max_trips") : INT64_MAX;
  // The regions' inputs by name: the operands in order, the carried ones replaced after
  // each trip (the invariants never are).
  const std::vector<ir::ValueId> names = cond.Inputs();
  const std::vector<ir::ValueId> body_names = body.Inputs();
  if (names.size() != operands.size() || body_names.size() != operands.size()) {
    return absl::InvalidArgumentError("while: its regions do not take its operands");
  }
  std::vector<Tensor> state;
  for (const Tensor* t : operands) state.push_back(*t);
  TensorMap cond_in, body_in;
  for (int64_t trip = 0; trip < max_trips; ++trip) {
    for (size_t k = 0; k < operands.size(); ++k) {
      cond_in[cond.node(names[k]).name()] = state[k];
      body_in[body.node(body_names[k]).name()] = state[k];
    }
    absl::StatusOr<std::vector<Tensor>> go = Interpret(cond, cond_in, params, bindings);
    if (!go.ok())
      return absl::Status(go.status().code(), absl::StrCat("while cond: ", go.status().message()));
    if (!(*go)[0].data<bool>()[0]) break;
    absl::StatusOr<std::vector<Tensor>> next = Interpret(body, body_in, params, bindings);
    if (!next.ok())
      return absl::Status(next.status().code(),
                          absl::StrCat("while body: ", next.status().message()));
    for (int64_t k = 0; k < carried; ++k) state[k] = std::move((*next)[k]);
  }
  state.resize(carried);
  return state;
}

absl::StatusOr<std::vector<Tensor>> Interpret(const ir::Graph& graph, const TensorMap& inputs,
                                              const TensorMap& params,
                                              const ir::Bindings& bindings) {
  GJ_RETURN_IF_ERROR(CheckStructure(graph));
  GJ_ASSIGN_OR_RETURN(ir::Bindings bound, BindInputs(graph, inputs, bindings));
  std::set<std::string> symbols = graph.Symbols();
  const std::set<std::string> defined = graph.DefinedSymbols();  // bound as the nodes run
  for (const std::string& s : symbols) {
    if (!bound.contains(s) && !defined.contains(s)) {
      return absl::InvalidArgumentError(
          absl::StrCat("symbol '", s, "' is not bound: it is not a bare dim of any input, so ",
                       "pass it in bindings (graph symbols: ", absl::StrJoin(symbols, ", "), ")"));
    }
  }

  const int n = graph.num_nodes();
  std::vector<Tensor> values(n);
  for (ir::ValueId id : graph.Params()) {
    const ir::Node& node = graph.node(id);
    GJ_ASSIGN_OR_RETURN(const Tensor* t, FindSupplied("parameter", node, params));
    GJ_RETURN_IF_ERROR(CheckDims("parameter", node, *t, bound));
    values[id] = *t;  // shares the caller's buffer; kernels never write operands
  }
  for (ir::ValueId id : graph.Inputs()) values[id] = inputs.find(graph.node(id).name())->second;

  // last_use[v]: the last node reading v; outputs live to the end (n), unread values die
  // where they are made.
  std::vector<int> last_use(n, -1);
  for (ir::ValueId id = 0; id < n; ++id) {
    for (ir::ValueId v : graph.node(id).operands) last_use[v] = id;
  }
  for (ir::ValueId v : graph.outputs()) last_use[v] = n;

  std::vector<const Tensor*> args;
  absl::flat_hash_map<ir::ValueId, std::vector<Tensor>> loop_results;
  for (ir::ValueId id = 0; id < n; ++id) {
    const ir::Node& node = graph.node(id);
    if (node.op != ir::OpCode::kInput && node.op != ir::OpCode::kParam) {
      args.clear();
      for (ir::ValueId v : node.operands) args.push_back(&values[v]);
      absl::StatusOr<Tensor> result = EvalOrRun(graph, id, args, params, bound, &loop_results);
      if (!result.ok()) {
        return absl::Status(result.status().code(),
                            absl::StrCat("%", id, ": ", result.status().message()));
      }
      if (ir::IsRuntimeOp(node.op)) BindDefinedSymbol(node, *result, &bound);
      // A kernel result that disagrees with the declared type is a bug (or an unverified
      // graph), caught here before it spreads.
      absl::StatusOr<std::vector<int64_t>> declared = ir::EvaluateShape(node.type.shape, bound);
      if (!declared.ok() || *declared != result->shape() || result->dtype() != node.type.dtype) {
        return absl::InternalError(absl::StrCat(
            "%", id, " (", ir::OpName(node.op), "): computed ", result->TypeString(),
            ", the graph declares ", TypeOf(node), SymbolValues(node.type.shape, bound)));
      }
      values[id] = *std::move(result);
    }
    for (ir::ValueId v : node.operands) {
      if (last_use[v] == id) values[v] = Tensor();
    }
    if (last_use[id] < 0) values[id] = Tensor();
  }

  std::vector<Tensor> outputs;
  outputs.reserve(graph.outputs().size());
  for (ir::ValueId v : graph.outputs()) outputs.push_back(values[v]);
  return outputs;
}

namespace {

absl::StatusOr<Tensor> EvalOrRun(
    const ir::Graph& graph, ir::ValueId id, absl::Span<const Tensor* const> args,
    const TensorMap& params, const ir::Bindings& bound,
    absl::flat_hash_map<ir::ValueId, std::vector<Tensor>>* loop_results) {
  const ir::Node& node = graph.node(id);
  if (node.op == ir::OpCode::kWhile || node.op == ir::OpCode::kIf || node.op == ir::OpCode::kScan) {
    GJ_ASSIGN_OR_RETURN(std::vector<Tensor> results, RunRegionOp(node, args, params, bound));
    Tensor first = results[0];
    (*loop_results)[id] = std::move(results);
    return first;
  }
  if (node.op == ir::OpCode::kLoopResult || node.op == ir::OpCode::kScanOutput) {
    auto it = loop_results->find(node.operands[0]);
    int64_t index = node.attrs.GetInt("index");
    if (node.op == ir::OpCode::kScanOutput) {
      index += graph.node(node.operands[0]).attrs.GetInt("carried");
    }
    if (it == loop_results->end() || index >= static_cast<int64_t>(it->second.size())) {
      return absl::InvalidArgumentError(absl::StrCat("loop_result: operand %", node.operands[0],
                                                     " is not a while with a result ", index));
    }
    return it->second[index];
  }
  return EvalNode(node, args, bound);
}

}  // namespace

}  // namespace graphjit::runtime
