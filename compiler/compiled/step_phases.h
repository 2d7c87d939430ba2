// Which kernels of a program may run at the same time (KernelSet's phased step,
// runtime/phased_job.h): consecutive kernels that touch no memory another of them
// writes share a phase, so their calls (whole or in ranges) can go to different threads
// with one synchronization for all of them (the decode layer's q / k / v projections, w1
// beside w3) rather than one per kernel.
#ifndef GRAPHJIT_COMPILER_COMPILED_STEP_PHASES_H_
#define GRAPHJIT_COMPILER_COMPILED_STEP_PHASES_H_

#include <vector>

#include "compiler/lower/kernel_ir.h"

namespace graphjit::compiler {

// The phase of each kernel (program order; phases are consecutive runs of kernels, the
// first 0). `touched[k]` is every program buffer kernel k reads or writes (its unit's
// buffers); it writes KernelWrites. Two kernels conflict when one writes memory the
// other touches: the same buffer, an output written in place of that input, or
// workspace temps whose byte ranges may overlap (the workspace plan reuses memory; temps
// whose offsets differ by a constant compare by it, a constant range lies below one at a
// sum of sizes plus at least its end, and any other offset or a size that depends on
// symbols counts as overlapping every temp).
std::vector<int> StepPhases(const Program& program, const std::vector<std::vector<int>>& touched);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_COMPILED_STEP_PHASES_H_
