#include "compiler/entries/padding.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "ir/status_macros.h"

namespace graphjit::compiler::entries {
namespace {

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int a = static_cast<int>(shape.size()) - 2; a >= 0; --a) {
    strides[a] = strides[a + 1] * shape[a + 1];
  }
  return strides;
}

}  // namespace

absl::StatusOr<runtime::Tensor> Resize(const runtime::Tensor& t,
                                       const std::vector<int64_t>& shape) {
  GJ_CHECK(static_cast<int>(shape.size()) == t.rank()) << t.TypeString();
  GJ_ASSIGN_OR_RETURN(runtime::Tensor out, runtime::Tensor::Zeros(t.dtype(), shape));
  const int rank = t.rank();
  std::vector<int64_t> common(rank);
  for (int a = 0; a < rank; ++a) common[a] = std::min(t.dim(a), shape[a]);
  if (std::find(common.begin(), common.end(), 0) != common.end()) return out;
  if (rank == 0) {
    std::memcpy(out.raw_data(), t.raw_data(), t.nbytes());
    return out;
  }
  const int64_t elem = ir::DTypeSize(t.dtype());
  const std::vector<int64_t> src_strides = RowMajorStrides(t.shape());
  const std::vector<int64_t> dst_strides = RowMajorStrides(shape);
  const auto* src = static_cast<const char*>(t.raw_data());
  auto* dst = static_cast<char*>(out.raw_data());
  // Walks the leading axes of the common block like an odometer, one memcpy per row.
  std::vector<int64_t> index(rank, 0);
  while (true) {
    int64_t s = 0, d = 0;
    for (int a = 0; a + 1 < rank; ++a) {
      s += index[a] * src_strides[a];
      d += index[a] * dst_strides[a];
    }
    std::memcpy(dst + d * elem, src + s * elem, common[rank - 1] * elem);
    int a = rank - 2;
    while (a >= 0 && ++index[a] == common[a]) index[a--] = 0;
    if (a < 0) break;
  }
  return out;
}

std::vector<int64_t> ShapeAt(const std::vector<DimGuard>& dims, const DimValues& lengths) {
  std::vector<int64_t> shape;
  for (const DimGuard& d : dims) shape.push_back(d.dynamic >= 0 ? lengths[d.dynamic] : d.constant);
  return shape;
}

absl::StatusOr<runtime::Tensor> MakeMask(const InputGuard& guard, const DimValues& real,
                                         const DimValues& lengths) {
  std::vector<int64_t> shape = ShapeAt(guard.dims, lengths);
  const std::vector<int64_t> strides = RowMajorStrides(shape);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> values(n, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (size_t a = 0; a < shape.size(); ++a) {
      int k = guard.dims[a].dynamic;
      if (k >= 0 && (i / strides[a]) % shape[a] >= real[k]) {
        values[i] = -std::numeric_limits<double>::infinity();
        break;
      }
    }
  }
  return runtime::Tensor::FromDoubles(guard.dtype, shape, values);
}

}  // namespace graphjit::compiler::entries
