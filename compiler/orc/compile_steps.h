// The steps of compiling one LLVM module into callable code, timed one by one: what a
// cache miss pays LLVM for, split so the code tiers' choices (which passes, which
// instruction selector and register allocator, pooled TargetMachines, modules per miss)
// rest on measurements. `graphjit-dump --compile-steps` prints them for the modules of
// any graph and for an empty module (docs/PERFORMANCE.md, "Where a compile's time goes").
//
// No LLVM types here, so the tools can include it.
#ifndef GRAPHJIT_COMPILER_ORC_COMPILE_STEPS_H_
#define GRAPHJIT_COMPILER_ORC_COMPILE_STEPS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/orc/code_tier.h"

namespace graphjit::compiler {

// Wall seconds per step.
struct CompileSteps {
  double parse = 0;  // IR text -> module (not part of a real compile)
  // A TargetMachine for the host and its subtarget for the module's functions (the
  // engine pools machines, so a real compile pays this once per thread and tier).
  double target_machine = 0;
  double pass_setup = 0;     // PassBuilder, analysis managers, the pass list
  double ir_passes = 0;      // running the IR pipeline (O2, or the baseline's passes)
  double isel = 0;           // instruction selection (SelectionDAG, or FastISel at -O0)
  double regalloc = 0;       // register allocation: greedy and its analyses, or fast
  double other_codegen = 0;  // the other machine passes and the object file
  double link = 0;           // JITLink and the lookup of the entries
  int64_t instructions = 0;  // LLVM IR instructions as given
  int64_t optimized_instructions = 0;
  // Every IR pass and analysis, and every machine pass, with its exclusive wall seconds
  // (nested passes and analyses not counted in their parent), most expensive first.
  std::vector<std::pair<std::string, double>> ir_pass_seconds, machine_pass_seconds;

  double total() const {
    return target_machine + pass_setup + ir_passes + isel + regalloc + other_codegen + link;
  }
};

// Compiles `llvm_ir` (one module's text, as `graphjit-dump --stage=llvm` prints it; ""
// for an empty module) at `tier` for the host, as the JIT engine would (its library info,
// entries kept external and everything else internal), timing each step. The entries are
// the defined functions no other function calls. InvalidArgument for IR that does not
// parse or verify.
//
// Uses LLVM's process-wide pass timers, which LLVM never turns off once made: after the
// first call every machine-code pass of the process (the engine's compiles too) starts
// and stops a timer, and a program that calls llvm_shutdown() prints their report. So
// call it from a process that exists to measure (graphjit-dump --compile-steps), while
// nothing else compiles; it is not part of the engine's path.
absl::StatusOr<CompileSteps> TimeCompileSteps(const std::string& llvm_ir, CodeTier tier);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_ORC_COMPILE_STEPS_H_
