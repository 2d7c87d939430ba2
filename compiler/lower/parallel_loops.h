// The mark_parallel lowering step: which loop of each kernel may be split into ranges
// that run on different threads (compiler/compiled/kernel_set.h runs them on the runtime's
// thread pool), and what one iteration of it costs.
#ifndef GRAPHJIT_COMPILER_LOWER_PARALLEL_LOOPS_H_
#define GRAPHJIT_COMPILER_LOWER_PARALLEL_LOOPS_H_

#include "compiler/lower/kernel_ir.h"

namespace graphjit::compiler {

// Sets Kernel::parallel_loop, parallel_work and parallel_align. The loop is the outermost
// one (past loops of constant extent 1) whose iterations write disjoint output elements,
// never a reduced one, so every element is computed by one thread in the order one thread
// would compute it: results are bit-identical for any split. Loops nests and scans: any
// loop of a kernel with the default store indices and an output written in no input's
// place; matrix products: batch, M, then N (N only where codegen keeps no whole output row
// in registers); attention: batch and M (each row's online softmax stays whole); products
// through OpenBLAS: batch, then N where it is at least twice M (a convolution's), else M,
// each part one OpenBLAS call (OpenBLAS itself runs single-threaded).
void MarkParallelLoops(Program* program);

// The work of the whole kernel in the units of Kernel::parallel_work (an i64 expression of
// the program's symbols), for kernels with or without a parallel loop: what the host
// balances whole kernels across threads by (compiler/compiled/kernel_set.h).
ExprPtr KernelWork(const Kernel& kernel);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_PARALLEL_LOOPS_H_
