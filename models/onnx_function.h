// An ONNX model file run through the Jit as people export it: inputs whose values the
// importer needs when it builds the graph (Unsqueeze's axes, Resize's scales, Pad's pads,
// Tile's repeats, OneHot's depth, TopK's k) are specialized on each call's values under a
// guard on those values, as TorchDynamo specializes on a Python int (onnx/specialize.h
// imports a specialization). A call whose values match no specialization so far is a
// guard miss: the model is imported with the new values and compiled as another entry
// (GRAPHJIT_LOG=recompiles names the input, the values the last entry has and the new
// ones). A model whose dims agree only for some sizes is imported with its sides as
// multiples (onnx::SpecializedImport::dim_factor: one specialization for every call whose
// sides are multiples), or else only at fixed shapes, and is specialized on its inputs'
// shapes the same way. Past `max_specializations` compiled
// entries, a call with new values runs its specialization in the interpreter instead of
// compiling forever (reported once). A model that imports without values runs as
// JitOnnxModel does.
#ifndef GRAPHJIT_MODELS_ONNX_FUNCTION_H_
#define GRAPHJIT_MODELS_ONNX_FUNCTION_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/jit.h"
#include "runtime/interpreter.h"

namespace graphjit::models {

class OnnxFunction {
 public:
  // Compiled specializations kept before calls with new values are interpreted.
  static constexpr int kDefaultMaxSpecializations = 8;

  // Opens the model at `path`: imported now when it needs no input's values (a read or
  // parse error is returned here), else at the first call. `options` as JitOnnxModel;
  // InvalidArgument for max_specializations < 1.
  static absl::StatusOr<std::unique_ptr<OnnxFunction>> Open(
      std::string path, compiler::JitOptions options = {},
      int max_specializations = kDefaultMaxSpecializations);

  // Runs the model on `inputs` (every model input by name, specialized ones included).
  // The importer's error when an input it needs as values is missing; InvalidArgument
  // naming the input and the node that needs it when that input has more than
  // onnx::kMaxSpecializedElements elements.
  absl::StatusOr<std::vector<runtime::Tensor>> Run(const runtime::TensorMap& inputs);

  // The model's inputs, in its order (specialized ones included).
  const std::vector<std::string>& input_names() const { return input_names_; }
  // The inputs specialized on so far, in the order the importer asked for them.
  std::vector<std::string> specialized_inputs() const;
  // Compiled specializations (0 for a model that needs no values: one Jit function).
  int specializations() const;
  // The counters of every Jit function this made (the unspecialized one or one per
  // specialization), summed: a specialization's import is not counted, its compiles are.
  compiler::entries::CacheStats stats() const;
  // Calls run in the interpreter because the specializations were full.
  int64_t interpreted_calls() const;

 private:
  OnnxFunction(std::string path, compiler::JitOptions options, int max_specializations)
      : path_(std::move(path)),
        options_(std::move(options)),
        max_specializations_(max_specializations) {}

  // The guard's key of `inputs`: the specialized inputs' types and values, and every
  // input's shape when the model imports only at fixed shapes (an axis a factored import
  // serves keyed as `*N`, a multiple of N, when it is one).
  std::string Key(const runtime::TensorMap& inputs) const;
  // What the last specialization was made for, for a recompile's log line.
  std::string Describe(const runtime::TensorMap& inputs) const;

  const std::string path_;
  const compiler::JitOptions options_;
  const int max_specializations_;
  std::vector<std::string> input_names_;
  std::unique_ptr<compiler::JitFunction> unspecialized_;  // a model that needs no values
  mutable std::mutex mu_;
  std::vector<std::string> specialized_;  // guarded by mu_
  bool shapes_fixed_ = false;             // guarded by mu_
  // A factored import's guard (onnx::SpecializedImport::dim_factor): these inputs' axes
  // are keyed as "a multiple of dim_factor_" rather than by their dims. Guarded by mu_.
  int64_t dim_factor_ = 0;
  std::vector<std::pair<std::string, int>> factored_;
  struct Entry {
    std::unique_ptr<compiler::JitFunction> fn;
    std::vector<std::string> specialized;  // the inputs this entry's graph does not take
  };
  std::map<std::string, Entry> entries_;  // guarded by mu_
  // Entries whose keys were made before the guard read more inputs: never matched again,
  // kept alive for calls that may still run them. Guarded by mu_.
  std::vector<std::unique_ptr<compiler::JitFunction>> retired_;
  std::string last_;         // guarded by mu_: Describe() of the last compile
  int64_t interpreted_ = 0;  // guarded by mu_
};

}  // namespace graphjit::models

#endif  // GRAPHJIT_MODELS_ONNX_FUNCTION_H_
