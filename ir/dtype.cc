#include "ir/dtype.h"

namespace graphjit::ir {

absl::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kF64:
      return "f64";
    case DType::kI64:
      return "i64";
    case DType::kBool:
      return "bool";
    case DType::kI32:
      return "i32";
  }
  return "?";
}

std::optional<DType> DTypeFromName(absl::string_view name) {
  for (DType d : {DType::kF32, DType::kF64, DType::kI64, DType::kBool, DType::kI32}) {
    if (DTypeName(d) == name) return d;
  }
  return std::nullopt;
}

int64_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 4;
    case DType::kF64:
      return 8;
    case DType::kI64:
      return 8;
    case DType::kBool:
      return 1;
    case DType::kI32:
      return 4;
  }
  return 0;
}

}  // namespace graphjit::ir
