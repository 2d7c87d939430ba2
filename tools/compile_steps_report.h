// graphjit-dump --compile-steps: LLVM's steps for each compiled module of a graph, and
// for an empty module (the fixed cost), timed by compiler::TimeCompileSteps.
#ifndef GRAPHJIT_TOOLS_COMPILE_STEPS_REPORT_H_
#define GRAPHJIT_TOOLS_COMPILE_STEPS_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/orc/code_tier.h"

namespace graphjit::tools {

// The table for `llvm_ir` (the modules' texts one after the other, as --stage=llvm
// prints them), each module compiled `runs` times at `tier` (medians per step);
// `labels` names the modules (their kernels), or is empty. `top` IR and machine passes
// are listed per module.
absl::StatusOr<std::string> CompileStepsReport(const std::string& llvm_ir,
                                               const std::vector<std::string>& labels,
                                               compiler::CodeTier tier, int runs, int top);

}  // namespace graphjit::tools

#endif  // GRAPHJIT_TOOLS_COMPILE_STEPS_REPORT_H_
