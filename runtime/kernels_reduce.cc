// Reductions over one axis (sum, max, mean, argmin, argmax), the cumulative sum and
// softmax. The tensor is viewed as [outer, n, inner] around the axis: a last-axis
// reduction (inner == 1) reads each row contiguously; otherwise whole rows of `inner`
// accumulators are updated at once, so the inner loop is still unit-stride.
#include <cmath>
#include <limits>

#include "ir/status_macros.h"
#include "runtime/kernels.h"

namespace graphjit::runtime::kernels {
namespace {

struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
};

absl::StatusOr<AxisSplit> SplitAt(const ir::Node& node, const Prepared& p, const Tensor& x) {
  GJ_ASSIGN_OR_RETURN(int axis, ir::NormalizeAxis(p.Int("axis"), x.rank(), ir::OpName(node.op)));
  return AxisSplit{Product(x.shape(), 0, axis), x.dim(axis),
                   Product(x.shape(), axis + 1, x.rank())};
}

// Sums accumulate in Acc<T>, except i64 which wraps in uint64 rather than overflow.
template <typename T>
using SumType = std::conditional_t<std::is_same_v<T, int64_t>, uint64_t, Acc<T>>;

// The sum of a contiguous row. Eight partial sums let the compiler vectorize a floating
// point sum without -ffast-math (it may not reassociate a single accumulator).
template <typename T>
SumType<T> SumRow(const T* x, int64_t n) {
  using S = SumType<T>;
  S part[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) part[j] += static_cast<S>(x[i + j]);
  }
  for (; i < n; ++i) part[0] += static_cast<S>(x[i]);
  return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

// reduce_max's identity: -inf for floats (the max of an empty axis), INT64_MIN for i64.
template <typename T>
constexpr T Lowest() {
  if constexpr (std::is_floating_point_v<T>)
    return -std::numeric_limits<T>::infinity();
  else
    return std::numeric_limits<T>::lowest();
}

// max(m, v) as the maximum op (runtime/scalar_semantics.h): a NaN once seen stays,
// -0 < +0.
template <typename T>
T MaxStep(T m, T v) {
  return MaxOf(m, v);
}

// argmin's starting best: +inf for floats, INT64_MAX for i64.
template <typename T>
constexpr T Highest() {
  if constexpr (std::is_floating_point_v<T>)
    return std::numeric_limits<T>::infinity();
  else
    return std::numeric_limits<T>::max();
}

// Whether `v` replaces `best` in argmin (kMin) / argmax: a strict comparison keeps the
// first extremum on ties, and the first NaN wins and stays (numpy's argmin and argmax).
template <bool kMin, typename T>
bool Better(T v, T best) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(v)) return !std::isnan(best);
  }
  return kMin ? v < best : v > best;
}

template <typename T>
T MaxRow(const T* x, int64_t n) {
  T m = Lowest<T>();
  for (int64_t i = 0; i < n; ++i) m = MaxStep(m, x[i]);
  return m;
}

// reduce_sum (divide = false) or reduce_mean (divide = true).
template <typename T>
void SumReduce(const T* x, const AxisSplit& s, bool divide, T* out) {
  using S = SumType<T>;
  auto finish = [&](S sum) -> T {
    if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(divide ? sum / static_cast<S>(s.n) : sum);
    } else {
      return static_cast<T>(sum);
    }
  };
  if (s.inner == 1) {
    for (int64_t o = 0; o < s.outer; ++o) out[o] = finish(SumRow(x + o * s.n, s.n));
    return;
  }
  std::vector<S> acc(s.inner);
  for (int64_t o = 0; o < s.outer; ++o) {
    std::fill(acc.begin(), acc.end(), S{0});
    const T* block = x + o * s.n * s.inner;
    for (int64_t r = 0; r < s.n; ++r) {
      for (int64_t j = 0; j < s.inner; ++j) acc[j] += static_cast<S>(block[r * s.inner + j]);
    }
    for (int64_t j = 0; j < s.inner; ++j) out[o * s.inner + j] = finish(acc[j]);
  }
}

template <typename T>
void MaxReduce(const T* x, const AxisSplit& s, T* out) {
  if (s.inner == 1) {
    for (int64_t o = 0; o < s.outer; ++o) out[o] = MaxRow(x + o * s.n, s.n);
    return;
  }
  for (int64_t o = 0; o < s.outer; ++o) {
    T* m = out + o * s.inner;
    std::fill(m, m + s.inner, Lowest<T>());
    const T* block = x + o * s.n * s.inner;
    for (int64_t r = 0; r < s.n; ++r) {
      for (int64_t j = 0; j < s.inner; ++j) m[j] = MaxStep(m[j], block[r * s.inner + j]);
    }
  }
}

// argmin (kMin) or argmax; the shape rule has ruled out an empty axis.
template <bool kMin, typename T>
void ArgReduce(const T* x, const AxisSplit& s, int64_t* out) {
  const T init = kMin ? Highest<T>() : Lowest<T>();
  std::vector<T> best(s.inner);
  for (int64_t o = 0; o < s.outer; ++o) {
    int64_t* index = out + o * s.inner;
    std::fill(best.begin(), best.end(), init);
    std::fill(index, index + s.inner, int64_t{0});
    const T* block = x + o * s.n * s.inner;
    for (int64_t r = 0; r < s.n; ++r) {
      for (int64_t j = 0; j < s.inner; ++j) {
        const T v = block[r * s.inner + j];
        if (Better<kMin>(v, best[j])) {
          best[j] = v;
          index[j] = r;
        }
      }
    }
  }
}

// Running sums in index order, in SumType (f32 in double, i64 wrapping): compiled scans
// add in the same order and type, so the two agree exactly.
template <typename T>
void CumSum(const T* x, const AxisSplit& s, T* out) {
  using S = SumType<T>;
  std::vector<S> acc(s.inner);
  for (int64_t o = 0; o < s.outer; ++o) {
    std::fill(acc.begin(), acc.end(), S{0});
    const int64_t base = o * s.n * s.inner;
    for (int64_t r = 0; r < s.n; ++r) {
      for (int64_t j = 0; j < s.inner; ++j) {
        const int64_t at = base + r * s.inner + j;
        acc[j] += static_cast<S>(x[at]);
        out[at] = static_cast<T>(acc[j]);
      }
    }
  }
}

template <typename T>
void Softmax(const T* x, const AxisSplit& s, T* out) {
  if (s.inner == 1) {
    for (int64_t o = 0; o < s.outer; ++o) {
      const T* row = x + o * s.n;
      T* dst = out + o * s.n;
      const T m = MaxRow(row, s.n);
      Acc<T> sum = 0;
      for (int64_t i = 0; i < s.n; ++i) {
        dst[i] = std::exp(row[i] - m);
        sum += dst[i];
      }
      const T denom = static_cast<T>(sum);
      for (int64_t i = 0; i < s.n; ++i) dst[i] /= denom;
    }
    return;
  }
  std::vector<T> m(s.inner);
  std::vector<Acc<T>> sum(s.inner);
  for (int64_t o = 0; o < s.outer; ++o) {
    const T* block = x + o * s.n * s.inner;
    T* dst = out + o * s.n * s.inner;
    std::fill(m.begin(), m.end(), Lowest<T>());
    std::fill(sum.begin(), sum.end(), Acc<T>{0});
    for (int64_t r = 0; r < s.n; ++r) {
      for (int64_t j = 0; j < s.inner; ++j) m[j] = MaxStep(m[j], block[r * s.inner + j]);
    }
    for (int64_t r = 0; r < s.n; ++r) {
      for (int64_t j = 0; j < s.inner; ++j) {
        const T e = std::exp(block[r * s.inner + j] - m[j]);
        dst[r * s.inner + j] = e;
        sum[j] += e;
      }
    }
    for (int64_t r = 0; r < s.n; ++r) {
      for (int64_t j = 0; j < s.inner; ++j) dst[r * s.inner + j] /= static_cast<T>(sum[j]);
    }
  }
}

// The shared frame of the one-axis kernels: prepares the result, splits x at the node's
// axis and runs kernel(T{}, x, split, &out) for x's dtype among Ts.
template <typename... Ts, typename Kernel>
absl::StatusOr<Tensor> EvalAlongAxis(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                     const ir::Bindings& bindings, Kernel kernel) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const Tensor& x = *operands[0];
  GJ_ASSIGN_OR_RETURN(AxisSplit split, SplitAt(node, p, x));
  return Dispatch<Ts...>(node, x.dtype(), [&](auto tag) -> absl::StatusOr<Tensor> {
    absl::StatusOr<Tensor> out = NewResult(p);
    if (!out.ok()) return out;
    kernel(tag, x, split, &*out);
    return out;
  });
}

enum class Reduction { kSum, kMax, kMean };

template <typename... Ts>
absl::StatusOr<Tensor> EvalReduction(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                     const ir::Bindings& bindings, Reduction kind) {
  return EvalAlongAxis<Ts...>(
      node, operands, bindings, [kind](auto tag, const Tensor& x, const AxisSplit& s, Tensor* out) {
        using T = decltype(tag);
        if (kind == Reduction::kMax) {
          MaxReduce(x.template data<T>(), s, out->template data<T>());
        } else {
          SumReduce(x.template data<T>(), s, kind == Reduction::kMean, out->template data<T>());
        }
      });
}

}  // namespace

absl::StatusOr<Tensor> EvalReduceSum(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                     const ir::Bindings& bindings) {
  return EvalReduction<GJ_NUMERIC_TYPES>(node, operands, bindings, Reduction::kSum);
}

absl::StatusOr<Tensor> EvalReduceMax(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                     const ir::Bindings& bindings) {
  return EvalReduction<GJ_NUMERIC_TYPES>(node, operands, bindings, Reduction::kMax);
}

absl::StatusOr<Tensor> EvalReduceMean(const ir::Node& node,
                                      absl::Span<const Tensor* const> operands,
                                      const ir::Bindings& bindings) {
  return EvalReduction<GJ_FLOAT_TYPES>(node, operands, bindings, Reduction::kMean);
}

namespace {

template <bool kMin>
absl::StatusOr<Tensor> EvalArgReduce(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                     const ir::Bindings& bindings) {
  return EvalAlongAxis<GJ_NUMERIC_TYPES>(
      node, operands, bindings, [](auto tag, const Tensor& x, const AxisSplit& s, Tensor* out) {
        using T = decltype(tag);
        ArgReduce<kMin>(x.template data<T>(), s, out->template data<int64_t>());  // i64
      });
}

}  // namespace

absl::StatusOr<Tensor> EvalArgMin(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                  const ir::Bindings& bindings) {
  return EvalArgReduce<true>(node, operands, bindings);
}

absl::StatusOr<Tensor> EvalArgMax(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                  const ir::Bindings& bindings) {
  return EvalArgReduce<false>(node, operands, bindings);
}

absl::StatusOr<Tensor> EvalCumSum(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                  const ir::Bindings& bindings) {
  return EvalAlongAxis<GJ_NUMERIC_TYPES>(
      node, operands, bindings, [](auto tag, const Tensor& x, const AxisSplit& s, Tensor* out) {
        using T = decltype(tag);
        CumSum(x.template data<T>(), s, out->template data<T>());
      });
}

absl::StatusOr<Tensor> EvalSoftmax(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                   const ir::Bindings& bindings) {
  return EvalAlongAxis<GJ_FLOAT_TYPES>(
      node, operands, bindings, [](auto tag, const Tensor& x, const AxisSplit& s, Tensor* out) {
        using T = decltype(tag);
        Softmax(x.template data<T>(), s, out->template data<T>());
      });
}

}  // namespace graphjit::runtime::kernels
