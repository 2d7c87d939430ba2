#include "frontend/trace_context.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace graphjit::frontend {

TraceContext::TraceContext(std::string graph_name, const InputTypes& inputs,
                           const runtime::TensorMap& params)
    : builder_(std::move(graph_name)), params_(params) {
  for (const auto& [name, type] : inputs) {
    inputs_[name] = builder_.Input(name, type.dtype, type.shape);
  }
}

Value TraceContext::Input(absl::string_view name) {
  auto it = inputs_.find(name);
  if (it == inputs_.end()) {
    std::vector<std::string> names;
    for (const auto& [n, id] : inputs_) names.push_back(n);
    std::sort(names.begin(), names.end());
    RecordError(absl::InvalidArgumentError(
        absl::StrCat("model reads input '", name,
                     "', which was not declared (declared: ", absl::StrJoin(names, ", "), ")")));
    return Value();
  }
  return Value(this, it->second);
}

Value TraceContext::Param(absl::string_view name) {
  if (auto it = param_nodes_.find(name); it != param_nodes_.end()) return Value(this, it->second);
  auto it = params_.find(name);
  if (it == params_.end()) {
    RecordError(absl::InvalidArgumentError(absl::StrCat("missing parameter '", name, "'")));
    return Value();
  }
  ir::ValueId id = builder_.Param(name, it->second.dtype(), ir::ConstShape(it->second.shape()));
  param_nodes_[name] = id;
  return Value(this, id);
}

Value TraceContext::Emit(ir::OpCode op, absl::Span<const Value> operands, ir::Attrs attrs) {
  if (!CheckOperands(op, operands)) return Value();
  std::vector<ir::ValueId> ids;
  ids.reserve(operands.size());
  for (const Value& v : operands) ids.push_back(v.id());
  ir::ValueId id = builder_.Add(op, ids, std::move(attrs));
  if (id == ir::kInvalidValue) {
    RecordError(builder_.status());
    return Value();
  }
  return Value(this, id);
}

std::vector<Value> TraceContext::EmitWhile(absl::Span<const Value> operands, ir::Attrs attrs,
                                           std::vector<std::shared_ptr<const ir::Graph>> regions) {
  return EmitLoop(ir::OpCode::kWhile, operands, std::move(attrs), std::move(regions));
}

std::vector<Value> TraceContext::EmitScan(absl::Span<const Value> operands, ir::Attrs attrs,
                                          std::vector<std::shared_ptr<const ir::Graph>> regions) {
  return EmitLoop(ir::OpCode::kScan, operands, std::move(attrs), std::move(regions));
}

std::vector<Value> TraceContext::EmitLoop(ir::OpCode op, absl::Span<const Value> operands,
                                          ir::Attrs attrs,
                                          std::vector<std::shared_ptr<const ir::Graph>> regions) {
  if (!CheckOperands(op, operands)) return {};
  std::vector<ir::ValueId> ids;
  for (const Value& v : operands) ids.push_back(v.id());
  const int64_t carried = attrs.Has("carried") ? attrs.GetInt("carried") : 0;
  std::vector<ir::ValueType> rows;  // the per-row values' types, stacked below
  if (op == ir::OpCode::kScan && regions.size() == 1 && carried >= 1 &&
      carried < static_cast<int64_t>(ids.size())) {
    const ir::Graph& body = *regions[0];
    for (size_t k = carried; k < body.outputs().size(); ++k) {
      ir::ValueType t = body.type(body.outputs()[k]);
      t.shape.insert(t.shape.begin(), builder_.type(ids[carried]).shape[0]);
      rows.push_back(std::move(t));
    }
  }
  ir::ValueId scan = builder_.Add(op, ids, std::move(attrs), std::move(regions));
  if (scan == ir::kInvalidValue) {
    RecordError(builder_.status());
    return {};
  }
  std::vector<Value> results = {Value(this, scan)};
  for (int64_t k = 1; k < carried; ++k) {
    results.emplace_back(
        this, builder_.Add(ir::OpCode::kLoopResult, {scan, ids[k]}, ir::Attrs{{"index", k}}));
  }
  for (size_t j = 0; j < rows.size(); ++j) {
    results.emplace_back(this, builder_.Add(ir::OpCode::kScanOutput, {scan},
                                            ir::Attrs{{"index", static_cast<int64_t>(j)},
                                                      {"dtype", rows[j].dtype},
                                                      {"shape", rows[j].shape}}));
  }
  return results;
}

Value TraceContext::EmitIf(absl::Span<const Value> operands, ir::Attrs attrs,
                           std::vector<std::shared_ptr<const ir::Graph>> regions) {
  if (!CheckOperands(ir::OpCode::kIf, operands)) return Value();
  std::vector<ir::ValueId> ids;
  for (const Value& v : operands) ids.push_back(v.id());
  ir::ValueId id = builder_.Add(ir::OpCode::kIf, ids, std::move(attrs), std::move(regions));
  if (id == ir::kInvalidValue) {
    RecordError(builder_.status());
    return Value();
  }
  return Value(this, id);
}

absl::StatusOr<ir::Graph> TraceContext::Finish(absl::Span<const Value> outputs) && {
  if (!status().ok()) return status();
  for (const Value& v : outputs) {
    if (!v.valid() || v.context() != this) {
      return absl::InvalidArgumentError("trace output is not a valid value of this trace");
    }
    builder_.Output(v.id());
  }
  return std::move(builder_).Build();
}

}  // namespace graphjit::frontend
