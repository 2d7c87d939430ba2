// Conversions from ONNX protobuf messages to graphjit types, shared by the importer's
// files. Not for users: it includes the generated ONNX classes (libonnx-dev).
#ifndef GRAPHJIT_ONNX_PROTO_CONVERT_H_
#define GRAPHJIT_ONNX_PROTO_CONVERT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/dtype.h"
#include "runtime/tensor.h"
// Debian's header (it defines ONNX_API, then includes onnx/onnx-ml.pb.h); the repository
// has no onnx/onnx_pb.h, so the include path falls through to /usr/include.
#include "onnx/onnx_pb.h"

namespace graphjit::onnx {

namespace pb = ::onnx;

// The graph dtype of an ONNX element type, or nullopt for the ones graphjit lacks.
std::optional<ir::DType> DTypeOfElem(int32_t elem_type);
// The ONNX element type of a graph dtype.
int32_t ElemOfDType(ir::DType dtype);
// "FLOAT", "INT32", ... for messages.
std::string ElemTypeName(int32_t elem_type);
// Integer element types (INT8 .. UINT64): the ones shape computations may use.
bool IsIntegerElem(int32_t elem_type);

// A constant tensor. FLOAT, DOUBLE, INT64 and BOOL keep their dtype; the other integer
// types are widened to i64 (exact) so that shape computations can read them, and
// `*elem_type` says what they were. Unimplemented for other types and external data.
absl::StatusOr<runtime::Tensor> TensorFromProto(const pb::TensorProto& proto,
                                                absl::string_view what, int32_t* elem_type);

}  // namespace graphjit::onnx

#endif  // GRAPHJIT_ONNX_PROTO_CONVERT_H_
