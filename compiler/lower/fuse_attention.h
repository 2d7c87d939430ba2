// fuse_attention: attention's five kernels as one kAttention kernel (an online softmax).
//
// Lowering gives softmax(q @ K^T * scale) @ V as five kernels over a row of scores:
//   scores = q @ K^T (dot); mx = max_j x_j; p_j = exp(x_j - mx); l = sum_j p_j; o = p @ V
// where x_j is an expression of the score (the scale, a mask). Each kernel passes over the
// row, and the scores and p are stored and read back between them. The fused kernel
// computes, per row, the scores of a block of positions, their x, and folds them into a
// running max, sum and o (rescaled when the max grows), so the row is produced and
// consumed in cache and the max and p buffers disappear. The division by l stays where
// lowering put it (sink_row_scale moved it past the P @ V), reading l and o.
#ifndef GRAPHJIT_COMPILER_LOWER_FUSE_ATTENTION_H_
#define GRAPHJIT_COMPILER_LOWER_FUSE_ATTENTION_H_

#include "compiler/lower/kernel_ir.h"

namespace graphjit::compiler {

// Replaces every run of consecutive kernels of this shape with one kAttention kernel: a
// kDot matmul into a temp S [batch.., M, N]; optionally a pointwise x(S[.., m, j]) into a
// temp X over the same row (lowering materializes x when it reads another buffer, say a
// mask); a max reduction over the row of x (inlined, or X) into a temp Mx; a pointwise
// exp(x - Mx) into a temp P [batch.., M, N] with the same x; a sum of the row of P; a
// matmul P @ V over N with a constant width of V (at most 1024). S, X, Mx and P must be
// temps no other kernel reads (S becomes the fused kernel's scratch; the others are
// dropped from the buffers), the values f32 or f64. Kernel names are renumbered
// (k<position>_<what>). Must not fire on anything else: another reader of p or the max,
// a different x in the max and the exp, a reduction over another axis.
void FuseAttention(Program* program);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_FUSE_ATTENTION_H_
