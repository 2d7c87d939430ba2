// Element types of tensors.
#ifndef GRAPHJIT_IR_DTYPE_H_
#define GRAPHJIT_IR_DTYPE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace graphjit::ir {

// kI32 is a storage type: graph inputs, params and casts make it and only casts read it
// (ir/op.cc), so models whose inputs or outputs are int32 (indices, token ids) bind them
// without a copy on the caller's side, and kernels compute on i64.
enum class DType : uint8_t { kF32, kF64, kI64, kBool, kI32 };
// The number of dtypes (their values are 0 .. kNumDTypes - 1: what decoders range-check).
inline constexpr int kNumDTypes = static_cast<int>(DType::kI32) + 1;

// "f32", "f64", "i64", "bool", "i32".
absl::string_view DTypeName(DType dtype);
std::optional<DType> DTypeFromName(absl::string_view name);
int64_t DTypeSize(DType dtype);
inline bool IsFloat(DType dtype) { return dtype == DType::kF32 || dtype == DType::kF64; }

}  // namespace graphjit::ir

#endif  // GRAPHJIT_IR_DTYPE_H_
