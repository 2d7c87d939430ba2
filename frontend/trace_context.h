// TraceContext: model code run against it records an ir::Graph instead of computing.
#ifndef GRAPHJIT_FRONTEND_TRACE_CONTEXT_H_
#define GRAPHJIT_FRONTEND_TRACE_CONTEXT_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "frontend/value.h"
#include "ir/builder.h"

namespace graphjit::frontend {

// A named input and the type to trace it with (symbolic dims allowed, e.g. [2, S, 16]).
using InputTypes = std::vector<std::pair<std::string, ir::ValueType>>;

class TraceContext : public Context {
 public:
  // Input nodes are created up front in the order of `inputs`, so a graph's inputs keep
  // the caller's order whatever order the model reads them in. Parameters are recorded
  // with the dtype and shape of the tensors in `params` (not their values).
  TraceContext(std::string graph_name, const InputTypes& inputs, const runtime::TensorMap& params);

  Value Input(absl::string_view name) override;
  bool HasInput(absl::string_view name) const override { return inputs_.contains(name); }
  Value Param(absl::string_view name) override;
  Value Emit(ir::OpCode op, absl::Span<const Value> operands, ir::Attrs attrs) override;
  std::vector<Value> EmitWhile(absl::Span<const Value> operands, ir::Attrs attrs,
                               std::vector<std::shared_ptr<const ir::Graph>> regions) override;
  Value EmitIf(absl::Span<const Value> operands, ir::Attrs attrs,
               std::vector<std::shared_ptr<const ir::Graph>> regions) override;
  std::vector<Value> EmitScan(absl::Span<const Value> operands, ir::Attrs attrs,
                              std::vector<std::shared_ptr<const ir::Graph>> regions) override;
  const runtime::TensorMap* params() const override { return &params_; }
  const ir::ValueType& TypeOf(ir::ValueId id) const override { return builder_.type(id); }

  // The verified graph with `outputs`, or the first error of the trace.
  absl::StatusOr<ir::Graph> Finish(absl::Span<const Value> outputs) &&;

 private:
  // A while or a scan and its other results (loop_result, then a scan's scan_output).
  std::vector<Value> EmitLoop(ir::OpCode op, absl::Span<const Value> operands, ir::Attrs attrs,
                              std::vector<std::shared_ptr<const ir::Graph>> regions);

  ir::GraphBuilder builder_;
  const runtime::TensorMap& params_;
  absl::flat_hash_map<std::string, ir::ValueId> inputs_;
  absl::flat_hash_map<std::string, ir::ValueId> param_nodes_;
};

}  // namespace graphjit::frontend

#endif  // GRAPHJIT_FRONTEND_TRACE_CONTEXT_H_
