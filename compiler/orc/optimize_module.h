// The JIT engine's IR optimizer: new-PM O2 with loop and SLP vectorization, or the
// baseline tier's short pass list; glibc's libmvec as the vector math library, and libm
// declarations marked as pure.
#ifndef GRAPHJIT_COMPILER_ORC_OPTIMIZE_MODULE_H_
#define GRAPHJIT_COMPILER_ORC_OPTIMIZE_MODULE_H_

#include "compiler/orc/code_tier.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

namespace graphjit::compiler::jit_internal {

// Library info for `triple`. With `use_libmvec`, calls to exp/log/pow/sin/... (and tanh,
// which LLVM 19's libmvec table lacks although glibc ships it) map to libmvec's vector
// variants, so the loop vectorizer can vectorize loops that call them. Build once and
// copy: the copy is cheap, the construction sorts the tables.
llvm::TargetLibraryInfoImpl MakeTargetLibraryInfo(const llvm::Triple& triple, bool use_libmvec);

// Marks the libm declarations of `module` (exp, tanh, sqrtf, ...) memory(none), nounwind
// and willreturn: without that the vectorizers treat each call as a possible store and
// leave the loop alone. Like -fno-math-errno: errno is never set by graphjit's math.
void MarkMathDeclarations(llvm::Module& module);

// `tier`'s pipeline, set up (the PassBuilder, the analysis managers, the pass list) and
// then run on a module: O2, or the baseline's few passes. `machine` supplies the cost
// model (AVX2 widths, FMA) and must not be used by another thread meanwhile;
// `library_info` must outlive the optimizer. `callbacks`, if given, instrument the passes (and must
// outlive the optimizer). Set-up and run are separate so compile_steps can time them apart.
class ModuleOptimizer {
 public:
  ModuleOptimizer(llvm::TargetMachine& machine, const llvm::TargetLibraryInfoImpl& library_info,
                  CodeTier tier, llvm::PassInstrumentationCallbacks* callbacks = nullptr);
  void Run(llvm::Module& module) { passes_.run(module, module_analyses_); }

 private:
  // Declared in this order so they are destroyed module-first, as LLVM's examples do.
  llvm::LoopAnalysisManager loop_analyses_;
  llvm::FunctionAnalysisManager function_analyses_;
  llvm::CGSCCAnalysisManager cgscc_analyses_;
  llvm::ModuleAnalysisManager module_analyses_;
  llvm::PassBuilder builder_;
  llvm::ModulePassManager passes_;
};

// Runs `tier`'s pipeline in place (a ModuleOptimizer set up for this module alone).
void OptimizeModule(llvm::Module& module, llvm::TargetMachine& machine,
                    const llvm::TargetLibraryInfoImpl& library_info, CodeTier tier);

}  // namespace graphjit::compiler::jit_internal

#endif  // GRAPHJIT_COMPILER_ORC_OPTIMIZE_MODULE_H_
