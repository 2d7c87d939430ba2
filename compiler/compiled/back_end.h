// The back end: a lowered program's kernels to linked native code (KernelSet::Compile),
// as a list of named steps run by the pass manager the graph passes and lowering use
// (ir/pass_manager.h), each timed (KernelSetStats::steps, graphjit-dump --stats) and
// printable after (graphjit-dump --print-after=group_modules):
//   canonicalize   each kernel as a canonical unit with a content key
//                  (compiler/lower/kernel_unit.h), or bound from a graph record's
//                  bindings, whose units are then made only for kernels that compile
//   plan_calls     each kernel's call: its buffers and symbols, the loop it splits over
//                  threads, its step phase (step_phases.h)
//   find_live      the distinct kernels live in the KernelStore
//   group_modules  the missing ones grouped into modules (kernel_modules.h)
//   get_modules    each module live, loaded from the disk or the remote cache, or compiled
//                  (the compiles in parallel) and stored in them
//   link           the modules' kernels into the KernelStore; each call bound to its code
// No step changes the program, so the kernel-program verifier has run by now (lowering).
#ifndef GRAPHJIT_COMPILER_COMPILED_BACK_END_H_
#define GRAPHJIT_COMPILER_COMPILED_BACK_END_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/compiled/kernel_set.h"
#include "ir/pass_manager.h"

namespace graphjit::compiler {

struct BackEndState;  // back_end.cc: what the steps pass along

class BackEnd {
 public:
  // The steps above, in order.
  static const std::vector<std::string>& StepNames();
  // Runs them on `program`; KernelSet::Compile is this.
  static absl::StatusOr<std::unique_ptr<KernelSet>> Compile(const Program& program,
                                                            const KernelSetOptions& options);

 private:
  // The one list of steps that StepNames and Compile both read.
  static ir::PassManager<BackEndState> Steps();
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_COMPILED_BACK_END_H_
