// Tensor: a dense row-major array with a dtype and a concrete shape, owning (a share of)
// a 64-byte aligned buffer. Copies share the buffer (cheap); Clone() copies the data.
#ifndef GRAPHJIT_RUNTIME_TENSOR_H_
#define GRAPHJIT_RUNTIME_TENSOR_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/check.h"
#include "ir/dtype.h"
#include "runtime/scalar_semantics.h"

namespace graphjit::runtime {

using ir::DType;

// The C++ element type of each dtype (bool is stored as one byte).
// clang-format off
template <DType D> struct DTypeTraits;
template <> struct DTypeTraits<DType::kF32> { using T = float; };
template <> struct DTypeTraits<DType::kF64> { using T = double; };
template <> struct DTypeTraits<DType::kI64> { using T = int64_t; };
template <> struct DTypeTraits<DType::kBool> { using T = bool; };
template <> struct DTypeTraits<DType::kI32> { using T = int32_t; };
template <typename T> constexpr DType DTypeOf();
template <> constexpr DType DTypeOf<float>() { return DType::kF32; }
template <> constexpr DType DTypeOf<double>() { return DType::kF64; }
template <> constexpr DType DTypeOf<int64_t>() { return DType::kI64; }
template <> constexpr DType DTypeOf<bool>() { return DType::kBool; }
template <> constexpr DType DTypeOf<int32_t>() { return DType::kI32; }
// clang-format on

// ConvertElement<To>(x), the element conversion of `cast`, is in scalar_semantics.h.

class Tensor {
 public:
  Tensor() = default;  // holds nothing until assigned: valid() is false

  // A zero-filled tensor; InvalidArgument for a negative dim.
  static absl::StatusOr<Tensor> Zeros(DType dtype, std::vector<int64_t> shape);
  // Like Zeros but the contents are unspecified: for kernels that write every element.
  static absl::StatusOr<Tensor> Empty(DType dtype, std::vector<int64_t> shape);
  // A tensor holding `values` (row-major, converted to dtype); InvalidArgument if the
  // count does not match the shape.
  static absl::StatusOr<Tensor> FromDoubles(DType dtype, std::vector<int64_t> shape,
                                            absl::Span<const double> values);
  template <typename T>
  static absl::StatusOr<Tensor> FromVector(std::vector<int64_t> shape, absl::Span<const T> values);
  // A tensor over `nbytes` bytes at `data` without copying them: its buffer keeps `owner`
  // (say, a mapped file) alive. The memory must be writable or never written through the
  // tensor. InvalidArgument unless `data` is aligned to the element size (compiled code
  // and the kernels need no more; a tensor's own buffers are 64-byte aligned, so vector
  // loads never split a line at their start) and `nbytes` is what dtype and shape need.
  static absl::StatusOr<Tensor> FromShared(DType dtype, std::vector<int64_t> shape,
                                           std::shared_ptr<void> owner, void* data, int64_t nbytes);
  // A scalar (shape []).
  static Tensor Scalar(DType dtype, double value);

  bool valid() const { return buffer_ != nullptr; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int i) const { return shape_[i < 0 ? i + rank() : i]; }
  int64_t numel() const { return numel_; }
  int64_t nbytes() const { return numel_ * ir::DTypeSize(dtype_); }

  void* raw_data() { return buffer_.get(); }
  const void* raw_data() const { return buffer_.get(); }
  template <typename T>
  T* data() {
    GJ_CHECK(DTypeOf<T>() == dtype_) << "tensor is " << ir::DTypeName(dtype_);
    return static_cast<T*>(raw_data());
  }
  template <typename T>
  const T* data() const {
    GJ_CHECK(DTypeOf<T>() == dtype_) << "tensor is " << ir::DTypeName(dtype_);
    return static_cast<const T*>(raw_data());
  }

  // Element `i` (row-major) converted to double; for tests and printing.
  double ValueAt(int64_t i) const;
  std::vector<double> ToDoubles() const;

  // A view with another shape over the same buffer (free for contiguous data);
  // InvalidArgument if the element counts differ.
  absl::StatusOr<Tensor> Reshape(std::vector<int64_t> shape) const;
  // A deep copy with its own buffer.
  Tensor Clone() const;
  // A copy converted to `dtype` element by element with the semantics of `cast`
  // (ConvertElement); ResourceExhausted if it cannot be allocated.
  absl::StatusOr<Tensor> Cast(DType dtype) const;
  // True if this tensor shares its buffer with `other`.
  bool SharesBufferWith(const Tensor& other) const { return buffer_ == other.buffer_; }

  // `f64[2, 3]` (and the values, if `max_values` > 0).
  std::string DebugString(int max_values = 0) const;
  // `f64[2, 3]`.
  std::string TypeString() const;

 private:
  DType dtype_ = DType::kF32;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  std::shared_ptr<uint8_t> buffer_;  // 64-byte aligned
};

// The largest |a[i] - b[i]| over all elements (as doubles); +inf if the shapes differ.
double MaxAbsDiff(const Tensor& a, const Tensor& b);

}  // namespace graphjit::runtime

#endif  // GRAPHJIT_RUNTIME_TENSOR_H_
