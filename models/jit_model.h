// Models as clients of compiler::Jit: a model's forward is a function over frontend
// Values like any user's, its declared dynamic dims and padding mask become JitOptions.
#ifndef GRAPHJIT_MODELS_JIT_MODEL_H_
#define GRAPHJIT_MODELS_JIT_MODEL_H_

#include <memory>

#include "absl/status/statusor.h"
#include "compiler/jit.h"
#include "models/model.h"

namespace graphjit::models {

// `options` completed from `model`: every input dim that is a dynamic dim of the model
// (the decode layer's S in k_cache and v_cache) is declared under the model's symbol,
// padded under pow2 / mult128 with the model's mask inputs (those only its padded trace
// declares), and call symbols are completed by Model::CompleteBindings. The model must
// outlive the options.
absl::StatusOr<compiler::JitOptions> ModelJitOptions(const Model& model,
                                                     compiler::JitOptions options = {});

// A JitFunction running `model` with its current weights (a copy: later SetWeights calls
// do not change it). The model must outlive the function.
absl::StatusOr<std::unique_ptr<compiler::JitFunction>> JitModel(const Model& model,
                                                                compiler::JitOptions options = {});

}  // namespace graphjit::models

#endif  // GRAPHJIT_MODELS_JIT_MODEL_H_
