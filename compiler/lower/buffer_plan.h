// The workspace plan: byte offsets for a program's temp buffers in the one workspace the
// entry function gets, reusing the bytes of temps that died. A call's kernels write into
// memory the previous kernels just touched, still in the core's caches, rather than into
// a fresh buffer each (mnasnet0_5: 15.4 MB of temps planned by equal sizes alone, 8.8 MB
// by size; 2.6 -> 2.2 ms per call on one thread).
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
// temp lives from the first kernel that touches it to the last, and shares
// no byte with a temp whose life overlaps or directly follows its own (kernel i + 1 may
// run beside kernel i: compiler/compiled/step_phases.h); a temp no kernel touches takes
// no space. Temps of constant sizes are placed first, largest first, each in the smallest
// gap that fits ("greedy by size", as TFLite's arena planner). Then, in slots: temps
// whose sizes depend on symbols (a slot is shared only by equal size expressions: sizes
// over symbols cannot be compared), and temps a once kernel fills (constant_fills.h),
// which share a slot only with temps of the same shape whose once kernels store the same
// constants at the same elements (padded inputs of equal shape and pads), so that the
// constants stay true across calls. Offsets are 64-byte aligned and follow the header
// (kWorkspaceHeaderBytes; none when no temp takes space).
void PlanWorkspace(Program* program);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_BUFFER_PLAN_H_
