// GraphBuilder: appends type-checked nodes and keeps the first error (like XLA's
// XlaBuilder), so model code can chain ops without checking a Status after each one;
// Build() reports the error, naming the op that caused it.
#ifndef GRAPHJIT_IR_BUILDER_H_
#define GRAPHJIT_IR_BUILDER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace graphjit::ir {

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name = "main") : graph_(std::move(name)) {}

  // Infers the node's type and appends it. If that fails, or an operand is invalid, the
  // first error is recorded (with the op name and the node's would-be index) and
  // kInvalidValue is returned; later ops on invalid values fail quietly. A control-flow
  // op takes its regions (ir/regions.h), checked against the operands here.
  ValueId Add(OpCode op, absl::Span<const ValueId> operands, Attrs attrs = {},
              std::vector<std::shared_ptr<const Graph>> regions = {});

  ValueId Input(absl::string_view name, DType dtype, Shape shape);
  ValueId Param(absl::string_view name, DType dtype, Shape shape);
  // A scalar constant (shape []).
  ValueId Scalar(double value, DType dtype);
  void Output(ValueId id);

  // The type of an existing value (CHECKs that it is valid).
  const ValueType& type(ValueId id) const { return graph_.type(id); }
  const absl::Status& status() const { return status_; }
  const Graph& graph() const { return graph_; }

  // The finished, verified graph, or the first error.
  absl::StatusOr<Graph> Build() &&;

 private:
  void RecordError(absl::Status s);

  Graph graph_;
  absl::Status status_;
};

}  // namespace graphjit::ir

#endif  // GRAPHJIT_IR_BUILDER_H_
