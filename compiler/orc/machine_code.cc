// TargetMachine pool, ORC compile function and assembly printer of the JIT engine.
#include "compiler/orc/machine_code.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Cloning.h"

namespace graphjit::compiler::jit_internal {

TargetMachinePool::TargetMachinePool(llvm::orc::JITTargetMachineBuilder builder)
    : builder_(std::move(builder)) {}

TargetMachinePool::Lease::~Lease() {
  if (machine_ != nullptr) pool_->Release(std::move(machine_));
}

absl::StatusOr<TargetMachinePool::Lease> TargetMachinePool::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      std::unique_ptr<llvm::TargetMachine> machine = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(machine));
    }
  }
  // createTargetMachine() is not const, and building outside the lock lets two threads
  // that both find the pool empty do it at the same time.
  llvm::orc::JITTargetMachineBuilder builder = builder_;
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine = builder.createTargetMachine();
  if (!machine) {
    return absl::InternalError(
        absl::StrCat("cannot create a TargetMachine: ", llvm::toString(machine.takeError())));
  }
  return Lease(this, std::move(*machine));
}

void TargetMachinePool::Release(std::unique_ptr<llvm::TargetMachine> machine) {
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.push_back(std::move(machine));
}

namespace {

constexpr const char* kTierFlag = "graphjit.tier";

CodeTier ModuleTier(const llvm::Module& module) {
  auto* flag = llvm::mdconst::extract_or_null<llvm::ConstantInt>(module.getModuleFlag(kTierFlag));
  return flag != nullptr && flag->getZExtValue() == static_cast<uint64_t>(CodeTier::kBaseline)
             ? CodeTier::kBaseline
             : CodeTier::kOptimized;
}

class PooledCompiler : public llvm::orc::IRCompileLayer::IRCompiler {
 public:
  PooledCompiler(std::shared_ptr<TargetMachinePool> optimized,
                 std::shared_ptr<TargetMachinePool> baseline)
      : IRCompiler(
            llvm::orc::irManglingOptionsFromTargetOptions(optimized->builder().getOptions())),
        optimized_(std::move(optimized)),
        baseline_(std::move(baseline)) {}

  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> operator()(llvm::Module& module) override {
    TargetMachinePool& pool = ModuleTier(module) == CodeTier::kBaseline ? *baseline_ : *optimized_;
    absl::StatusOr<TargetMachinePool::Lease> machine = pool.Acquire();
    if (!machine.ok()) {
      return llvm::make_error<llvm::StringError>(std::string(machine.status().message()),
                                                 llvm::inconvertibleErrorCode());
    }
    llvm::orc::SimpleCompiler compile(**machine);
    return compile(module);
  }

 private:
  std::shared_ptr<TargetMachinePool> optimized_;
  std::shared_ptr<TargetMachinePool> baseline_;
};

}  // namespace

void SetModuleTier(llvm::Module& module, CodeTier tier) {
  module.addModuleFlag(llvm::Module::Error, kTierFlag, static_cast<uint32_t>(tier));
}

std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler> MakePooledCompiler(
    std::shared_ptr<TargetMachinePool> optimized, std::shared_ptr<TargetMachinePool> baseline) {
  return std::make_unique<PooledCompiler>(std::move(optimized), std::move(baseline));
}

absl::StatusOr<std::string> EmitAssembly(const llvm::Module& module, llvm::TargetMachine& machine) {
  std::unique_ptr<llvm::Module> clone = llvm::CloneModule(module);
  llvm::SmallString<0> text;
  llvm::raw_svector_ostream out(text);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, out, /*DwoOut=*/nullptr,
                                  llvm::CodeGenFileType::AssemblyFile)) {
    return absl::InternalError(
        absl::StrCat("target ", machine.getTargetTriple().str(), " cannot emit assembly"));
  }
  passes.run(*clone);
  return std::string(text.str());
}

void AllocateRegistersAtO0() {
  // Measured on the decode layer (bench_roofline's BM_DecodeStep kept-frame medians, f64
  // S=64 / S=512, f32 S=64 / S=512, baseline over O2 in the same run; bench_compile's
  // BM_CompileDecode/0 medians; znver4): fast allocator 1.38 / 1.68 / 2.04 / 1.93x,
  // compile 49.5 ms; greedy 1.22 / 0.94 / 0.88 / 1.05x, compile 63.1 ms (O2: 172 ms).
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::StringMap<llvm::cl::Option*>& options = llvm::cl::getRegisteredOptions();
    const auto it = options.find("optimize-regalloc");
    if (it == options.end() || it->second->getNumOccurrences() > 0) return;
    it->second->addOccurrence(/*pos=*/0, "optimize-regalloc", "true");
  });
}

}  // namespace graphjit::compiler::jit_internal
