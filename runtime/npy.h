// NumPy .npy files (format versions 1-3, C order, little-endian f4 / f8 / i8 / b1) to and
// from Tensors, for graphjit-run and for exchanging data with numpy.
#ifndef GRAPHJIT_RUNTIME_NPY_H_
#define GRAPHJIT_RUNTIME_NPY_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/tensor.h"

namespace graphjit::runtime {

// Parses the bytes of a .npy file. Anything malformed (bad magic, truncated header or
// data, an unsupported dtype, Fortran order, big-endian data, bool bytes other than 0
// and 1) is InvalidArgument whose message starts with `what` (e.g. the file name) and
// says what was expected.
absl::StatusOr<Tensor> ParseNpy(absl::string_view bytes, absl::string_view what);
// Reads a file: NotFound if it cannot be opened, else as ParseNpy.
absl::StatusOr<Tensor> ReadNpy(const std::string& path);
// The .npy (version 1.0) encoding of `tensor`.
std::string EncodeNpy(const Tensor& tensor);
absl::Status WriteNpy(const std::string& path, const Tensor& tensor);

}  // namespace graphjit::runtime

#endif  // GRAPHJIT_RUNTIME_NPY_H_
