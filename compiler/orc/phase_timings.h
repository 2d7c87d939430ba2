// The compiler's one record of compile time: wall seconds (steady clock, ir/clock.h) per
// phase. Each layer fills the phases it runs: the JIT engine optimize and codegen, native
// code ir_build, CompiledGraph passes and lower. No LLVM types, so every part of the
// compiler (compiler/jit included) can share it.
#ifndef GRAPHJIT_COMPILER_ORC_PHASE_TIMINGS_H_
#define GRAPHJIT_COMPILER_ORC_PHASE_TIMINGS_H_

#include <cstdint>

namespace graphjit::compiler {

struct PhaseTimings {
  double passes = 0;  // graph passes
  double lower = 0;   // graph -> kernel program
  // The disk cache's graph-level record (compiler/compiled/graph_record.h): its key, and
  // reading it (a warm start, instead of passes and lower) or writing it after a compile.
  double record = 0;
  double ir_build = 0;  // kernel program -> llvm::Module
  double optimize = 0;  // verify + the new-PM O2 pipeline with vectorizers
  double codegen = 0;   // machine code, link, symbol lookup (the assembly text is not in it)
  // Not times, but what the IR passes worked on: LLVM IR instructions as emitted and
  // after the passes (OrcEngine::Compile; summed like the times).
  int64_t ir_instructions = 0;
  int64_t optimized_instructions = 0;
  // ir_build, optimize and codegen are summed over the kernels compiled, which compile in
  // parallel: with several threads they can add up to more than the wall time.
  double total() const { return passes + lower + record + ir_build + optimize + codegen; }
  PhaseTimings& operator+=(const PhaseTimings& o) {
    passes += o.passes;
    lower += o.lower;
    record += o.record;
    ir_build += o.ir_build;
    optimize += o.optimize;
    codegen += o.codegen;
    ir_instructions += o.ir_instructions;
    optimized_instructions += o.optimized_instructions;
    return *this;
  }
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_ORC_PHASE_TIMINGS_H_
