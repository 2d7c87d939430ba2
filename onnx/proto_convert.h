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

// The dtype the graph computes an ONNX element type in, or nullopt for the ones graphjit
// lacks. INT32 computes in i64, wrapped back to 32 bits where an op can leave that range
// (Context::SetOut); it is i32 only at the graph's inputs and outputs (BoundaryDType).
std::optional<ir::DType> DTypeOfElem(int32_t elem_type);
// The dtype of a graph input or output of that element type: i32 for INT32, else
// DTypeOfElem.
std::optional<ir::DType> BoundaryDType(int32_t elem_type);
// The element types a graph input, output or computed value may have, for messages.
inline constexpr char kGraphElemTypes[] = "FLOAT, DOUBLE, INT64, INT32, BOOL";
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
