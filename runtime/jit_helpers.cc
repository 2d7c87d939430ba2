// The BLAS matmul helper of compiled code. Like runtime/kernels_matmul.cc it sends
// matrix-vector products to gemv: OpenBLAS 0.3.21 runs an M=1 gemm ~6x slower.
#include "runtime/jit_helpers.h"

#include <cblas.h>

#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/ascii.h"

namespace {

// cblas takes dims as blasint (int in Debian's OpenBLAS).
constexpr int64_t kMaxBlasDim = std::numeric_limits<blasint>::max();

void Gemv(CBLAS_TRANSPOSE trans, blasint rows, blasint cols, const float* a, const float* x,
          float* y) {
  cblas_sgemv(CblasRowMajor, trans, rows, cols, 1.0f, a, cols, x, 1, 0.0f, y, 1);
}
void Gemv(CBLAS_TRANSPOSE trans, blasint rows, blasint cols, const double* a, const double* x,
          double* y) {
  cblas_dgemv(CblasRowMajor, trans, rows, cols, 1.0, a, cols, x, 1, 0.0, y, 1);
}
void Gemm(CBLAS_TRANSPOSE trans_b, blasint m, blasint n, blasint k, const float* a, const float* b,
          blasint ldb, float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b, m, n, k, 1.0f, a, k, b, ldb, 0.0f, c, n);
}
void Gemm(CBLAS_TRANSPOSE trans_b, blasint m, blasint n, blasint k, const double* a,
          const double* b, blasint ldb, double* c) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, trans_b, m, n, k, 1.0, a, k, b, ldb, 0.0, c, n);
}

template <typename T>
void Matmul(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k, bool transpose_b) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // BLAS rejects lda = 0; the empty sum is zero
    std::fill(c, c + m * n, T{0});
    return;
  }
  if (m > kMaxBlasDim || n > kMaxBlasDim || k > kMaxBlasDim) {
    // Beyond BLAS's int dims (no such matrix fits in memory in practice): plain loops, so
    // the result is still right.
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        T acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          acc += a[i * k + p] * (transpose_b ? b[j * k + p] : b[p * n + j]);
        }
        c[i * n + j] = acc;
      }
    }
    return;
  }
  const auto bm = static_cast<blasint>(m), bn = static_cast<blasint>(n);
  const auto bk = static_cast<blasint>(k);
  if (m == 1) {
    // c = b^T a for b [k, n]; c = b a for b stored [n, k].
    Gemv(transpose_b ? CblasNoTrans : CblasTrans, transpose_b ? bn : bk, transpose_b ? bk : bn, b,
         a, c);
  } else if (n == 1) {
    // b is one column of k contiguous values either way (stride n = 1, or one row of k).
    Gemv(CblasNoTrans, bm, bk, a, b, c);
  } else {
    Gemm(transpose_b ? CblasTrans : CblasNoTrans, bm, bn, bk, a, b, transpose_b ? bk : bn, c);
  }
}

}  // namespace

extern "C" void graphjit_rt_matmul_f32(const float* a, const float* b, float* c, int64_t m,
                                       int64_t n, int64_t k, int32_t transpose_b) {
  Matmul(a, b, c, m, n, k, transpose_b != 0);
}

extern "C" void graphjit_rt_matmul_f64(const double* a, const double* b, double* c, int64_t m,
                                       int64_t n, int64_t k, int32_t transpose_b) {
  Matmul(a, b, c, m, n, k, transpose_b != 0);
}

namespace graphjit::runtime {

void UseSingleThreadedBlas() {
  static const bool done = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)done;
}

std::string BlasCoreName() {
  const char* name = openblas_get_corename();
  return name == nullptr ? "" : name;
}

bool BlasNarrowerThanHost() {
  static const bool narrower = [] {
    if (!__builtin_cpu_supports("avx512f")) return false;
    const std::string core = absl::AsciiStrToLower(BlasCoreName());
    for (const char* wide : {"skylakex", "cooperlake", "sapphirerapids"}) {
      if (core == wide) return false;
    }
    return true;
  }();
  return narrower;
}

}  // namespace graphjit::runtime
