// The eager kernels of the control-flow ops (ir/regions.h). A while or an if runs its
// regions with the interpreter (RunRegionOp); its regions' params are not in reach of a single
// node's kernel, so one whose regions read weights runs through Interpret or a context that has
// them (the eager frontend).
#include "runtime/interpreter.h"
#include "runtime/kernels.h"

namespace graphjit::runtime::kernels {

absl::StatusOr<Tensor> EvalWhile(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                 const ir::Bindings& bindings) {
  absl::StatusOr<std::vector<Tensor>> results = RunRegionOp(node, operands, {}, bindings);
  if (!results.ok()) return results.status();
  return (*results)[0];
}

absl::StatusOr<Tensor> EvalIf(const ir::Node& node, absl::Span<const Tensor* const> operands,
                              const ir::Bindings& bindings) {
  absl::StatusOr<std::vector<Tensor>> results = RunRegionOp(node, operands, {}, bindings);
  if (!results.ok()) return results.status();
  return (*results)[0];
}

absl::StatusOr<Tensor> EvalScan(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                const ir::Bindings& bindings) {
  absl::StatusOr<std::vector<Tensor>> results = RunRegionOp(node, operands, {}, bindings);
  if (!results.ok()) return results.status();
  return (*results)[0];
}

absl::StatusOr<Tensor> EvalScanOutput(const ir::Node&, absl::Span<const Tensor* const>,
                                      const ir::Bindings&) {
  return absl::InvalidArgumentError(
      "scan_output reads the results of its scan: run the graph with the interpreter");
}

absl::StatusOr<Tensor> EvalLoopResult(const ir::Node&, absl::Span<const Tensor* const>,
                                      const ir::Bindings&) {
  return absl::InvalidArgumentError(
      "loop_result reads the results of its while: run the graph with the interpreter");
}

}  // namespace graphjit::runtime::kernels
