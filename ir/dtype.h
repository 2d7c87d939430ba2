// Element types of tensors.
#ifndef GRAPHJIT_IR_DTYPE_H_
#define GRAPHJIT_IR_DTYPE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace graphjit::ir {

enum class DType : uint8_t { kF32, kF64, kI64, kBool };

// "f32", "f64", "i64", "bool".
absl::string_view DTypeName(DType dtype);
std::optional<DType> DTypeFromName(absl::string_view name);
int64_t DTypeSize(DType dtype);
inline bool IsFloat(DType dtype) { return dtype == DType::kF32 || dtype == DType::kF64; }

}  // namespace graphjit::ir

#endif  // GRAPHJIT_IR_DTYPE_H_
