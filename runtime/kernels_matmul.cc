// Matmul through OpenBLAS: gemm per batch, gemv when M or N is 1 (OpenBLAS 0.3.21 runs an
// M=1 gemm ~6x slower than gemv), broadcast batch operands addressed in place, never
// copied.
#include <cblas.h>

#include <algorithm>
#include <limits>

#include "ir/status_macros.h"
#include "runtime/kernels.h"

namespace graphjit::runtime::kernels {
namespace {

// cblas takes dims as blasint (int in Debian's OpenBLAS).
constexpr int64_t kMaxBlasDim = std::numeric_limits<blasint>::max();

// Callers keep every dim <= kMaxBlasDim, so the narrowing casts are exact.
void Gemv(CBLAS_TRANSPOSE trans, int64_t rows, int64_t cols, const float* a, const float* x,
          float* y) {
  const auto r = static_cast<blasint>(rows), c = static_cast<blasint>(cols);
  cblas_sgemv(CblasRowMajor, trans, r, c, 1.0f, a, c, x, 1, 0.0f, y, 1);
}
void Gemv(CBLAS_TRANSPOSE trans, int64_t rows, int64_t cols, const double* a, const double* x,
          double* y) {
  const auto r = static_cast<blasint>(rows), c = static_cast<blasint>(cols);
  cblas_dgemv(CblasRowMajor, trans, r, c, 1.0, a, c, x, 1, 0.0, y, 1);
}
void Gemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  const auto bm = static_cast<blasint>(m), bn = static_cast<blasint>(n);
  const auto bk = static_cast<blasint>(k);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, bm, bn, bk, 1.0f, a, bk, b, bn, 0.0f, c,
              bn);
}
void Gemm(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c) {
  const auto bm = static_cast<blasint>(m), bn = static_cast<blasint>(n);
  const auto bk = static_cast<blasint>(k);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, bm, bn, bk, 1.0, a, bk, b, bn, 0.0, c, bn);
}

// c[m, n] = a[m, k] @ b[k, n], all row-major and contiguous; c starts zeroed.
template <typename T>
void MatmulOne(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k) {
  if (m == 0 || n == 0 || k == 0) return;  // c stays zero (BLAS rejects lda = 0)
  if (m == 1) {
    Gemv(CblasTrans, k, n, b, a, c);  // c = b^T a
  } else if (n == 1) {
    Gemv(CblasNoTrans, m, k, a, b, c);  // b is a column with stride n = 1
  } else {
    Gemm(m, n, k, a, b, c);
  }
}

template <typename T>
absl::StatusOr<Tensor> Matmul(const ir::Node& node, const Prepared& p, const Tensor& a,
                              const Tensor& b) {
  // Zero-filled, so an empty contraction gives zeros and BLAS never sees stale memory.
  absl::StatusOr<Tensor> out = Tensor::Zeros(p.dtype, p.shape);
  if (!out.ok()) return out;
  const int64_t m = a.dim(-2);
  const int64_t k = a.dim(-1);
  const int64_t n = b.dim(-1);
  const std::vector<int64_t> out_batch(p.shape.begin(), p.shape.end() - 2);
  const std::vector<int64_t> a_batch(a.shape().begin(), a.shape().end() - 2);
  const std::vector<int64_t> b_batch(b.shape().begin(), b.shape().end() - 2);
  const int64_t batches = Product(out_batch, 0, static_cast<int>(out_batch.size()));
  const int64_t a_batches = Product(a_batch, 0, static_cast<int>(a_batch.size()));
  const int64_t b_batches = Product(b_batch, 0, static_cast<int>(b_batch.size()));
  const T* x = a.data<T>();
  const T* y = b.data<T>();
  T* c = out->data<T>();
  if (batches == 0) return out;
  // One b for every batch of a (x @ W with x [B, S, K]): stack a's rows into one product.
  const bool fold = b_batches == 1 && a_batches == batches;
  const int64_t rows = fold ? batches * m : m;
  if (rows > kMaxBlasDim || n > kMaxBlasDim || k > kMaxBlasDim) {
    return OpError(
        node, absl::StrCat(a.TypeString(), " @ ", b.TypeString(), " has a dim too large for BLAS"));
  }
  if (fold) {
    MatmulOne(x, y, c, rows, n, k);
    return out;
  }
  LoopNest<2> nest = BroadcastNest<2>(out_batch, {&a_batch, &b_batch});
  ForEachRun<2>(nest, [&](int64_t len, const auto& off, const auto& st, int64_t at) {
    for (int64_t i = 0; i < len; ++i) {
      MatmulOne(x + (off[0] + i * st[0]) * m * k, y + (off[1] + i * st[1]) * k * n,
                c + (at + i) * m * n, m, n, k);
    }
  });
  return out;
}

}  // namespace

absl::StatusOr<Tensor> EvalMatmul(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                  const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  return Dispatch<GJ_FLOAT_TYPES>(node, p.dtype, [&](auto tag) {
    return Matmul<decltype(tag)>(node, p, *operands[0], *operands[1]);
  });
}

}  // namespace graphjit::runtime::kernels
