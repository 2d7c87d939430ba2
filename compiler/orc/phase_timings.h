// The compiler's one record of compile time: wall seconds (steady clock, ir/clock.h) per
// phase. Each layer fills the phases it runs: the JIT engine optimize and codegen, native
// code ir_build, CompiledGraph passes and lower. No LLVM types, so every part of the
// compiler (compiler/jit included) can share it.
#ifndef GRAPHJIT_COMPILER_ORC_PHASE_TIMINGS_H_
#define GRAPHJIT_COMPILER_ORC_PHASE_TIMINGS_H_

namespace graphjit::compiler {

struct PhaseTimings {
  double passes = 0;    // graph passes
  double lower = 0;     // graph -> kernel program
  double ir_build = 0;  // kernel program -> llvm::Module
  double optimize = 0;  // verify + the new-PM O2 pipeline with vectorizers
  double codegen = 0;   // machine code, link, symbol lookup (the assembly text is not in it)
  // ir_build, optimize and codegen are summed over the kernels compiled, which compile in
  // parallel: with several threads they can add up to more than the wall time.
  double total() const { return passes + lower + ir_build + optimize + codegen; }
  PhaseTimings& operator+=(const PhaseTimings& o) {
    passes += o.passes;
    lower += o.lower;
    ir_build += o.ir_build;
    optimize += o.optimize;
    codegen += o.codegen;
    return *this;
  }
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_ORC_PHASE_TIMINGS_H_
