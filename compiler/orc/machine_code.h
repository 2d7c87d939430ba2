// Machine-code helpers of the JIT engine: a pool of host TargetMachines shared by the
// optimizer, ORC's compile layer and the assembly printer, and assembly emission.
#ifndef GRAPHJIT_COMPILER_ORC_MACHINE_CODE_H_
#define GRAPHJIT_COMPILER_ORC_MACHINE_CODE_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/orc/code_tier.h"
#include "llvm/ExecutionEngine/Orc/IRCompileLayer.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace graphjit::compiler::jit_internal {

// A TargetMachine is not thread-safe (it caches subtargets and resets its options per
// function), and creating one costs ~3 ms. The pool hands each compile its own machine
// and keeps it for the next one, so it grows to the peak number of concurrent users.
class TargetMachinePool {
 public:
  explicit TargetMachinePool(llvm::orc::JITTargetMachineBuilder builder);

  // Exclusive use of one machine until the lease is destroyed.
  class Lease {
   public:
    Lease(TargetMachinePool* pool, std::unique_ptr<llvm::TargetMachine> machine)
        : pool_(pool), machine_(std::move(machine)) {}
    Lease(Lease&& other) = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    llvm::TargetMachine& operator*() const { return *machine_; }
    llvm::TargetMachine* operator->() const { return machine_.get(); }

   private:
    TargetMachinePool* pool_;
    std::unique_ptr<llvm::TargetMachine> machine_;
  };

  absl::StatusOr<Lease> Acquire();
  const llvm::orc::JITTargetMachineBuilder& builder() const { return builder_; }

 private:
  void Release(std::unique_ptr<llvm::TargetMachine> machine);

  const llvm::orc::JITTargetMachineBuilder builder_;
  // A std::mutex, not absl::Mutex: Debian's abseil is built without TSan, which would
  // then not see a machine handed from one compile thread to the next and report the
  // machine's own state as racy.
  std::mutex mutex_;
  std::vector<std::unique_ptr<llvm::TargetMachine>> idle_;  // guarded by mutex_
};

// Marks `module` for code generation at `tier` (a module flag the compile function reads:
// ORC hands it nothing else).
void SetModuleTier(llvm::Module& module, CodeTier tier);

// ORC's compile function: IR -> object file with a pooled machine of the module's tier
// (`optimized` at -O3, `baseline` at -O0), so concurrent materializations neither share
// a machine nor build a new one per module (which is what LLVM's ConcurrentIRCompiler
// does), and a machine never switches optimization levels (at -O0 codegen turns the
// machine's fast instruction selector on for good).
std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler> MakePooledCompiler(
    std::shared_ptr<TargetMachinePool> optimized, std::shared_ptr<TargetMachinePool> baseline);

// Makes -O0 code generation (the baseline tier) allocate registers as -O2 does (LLVM's
// `-optimize-regalloc`: live intervals, coalescing, the greedy allocator) while keeping
// the fast instruction selector. The fast allocator spills every value live across a
// block edge, so the vector loops the baseline emits reloaded their accumulators,
// broadcasts and pointers from the stack on every iteration. The option is LLVM's
// process-wide flag; -O1 and up allocate this way already, so only -O0 machines change.
// Left alone when the process has set it (e.g. through llvm::cl::ParseCommandLineOptions).
void AllocateRegistersAtO0();

// The assembly text of `module` (compiled from a clone: codegen rewrites the IR it runs on).
absl::StatusOr<std::string> EmitAssembly(const llvm::Module& module, llvm::TargetMachine& machine);

}  // namespace graphjit::compiler::jit_internal

#endif  // GRAPHJIT_COMPILER_ORC_MACHINE_CODE_H_
