// Host functions that JIT-compiled code calls (registered with the JIT engine by
// compiler/codegen/native_code.cc). C linkage and plain pointer/integer arguments, so
// codegen can declare them without C++ name mangling.
#ifndef GRAPHJIT_RUNTIME_JIT_HELPERS_H_
#define GRAPHJIT_RUNTIME_JIT_HELPERS_H_

#include <cstdint>
#include <string>

extern "C" {

// c[m, n] = a[m, k] @ b[k, n] (b stored [n, k] when transpose_b != 0), row-major: a
// contiguous, rows of b ldb elements apart and rows of c ldc apart (n, k and n for whole
// matrices; a block of columns of wider ones when a kernel's range splits N); c is
// overwritten. Through OpenBLAS: gemv when m or n is 1, gemm otherwise. Used by
// KernelKind::kExternMatmul, one call per batch or range.
void graphjit_rt_matmul_f32(const float* a, const float* b, float* c, int64_t m, int64_t n,
                            int64_t k, int64_t ldb, int64_t ldc, int32_t transpose_b);
void graphjit_rt_matmul_f64(const double* a, const double* b, double* c, int64_t m, int64_t n,
                            int64_t k, int64_t ldb, int64_t ldc, int32_t transpose_b);

}  // extern "C"

namespace graphjit::runtime {

// Makes OpenBLAS run each call on the calling thread, for good: graphjit's thread pool
// then splits BLAS kernels itself (KernelSet), and OpenBLAS's own threads would take the
// cores the pool's parts run on.
void UseSingleThreadedBlas();

// Whether OpenBLAS computes a block of columns of a product with the bits it gives them
// in the whole product (checked once per process on two convolution-shaped products,
// f32 and f64, split at a multiple of 48 columns): its AVX-512 kernels do, its Haswell
// ones do not (the column count changes how they sum). Where it does, a product with
// many more columns than rows splits by columns across threads (compiler/lower/
// parallel_loops.h), else by rows.
bool BlasColumnSplitsExact();

// The fewest rows (8, 16 or 24; else 48) at whose multiples OpenBLAS computes a block of a
// product's rows with the bits it gives them in the whole product (checked once per
// process on f32 and f64 products over one and two blocks of k, split at one and two
// multiples): its kernels sum each element the same way whatever its block, except in the
// remainder block of rows past its unroll. 24 for its Haswell kernels (Zen 3), where 48
// split a 49-row product 48 / 1 across two threads. A product's rows split at multiples of
// it (compiler/lower/parallel_loops.h).
int64_t BlasRowSplitAlign();

// OpenBLAS's name for the kernels it runs (openblas_get_corename: "Haswell",
// "Cooperlake", ...), which OPENBLAS_CORETYPE can force.
std::string BlasCoreName();
// Whether the host has AVX-512 and OpenBLAS runs narrower kernels on it (AVX2's: an old
// OpenBLAS that does not know the CPU, or OPENBLAS_CORETYPE=Haswell): generated AVX-512
// products then beat it on every shape (compiler/lower/matmul_strategy.h).
bool BlasNarrowerThanHost();

}  // namespace graphjit::runtime

#endif  // GRAPHJIT_RUNTIME_JIT_HELPERS_H_
