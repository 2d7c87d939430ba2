// .safetensors files (the Hugging Face weights format) to and from TensorMaps, so that
// models can run on real checkpoints. See docs/WEIGHTS.md.
#ifndef GRAPHJIT_RUNTIME_SAFETENSORS_H_
#define GRAPHJIT_RUNTIME_SAFETENSORS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/interpreter.h"

namespace graphjit::runtime {

// Parses the bytes of a .safetensors file. F64, F32, I64 and BOOL tensors keep their
// dtype; BF16 and F16 tensors are widened to f32 (exactly: every half value is an f32
// value), and one line on stderr says how many were. Any other dtype, and anything
// malformed (a bad header length, bad JSON, a bad or duplicate entry, data offsets that
// do not match the shape, run past the data or overlap another tensor's, bool bytes other
// than 0 and 1) is InvalidArgument whose message starts with `what` (e.g. the file name)
// and names the tensor. The optional `__metadata__` entry is ignored.
absl::StatusOr<TensorMap> ParseSafetensors(absl::string_view bytes, absl::string_view what);
// Reads a file (tensor data straight into the tensors, without a copy of the whole file):
// NotFound if it does not exist, InvalidArgument if it is not a regular file, else as
// ParseSafetensors.
absl::StatusOr<TensorMap> ReadSafetensors(const std::string& path);

// The .safetensors encoding of `tensors`: the header lists the names sorted; the data is
// packed in the reference writer's order (8-byte dtypes, then f32, then bool, each by
// name), so every tensor starts aligned to its element size. InvalidArgument for an
// invalid (default-constructed) tensor, the reserved name `__metadata__` or a name that is
// not valid UTF-8.
absl::StatusOr<std::string> EncodeSafetensors(const TensorMap& tensors);
absl::Status WriteSafetensors(const std::string& path, const TensorMap& tensors);

}  // namespace graphjit::runtime

#endif  // GRAPHJIT_RUNTIME_SAFETENSORS_H_
