// Machine-code helpers of the JIT engine: a pool of host TargetMachines shared by the
// optimizer, ORC's compile layer and the assembly printer, and assembly emission.
#ifndef GRAPHJIT_COMPILER_ORC_MACHINE_CODE_H_
#define GRAPHJIT_COMPILER_ORC_MACHINE_CODE_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/orc/code_tier.h"
#include "llvm/ADT/StringMap.h"
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

// The host's widest vector registers in bytes (64 with AVX-512, 32 with AVX, else 16).
int HostVectorBytes(const llvm::StringMap<bool>& host_features);

// One pool per code tier and target: the host's, or the host without AVX-512 (machine
// code of at most 32-byte vectors: AVX2 on an AVX-512 host) or also preferring 128-bit
// vectors (16). Pools are made on first use; the set is shared by the engine and ORC's
// compile function.
class TargetMachinePools {
 public:
  // `host`: the builder as LLJIT adjusted it (the host CPU and features, its code and
  // relocation model); `host_vector_bytes` as HostVectorBytes says.
  TargetMachinePools(llvm::orc::JITTargetMachineBuilder host, int host_vector_bytes);
  // The pool of `tier` for code of at most `vector_bytes` vectors (0: the host's; a
  // width at or above the host's is the host's).
  TargetMachinePool& Pool(CodeTier tier, int vector_bytes);
  const llvm::orc::JITTargetMachineBuilder& host() const { return host_; }

 private:
  const llvm::orc::JITTargetMachineBuilder host_;
  const int host_vector_bytes_;
  std::mutex mutex_;
  // (tier, vector bytes) -> pool, never removed (a pool's address stays valid).
  std::map<std::pair<CodeTier, int>, std::unique_ptr<TargetMachinePool>> pools_;  // mutex_
};

// Marks `module` for code generation at `tier` and `vector_bytes` (module flags the
// compile function reads: ORC hands it nothing else).
void SetModuleTarget(llvm::Module& module, CodeTier tier, int vector_bytes);

// ORC's compile function: IR -> object file with a pooled machine of the module's tier
// (-O3 or -O0) and target, so concurrent materializations neither share a machine nor
// build a new one per module (which is what LLVM's ConcurrentIRCompiler does), and a
// machine never switches optimization levels (at -O0 codegen turns the machine's fast
// instruction selector on for good).
std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler> MakePooledCompiler(
    std::shared_ptr<TargetMachinePools> pools);

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
