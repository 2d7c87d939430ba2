#include "models/onnx_model.h"

#include <memory>
#include <string>
#include <utility>
#include <variant>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontend/trace_context.h"

namespace graphjit::models {
namespace {

// `attrs` with every dim expression bound to `bindings` (symbols left unbound stay).
ir::Attrs BindDims(const ir::Attrs& attrs, const ir::Bindings& bindings) {
  if (bindings.empty()) return attrs;
  ir::Attrs bound;
  for (const auto& [name, value] : attrs.items()) {
    if (const auto* dim = std::get_if<ir::SymExpr>(&value)) {
      bound.Set(name, dim->Bind(bindings));
    } else if (const auto* dims = std::get_if<std::vector<ir::SymExpr>>(&value)) {
      std::vector<ir::SymExpr> b;
      for (const ir::SymExpr& d : *dims) b.push_back(d.Bind(bindings));
      bound.Set(name, std::move(b));
    } else {
      bound.Set(name, value);
    }
  }
  return bound;
}

}  // namespace

std::vector<frontend::Value> ReplayOnnxGraph(const ir::Graph& graph, frontend::Context& ctx) {
  std::vector<frontend::Value> values(graph.num_nodes());
  // The model's symbols that this trace fixes: the imported input dim is a bare symbol,
  // the traced one a constant.
  ir::Bindings bindings;
  for (ir::ValueId id = 0; id < graph.num_nodes(); ++id) {
    const ir::Node& node = graph.node(id);
    if (node.op == ir::OpCode::kInput) {
      values[id] = ctx.Input(node.name());
      if (!values[id].valid()) continue;
      const ir::Shape& declared = node.type.shape;
      const ir::Shape& traced = values[id].shape();
      for (size_t a = 0; a < declared.size() && a < traced.size(); ++a) {
        std::string symbol;
        std::optional<int64_t> c = traced[a].AsConstant();
        if (declared[a].IsSymbol(&symbol) && c.has_value()) bindings[symbol] = *c;
      }
    } else if (node.op == ir::OpCode::kParam) {
      values[id] = ctx.Param(node.name());
    } else {
      std::vector<frontend::Value> operands;
      for (ir::ValueId o : node.operands) operands.push_back(values[o]);
      values[id] = ctx.Emit(node.op, operands, BindDims(node.attrs, bindings));
    }
  }
  std::vector<frontend::Value> outputs;
  for (ir::ValueId id : graph.outputs()) outputs.push_back(values[id]);
  return outputs;
}

absl::StatusOr<ir::Graph> SpecializeOnnxGraph(const onnx::ImportedModel& model,
                                              const ir::Bindings& dims) {
  if (dims.empty()) return model.graph;
  for (const auto& [name, value] : dims) {
    if (!absl::c_linear_search(model.symbols, name)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": the model's dynamic dims are ",
                       model.symbols.empty() ? "none" : absl::StrJoin(model.symbols, ", ")));
    }
  }
  frontend::InputTypes types;
  for (ir::ValueId id : model.graph.Inputs()) {
    ir::ValueType t = model.graph.type(id);
    for (ir::SymExpr& d : t.shape) d = d.Bind(dims);
    types.push_back({model.graph.node(id).name(), t});
  }
  frontend::TraceContext ctx(model.graph.name(), types, model.params);
  std::vector<frontend::Value> outputs = ReplayOnnxGraph(model.graph, ctx);
  return std::move(ctx).Finish(outputs);
}

absl::StatusOr<std::unique_ptr<compiler::JitFunction>> JitOnnxModel(
    const onnx::ImportedModel& model, compiler::JitOptions options) {
  if (!options.input_types) {
    std::vector<std::pair<std::string, ir::ValueType>> types;
    for (ir::ValueId id : model.graph.Inputs()) {
      types.emplace_back(model.graph.node(id).name(), model.graph.node(id).type);
    }
    options.input_types = std::move(types);
  }
  auto graph = std::make_shared<const ir::Graph>(model.graph);
  return compiler::Jit(
      model.graph.name(), [graph](frontend::Context& ctx) { return ReplayOnnxGraph(*graph, ctx); },
      model.params, std::move(options));
}

}  // namespace graphjit::models
