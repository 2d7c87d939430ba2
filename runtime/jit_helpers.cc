// The BLAS matmul helper of compiled code. Like runtime/kernels_matmul.cc it sends
// matrix-vector products to gemv: OpenBLAS 0.3.21 runs an M=1 gemm ~6x slower.
#include "runtime/jit_helpers.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"

namespace {

// cblas takes dims as blasint (int in Debian's OpenBLAS).
constexpr int64_t kMaxBlasDim = std::numeric_limits<blasint>::max();

void Gemv(CBLAS_TRANSPOSE trans, blasint rows, blasint cols, const float* a, blasint lda,
          const float* x, blasint incx, float* y, blasint incy) {
  cblas_sgemv(CblasRowMajor, trans, rows, cols, 1.0f, a, lda, x, incx, 0.0f, y, incy);
}
void Gemv(CBLAS_TRANSPOSE trans, blasint rows, blasint cols, const double* a, blasint lda,
          const double* x, blasint incx, double* y, blasint incy) {
  cblas_dgemv(CblasRowMajor, trans, rows, cols, 1.0, a, lda, x, incx, 0.0, y, incy);
}
void Gemm(CBLAS_TRANSPOSE trans_b, blasint m, blasint n, blasint k, const float* a, const float* b,
          blasint ldb, float* c, blasint ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b, m, n, k, 1.0f, a, k, b, ldb, 0.0f, c, ldc);
}
void Gemm(CBLAS_TRANSPOSE trans_b, blasint m, blasint n, blasint k, const double* a,
          const double* b, blasint ldb, double* c, blasint ldc) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, trans_b, m, n, k, 1.0, a, k, b, ldb, 0.0, c, ldc);
}

template <typename T>
void Matmul(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k, int64_t ldb, int64_t ldc,
            bool transpose_b) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // BLAS rejects lda = 0; the empty sum is zero
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T{0});
    return;
  }
  if (m > kMaxBlasDim || n > kMaxBlasDim || k > kMaxBlasDim || ldb > kMaxBlasDim ||
      ldc > kMaxBlasDim) {
    // Beyond BLAS's int dims (no such matrix fits in memory in practice): plain loops, so
    // the result is still right.
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        T acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          acc += a[i * k + p] * (transpose_b ? b[j * ldb + p] : b[p * ldb + j]);
        }
        c[i * ldc + j] = acc;
      }
    }
    return;
  }
  const auto bm = static_cast<blasint>(m), bn = static_cast<blasint>(n);
  const auto bk = static_cast<blasint>(k), bldb = static_cast<blasint>(ldb);
  const auto bldc = static_cast<blasint>(ldc);
  if (m == 1) {
    // c = b^T a for b [k, n]; c = b a for b stored [n, k].
    Gemv(transpose_b ? CblasNoTrans : CblasTrans, transpose_b ? bn : bk, transpose_b ? bk : bn, b,
         bldb, a, 1, c, 1);
  } else if (n == 1) {
    // b is one column of k values: stride ldb (b [k, n]) or one contiguous row ([n, k]).
    Gemv(CblasNoTrans, bm, bk, a, bk, b, transpose_b ? 1 : bldb, c, bldc);
  } else {
    Gemm(transpose_b ? CblasTrans : CblasNoTrans, bm, bn, bk, a, b, bldb, c, bldc);
  }
}

}  // namespace

extern "C" void graphjit_rt_matmul_f32(const float* a, const float* b, float* c, int64_t m,
                                       int64_t n, int64_t k, int64_t ldb, int64_t ldc,
                                       int32_t transpose_b) {
  Matmul(a, b, c, m, n, k, ldb, ldc, transpose_b != 0);
}

extern "C" void graphjit_rt_matmul_f64(const double* a, const double* b, double* c, int64_t m,
                                       int64_t n, int64_t k, int64_t ldb, int64_t ldc,
                                       int32_t transpose_b) {
  Matmul(a, b, c, m, n, k, ldb, ldc, transpose_b != 0);
}

namespace graphjit::runtime {

void UseSingleThreadedBlas() {
  static const bool done = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)done;
}

namespace {

// c = a @ b whole, and in two parts cut at row (by_rows) or column `split`: the same bits?
template <typename T>
bool SameBitsSplit(int64_t m, int64_t n, int64_t k, int64_t split, bool by_rows) {
  std::vector<T> a(m * k), b(k * n), whole(m * n), parts(m * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<T>(std::sin(0.37 * i));
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<T>(std::cos(0.11 * i));
  Matmul(a.data(), b.data(), whole.data(), m, n, k, n, n, false);
  if (by_rows) {
    Matmul(a.data(), b.data(), parts.data(), split, n, k, n, n, false);
    Matmul(a.data() + split * k, b.data(), parts.data() + split * n, m - split, n, k, n, n, false);
  } else {
    Matmul(a.data(), b.data(), parts.data(), m, split, k, n, n, false);
    Matmul(a.data(), b.data() + split, parts.data() + split, m, n - split, k, n, n, false);
  }
  return std::memcmp(whole.data(), parts.data(), whole.size() * sizeof(T)) == 0;
}

template <typename T>
bool RowSplitsExactAt(int64_t align) {
  return SameBitsSplit<T>(2 * align + 1, 97, 160, align, true) &&
         SameBitsSplit<T>(5 * align + 3, 61, 600, 2 * align, true);
}

}  // namespace

int64_t BlasRowSplitAlign() {
  static const int64_t align = [] {
    UseSingleThreadedBlas();
    for (int64_t rows : {8, 16, 24}) {
      if (RowSplitsExactAt<float>(rows) && RowSplitsExactAt<double>(rows)) return rows;
    }
    return int64_t{48};
  }();
  return align;
}

bool BlasColumnSplitsExact() {
  static const bool exact = [] {
    UseSingleThreadedBlas();
    return SameBitsSplit<float>(64, 3025, 144, 1536, false) &&
           SameBitsSplit<float>(16, 3136, 128, 1584, false) &&
           SameBitsSplit<double>(64, 3025, 144, 1536, false);
  }();
  return exact;
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
