// Layout kernels: transpose, reshape, expand, concat, slice, gather. They move elements
// without arithmetic, so they copy by element size (1, 4 or 8 bytes) and serve every dtype
// with one instantiation each; contiguous runs become memcpy. Also gather's adjoint,
// scatter_add, which adds (typed per dtype).
#include <cstring>

#include "ir/status_macros.h"
#include "runtime/kernels.h"
#include "runtime/scalar_semantics.h"

namespace graphjit::runtime::kernels {
namespace {

// Calls f(E{}) with an unsigned integer type E of the dtype's element size.
template <typename F>
absl::StatusOr<Tensor> WithElementType(DType dtype, F f) {
  switch (ir::DTypeSize(dtype)) {
    case 1:
      return f(uint8_t{});
    case 4:
      return f(uint32_t{});
    default:
      return f(uint64_t{});
  }
}

// Copies `src` walked by a one-operand nest into a contiguous `dst`.
template <typename E>
void CopyNest(const LoopNest<1>& nest, const E* src, E* dst) {
  ForEachRun<1>(nest, [&](int64_t len, const auto& off, const auto& st, int64_t at) {
    const E* s = src + off[0];
    E* d = dst + at;
    if (st[0] == 1) {
      std::memcpy(d, s, static_cast<size_t>(len) * sizeof(E));
    } else {
      for (int64_t i = 0; i < len; ++i) d[i] = s[i * st[0]];
    }
  });
}

int Rank(const std::vector<int64_t>& shape) { return static_cast<int>(shape.size()); }

}  // namespace

absl::StatusOr<Tensor> EvalTranspose(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                     const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const Tensor& x = *operands[0];
  const std::vector<int64_t>& perm = p.attrs().Get<std::vector<int64_t>>("perm");
  // Output dim k walks source dim perm[k]; Coalesce merges runs contiguous in the source.
  std::vector<int64_t> src_strides(x.rank());
  int64_t stride = 1;
  for (int d = x.rank() - 1; d >= 0; --d) {
    src_strides[d] = stride;
    stride *= x.dim(d);
  }
  LoopNest<1> nest;
  nest.dims = p.shape;
  for (int64_t src_dim : perm) nest.strides[0].push_back(src_strides[src_dim]);
  Coalesce(&nest);
  return WithElementType(x.dtype(), [&](auto tag) -> absl::StatusOr<Tensor> {
    using E = decltype(tag);
    absl::StatusOr<Tensor> out = NewResult(p);
    if (!out.ok()) return out;
    CopyNest(nest, static_cast<const E*>(x.raw_data()), static_cast<E*>(out->raw_data()));
    return out;
  });
}

// A copy, not a view: every eager result owns its buffer, so a caller (or compiled code
// given a donated buffer) may write to a result without touching an operand.
absl::StatusOr<Tensor> EvalReshape(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                   const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  absl::StatusOr<Tensor> out = NewResult(p);
  if (!out.ok()) return out;
  std::memcpy(out->raw_data(), operands[0]->raw_data(), static_cast<size_t>(out->nbytes()));
  return out;
}

absl::StatusOr<Tensor> EvalExpand(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                  const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const Tensor& x = *operands[0];
  LoopNest<1> nest = BroadcastNest<1>(p.shape, {&x.shape()});
  return WithElementType(x.dtype(), [&](auto tag) -> absl::StatusOr<Tensor> {
    using E = decltype(tag);
    absl::StatusOr<Tensor> out = NewResult(p);
    if (!out.ok()) return out;
    CopyNest(nest, static_cast<const E*>(x.raw_data()), static_cast<E*>(out->raw_data()));
    return out;
  });
}

absl::StatusOr<Tensor> EvalConcat(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                  const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  GJ_ASSIGN_OR_RETURN(int axis, ir::NormalizeAxis(p.Int("axis"), Rank(p.shape), "concat"));
  absl::StatusOr<Tensor> out = NewResult(p);
  if (!out.ok()) return out;
  const int64_t esize = ir::DTypeSize(p.dtype);
  const int64_t outer = Product(p.shape, 0, axis);
  const int64_t inner = Product(p.shape, axis + 1, Rank(p.shape)) * esize;
  auto* dst = static_cast<uint8_t*>(out->raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor* x : operands) {
      const int64_t chunk = x->dim(axis) * inner;
      std::memcpy(dst, static_cast<const uint8_t*>(x->raw_data()) + o * chunk,
                  static_cast<size_t>(chunk));
      dst += chunk;
    }
  }
  return out;
}

absl::StatusOr<Tensor> EvalSlice(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                 const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const Tensor& x = *operands[0];
  GJ_ASSIGN_OR_RETURN(int axis, ir::NormalizeAxis(p.Int("axis"), x.rank(), "slice"));
  absl::StatusOr<Tensor> out = NewResult(p);
  if (!out.ok()) return out;
  const int64_t esize = ir::DTypeSize(x.dtype());
  const int64_t start = p.Dim("start");
  const int64_t len = p.shape[axis];
  const int64_t outer = Product(x.shape(), 0, axis);
  const int64_t inner = Product(x.shape(), axis + 1, x.rank()) * esize;
  const auto* src = static_cast<const uint8_t*>(x.raw_data());
  auto* dst = static_cast<uint8_t*>(out->raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(dst + o * len * inner, src + (o * x.dim(axis) + start) * inner,
                static_cast<size_t>(len * inner));
  }
  return out;
}

absl::StatusOr<Tensor> EvalWindow(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                  const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const Tensor& x = *operands[0];
  const auto& kernel = p.attrs().Get<std::vector<int64_t>>("kernel");
  const auto& strides = p.attrs().Get<std::vector<int64_t>>("strides");
  const auto& dilations = p.attrs().Get<std::vector<int64_t>>("dilations");
  const int k = static_cast<int>(kernel.size());
  const int batch = x.rank() - k;
  // One batch row's source offset per output element of the row (the window positions
  // then the output positions, row-major), shared by every batch row.
  std::vector<int64_t> src_strides(k);
  int64_t row = 1;
  for (int i = k - 1; i >= 0; --i) {
    src_strides[i] = row;
    row *= x.dim(batch + i);
  }
  std::vector<int64_t> offsets = {0};
  auto extend = [&](int64_t extent, int64_t step) {
    std::vector<int64_t> next;
    next.reserve(offsets.size() * extent);
    for (int64_t base : offsets) {
      for (int64_t j = 0; j < extent; ++j) next.push_back(base + j * step);
    }
    offsets = std::move(next);
  };
  for (int i = 0; i < k; ++i) extend(kernel[i], dilations[i] * src_strides[i]);
  for (int i = 0; i < k; ++i) extend(p.shape[batch + k + i], strides[i] * src_strides[i]);
  const int64_t rows = Product(x.shape(), 0, batch);
  const int64_t per_row = static_cast<int64_t>(offsets.size());
  return WithElementType(x.dtype(), [&](auto tag) -> absl::StatusOr<Tensor> {
    using E = decltype(tag);
    absl::StatusOr<Tensor> out = NewResult(p);
    if (!out.ok()) return out;
    const E* src = static_cast<const E*>(x.raw_data());
    E* dst = static_cast<E*>(out->raw_data());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t t = 0; t < per_row; ++t) dst[r * per_row + t] = src[r * row + offsets[t]];
    }
    return out;
  });
}

absl::StatusOr<Tensor> EvalGather(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                  const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const Tensor& table = *operands[0];
  const Tensor& idx = *operands[1];
  const int64_t rows = table.dim(0);
  const int64_t* ids = idx.data<int64_t>();
  for (int64_t i = 0; i < idx.numel(); ++i) {
    if (ids[i] < 0 || ids[i] >= rows) {
      return OpError(
          node, absl::StrCat("index ", ids[i], " at flat position ", i, " is outside [0, ", rows,
                             ") for table ", table.TypeString()));
    }
  }
  absl::StatusOr<Tensor> out = NewResult(p);
  if (!out.ok()) return out;
  const int64_t row_bytes = Product(table.shape(), 1, table.rank()) * ir::DTypeSize(p.dtype);
  const auto* src = static_cast<const uint8_t*>(table.raw_data());
  auto* dst = static_cast<uint8_t*>(out->raw_data());
  for (int64_t i = 0; i < idx.numel(); ++i) {
    std::memcpy(dst + i * row_bytes, src + ids[i] * row_bytes, static_cast<size_t>(row_bytes));
  }
  return out;
}

// Rows are added in index order, so repeated indices accumulate deterministically.
absl::StatusOr<Tensor> EvalScatterAdd(const ir::Node& node,
                                      absl::Span<const Tensor* const> operands,
                                      const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const Tensor& table = *operands[0];
  const Tensor& idx = *operands[1];
  const int64_t rows = table.dim(0);
  const int64_t* ids = idx.data<int64_t>();
  for (int64_t i = 0; i < idx.numel(); ++i) {
    if (ids[i] < 0 || ids[i] >= rows) {
      return OpError(
          node, absl::StrCat("index ", ids[i], " at flat position ", i, " is outside [0, ", rows,
                             ") for table ", table.TypeString()));
    }
  }
  return Dispatch<GJ_NUMERIC_TYPES>(node, p.dtype, [&](auto tag) -> absl::StatusOr<Tensor> {
    using T = decltype(tag);
    absl::StatusOr<Tensor> out = NewResult(p);
    if (!out.ok()) return out;
    std::memcpy(out->raw_data(), table.raw_data(), static_cast<size_t>(table.nbytes()));
    const int64_t row = Product(table.shape(), 1, table.rank());
    const T* src = operands[2]->template data<T>();
    T* dst = out->template data<T>();
    for (int64_t i = 0; i < idx.numel(); ++i) {
      for (int64_t j = 0; j < row; ++j) {
        T& d = dst[ids[i] * row + j];
        if constexpr (std::is_same_v<T, int64_t>) {
          d = WrapAdd(d, src[i * row + j]);  // i64 wraps, as add does
        } else {
          d += src[i * row + j];
        }
      }
    }
    return out;
  });
}

}  // namespace graphjit::runtime::kernels
