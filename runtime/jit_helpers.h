// Host functions that JIT-compiled code calls (registered with the JIT engine by
// compiler/codegen/native_code.cc). C linkage and plain pointer/integer arguments, so
// codegen can declare them without C++ name mangling.
#ifndef GRAPHJIT_RUNTIME_JIT_HELPERS_H_
#define GRAPHJIT_RUNTIME_JIT_HELPERS_H_

#include <cstdint>

extern "C" {

// c[m, n] = a[m, k] @ b[k, n] (b stored [n, k] when transpose_b != 0), row-major and
// contiguous; c is overwritten. Through OpenBLAS: gemv when m or n is 1, gemm otherwise.
// Used by KernelKind::kExternMatmul, one call per batch.
void graphjit_rt_matmul_f32(const float* a, const float* b, float* c, int64_t m, int64_t n,
                            int64_t k, int32_t transpose_b);
void graphjit_rt_matmul_f64(const double* a, const double* b, double* c, int64_t m, int64_t n,
                            int64_t k, int32_t transpose_b);

}  // extern "C"

namespace graphjit::runtime {

// Makes OpenBLAS run each call on the calling thread, for good: graphjit's thread pool
// then splits BLAS kernels itself (KernelSet), and OpenBLAS's own threads would take the
// cores the pool's parts run on.
void UseSingleThreadedBlas();

}  // namespace graphjit::runtime

#endif  // GRAPHJIT_RUNTIME_JIT_HELPERS_H_
