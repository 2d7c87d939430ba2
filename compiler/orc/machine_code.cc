// TargetMachine pool, ORC compile function and assembly printer of the JIT engine.
#include "compiler/orc/machine_code.h"

#include <algorithm>
#include <string>
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

int HostVectorBytes(const llvm::StringMap<bool>& host_features) {
  if (host_features.lookup("avx512f")) return 64;
  return host_features.lookup("avx") ? 32 : 16;
}

TargetMachinePools::TargetMachinePools(llvm::orc::JITTargetMachineBuilder host,
                                       int host_vector_bytes)
    : host_(std::move(host)), host_vector_bytes_(host_vector_bytes) {}

TargetMachinePool& TargetMachinePools::Pool(CodeTier tier, int vector_bytes) {
  if (vector_bytes <= 0 || vector_bytes >= host_vector_bytes_) vector_bytes = 0;
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<TargetMachinePool>& pool = pools_[{tier, vector_bytes}];
  if (pool == nullptr) {
    llvm::orc::JITTargetMachineBuilder builder = host_;
    builder.setCodeGenOptLevel(tier == CodeTier::kBaseline ? llvm::CodeGenOptLevel::None
                                                           : llvm::CodeGenOptLevel::Aggressive);
    if (vector_bytes != 0) {
      // Appended, so they win over the host's list: -avx512f also clears every feature
      // that implies it (avx512bw, avx512vl, ...). prefer-128-bit is a tuning flag: the
      // vectorizers then pick 128-bit vectors, with AVX encodings and FMA kept.
      builder.addFeatures({"-avx512f"});
      if (vector_bytes <= 16) builder.addFeatures({"+prefer-128-bit"});
    }
    pool = std::make_unique<TargetMachinePool>(std::move(builder));
  }
  return *pool;
}

namespace {

constexpr const char* kTierFlag = "graphjit.tier";
constexpr const char* kVectorBytesFlag = "graphjit.vector_bytes";

uint64_t ModuleFlag(const llvm::Module& module, const char* name) {
  auto* flag = llvm::mdconst::extract_or_null<llvm::ConstantInt>(module.getModuleFlag(name));
  return flag != nullptr ? flag->getZExtValue() : 0;
}

class PooledCompiler : public llvm::orc::IRCompileLayer::IRCompiler {
 public:
  explicit PooledCompiler(std::shared_ptr<TargetMachinePools> pools)
      : IRCompiler(llvm::orc::irManglingOptionsFromTargetOptions(pools->host().getOptions())),
        pools_(std::move(pools)) {}

  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> operator()(llvm::Module& module) override {
    const CodeTier tier =
        ModuleFlag(module, kTierFlag) == static_cast<uint64_t>(CodeTier::kBaseline)
            ? CodeTier::kBaseline
            : CodeTier::kOptimized;
    TargetMachinePool& pool =
        pools_->Pool(tier, static_cast<int>(ModuleFlag(module, kVectorBytesFlag)));
    absl::StatusOr<TargetMachinePool::Lease> machine = pool.Acquire();
    if (!machine.ok()) {
      return llvm::make_error<llvm::StringError>(std::string(machine.status().message()),
                                                 llvm::inconvertibleErrorCode());
    }
    llvm::orc::SimpleCompiler compile(**machine);
    return compile(module);
  }

 private:
  std::shared_ptr<TargetMachinePools> pools_;
};

}  // namespace

void SetModuleTarget(llvm::Module& module, CodeTier tier, int vector_bytes) {
  module.addModuleFlag(llvm::Module::Error, kTierFlag, static_cast<uint32_t>(tier));
  module.addModuleFlag(llvm::Module::Error, kVectorBytesFlag,
                       static_cast<uint32_t>(std::max(vector_bytes, 0)));
}

std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler> MakePooledCompiler(
    std::shared_ptr<TargetMachinePools> pools) {
  return std::make_unique<PooledCompiler>(std::move(pools));
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
