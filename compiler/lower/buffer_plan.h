// The workspace plan: byte offsets for a program's temp buffers in the one workspace the
// entry function gets. A temp reuses the space of one that died before it was defined
// when their sizes are the same expression (sizes may be symbolic, so "same" is equality
// of SymExprs, not comparison of numbers).
#ifndef GRAPHJIT_COMPILER_LOWER_BUFFER_PLAN_H_
#define GRAPHJIT_COMPILER_LOWER_BUFFER_PLAN_H_

#include <cstdint>
#include <vector>

#include "compiler/lower/kernel_ir.h"

namespace graphjit::compiler {

// A workspace begins with this many bytes for the runtime: which program ran on it last
// and for which symbol values (compiler/compiled/kernel_set.h), so a kernel that stores
// the same constants every call (Kernel::once) runs only when they may have been
// overwritten.
inline constexpr int64_t kWorkspaceHeaderBytes = 64;

// Sets workspace_offset of every kTemp buffer of `program` and its workspace_bytes. A
// temp lives from the first kernel that writes it to the last that reads it; a temp no
// kernel touches takes no space; a temp a once kernel writes (constant_fills.h) keeps a
// slot of its own, which no other temp shares. Slots are 64-byte aligned and follow the
// header (kWorkspaceHeaderBytes; none when no temp takes space).
void PlanWorkspace(Program* program);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_BUFFER_PLAN_H_
