// The workspace plan: byte offsets for a program's temp buffers in the one workspace the
// entry function gets. A temp reuses the space of one that died before it was defined
// when their sizes are the same expression (sizes may be symbolic, so "same" is equality
// of SymExprs, not comparison of numbers).
#ifndef GRAPHJIT_COMPILER_LOWER_BUFFER_PLAN_H_
#define GRAPHJIT_COMPILER_LOWER_BUFFER_PLAN_H_

#include <vector>

#include "compiler/lower/kernel_ir.h"

namespace graphjit::compiler {

// Sets workspace_offset of every kTemp buffer of `program` and its workspace_bytes. A
// temp lives from the first kernel that writes it to the last that reads it; a temp no
// kernel touches takes no space. Slots are 64-byte aligned.
void PlanWorkspace(Program* program);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_BUFFER_PLAN_H_
