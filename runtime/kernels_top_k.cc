// top_k and top_k_indices (ir/ops.def): per row along the axis, the indices of the k
// largest (or smallest) elements, by a stable sort of the row's indices, so equal elements
// keep their index order; NaN sorts above every number, as numpy.sort puts it last.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "ir/status_macros.h"
#include "runtime/kernels.h"

namespace graphjit::runtime::kernels {
namespace {

template <typename T>
bool IsNan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  return false;
}

// The selection: values (or, with `indices`, their i64 indices along the axis).
absl::StatusOr<Tensor> Select(const ir::Node& node, absl::Span<const Tensor* const> operands,
                              const ir::Bindings& bindings, bool indices) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const Tensor& x = *operands[0];
  const int axis = ir::ValueOrDie(ir::NormalizeAxis(p.Int("axis"), x.rank(), "top_k"));
  const int64_t k = p.Dim("k");
  if (k < 0 || k > x.dim(axis)) {
    return OpError(node, absl::StrCat("k=", k, " is outside [0, ", x.dim(axis), "] for axis ", axis,
                                      " of ", x.TypeString()));
  }
  const bool largest = p.attrs().Get<bool>("largest");
  return Dispatch<float, double, int64_t, int32_t>(
      node, x.dtype(), [&](auto tag) -> absl::StatusOr<Tensor> {
        using T = decltype(tag);
        GJ_ASSIGN_OR_RETURN(Tensor out, NewResult(p));
        const int64_t n = x.dim(axis);
        const int64_t outer = Product(x.shape(), 0, axis);
        const int64_t inner = Product(x.shape(), axis + 1, x.rank());
        const T* src = x.data<T>();
        std::vector<int64_t> order(n);
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t i = 0; i < inner; ++i) {
            const T* row = src + o * n * inner + i;  // element j at row[j * inner]
            auto before = [&](int64_t a, int64_t b) {
              const T va = row[a * inner], vb = row[b * inner];
              if (largest) return (IsNan(va) && !IsNan(vb)) || va > vb;
              return (!IsNan(va) && IsNan(vb)) || va < vb;
            };
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(order.begin(), order.end(), before);
            for (int64_t j = 0; j < k; ++j) {
              const int64_t at = (o * k + j) * inner + i;
              if (indices) {
                out.data<int64_t>()[at] = order[j];
              } else {
                out.data<T>()[at] = row[order[j] * inner];
              }
            }
          }
        }
        return out;
      });
}

}  // namespace

absl::StatusOr<Tensor> EvalTopK(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                const ir::Bindings& bindings) {
  return Select(node, operands, bindings, /*indices=*/false);
}

absl::StatusOr<Tensor> EvalTopKIndices(const ir::Node& node,
                                       absl::Span<const Tensor* const> operands,
                                       const ir::Bindings& bindings) {
  return Select(node, operands, bindings, /*indices=*/true);
}

}  // namespace graphjit::runtime::kernels
