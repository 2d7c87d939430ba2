// An imported ONNX model (onnx/import.h) as a client of compiler::Jit, like any model: its
// graph is replayed through the trace context, so every shape policy, guard and code
// store applies to it. The model's dim symbols (its dim_params, or `<input>_<axis>`) are
// the Jit function's declared dynamic dims.
#ifndef GRAPHJIT_MODELS_ONNX_MODEL_H_
#define GRAPHJIT_MODELS_ONNX_MODEL_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/jit.h"
#include "frontend/value.h"
#include "onnx/import.h"

namespace graphjit::models {

// The model's graph replayed into `ctx`: its inputs and weights by name, every other
// node emitted with its symbols bound to the dims `ctx` traces the inputs with (a
// constant under an exact key, the symbol itself when the dim stays symbolic).
std::vector<frontend::Value> ReplayOnnxGraph(const ir::Graph& graph, frontend::Context& ctx);

// The model's graph with its dynamic dims fixed to `dims` (replayed with constant input
// shapes, as the exact policy compiles it); the graph as imported when `dims` is empty.
// InvalidArgument naming the model's dynamic dims when `dims` names another.
absl::StatusOr<ir::Graph> SpecializeOnnxGraph(const onnx::ImportedModel& model,
                                              const ir::Bindings& dims);

// A JitFunction running `model` (its weights copied). `options.input_types`, when not
// given, is declared from the model's inputs with their symbols, so the policies key the
// model's dynamic dims (a batch N, a width W); padding policies need
// `options.padding` naming the dims to bucket. InvalidArgument as compiler::Jit.
absl::StatusOr<std::unique_ptr<compiler::JitFunction>> JitOnnxModel(
    const onnx::ImportedModel& model, compiler::JitOptions options = {});

}  // namespace graphjit::models

#endif  // GRAPHJIT_MODELS_ONNX_MODEL_H_
