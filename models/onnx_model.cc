#include "models/onnx_model.h"

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
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

// `graph` (a loop's region) with every dim bound to `bindings`, its regions' too.
absl::StatusOr<std::shared_ptr<const ir::Graph>> BindRegion(const ir::Graph& graph,
                                                            const ir::Bindings& bindings) {
  ir::GraphBuilder b(graph.name());
  for (const ir::Node& node : graph.nodes()) {
    std::vector<std::shared_ptr<const ir::Graph>> regions;
    for (const auto& region : node.regions) {
      absl::StatusOr<std::shared_ptr<const ir::Graph>> bound = BindRegion(*region, bindings);
      if (!bound.ok()) return bound.status();
      regions.push_back(*std::move(bound));
    }
    b.Add(node.op, node.operands, BindDims(node.attrs, bindings), std::move(regions));
  }
  for (ir::ValueId id : graph.outputs()) b.Output(id);
  absl::StatusOr<ir::Graph> g = std::move(b).Build();
  if (!g.ok()) return g.status();
  return std::make_shared<const ir::Graph>(*std::move(g));
}

}  // namespace

std::vector<frontend::Value> ReplayOnnxGraph(const ir::Graph& graph, frontend::Context& ctx) {
  std::vector<frontend::Value> values(graph.num_nodes());
  absl::flat_hash_map<ir::ValueId, std::vector<frontend::Value>> loop_results;
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
    } else if (node.op == ir::OpCode::kLoopResult || node.op == ir::OpCode::kScanOutput) {
      // A loop's other results, as its Emit returned them (a scan's stacked values after
      // its carried ones).
      const std::vector<frontend::Value>& results = loop_results[node.operands[0]];
      int64_t index = node.attrs.GetInt("index");
      if (node.op == ir::OpCode::kScanOutput) {
        index += graph.node(node.operands[0]).attrs.GetInt("carried");
      }
      if (index < static_cast<int64_t>(results.size())) values[id] = results[index];
    } else {
      std::vector<frontend::Value> operands;
      for (ir::ValueId o : node.operands) operands.push_back(values[o]);
      if (node.regions.empty()) {
        values[id] = ctx.Emit(node.op, operands, BindDims(node.attrs, bindings));
        if (ir::IsRuntimeOp(node.op) && values[id].valid()) {
          // When the trace made the defined dim a constant (a factor_dim of a constant
          // side), its symbol is bound to the quotient, so that later attributes naming
          // it are bound too.
          const ir::Shape traced = values[id].shape();
          ir::BindDefinedSymbol(
              node,
              [&](int i) {
                return i < static_cast<int>(traced.size()) ? traced[i].AsConstant() : std::nullopt;
              },
              &bindings);
        }
        continue;
      }
      // A control-flow op's regions are typed like its operands: bound as they are.
      std::vector<std::shared_ptr<const ir::Graph>> regions;
      for (const auto& region : node.regions) {
        absl::StatusOr<std::shared_ptr<const ir::Graph>> bound = BindRegion(*region, bindings);
        if (!bound.ok()) {
          ctx.ReportError(bound.status());
          return {};
        }
        regions.push_back(*std::move(bound));
      }
      ir::Attrs attrs = BindDims(node.attrs, bindings);
      if (node.op == ir::OpCode::kIf) {
        values[id] = ctx.EmitIf(operands, std::move(attrs), std::move(regions));
        continue;
      }
      loop_results[id] = node.op == ir::OpCode::kScan
                             ? ctx.EmitScan(operands, std::move(attrs), std::move(regions))
                             : ctx.EmitWhile(operands, std::move(attrs), std::move(regions));
      if (!loop_results[id].empty()) values[id] = loop_results[id][0];
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
