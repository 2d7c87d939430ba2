// Private to runtime/: the per-op eager kernels (one per op of ir/ops.def) and the
// helpers they share: operand validation, dtype dispatch and broadcast iteration.
#ifndef GRAPHJIT_RUNTIME_KERNELS_H_
#define GRAPHJIT_RUNTIME_KERNELS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "ir/graph.h"
#include "runtime/tensor.h"

namespace graphjit::runtime::kernels {

// One kernel per op; the dispatch table in eager.cc is built from the same list, so an
// op added to ir/ops.def without its kernel fails to link.
#define GJ_OP(name, ...)                                                      \
  absl::StatusOr<Tensor> Eval##name(const ir::Node& node,                     \
                                    absl::Span<const Tensor* const> operands, \
                                    const ir::Bindings& bindings);
#include "ir/ops.def"
#undef GJ_OP

// A validated call: the node's attributes with every dim evaluated under the bindings,
// and the result type the op's shape rule gives for the concrete operand shapes.
class Prepared {
 public:
  const ir::Attrs& attrs() const { return owned_attrs_ ? *owned_attrs_ : *attrs_; }
  // A dim or dims attribute as a number (Prepare evaluated them all).
  int64_t Dim(absl::string_view name) const;
  int64_t Int(absl::string_view name) const { return attrs().GetInt(name); }

  DType dtype = DType::kF32;
  // The result's dims; the count a data-dependent op defines (its `symbol`) is -1 here.
  std::vector<int64_t> shape;

 private:
  friend absl::StatusOr<Prepared> Prepare(const ir::Node&, absl::Span<const Tensor* const>,
                                          const ir::Bindings&);
  const ir::Attrs* attrs_ = nullptr;
  std::optional<ir::Attrs> owned_attrs_;  // only when some dim attribute was symbolic
};

// Checks the operand count, that each operand holds a tensor, the attributes against the
// op's schema, and the concrete shapes and dtypes against the op's shape rule (after
// evaluating dim attributes such as slice bounds or kv_write's `pos`). Every error is
// InvalidArgument starting with the op's name.
absl::StatusOr<Prepared> Prepare(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                 const ir::Bindings& bindings);

// Allocates the result described by `p` (contents unspecified).
inline absl::StatusOr<Tensor> NewResult(const Prepared& p) {
  return Tensor::Empty(p.dtype, p.shape);
}

// InvalidArgument `op: what`.
absl::Status OpError(const ir::Node& node, absl::string_view what);

// Product of shape[begin, end).
int64_t Product(const std::vector<int64_t>& shape, int begin, int end);

// The slices x[.., i, ..] along `axis` for each i of `indices` (each in range), in that
// order: x's shape with indices.size() at `axis` (compress's kept slices, unique's first
// occurrences).
absl::StatusOr<Tensor> SlicesAt(const Tensor& x, int axis, absl::Span<const int64_t> indices);

// Calls `f(T{})` for the C++ element type T of `dtype` if it is one of Ts; otherwise an
// InvalidArgument naming the op (a shape rule normally rejects that dtype first).
template <typename... Ts, typename F>
absl::StatusOr<Tensor> Dispatch(const ir::Node& node, DType dtype, F&& f) {
  std::optional<absl::StatusOr<Tensor>> result;
  ((DTypeOf<Ts>() == dtype ? (void)result.emplace(f(Ts{})) : (void)0), ...);
  if (result) return *std::move(result);
  return OpError(node, absl::StrCat("dtype ", ir::DTypeName(dtype), " is not supported"));
}
#define GJ_FLOAT_TYPES float, double
#define GJ_NUMERIC_TYPES float, double, int64_t
#define GJ_ALL_TYPES float, double, int64_t, bool

// The accumulator of sums over T: f32 sums in double (the reference should not lose
// digits on long rows); f64 and i64 in their own type.
template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, float>, double, T>;

// Loop nest for elementwise ops over N operands broadcast to one contiguous output:
// dims are the output dims after merging adjacent dims that every operand walks
// contiguously (or broadcasts) alike, strides the operands' element strides per dim (0
// where an operand is broadcast). Merging turns most cases into one long inner loop.
template <int N>
struct LoopNest {
  std::vector<int64_t> dims;
  std::array<std::vector<int64_t>, N> strides;
};

// The element strides of a row-major tensor of `shape` broadcast (right-aligned) to `out`.
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& shape,
                                      const std::vector<int64_t>& out);

// Drops size-1 dims and merges mergeable neighbours of `nest` in place.
template <int N>
void Coalesce(LoopNest<N>* nest) {
  LoopNest<N> out;
  for (size_t d = 0; d < nest->dims.size(); ++d) {
    if (nest->dims[d] == 1) continue;
    bool merge = !out.dims.empty();
    for (int k = 0; k < N && merge; ++k) {
      merge = out.strides[k].back() == nest->strides[k][d] * nest->dims[d];
    }
    if (merge) {
      out.dims.back() *= nest->dims[d];
      for (int k = 0; k < N; ++k) out.strides[k].back() = nest->strides[k][d];
    } else {
      out.dims.push_back(nest->dims[d]);
      for (int k = 0; k < N; ++k) out.strides[k].push_back(nest->strides[k][d]);
    }
  }
  *nest = std::move(out);
}

// The coalesced nest of operands of `shapes` broadcast to `out`.
template <int N>
LoopNest<N> BroadcastNest(const std::vector<int64_t>& out,
                          const std::array<const std::vector<int64_t>*, N>& shapes) {
  LoopNest<N> nest;
  nest.dims = out;
  for (int k = 0; k < N; ++k) nest.strides[k] = BroadcastStrides(*shapes[k], out);
  Coalesce(&nest);
  return nest;
}

// Calls `run(n, offsets, strides, out_offset)` for each innermost run of `nest` (a
// contiguous output range of n elements; operand k starts at offsets[k] and steps by
// strides[k]). The output is contiguous, so out_offset just counts.
template <int N, typename Run>
void ForEachRun(const LoopNest<N>& nest, Run&& run) {
  const int rank = static_cast<int>(nest.dims.size());
  std::array<int64_t, N> offsets{};
  std::array<int64_t, N> inner{};
  if (rank == 0) {
    run(int64_t{1}, offsets, inner, int64_t{0});
    return;
  }
  const int64_t n = nest.dims[rank - 1];
  for (int k = 0; k < N; ++k) inner[k] = nest.strides[k][rank - 1];
  int64_t outer = 1;
  for (int d = 0; d < rank - 1; ++d) outer *= nest.dims[d];
  if (n == 0 || outer == 0) return;
  std::vector<int64_t> index(rank, 0);
  for (int64_t r = 0, out = 0; r < outer; ++r, out += n) {
    run(n, offsets, inner, out);
    // Odometer over the outer dims, keeping the operand offsets in step.
    for (int d = rank - 2; d >= 0; --d) {
      for (int k = 0; k < N; ++k) offsets[k] += nest.strides[k][d];
      if (++index[d] < nest.dims[d]) break;
      for (int k = 0; k < N; ++k) offsets[k] -= nest.strides[k][d] * nest.dims[d];
      index[d] = 0;
    }
  }
}

// out[i] = f(x[i]) over a whole tensor: the shared body of the unary float ops.
template <typename T, typename F>
absl::StatusOr<Tensor> MapUnary(const Prepared& p, const Tensor& x, F f) {
  absl::StatusOr<Tensor> out = NewResult(p);
  if (!out.ok()) return out;
  const T* in = x.data<T>();
  T* o = out->data<T>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) o[i] = f(in[i]);
  return out;
}

}  // namespace graphjit::runtime::kernels

#endif  // GRAPHJIT_RUNTIME_KERNELS_H_
