// mark_constant_fills: kernels that write the same constants on every call - a padded
// buffer's border of zeros, a filled constant - run once per workspace instead of once
// per call.
//
// A convolution's pad is lowered as a buffer whose interior its producer writes and whose
// border `full` kernels fill with zeros; those fills wrote the same zeros on every call,
// a column of them one element per row (one cache line each): 72 kernels and 0.5-1.6 ms
// per call on the torchvision models. Marked once, the runtime runs them on a call only
// when the workspace was last used by another program or for other symbol values
// (compiler/compiled/kernel_set.h), and the workspace plan shares their buffers' bytes only
// among temps with the same constants (compiler/lower/buffer_plan.h), so nothing else
// overwrites the constants in between.
#ifndef GRAPHJIT_COMPILER_LOWER_CONSTANT_FILLS_H_
#define GRAPHJIT_COMPILER_LOWER_CONSTANT_FILLS_H_

#include "compiler/lower/kernel_ir.h"

namespace graphjit::compiler {

// A buffer whose once fills would store less than 30% of its (constant) elements - the
// border of a large map - keeps them per call (kMinOnceShare in constant_fills.cc): its
// bytes are then shared with other temps, warm in the caches, where a buffer of its own is
// cold on every call.
//
// Sets Kernel::once on each kPointwise kernel whose value is a constant and which stores
// to a temp buffer no other kernel stores to at an element it stores to: in some dim, the
// ranges of the fill's and every other writer's store index (IndexBounds over their
// loops) are known and disjoint (a concat's slices, a padded buffer's interior and
// border; a symbolic batch dim is not such a dim, the image's are). Must not fire on a fill of an
// input or output buffer, on a fill that another kernel overwrites (or may: unbounded or symbolic
// indices), or on a kernel that loads anything.
void MarkConstantFills(Program* program);

// Whether `k` stores a constant into a temp buffer and loads nothing (a kPointwise kernel
// whose value is a constant): a fill, which mark_constant_fills and narrow_fills consider.
bool IsConstantFill(const Program& program, const Kernel& k);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_CONSTANT_FILLS_H_
