#include "frontend/eager_context.h"

#include "absl/strings/str_cat.h"
#include "ir/regions.h"
#include "runtime/eager.h"

namespace graphjit::frontend {

EagerContext::EagerContext(const runtime::TensorMap& inputs, const runtime::TensorMap& params,
                           ir::Bindings bindings)
    : inputs_(inputs), params_(params), bindings_(std::move(bindings)) {}

Value EagerContext::Add(runtime::Tensor t) {
  types_.push_back(ir::ValueType{t.dtype(), ir::ConstShape(t.shape())});
  tensors_.push_back(std::move(t));
  return Value(this, static_cast<ir::ValueId>(tensors_.size() - 1));
}

Value EagerContext::Input(absl::string_view name) {
  auto it = inputs_.find(name);
  if (it == inputs_.end()) {
    RecordError(absl::InvalidArgumentError(absl::StrCat("missing input '", name, "'")));
    return Value();
  }
  return Add(it->second);
}

Value EagerContext::Param(absl::string_view name) {
  auto it = params_.find(name);
  if (it == params_.end()) {
    RecordError(absl::InvalidArgumentError(absl::StrCat("missing parameter '", name, "'")));
    return Value();
  }
  return Add(it->second);
}

Value EagerContext::Emit(ir::OpCode op, absl::Span<const Value> operands, ir::Attrs attrs) {
  std::vector<Value> results = Compute(op, operands, std::move(attrs), {});
  return results.empty() ? Value() : results[0];
}

const runtime::Tensor& EagerContext::tensor(const Value& v) const {
  GJ_CHECK(v.valid() && v.context() == this) << "not a value of this eager context";
  return tensors_[v.id()];
}

absl::StatusOr<std::vector<runtime::Tensor>> EagerContext::Results(
    absl::Span<const Value> values) const {
  if (!status().ok()) return status();
  std::vector<runtime::Tensor> out;
  for (const Value& v : values) {
    if (!v.valid() || v.context() != this) {
      return absl::InvalidArgumentError("result is not a valid value of this eager run");
    }
    out.push_back(tensors_[v.id()]);
  }
  return out;
}

std::vector<Value> EagerContext::Compute(ir::OpCode op, absl::Span<const Value> operands,
                                         ir::Attrs attrs,
                                         std::vector<std::shared_ptr<const ir::Graph>> regions) {
  if (!status().ok() || !CheckOperands(op, operands)) return {};
  std::vector<ir::ValueType> types;
  std::vector<const runtime::Tensor*> args;
  std::vector<ir::ValueId> ids;
  for (const Value& v : operands) {
    types.push_back(types_[v.id()]);
    args.push_back(&tensors_[v.id()]);
    ids.push_back(v.id());
  }
  // The shape rule first: it gives the same message a trace of this op would.
  absl::StatusOr<ir::ValueType> type = ir::InferType(op, types, attrs);
  if (type.ok() && (!regions.empty() || ir::NumRegions(op) > 0)) {
    if (absl::Status s = ir::CheckRegionSignatures(op, types, attrs, regions); !s.ok()) type = s;
  }
  if (!type.ok()) {
    RecordError(type.status());
    return {};
  }
  ir::Node node{op, std::move(ids), std::move(attrs), *std::move(type), std::move(regions)};
  absl::StatusOr<std::vector<runtime::Tensor>> results;
  if (node.regions.empty()) {
    absl::StatusOr<runtime::Tensor> one = runtime::EvalNode(node, args, bindings_);
    if (one.ok()) {
      results.emplace();
      results->push_back(*std::move(one));
    } else {
      results = one.status();
    }
  } else {
    results = runtime::RunRegionOp(node, args, params_, bindings_);
  }
  if (!results.ok()) {
    RecordError(results.status());
    return {};
  }
  ++num_ops_;
  std::vector<Value> values;
  for (runtime::Tensor& t : *results) values.push_back(Add(std::move(t)));
  return values;
}

std::vector<Value> EagerContext::EmitWhile(absl::Span<const Value> operands, ir::Attrs attrs,
                                           std::vector<std::shared_ptr<const ir::Graph>> regions) {
  return Compute(ir::OpCode::kWhile, operands, std::move(attrs), std::move(regions));
}

std::vector<Value> EagerContext::EmitScan(absl::Span<const Value> operands, ir::Attrs attrs,
                                          std::vector<std::shared_ptr<const ir::Graph>> regions) {
  return Compute(ir::OpCode::kScan, operands, std::move(attrs), std::move(regions));
}

Value EagerContext::EmitIf(absl::Span<const Value> operands, ir::Attrs attrs,
                           std::vector<std::shared_ptr<const ir::Graph>> regions) {
  std::vector<Value> results =
      Compute(ir::OpCode::kIf, operands, std::move(attrs), std::move(regions));
  return results.empty() ? Value() : results[0];
}

}  // namespace graphjit::frontend
