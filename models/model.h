// The Model interface: one definition per model, written against frontend Values, so the
// same code runs eagerly, traced into a graph, or (later) lazily.
#ifndef GRAPHJIT_MODELS_MODEL_H_
#define GRAPHJIT_MODELS_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/trace_context.h"
#include "frontend/value.h"
#include "runtime/interpreter.h"
#include "runtime/weights.h"

namespace graphjit::models {

struct TraceOptions {
  // Dynamic dims fixed to constants (e.g. {"S": 128}); the others stay symbolic.
  ir::Bindings fixed_dims;
  // Also declare the optional inputs used when a dynamic dim is padded (the decode
  // layer's additive `kmask`).
  bool padded = false;
};

class Model {
 public:
  virtual ~Model() = default;

  // The canonical spec string, e.g. `decode:d=128,H=8,G=2,dh=16,f=344,dtype=f64`.
  virtual std::string Spec() const = 0;
  virtual ir::DType dtype() const = 0;
  // The named parameters (weights): generated from the spec's seed, or set by SetWeights.
  const runtime::TensorMap& params() const { return params_; }
  // Replaces the parameters with `weights` (e.g. from runtime::LoadWeights), which must
  // have exactly the names, dtypes and shapes of params() (runtime::CheckWeights' message
  // otherwise, and the model is unchanged). The model shares the tensors' buffers. Graphs
  // compiled before, and a compile cache's existing entries, keep the weights they were
  // compiled with: set weights before compiling. Not safe concurrently with other calls.
  absl::Status SetWeights(runtime::TensorMap weights);
  // The input dims that may change from call to call (the decode layer's cache length
  // {"S"}); TraceOptions::fixed_dims may fix them. Scalar symbols bound per call (the
  // write position P) are not dims: they stay symbolic and are bound when running.
  virtual std::vector<std::string> DynamicDims() const = 0;
  // The inputs to trace with, in order.
  virtual frontend::InputTypes InputTypes(const TraceOptions& options) const = 0;
  // The model itself: reads inputs and params from `ctx`, returns the outputs.
  virtual std::vector<frontend::Value> Forward(frontend::Context& ctx) const = 0;
  // Values for every dynamic dim and call symbol when the caller gives none.
  virtual ir::Bindings DefaultBindings() const = 0;
  // Completes `bindings` with what follows from it (the decode layer's P = S - 1).
  virtual ir::Bindings CompleteBindings(ir::Bindings bindings) const { return bindings; }
  // Seeded random inputs for `bindings` (completed with defaults).
  virtual absl::StatusOr<runtime::TensorMap> ExampleInputs(const ir::Bindings& bindings,
                                                           uint64_t seed) const = 0;

 protected:
  // Every model's constructor fills this; params() and SetWeights are the same for all.
  runtime::TensorMap params_;
};

// Creates a model from a spec string: `decode`, `decode:d=128,H=8,G=2,dh=16,f=344,dtype=f64`,
// `tinygpt:L=2,d=64,T=32,V=21,B=2`, `linear:in=256,out=512,tokens=64`. An unknown model,
// key or bad value gets InvalidArgument listing what is valid.
absl::StatusOr<std::unique_ptr<Model>> CreateModel(absl::string_view spec);
// The model names CreateModel knows, for help texts.
std::vector<std::string> ModelNames();

// Traces `model` into a verified graph (named after the model).
absl::StatusOr<ir::Graph> TraceModel(const Model& model, const TraceOptions& options = {});
// Runs `model` eagerly on `inputs` (op by op) and returns its outputs.
absl::StatusOr<std::vector<runtime::Tensor>> RunEager(const Model& model,
                                                      const runtime::TensorMap& inputs,
                                                      const ir::Bindings& bindings);

}  // namespace graphjit::models

#endif  // GRAPHJIT_MODELS_MODEL_H_
