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
  }
  return "?";
}

std::optional<DType> DTypeFromName(absl::string_view name) {
  for (DType d : {DType::kF32, DType::kF64, DType::kI64, DType::kBool}) {
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
  }
  return 0;
}

}  // namespace graphjit::ir
