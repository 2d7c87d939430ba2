// ONNX TensorProto files (the test_data_set_N/*.pb of ONNX's test data) as Tensors.
#ifndef GRAPHJIT_ONNX_TENSOR_PROTO_H_
#define GRAPHJIT_ONNX_TENSOR_PROTO_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/tensor.h"

namespace graphjit::onnx {

// A serialized TensorProto of element type FLOAT, DOUBLE, INT64, INT32 or BOOL as a
// Tensor (of the dtype a graph input of that type has: BoundaryDType).
// InvalidArgument naming `what` for bytes that are no TensorProto or data that does not
// fit its dims; Unimplemented for other element types and external data.
absl::StatusOr<runtime::Tensor> ParseTensorProto(absl::string_view bytes, absl::string_view what);
// Reads a file: NotFound if it cannot be opened, else as ParseTensorProto.
absl::StatusOr<runtime::Tensor> ReadTensorProto(const std::string& path);

}  // namespace graphjit::onnx

#endif  // GRAPHJIT_ONNX_TENSOR_PROTO_H_
