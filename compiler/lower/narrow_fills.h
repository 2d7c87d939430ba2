// narrow_fills: a fill of constants stores only what some kernel reads.
//
// A pad's border is filled with zeros by `full` kernels on every call where it is thin
// (mark_constant_fills), and lowering fills all of it, also rows and columns no window
// reads: a stride-2 convolution over an even side never reads its pad's last row and
// column, and of the 16 columns align_padded_rows puts left of a row (so its interior
// starts on a vector) a 3 x 3 window reads one. mobilenet_v2's fills, one thread, sum of
// the profile's medians alternating: 145-160 -> 113-126 us (72 -> 62 kernels);
// efficientnet_b0 127-156 -> 109-121.
#ifndef GRAPHJIT_COMPILER_LOWER_NARROW_FILLS_H_
#define GRAPHJIT_COMPILER_LOWER_NARROW_FILLS_H_

#include "compiler/lower/kernel_ir.h"

namespace graphjit::compiler {

// For each kPointwise kernel storing a constant (and loading nothing) into a temp buffer
// at indices that are each a loop variable plus a constant (or a constant), narrows every
// dim's range to the hull of the indices any kernel loads the buffer at in that dim
// (IndexBounds over its loops; a dim whose reads are not all bounded keeps its range), and
// drops the fill where that leaves nothing. Elements outside every reader's hull are never
// read, so their values do not matter. Must not fire on a fill of an input or output, on
// indices of another form (a loop variable scaled or used twice), or along a dim some
// reader loads at an unknown index (a loaded or symbolic one), nor on a buffer an OpenBLAS
// product or an attention kernel reads (their loads do not bound their reads).
void NarrowFills(Program* program);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_NARROW_FILLS_H_
