// The order_loops lowering step: which loop of a pointwise kernel runs innermost, the one
// codegen's vectors (and LLVM's loop vectorizer) run along, and which short rows merge.
#ifndef GRAPHJIT_COMPILER_LOWER_ORDER_LOOPS_H_
#define GRAPHJIT_COMPILER_LOWER_ORDER_LOOPS_H_

#include "compiler/lower/kernel_ir.h"

namespace graphjit::compiler {

// Moves one loop of each pointwise kernel innermost where that makes more of its memory
// accesses consecutive than the innermost loop does. An access (each distinct load, and
// the store) scores +1 for a loop whose variable steps it by one element (its last index
// is the variable plus terms without it, no other index uses it) and -1 for a loop whose
// variable moves it otherwise (a gather or scatter per lane); the loop with the highest
// score, of extent >= 8 or symbolic, goes innermost when it beats the innermost loop's,
// the others keep their order. A transposed copy (one load, one store) ties and stays; a
// depthwise convolution written transposed (NCHW read through 49 taps, NHWC written, as
// ConvNeXt's blocks export it) turns to run along the rows it reads.
//
// Then, where the innermost loop is a short constant row (under 64: a CNN's late maps)
// and every access (the store, each load) walks the trailing loops as whole rows of its
// buffer ([.., h, w] over dims [.., H', W]) or not at all (a per-channel bias), those loops
// run as one ([C, 7, 7] as 49 or 1152 x 49 elements, the first loop kept), its variable
// split back by division and remainder in the indices, which still address consecutive
// elements: vectors no longer end with each row.
//
// Each element is still computed once, from the same operands by the same instructions,
// so the results are bit-identical; only the order of the iterations changes. Kernels
// that read the buffer they write (in place) keep their order. Runs after
// simplify_indices (strides are read off simplified indices) and before mark_parallel.
void OrderLoops(Program* program);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_ORDER_LOOPS_H_
