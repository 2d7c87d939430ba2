// Model weights on disk (a directory of NAME.npy files or one .safetensors file) and the
// check that loaded weights fit a model's parameters. See docs/WEIGHTS.md.
#ifndef GRAPHJIT_RUNTIME_WEIGHTS_H_
#define GRAPHJIT_RUNTIME_WEIGHTS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/interpreter.h"

namespace graphjit::runtime {

// Loads `path`: a directory gives one tensor per NAME.npy file in it (other files, and
// hidden files, are ignored; none at all is an error), a file ending in .safetensors is
// read with ReadSafetensors. NotFound if `path` does not exist, InvalidArgument for any
// other kind of path or a bad file (named in the message).
absl::StatusOr<TensorMap> LoadWeights(const std::string& path);

// Saves `weights` to a .safetensors file if `path` ends in .safetensors, else as NAME.npy
// files in the directory `path` (created if missing; other files in it are left alone).
// For the directory form a name must be usable as a file name: not empty, no '/', no
// leading '.'.
absl::Status SaveWeights(const std::string& path, const TensorMap& weights);

// OK if `actual` has exactly the tensors of `expected` (a model's parameters) with the
// same dtypes and shapes. Else InvalidArgument for the first problem in name order: a
// missing tensor, an unexpected one, or one whose dtype or shape differs, e.g.
// `weights: 'wq' has f32[128, 128], expected f64[128, 128]`.
absl::Status CheckWeights(const TensorMap& expected, const TensorMap& actual);

}  // namespace graphjit::runtime

#endif  // GRAPHJIT_RUNTIME_WEIGHTS_H_
