// EagerContext: model code run against it computes each op at once with the runtime's
// eager kernels (op by op, one allocation per op), as an eager framework does.
#ifndef GRAPHJIT_FRONTEND_EAGER_CONTEXT_H_
#define GRAPHJIT_FRONTEND_EAGER_CONTEXT_H_

#include <vector>

#include "absl/status/statusor.h"
#include "frontend/value.h"
#include "runtime/interpreter.h"

namespace graphjit::frontend {

class EagerContext : public Context {
 public:
  // `bindings` gives symbols used by op attributes (e.g. kv_write's position P).
  EagerContext(const runtime::TensorMap& inputs, const runtime::TensorMap& params,
               ir::Bindings bindings = {});

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
  const ir::ValueType& TypeOf(ir::ValueId id) const override { return types_[id]; }

  // The tensor of a valid value of this context.
  const runtime::Tensor& tensor(const Value& v) const;
  // The tensors of `values`, or the first error of the run.
  absl::StatusOr<std::vector<runtime::Tensor>> Results(absl::Span<const Value> values) const;
  // Number of ops computed so far (inputs and params excluded).
  int num_ops() const { return num_ops_; }

 private:
  Value Add(runtime::Tensor t);
  // An op (a control-flow op with its regions) computed at once: its results.
  std::vector<Value> Compute(ir::OpCode op, absl::Span<const Value> operands, ir::Attrs attrs,
                             std::vector<std::shared_ptr<const ir::Graph>> regions);

  const runtime::TensorMap& inputs_;
  const runtime::TensorMap& params_;
  ir::Bindings bindings_;
  std::vector<runtime::Tensor> tensors_;
  std::vector<ir::ValueType> types_;
  int num_ops_ = 0;
};

}  // namespace graphjit::frontend

#endif  // GRAPHJIT_FRONTEND_EAGER_CONTEXT_H_
