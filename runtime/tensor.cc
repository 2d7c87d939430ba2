// Tensor: allocation (64-byte aligned, so vector loads never split a cache line at the
// start of a buffer), construction from host values, views and printing.
#include "runtime/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status_macros.h"

namespace graphjit::runtime {
namespace {

constexpr int64_t kAlignment = 64;

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// The element count of `shape`; InvalidArgument for a negative dim or a count whose byte
// size would overflow int64.
absl::StatusOr<int64_t> CheckedNumel(DType dtype, const std::vector<int64_t>& shape) {
  int64_t limit = std::numeric_limits<int64_t>::max() / ir::DTypeSize(dtype) - kAlignment;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("negative dim ", d, " in tensor shape ", ShapeString(shape)));
    }
    if (d != 0 && n > limit / d) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor shape ", ShapeString(shape), " has too many elements"));
    }
    n *= d;
  }
  return n;
}

// One aligned block of at least 64 bytes, so even a zero-sized tensor has a buffer and
// valid() stays a plain null check.
std::shared_ptr<uint8_t> Allocate(int64_t nbytes) {
  int64_t size = (std::max<int64_t>(nbytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, static_cast<size_t>(size));
  if (p == nullptr) return nullptr;
  return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(p), [](uint8_t* q) { std::free(q); });
}

template <typename T>
void FillFromDoubles(absl::Span<const double> values, T* out) {
  for (size_t i = 0; i < values.size(); ++i) out[i] = ConvertElement<T>(values[i]);
}

// Calls f(T{}) for the C++ element type T of `dtype`.
template <typename F>
void VisitDType(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kF32:
      return f(float{});
    case DType::kF64:
      return f(double{});
    case DType::kI64:
      return f(int64_t{});
    case DType::kBool:
      return f(bool{});
    case DType::kI32:
      return f(int32_t{});
  }
}

}  // namespace

absl::StatusOr<Tensor> Tensor::Empty(DType dtype, std::vector<int64_t> shape) {
  GJ_ASSIGN_OR_RETURN(int64_t numel, CheckedNumel(dtype, shape));
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = numel;
  t.buffer_ = Allocate(t.nbytes());
  if (t.buffer_ == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate ", t.nbytes(), " bytes for tensor ", t.TypeString()));
  }
  return t;
}

absl::StatusOr<Tensor> Tensor::FromShared(DType dtype, std::vector<int64_t> shape,
                                          std::shared_ptr<void> owner, void* data, int64_t nbytes) {
  GJ_ASSIGN_OR_RETURN(int64_t numel, CheckedNumel(dtype, shape));
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = numel;
  const int64_t align = ir::DTypeSize(dtype);
  if (t.nbytes() != nbytes || reinterpret_cast<uintptr_t>(data) % align != 0 || owner == nullptr ||
      data == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a shared buffer of ", nbytes, " bytes at ", absl::Hex(reinterpret_cast<uintptr_t>(data)),
        " for ", t.TypeString(), ": needs ", t.nbytes(), " bytes, ", align, "-byte aligned"));
  }
  t.buffer_ = std::shared_ptr<uint8_t>(std::move(owner), static_cast<uint8_t*>(data));
  return t;
}

absl::StatusOr<Tensor> Tensor::Zeros(DType dtype, std::vector<int64_t> shape) {
  absl::StatusOr<Tensor> t = Empty(dtype, std::move(shape));
  if (t.ok()) std::memset(t->raw_data(), 0, static_cast<size_t>(t->nbytes()));
  return t;
}

absl::StatusOr<Tensor> Tensor::FromDoubles(DType dtype, std::vector<int64_t> shape,
                                           absl::Span<const double> values) {
  absl::StatusOr<Tensor> t = Empty(dtype, std::move(shape));
  if (!t.ok()) return t;
  if (t->numel() != static_cast<int64_t>(values.size())) {
    return absl::InvalidArgumentError(absl::StrCat("tensor shape ", ShapeString(t->shape()),
                                                   " needs ", t->numel(), " value(s), got ",
                                                   values.size()));
  }
  switch (dtype) {
    case DType::kF32:
      FillFromDoubles(values, t->data<float>());
      break;
    case DType::kF64:
      FillFromDoubles(values, t->data<double>());
      break;
    case DType::kI64:
      FillFromDoubles(values, t->data<int64_t>());
      break;
    case DType::kBool:
      FillFromDoubles(values, t->data<bool>());
      break;
    case DType::kI32:
      FillFromDoubles(values, t->data<int32_t>());
      break;
  }
  return t;
}

template <typename T>
absl::StatusOr<Tensor> Tensor::FromVector(std::vector<int64_t> shape, absl::Span<const T> values) {
  absl::StatusOr<Tensor> t = Empty(DTypeOf<T>(), std::move(shape));
  if (!t.ok()) return t;
  if (t->numel() != static_cast<int64_t>(values.size())) {
    return absl::InvalidArgumentError(absl::StrCat("tensor shape ", ShapeString(t->shape()),
                                                   " needs ", t->numel(), " value(s), got ",
                                                   values.size()));
  }
  if (!values.empty()) std::memcpy(t->raw_data(), values.data(), values.size() * sizeof(T));
  return t;
}

template absl::StatusOr<Tensor> Tensor::FromVector<float>(std::vector<int64_t>,
                                                          absl::Span<const float>);
template absl::StatusOr<Tensor> Tensor::FromVector<double>(std::vector<int64_t>,
                                                           absl::Span<const double>);
template absl::StatusOr<Tensor> Tensor::FromVector<int64_t>(std::vector<int64_t>,
                                                            absl::Span<const int64_t>);
template absl::StatusOr<Tensor> Tensor::FromVector<int32_t>(std::vector<int64_t>,
                                                            absl::Span<const int32_t>);
template absl::StatusOr<Tensor> Tensor::FromVector<bool>(std::vector<int64_t>,
                                                         absl::Span<const bool>);

Tensor Tensor::Scalar(DType dtype, double value) {
  absl::StatusOr<Tensor> t = FromDoubles(dtype, {}, {value});
  GJ_CHECK(t.ok()) << "cannot allocate a scalar: " << t.status().message();
  return *std::move(t);
}

double Tensor::ValueAt(int64_t i) const {
  GJ_CHECK(valid() && i >= 0 && i < numel_)
      << "element " << i << " of " << TypeString() << " is out of range";
  switch (dtype_) {
    case DType::kF32:
      return data<float>()[i];
    case DType::kF64:
      return data<double>()[i];
    case DType::kI64:
      return static_cast<double>(data<int64_t>()[i]);
    case DType::kBool:
      return data<bool>()[i] ? 1.0 : 0.0;
    case DType::kI32:
      return data<int32_t>()[i];
  }
  return 0;
}

std::vector<double> Tensor::ToDoubles() const {
  std::vector<double> out(valid() ? numel_ : 0);
  for (size_t i = 0; i < out.size(); ++i) out[i] = ValueAt(static_cast<int64_t>(i));
  return out;
}

absl::StatusOr<Tensor> Tensor::Reshape(std::vector<int64_t> shape) const {
  GJ_ASSIGN_OR_RETURN(int64_t numel, CheckedNumel(dtype_, shape));
  if (numel != numel_) {
    return absl::InvalidArgumentError(absl::StrCat("cannot reshape ", TypeString(), " to ",
                                                   ShapeString(shape), ": element counts ", numel_,
                                                   " vs ", numel));
  }
  Tensor view = *this;
  view.shape_ = std::move(shape);
  return view;
}

Tensor Tensor::Clone() const {
  if (!valid()) return Tensor();
  absl::StatusOr<Tensor> copy = Empty(dtype_, shape_);
  GJ_CHECK(copy.ok()) << "cannot clone " << TypeString() << ": " << copy.status().message();
  std::memcpy(copy->raw_data(), raw_data(), static_cast<size_t>(nbytes()));
  return *std::move(copy);
}

absl::StatusOr<Tensor> Tensor::Cast(DType dtype) const {
  GJ_ASSIGN_OR_RETURN(Tensor out, Empty(dtype, shape_));
  VisitDType(dtype_, [&](auto from_tag) {
    VisitDType(dtype, [&](auto to_tag) {
      using From = decltype(from_tag);
      using To = decltype(to_tag);
      const From* in = data<From>();
      To* o = out.data<To>();
      if constexpr (std::is_same_v<From, To>) {
        if (numel_ > 0) std::memcpy(o, in, static_cast<size_t>(nbytes()));
      } else {
        for (int64_t i = 0; i < numel_; ++i) o[i] = ConvertElement<To>(in[i]);
      }
    });
  });
  return out;
}

std::string Tensor::TypeString() const {
  return absl::StrCat(ir::DTypeName(dtype_), ShapeString(shape_));
}

std::string Tensor::DebugString(int max_values) const {
  if (!valid()) return "<no tensor>";
  std::string s = TypeString();
  if (max_values <= 0) return s;
  int64_t shown = std::min<int64_t>(max_values, numel_);
  std::vector<std::string> values;
  for (int64_t i = 0; i < shown; ++i) values.push_back(absl::StrCat(ValueAt(i)));
  if (shown < numel_) values.push_back("...");
  absl::StrAppend(&s, " {", absl::StrJoin(values, ", "), "}");
  return s;
}

double MaxAbsDiff(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    worst = std::max(worst, std::abs(a.ValueAt(i) - b.ValueAt(i)));
  }
  return worst;
}

}  // namespace graphjit::runtime
