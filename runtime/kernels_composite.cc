// Kernels of the composite ops (norms, activations, rope, cross entropy, causal mask,
// kv_write), each computed directly in one pass over rows rather than by decomposition.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>

#include "ir/status_macros.h"
#include "runtime/kernels.h"

namespace graphjit::runtime::kernels {
namespace {

// Rows of the last axis: [rows, d].
struct Rows {
  int64_t rows, d;
};
Rows LastAxisRows(const Tensor& x) { return {Product(x.shape(), 0, x.rank() - 1), x.dim(-1)}; }

template <typename T>
void RmsNorm(const T* x, const T* w, Rows r, double eps, T* out) {
  for (int64_t i = 0; i < r.rows; ++i) {
    const T* row = x + i * r.d;
    T* dst = out + i * r.d;
    Acc<T> ss = 0;
    for (int64_t j = 0; j < r.d; ++j) ss += static_cast<Acc<T>>(row[j]) * row[j];
    const T denom = static_cast<T>(std::sqrt(ss / static_cast<Acc<T>>(r.d) + eps));
    if (w == nullptr) {
      for (int64_t j = 0; j < r.d; ++j) dst[j] = row[j] / denom;
    } else {
      for (int64_t j = 0; j < r.d; ++j) dst[j] = row[j] / denom * w[j];
    }
  }
}

template <typename T>
void LayerNorm(const T* x, const T* w, const T* b, Rows r, double eps, T* out) {
  for (int64_t i = 0; i < r.rows; ++i) {
    const T* row = x + i * r.d;
    T* dst = out + i * r.d;
    Acc<T> sum = 0;
    for (int64_t j = 0; j < r.d; ++j) sum += row[j];
    const Acc<T> mean = sum / static_cast<Acc<T>>(r.d);
    Acc<T> var = 0;
    for (int64_t j = 0; j < r.d; ++j) var += (row[j] - mean) * (row[j] - mean);
    var /= static_cast<Acc<T>>(r.d);
    const T m = static_cast<T>(mean);
    const T denom = static_cast<T>(std::sqrt(var + eps));
    for (int64_t j = 0; j < r.d; ++j) dst[j] = (row[j] - m) / denom * w[j] + b[j];
  }
}

// out = x * cos + rotate_half(x) * sin along the last axis; cos and sin broadcast to x.
// The nest runs over x's leading dims in units of rows; a table whose last dim is 1
// repeats its one value along the row.
template <typename T>
void Rope(const Tensor& x, const Tensor& cos, const Tensor& sin, T* out) {
  const std::vector<int64_t> lead(x.shape().begin(), x.shape().end() - 1);
  auto table_lead = [](const Tensor& t) {
    return t.rank() == 0 ? std::vector<int64_t>{}
                         : std::vector<int64_t>(t.shape().begin(), t.shape().end() - 1);
  };
  const std::vector<int64_t> cos_lead = table_lead(cos), sin_lead = table_lead(sin);
  LoopNest<2> nest = BroadcastNest<2>(lead, {&cos_lead, &sin_lead});
  const int64_t d = x.dim(-1), half = d / 2;
  const int64_t cos_row = cos.rank() == 0 ? 1 : cos.dim(-1);
  const int64_t sin_row = sin.rank() == 0 ? 1 : sin.dim(-1);
  const int64_t cs = cos_row == 1 ? 0 : 1, ss = sin_row == 1 ? 0 : 1;
  const T* xd = x.data<T>();
  const T* cd = cos.data<T>();
  const T* sd = sin.data<T>();
  ForEachRun<2>(nest, [&](int64_t len, const auto& off, const auto& st, int64_t at) {
    for (int64_t r = 0; r < len; ++r) {
      const T* xr = xd + (at + r) * d;
      const T* c = cd + (off[0] + r * st[0]) * cos_row;
      const T* s = sd + (off[1] + r * st[1]) * sin_row;
      T* o = out + (at + r) * d;
      for (int64_t i = 0; i < half; ++i) o[i] = xr[i] * c[i * cs] + -xr[i + half] * s[i * ss];
      for (int64_t i = half; i < d; ++i) o[i] = xr[i] * c[i * cs] + xr[i - half] * s[i * ss];
    }
  });
}

template <typename T>
T CrossEntropy(const T* logits, const int64_t* targets, Rows r) {
  Acc<T> total = 0;
  for (int64_t i = 0; i < r.rows; ++i) {
    const T* row = logits + i * r.d;
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t j = 0; j < r.d; ++j) m = (row[j] > m || std::isnan(row[j])) ? row[j] : m;
    Acc<T> sum = 0;
    for (int64_t j = 0; j < r.d; ++j) sum += std::exp(row[j] - m);
    total += (m + std::log(sum)) - row[targets[i]];
  }
  return static_cast<T>(total / static_cast<Acc<T>>(r.rows));
}

}  // namespace

absl::StatusOr<Tensor> EvalRmsNorm(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                   const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const Tensor& x = *operands[0];
  return Dispatch<GJ_FLOAT_TYPES>(node, x.dtype(), [&](auto tag) -> absl::StatusOr<Tensor> {
    using T = decltype(tag);
    absl::StatusOr<Tensor> out = NewResult(p);
    if (!out.ok()) return out;
    const T* w = operands.size() > 1 ? operands[1]->template data<T>() : nullptr;
    RmsNorm(x.template data<T>(), w, LastAxisRows(x), p.attrs().GetFloat("eps"),
            out->template data<T>());
    return out;
  });
}

absl::StatusOr<Tensor> EvalLayerNorm(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                     const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const Tensor& x = *operands[0];
  return Dispatch<GJ_FLOAT_TYPES>(node, x.dtype(), [&](auto tag) -> absl::StatusOr<Tensor> {
    using T = decltype(tag);
    absl::StatusOr<Tensor> out = NewResult(p);
    if (!out.ok()) return out;
    LayerNorm(x.template data<T>(), operands[1]->template data<T>(),
              operands[2]->template data<T>(), LastAxisRows(x), p.attrs().GetFloat("eps"),
              out->template data<T>());
    return out;
  });
}

absl::StatusOr<Tensor> EvalSilu(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  return Dispatch<GJ_FLOAT_TYPES>(node, p.dtype, [&](auto tag) {
    using T = decltype(tag);
    return MapUnary<T>(p, *operands[0], [](T x) { return x / (T{1} + std::exp(-x)); });
  });
}

absl::StatusOr<Tensor> EvalGeluTanh(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                    const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  return Dispatch<GJ_FLOAT_TYPES>(node, p.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T k = static_cast<T>(std::sqrt(2.0 / std::numbers::pi));
    const T c = static_cast<T>(0.044715);
    return MapUnary<T>(p, *operands[0], [=](T x) {
      return T{0.5} * x * (T{1} + std::tanh(k * (x + c * x * x * x)));
    });
  });
}

absl::StatusOr<Tensor> EvalRope(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  return Dispatch<GJ_FLOAT_TYPES>(node, p.dtype, [&](auto tag) -> absl::StatusOr<Tensor> {
    using T = decltype(tag);
    absl::StatusOr<Tensor> out = NewResult(p);
    if (!out.ok()) return out;
    Rope<T>(*operands[0], *operands[1], *operands[2], out->template data<T>());
    return out;
  });
}

absl::StatusOr<Tensor> EvalCrossEntropy(const ir::Node& node,
                                        absl::Span<const Tensor* const> operands,
                                        const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const Tensor& logits = *operands[0];
  const Tensor& targets = *operands[1];
  const Rows r = LastAxisRows(logits);
  const int64_t* t = targets.data<int64_t>();
  for (int64_t i = 0; i < targets.numel(); ++i) {
    if (t[i] < 0 || t[i] >= r.d) {
      return OpError(node,
                     absl::StrCat("target ", t[i], " at flat position ", i, " is outside [0, ", r.d,
                                  ") for logits ", logits.TypeString()));
    }
  }
  return Dispatch<GJ_FLOAT_TYPES>(node, p.dtype, [&](auto tag) -> absl::StatusOr<Tensor> {
    using T = decltype(tag);
    absl::StatusOr<Tensor> out = NewResult(p);
    if (!out.ok()) return out;
    out->template data<T>()[0] = CrossEntropy(logits.template data<T>(), t, r);
    return out;
  });
}

absl::StatusOr<Tensor> EvalCausalMask(const ir::Node& node,
                                      absl::Span<const Tensor* const> operands,
                                      const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const Tensor& s = *operands[0];
  return Dispatch<GJ_FLOAT_TYPES>(node, p.dtype, [&](auto tag) -> absl::StatusOr<Tensor> {
    using T = decltype(tag);
    absl::StatusOr<Tensor> out = NewResult(p);
    if (!out.ok()) return out;
    const int64_t t = s.dim(-2), u = s.dim(-1);
    const int64_t batches = Product(s.shape(), 0, s.rank() - 2);
    const T* in = s.template data<T>();
    T* o = out->template data<T>();
    for (int64_t b = 0; b < batches; ++b) {
      for (int64_t i = 0; i < t; ++i) {
        const int64_t row = (b * t + i) * u;
        // Keep j <= i + (u - t), i.e. j < keep.
        const int64_t keep = std::clamp<int64_t>(i + (u - t) + 1, 0, u);
        std::memcpy(o + row, in + row, static_cast<size_t>(keep) * sizeof(T));
        std::fill(o + row + keep, o + row + u, -std::numeric_limits<T>::infinity());
      }
    }
    return out;
  });
}

// Always a fresh copy of the cache: the eager op must not update its operand in place
// (only compiled code with a donated cache may).
absl::StatusOr<Tensor> EvalKvWrite(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                   const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const Tensor& cache = *operands[0];
  const Tensor& rows = *operands[1];
  absl::StatusOr<Tensor> out = NewResult(p);
  if (!out.ok()) return out;
  std::memcpy(out->raw_data(), cache.raw_data(), static_cast<size_t>(cache.nbytes()));
  const int64_t pos = p.Dim("pos");
  const int64_t row_bytes = cache.dim(-1) * ir::DTypeSize(cache.dtype());
  const int64_t s = cache.dim(-2), r = rows.dim(-2);
  const int64_t outer = Product(cache.shape(), 0, cache.rank() - 2);
  auto* dst = static_cast<uint8_t*>(out->raw_data());
  const auto* src = static_cast<const uint8_t*>(rows.raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(dst + (o * s + pos) * row_bytes, src + o * r * row_bytes,
                static_cast<size_t>(r * row_bytes));
  }
  return out;
}

}  // namespace graphjit::runtime::kernels
