#include "onnx/proto_convert.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "onnx/tensor_proto.h"

namespace graphjit::onnx {
namespace {

using runtime::Tensor;

// Bytes per element of raw_data for the integer and bool types we widen, 0 for others.
int RawSize(int32_t elem_type) {
  switch (elem_type) {
    case pb::TensorProto::INT8:
    case pb::TensorProto::UINT8:
    case pb::TensorProto::BOOL:
      return 1;
    case pb::TensorProto::INT16:
    case pb::TensorProto::UINT16:
      return 2;
    case pb::TensorProto::INT32:
    case pb::TensorProto::UINT32:
    case pb::TensorProto::FLOAT:
      return 4;
    case pb::TensorProto::INT64:
    case pb::TensorProto::UINT64:
    case pb::TensorProto::DOUBLE:
      return 8;
    default:
      return 0;
  }
}

// Element i of little-endian raw data as int64 (sign- or zero-extended by the type).
int64_t RawInt(const std::string& raw, int32_t elem_type, int64_t i) {
  const char* p = raw.data() + i * RawSize(elem_type);
  switch (elem_type) {
    case pb::TensorProto::INT8:
      return static_cast<int8_t>(*p);
    case pb::TensorProto::UINT8:
    case pb::TensorProto::BOOL:
      return static_cast<uint8_t>(*p);
    case pb::TensorProto::INT16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case pb::TensorProto::UINT16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case pb::TensorProto::INT32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case pb::TensorProto::UINT32: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      int64_t v;  // INT64, UINT64 (checked for range by the caller)
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

}  // namespace

std::optional<ir::DType> DTypeOfElem(int32_t elem_type) {
  switch (elem_type) {
    case pb::TensorProto::FLOAT:
      return ir::DType::kF32;
    case pb::TensorProto::DOUBLE:
      return ir::DType::kF64;
    case pb::TensorProto::INT64:
    case pb::TensorProto::INT32:
      return ir::DType::kI64;
    case pb::TensorProto::BOOL:
      return ir::DType::kBool;
    default:
      return std::nullopt;
  }
}

std::optional<ir::DType> BoundaryDType(int32_t elem_type) {
  if (elem_type == pb::TensorProto::INT32) return ir::DType::kI32;
  return DTypeOfElem(elem_type);
}

int32_t ElemOfDType(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::kF32:
      return pb::TensorProto::FLOAT;
    case ir::DType::kF64:
      return pb::TensorProto::DOUBLE;
    case ir::DType::kI64:
      return pb::TensorProto::INT64;
    case ir::DType::kBool:
      return pb::TensorProto::BOOL;
    case ir::DType::kI32:
      return pb::TensorProto::INT32;
  }
  GJ_FATAL() << "dtype " << static_cast<int>(dtype);
}

std::string ElemTypeName(int32_t elem_type) {
  if (pb::TensorProto_DataType_IsValid(elem_type)) {
    return pb::TensorProto_DataType_Name(static_cast<pb::TensorProto_DataType>(elem_type));
  }
  return absl::StrCat("element type ", elem_type);
}

bool IsIntegerElem(int32_t elem_type) {
  switch (elem_type) {
    case pb::TensorProto::INT8:
    case pb::TensorProto::UINT8:
    case pb::TensorProto::INT16:
    case pb::TensorProto::UINT16:
    case pb::TensorProto::INT32:
    case pb::TensorProto::UINT32:
    case pb::TensorProto::INT64:
    case pb::TensorProto::UINT64:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<Tensor> TensorFromProto(const pb::TensorProto& proto, absl::string_view what,
                                       int32_t* elem_type) {
  const int32_t type = proto.data_type();
  *elem_type = type;
  if (proto.data_location() == pb::TensorProto::EXTERNAL) {
    return absl::UnimplementedError(absl::StrCat(what, ": tensor data in an external file"));
  }
  const bool is_float = type == pb::TensorProto::FLOAT || type == pb::TensorProto::DOUBLE;
  if (!is_float && !IsIntegerElem(type) && type != pb::TensorProto::BOOL) {
    return absl::UnimplementedError(
        absl::StrCat(what, ": element type ", ElemTypeName(type),
                     " (graphjit has FLOAT, DOUBLE, INT64 and BOOL tensors)"));
  }
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  const ir::DType dtype = is_float                        ? *DTypeOfElem(type)
                          : type == pb::TensorProto::BOOL ? ir::DType::kBool
                                                          : ir::DType::kI64;
  // The element count the dims give, checked against the data before anything is
  // allocated: a malformed file may claim any dims.
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d != 0 && n > INT64_MAX / d)) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": bad dims"));
    }
    n *= d;
  }
  int64_t stored = 0;
  if (proto.has_raw_data()) {
    stored = static_cast<int64_t>(proto.raw_data().size()) / RawSize(type);
    if (static_cast<int64_t>(proto.raw_data().size()) % RawSize(type) != 0) stored = -1;
  } else if (type == pb::TensorProto::FLOAT) {
    stored = proto.float_data_size();
  } else if (type == pb::TensorProto::DOUBLE) {
    stored = proto.double_data_size();
  } else if (type == pb::TensorProto::INT64) {
    stored = proto.int64_data_size();
  } else if (type == pb::TensorProto::UINT32 || type == pb::TensorProto::UINT64) {
    stored = proto.uint64_data_size();
  } else {
    stored = proto.int32_data_size();
  }
  if (stored != n) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", stored, " elements of data for ", n, " elements of dims"));
  }
  absl::StatusOr<Tensor> made = Tensor::Zeros(dtype, shape);
  if (!made.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", made.status().message()));
  }
  Tensor t = *std::move(made);
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (is_float) {
      std::memcpy(t.raw_data(), raw.data(), raw.size());  // both little-endian IEEE
      return t;
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = RawInt(raw, type, i);
      if (type == pb::TensorProto::UINT64 && v < 0) {
        return absl::UnimplementedError(absl::StrCat(what, ": UINT64 value beyond INT64"));
      }
      if (dtype == ir::DType::kBool) {
        t.data<bool>()[i] = v != 0;
      } else {
        t.data<int64_t>()[i] = v;
      }
    }
    return t;
  }
  switch (type) {
    case pb::TensorProto::FLOAT:
      std::copy(proto.float_data().begin(), proto.float_data().end(), t.data<float>());
      return t;
    case pb::TensorProto::DOUBLE:
      std::copy(proto.double_data().begin(), proto.double_data().end(), t.data<double>());
      return t;
    case pb::TensorProto::INT64:
      std::copy(proto.int64_data().begin(), proto.int64_data().end(), t.data<int64_t>());
      return t;
    case pb::TensorProto::UINT32:
    case pb::TensorProto::UINT64:
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t v = proto.uint64_data(i);
        if (v > static_cast<uint64_t>(INT64_MAX)) {
          return absl::UnimplementedError(absl::StrCat(what, ": UINT64 value beyond INT64"));
        }
        t.data<int64_t>()[i] = static_cast<int64_t>(v);
      }
      return t;
    default:  // the other integer types and BOOL are held in int32_data
      for (int64_t i = 0; i < n; ++i) {
        if (dtype == ir::DType::kBool) {
          t.data<bool>()[i] = proto.int32_data(i) != 0;
        } else {
          t.data<int64_t>()[i] = proto.int32_data(i);
        }
      }
      return t;
  }
}

absl::StatusOr<Tensor> ParseTensorProto(absl::string_view bytes, absl::string_view what) {
  pb::TensorProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": not a serialized ONNX TensorProto"));
  }
  int32_t elem_type = 0;
  GJ_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(proto, what, &elem_type));
  const std::optional<ir::DType> dtype = BoundaryDType(elem_type);
  if (!dtype) {
    return absl::UnimplementedError(absl::StrCat(what, ": element type ", ElemTypeName(elem_type),
                                                 " (graphjit has ", kGraphElemTypes, ")"));
  }
  // Read as i64 like every integer constant; an INT32 tensor's values came from 32 bits.
  if (*dtype == ir::DType::kI32) return t.Cast(ir::DType::kI32);
  return t;
}

absl::StatusOr<Tensor> ReadTensorProto(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseTensorProto(buffer.str(), path);
}

}  // namespace graphjit::onnx
