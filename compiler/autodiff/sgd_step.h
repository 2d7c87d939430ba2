// A training step as one graph (forward, backward and the SGD update), and a driver that
// runs it step after step, compiled through the JIT or in the interpreter.
#ifndef GRAPHJIT_COMPILER_AUTODIFF_SGD_STEP_H_
#define GRAPHJIT_COMPILER_AUTODIFF_SGD_STEP_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/compiled/compiled_graph.h"
#include "ir/graph.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {

struct SgdStep {
  // Inputs: the forward's inputs, and each of its params as an input of the same name.
  // Outputs: the loss (before the update), then the updated params in `params` order.
  ir::Graph graph;
  std::vector<std::string> params;
};

// Builds w' = w - learning_rate * dL/dw for every param w of `forward`, where L is its
// output `loss_output` (a scalar). The params become inputs because their values change
// every step: nothing may fold them into the code, and the caller feeds the updated
// weights back in.
absl::StatusOr<SgdStep> BuildSgdStep(const ir::Graph& forward, double learning_rate,
                                     int loss_output = 0);

enum class StepBackend { kCompiled, kInterpreter };

// Holds the weights and applies one SGD step per call.
class SgdTrainer {
 public:
  // Builds the step for `forward`, with `params` (every param of `forward`) as the
  // initial weights; kCompiled compiles it once through CompiledGraph.
  static absl::StatusOr<std::unique_ptr<SgdTrainer>> Create(const ir::Graph& forward,
                                                            const runtime::TensorMap& params,
                                                            double learning_rate,
                                                            StepBackend backend);

  // One step on `inputs` (the forward's inputs): updates the weights and returns the loss
  // they had before the update.
  absl::StatusOr<double> Step(const runtime::TensorMap& inputs);

  const runtime::TensorMap& params() const { return params_; }
  const SgdStep& step() const { return step_; }
  // The compiled step (null for the interpreter backend).
  const CompiledGraph* compiled() const { return compiled_.get(); }

 private:
  SgdTrainer() = default;

  SgdStep step_;
  runtime::TensorMap params_;
  std::unique_ptr<CompiledGraph> compiled_;
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_AUTODIFF_SGD_STEP_H_
