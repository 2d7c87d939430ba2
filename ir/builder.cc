#include "ir/builder.h"

#include "absl/strings/str_cat.h"
#include "ir/regions.h"
#include "ir/status_macros.h"
#include "ir/verifier.h"

namespace graphjit::ir {

void GraphBuilder::RecordError(absl::Status s) {
  if (status_.ok()) status_ = std::move(s);
}

ValueId GraphBuilder::Add(OpCode op, absl::Span<const ValueId> operands, Attrs attrs,
                          std::vector<std::shared_ptr<const Graph>> regions) {
  std::vector<ValueType> types;
  for (ValueId v : operands) {
    if (v < 0 || v >= graph_.num_nodes()) {
      // Named like the type errors below (`%N (op): ...`), as builder.h promises.
      RecordError(absl::InvalidArgumentError(absl::StrCat("%", graph_.num_nodes(), " (", OpName(op),
                                                          "): operand %", v,
                                                          " is not a value of this graph")));
      return kInvalidValue;
    }
    types.push_back(graph_.type(v));
  }
  absl::StatusOr<ValueType> type = InferType(op, types, attrs);
  if (type.ok() && (!regions.empty() || NumRegions(op) > 0)) {
    if (absl::Status s = CheckRegionSignatures(op, types, attrs, regions); !s.ok()) type = s;
  }
  if (!type.ok()) {
    RecordError(absl::Status(
        type.status().code(),
        absl::StrCat("%", graph_.num_nodes(), " (", OpName(op), "): ", type.status().message())));
    return kInvalidValue;
  }
  const bool inferred = graph_.types_inferred_;
  ValueId id = graph_.Append(op, std::vector<ValueId>(operands.begin(), operands.end()),
                             std::move(attrs), *std::move(type), std::move(regions));
  graph_.types_inferred_ = inferred;  // this node's type is InferType's
  return id;
}

ValueId GraphBuilder::Input(absl::string_view name, DType dtype, Shape shape) {
  return Add(OpCode::kInput, {},
             Attrs{{"name", std::string(name)}, {"dtype", dtype}, {"shape", std::move(shape)}});
}

ValueId GraphBuilder::Param(absl::string_view name, DType dtype, Shape shape) {
  return Add(OpCode::kParam, {},
             Attrs{{"name", std::string(name)}, {"dtype", dtype}, {"shape", std::move(shape)}});
}

ValueId GraphBuilder::Scalar(double value, DType dtype) {
  return Add(OpCode::kConstant, {},
             Attrs{{"value", std::vector<double>{value}}, {"dtype", dtype}, {"shape", Shape{}}});
}

void GraphBuilder::Output(ValueId id) {
  if (id < 0 || id >= graph_.num_nodes()) {
    RecordError(
        absl::InvalidArgumentError(absl::StrCat("output %", id, " is not a value of this graph")));
    return;
  }
  graph_.AddOutput(id);
}

absl::StatusOr<Graph> GraphBuilder::Build() && {
  if (!status_.ok()) return status_;
  GJ_RETURN_IF_ERROR(VerifyGraph(graph_));
  return std::move(graph_);
}

}  // namespace graphjit::ir
