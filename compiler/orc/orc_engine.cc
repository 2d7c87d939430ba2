// The process-wide ORC LLJIT engine: host target, libm/libmvec resolution, the O2
// pipeline, one ResourceTracker per compiled module.
#include "compiler/orc/orc_engine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "compiler/orc/machine_code.h"
#include "compiler/orc/optimize_module.h"
#include "ir/clock.h"
#include "ir/status_macros.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

namespace graphjit::compiler {
namespace {

using ir::Clock;
using ir::SecondsSince;

// glibc's vector math library (_ZGVdN4v_exp, ...); the soname, so no -dev package is needed.
constexpr char kLibmvec[] = "libmvec.so.1";

absl::Status LlvmError(absl::StatusCode code, absl::string_view what, llvm::Error error) {
  return absl::Status(code, absl::StrCat(what, ": ", llvm::toString(std::move(error))));
}

// ORC reports some failures (the symbols a link could not resolve) to the
// ExecutionSession's error reporter, and the lookup that triggered the link then only says
// "Failed to materialize symbols". Without compile threads, materialization runs on the
// thread that looks up, so a per-thread sink hands those messages to the Compile call that
// caused them.
thread_local std::string* session_error_sink = nullptr;

void ReportSessionError(llvm::Error error) {
  std::string message = llvm::toString(std::move(error));
  if (session_error_sink != nullptr) {
    if (!session_error_sink->empty()) session_error_sink->append("; ");
    session_error_sink->append(message);
    return;
  }
  std::fprintf(stderr, "graphjit: JIT ExecutionSession error: %s\n", message.c_str());
}

// Removes a tracker whose module failed; a second failure is added to the message.
absl::Status FailAndRemove(const llvm::orc::ResourceTrackerSP& tracker, absl::Status status) {
  if (llvm::Error error = tracker->remove()) {
    return absl::Status(status.code(),
                        absl::StrCat(status.message(), " (and removing the module failed: ",
                                     llvm::toString(std::move(error)), ")"));
  }
  return status;
}

// The functions become the symbols given and every other definition internal: all
// compiled modules share the main JITDylib, where two modules with the same external
// name would clash ("Duplicate definition"), and internal kernels can be inlined and
// dropped.
void IsolateFunctions(llvm::Module& module, const std::vector<llvm::Function*>& functions,
                      const std::vector<std::string>& symbols) {
  for (llvm::GlobalValue& value : module.global_values()) {
    if (std::find(functions.begin(), functions.end(), &value) != functions.end() ||
        value.isDeclaration() || value.hasLocalLinkage() || value.getName().starts_with("llvm.")) {
      continue;
    }
    value.setLinkage(llvm::GlobalValue::InternalLinkage);
    value.setVisibility(llvm::GlobalValue::DefaultVisibility);  // required of local linkage
  }
  for (size_t i = 0; i < functions.size(); ++i) {
    // Only external symbols are visible to lookup.
    functions[i]->setLinkage(llvm::GlobalValue::ExternalLinkage);
    functions[i]->setVisibility(llvm::GlobalValue::DefaultVisibility);
    if (functions[i]->getName() != symbols[i]) functions[i]->setName(symbols[i]);
  }
}

class OrcCodeImpl : public OrcCode {
 public:
  OrcCodeImpl(llvm::orc::ResourceTrackerSP tracker, std::vector<void*> functions,
              std::string optimized_ir, std::string assembly, PhaseTimings timings,
              std::string object = "")
      : tracker_(std::move(tracker)),
        functions_(std::move(functions)),
        optimized_ir_(std::move(optimized_ir)),
        assembly_(std::move(assembly)),
        timings_(timings),
        object_(std::move(object)) {}

  ~OrcCodeImpl() override {
    // A destructor cannot return the error, and an unchecked llvm::Error would vanish
    // silently (ABI-breaking checks are off), so it is printed.
    if (llvm::Error error = tracker_->remove()) {
      llvm::logAllUnhandledErrors(std::move(error), llvm::errs(),
                                  "graphjit: freeing JIT code failed: ");
    }
  }

  void* function() const override { return functions_.front(); }
  const std::vector<void*>& functions() const override { return functions_; }
  const std::string& optimized_ir() const override { return optimized_ir_; }
  const std::string& assembly() const override { return assembly_; }
  const PhaseTimings& timings() const override { return timings_; }
  const std::string& object() const override { return object_; }

 private:
  llvm::orc::ResourceTrackerSP tracker_;
  std::vector<void*> functions_;
  std::string optimized_ir_;
  std::string assembly_;
  PhaseTimings timings_;
  std::string object_;
};

// Thread safety: LLJIT (adding, looking up, removing code) is thread-safe. TargetMachines
// are not, so the optimizer, the assembly printer and ORC's compile layer each lease one
// from the pool of their tier (`pools_`). The TargetLibraryInfoImpl is only read (copied) after
// construction.
class OrcEngineImpl : public OrcEngine {
 public:
  static absl::StatusOr<std::unique_ptr<OrcEngineImpl>> Create();

  const llvm::DataLayout& data_layout() const override { return data_layout_; }
  const std::string& triple() const override { return triple_; }
  const std::string& cpu_name() const override { return cpu_name_; }
  const std::string& cpu_features() const override { return cpu_features_; }
  const llvm::TargetLibraryInfoImpl& library_info() const override { return library_info_; }
  absl::StatusOr<std::unique_ptr<OrcCode>> Compile(OrcRequest request) override;
  absl::StatusOr<std::unique_ptr<OrcCode>> Load(const std::string& object,
                                                const std::vector<std::string>& symbols) override;
  absl::Status RegisterHostSymbol(std::string name, void* address) override;

 private:
  OrcEngineImpl(std::unique_ptr<llvm::orc::LLJIT> jit,
                std::shared_ptr<jit_internal::TargetMachinePools> pools,
                llvm::TargetLibraryInfoImpl library_info, std::string cpu_name,
                std::string cpu_features)
      : jit_(std::move(jit)),
        pools_(std::move(pools)),
        library_info_(std::move(library_info)),
        data_layout_(jit_->getDataLayout()),
        triple_(jit_->getTargetTriple().str()),
        cpu_name_(std::move(cpu_name)),
        cpu_features_(std::move(cpu_features)),
        object_compiler_(jit_internal::MakePooledCompiler(pools_)) {}

  jit_internal::TargetMachinePool& PoolOf(const OrcRequest& request) const {
    return pools_->Pool(request.tier, request.vector_bytes);
  }

  std::unique_ptr<llvm::orc::LLJIT> jit_;
  // One pool of machines per tier and target, so that a machine keeps its optimization
  // level and features.
  std::shared_ptr<jit_internal::TargetMachinePools> pools_;
  const llvm::TargetLibraryInfoImpl library_info_;
  const llvm::DataLayout data_layout_;
  const std::string triple_;
  const std::string cpu_name_;
  const std::string cpu_features_;
  std::atomic<uint64_t> next_module_id_{0};
  // Machine code for keep_object requests, outside ORC's compile layer so the object
  // bytes can be kept.
  std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler> object_compiler_;
  // Looks up each function of a module just added under `tracker` (removed on failure).
  absl::StatusOr<std::vector<void*>> LookupFunctions(const llvm::orc::ResourceTrackerSP& tracker,
                                                     const std::vector<std::string>& symbols,
                                                     absl::StatusCode code);
  // Links `object` under a new tracker and looks up its functions (both paths end here).
  absl::StatusOr<std::unique_ptr<OrcCode>> LinkObject(std::unique_ptr<llvm::MemoryBuffer> object,
                                                      const std::vector<std::string>& symbols,
                                                      std::string optimized_ir,
                                                      std::string assembly, PhaseTimings timings,
                                                      Clock::time_point codegen_start,
                                                      bool keep_object);

  absl::Mutex host_symbols_mutex_;
  absl::flat_hash_map<std::string, void*> host_symbols_ ABSL_GUARDED_BY(host_symbols_mutex_);
};

absl::StatusOr<std::unique_ptr<OrcEngineImpl>> OrcEngineImpl::Create() {
  if (llvm::InitializeNativeTarget() || llvm::InitializeNativeTargetAsmPrinter() ||
      llvm::InitializeNativeTargetAsmParser()) {
    return absl::FailedPreconditionError("this LLVM build cannot target the host");
  }
  jit_internal::AllocateRegistersAtO0();
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> target =
      llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!target) {
    return LlvmError(absl::StatusCode::kFailedPrecondition, "cannot target the host",
                     target.takeError());
  }
  // Spelled out (detectHost does the same today) because the vectorizers' cost model and
  // the libmvec choice below depend on exactly these.
  std::string cpu_name = llvm::sys::getHostCPUName().str();
  const llvm::StringMap<bool> host_features = llvm::sys::getHostCPUFeatures();
  llvm::SubtargetFeatures features;
  for (const auto& feature : host_features) {
    features.AddFeature(feature.getKey(), feature.getValue());
  }
  std::string cpu_features = features.getString();
  target->setCPU(cpu_name);
  target->setFeatures(cpu_features);
  target->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);

  // libmvec's 4 x f64 / 8 x f32 variants use AVX2, and LLVM's table offers them whenever
  // the vectorizer picks that width; without AVX2 (or without libmvec) math stays scalar.
  std::string load_error;
  const bool have_libmvec =
      !llvm::sys::DynamicLibrary::LoadLibraryPermanently(kLibmvec, &load_error);
  if (!have_libmvec) {
    // Not an error (scalar libm still works), but vector math gets 2-4x slower.
    std::fprintf(stderr, "graphjit: %s not loaded, math stays scalar: %s\n", kLibmvec,
                 load_error.c_str());
  }
  const bool use_libmvec = have_libmvec && host_features.lookup("avx2");

  std::shared_ptr<jit_internal::TargetMachinePools> pools;
  const int host_vector_bytes = jit_internal::HostVectorBytes(host_features);
  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(std::move(*target))
          // setSupportConcurrentCompilation stays off: with it LLJIT hands every
          // materialization to a thread pool and clones every module into a new context.
          // Here each Compile() brings its own context and materializes in place on its
          // own thread; the pooled compiler is what makes that thread-safe.
          //
          // The creator is called once during create(), with the builder as LLJIT
          // adjusted it for its linker (code and relocation model), so every pooled
          // machine matches it.
          .setCompileFunctionCreator(
              [&pools, host_vector_bytes](llvm::orc::JITTargetMachineBuilder builder)
                  -> llvm::Expected<std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
                pools = std::make_shared<jit_internal::TargetMachinePools>(std::move(builder),
                                                                           host_vector_bytes);
                return jit_internal::MakePooledCompiler(pools);
              })
          // Host symbols (libm's tanh, log, ...; exp is inline) and libmvec's vector variants.
          .setProcessSymbolsJITDylibSetup(
              [have_libmvec](llvm::orc::LLJIT& j) -> llvm::Expected<llvm::orc::JITDylibSP> {
                const char prefix = j.getDataLayout().getGlobalPrefix();
                llvm::orc::JITDylib& dylib =
                    j.getExecutionSession().createBareJITDylib("<Process Symbols>");
                auto process =
                    llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
                if (!process) return process.takeError();
                dylib.addGenerator(std::move(*process));
                if (have_libmvec) {
                  auto mvec = llvm::orc::DynamicLibrarySearchGenerator::Load(kLibmvec, prefix);
                  if (!mvec) return mvec.takeError();
                  dylib.addGenerator(std::move(*mvec));
                }
                return &dylib;
              })
          // Kernels have no static constructors, so no initializer support is needed.
          .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
          .create();
  if (!jit) {
    return LlvmError(absl::StatusCode::kInternal, "cannot create the LLJIT", jit.takeError());
  }
  (*jit)->getExecutionSession().setErrorReporter(ReportSessionError);
  llvm::TargetLibraryInfoImpl library_info =
      jit_internal::MakeTargetLibraryInfo((*jit)->getTargetTriple(), use_libmvec);
  return std::unique_ptr<OrcEngineImpl>(
      new OrcEngineImpl(std::move(*jit), std::move(pools), std::move(library_info),
                        std::move(cpu_name), std::move(cpu_features)));
}

absl::StatusOr<std::unique_ptr<OrcCode>> OrcEngineImpl::Compile(OrcRequest request) {
  if (request.context == nullptr || request.module == nullptr) {
    return absl::InvalidArgumentError("OrcRequest needs a context and a module");
  }
  llvm::Module& module = *request.module;
  if (&module.getContext() != request.context.get()) {
    return absl::InvalidArgumentError("the module was not created in the request's context");
  }
  // The functions and the symbols they get.
  std::vector<std::string> names = request.function_names;
  std::vector<std::string> symbols = request.function_names;
  if (names.empty()) {
    names = {request.function_name};
    symbols = {absl::StrCat(request.function_name, ".gj", next_module_id_.fetch_add(1))};
  }
  std::vector<llvm::Function*> functions;
  for (const std::string& name : names) {
    llvm::Function* fn = module.getFunction(name);
    if (fn == nullptr || fn->isDeclaration()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "function '", name, "' is not defined in module '", module.getModuleIdentifier(), "'"));
    }
    functions.push_back(fn);
  }

  PhaseTimings timings;
  const Clock::time_point optimize_start = Clock::now();
  module.setDataLayout(data_layout_);
  module.setTargetTriple(triple_);
  // With LLVM's assertions off, a broken module would crash the optimizer or miscompile.
  std::string problems;
  llvm::raw_string_ostream problem_stream(problems);
  if (llvm::verifyModule(module, &problem_stream)) {
    return absl::InvalidArgumentError(
        absl::StrCat("module '", module.getModuleIdentifier(), "' is invalid: ", problems));
  }
  IsolateFunctions(module, functions, symbols);
  jit_internal::MarkMathDeclarations(module);
  jit_internal::SetModuleTarget(module, request.tier, request.vector_bytes);
  timings.ir_instructions = module.getInstructionCount();
  {
    GJ_ASSIGN_OR_RETURN(jit_internal::TargetMachinePool::Lease machine, PoolOf(request).Acquire());
    jit_internal::OptimizeModule(module, *machine, library_info_, request.tier);
  }
  timings.optimize = SecondsSince(optimize_start);
  timings.optimized_instructions = module.getInstructionCount();

  std::string optimized_ir;
  if (request.keep_ir) {
    llvm::raw_string_ostream out(optimized_ir);
    module.print(out, /*AAW=*/nullptr);
  }
  std::string assembly;
  if (request.emit_asm) {
    GJ_ASSIGN_OR_RETURN(jit_internal::TargetMachinePool::Lease machine, PoolOf(request).Acquire());
    GJ_ASSIGN_OR_RETURN(assembly, jit_internal::EmitAssembly(module, *machine));
  }

  const Clock::time_point codegen_start = Clock::now();
  if (request.keep_object) {
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> object = (*object_compiler_)(module);
    if (!object) {
      return LlvmError(absl::StatusCode::kInternal, "cannot generate machine code",
                       object.takeError());
    }
    return LinkObject(std::move(*object), symbols, std::move(optimized_ir), std::move(assembly),
                      timings, codegen_start, /*keep_object=*/true);
  }
  llvm::orc::ResourceTrackerSP tracker = jit_->getMainJITDylib().createResourceTracker();
  if (llvm::Error error = jit_->addIRModule(
          tracker,
          llvm::orc::ThreadSafeModule(std::move(request.module), std::move(request.context)))) {
    return FailAndRemove(tracker, LlvmError(absl::StatusCode::kInternal,
                                            "cannot add the module to the JIT", std::move(error)));
  }
  GJ_ASSIGN_OR_RETURN(std::vector<void*> addresses,
                      LookupFunctions(tracker, symbols, absl::StatusCode::kInternal));
  timings.codegen = SecondsSince(codegen_start);
  return std::make_unique<OrcCodeImpl>(std::move(tracker), std::move(addresses),
                                       std::move(optimized_ir), std::move(assembly), timings);
}

absl::StatusOr<std::vector<void*>> OrcEngineImpl::LookupFunctions(
    const llvm::orc::ResourceTrackerSP& tracker, const std::vector<std::string>& symbols,
    absl::StatusCode code) {
  std::vector<void*> addresses;
  for (const std::string& symbol : symbols) {
    std::string session_errors;
    session_error_sink = &session_errors;
    llvm::Expected<llvm::orc::ExecutorAddr> address = jit_->lookup(symbol);
    session_error_sink = nullptr;
    if (!address) {
      std::string message = llvm::toString(address.takeError());
      if (!session_errors.empty()) message = absl::StrCat(session_errors, " (", message, ")");
      return FailAndRemove(
          tracker, absl::Status(code, absl::StrCat("cannot link '", symbol, "': ", message)));
    }
    addresses.push_back(address->toPtr<void*>());
  }
  return addresses;
}

absl::StatusOr<std::unique_ptr<OrcCode>> OrcEngineImpl::LinkObject(
    std::unique_ptr<llvm::MemoryBuffer> object, const std::vector<std::string>& symbols,
    std::string optimized_ir, std::string assembly, PhaseTimings timings,
    Clock::time_point codegen_start, bool keep_object) {
  std::string bytes = keep_object ? object->getBuffer().str() : std::string();
  llvm::orc::ResourceTrackerSP tracker = jit_->getMainJITDylib().createResourceTracker();
  if (llvm::Error error = jit_->addObjectFile(tracker, std::move(object))) {
    return FailAndRemove(tracker, LlvmError(absl::StatusCode::kInvalidArgument,
                                            "cannot add the object to the JIT", std::move(error)));
  }
  GJ_ASSIGN_OR_RETURN(std::vector<void*> addresses,
                      LookupFunctions(tracker, symbols, absl::StatusCode::kInvalidArgument));
  timings.codegen = SecondsSince(codegen_start);
  return std::make_unique<OrcCodeImpl>(std::move(tracker), std::move(addresses),
                                       std::move(optimized_ir), std::move(assembly), timings,
                                       std::move(bytes));
}

absl::StatusOr<std::unique_ptr<OrcCode>> OrcEngineImpl::Load(
    const std::string& object, const std::vector<std::string>& symbols) {
  // The object file parser checks the structure it reads; what is loaded here passed the
  // disk cache's checksum and header checks first (compiler/store/disk_cache.h).
  if (object.empty() || symbols.empty()) {
    return absl::InvalidArgumentError("loading code needs an object and its function names");
  }
  return LinkObject(llvm::MemoryBuffer::getMemBufferCopy(object, symbols.front()), symbols, "", "",
                    {}, Clock::now(), /*keep_object=*/true);
}

absl::Status OrcEngineImpl::RegisterHostSymbol(std::string name, void* address) {
  if (name.empty() || address == nullptr) {
    return absl::InvalidArgumentError("a host symbol needs a name and an address");
  }
  absl::MutexLock lock(&host_symbols_mutex_);
  if (auto it = host_symbols_.find(name); it != host_symbols_.end()) {
    if (it->second == address) return absl::OkStatus();
    return absl::AlreadyExistsError(
        absl::StrCat("host symbol '", name, "' is already registered at another address"));
  }
  llvm::orc::SymbolMap symbols;
  symbols[jit_->mangleAndIntern(name)] =
      llvm::orc::ExecutorSymbolDef(llvm::orc::ExecutorAddr::fromPtr(address),
                                   llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  if (llvm::Error error =
          jit_->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(symbols)))) {
    return LlvmError(absl::StatusCode::kAlreadyExists,
                     absl::StrCat("cannot register host symbol '", name, "'"), std::move(error));
  }
  host_symbols_.emplace(std::move(name), address);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<OrcEngine*> OrcEngine::Get() {
  // Created once (a function-local static is thread-safe) and never destroyed: OrcCode
  // held by other statics may be destroyed after it at exit.
  static const absl::StatusOr<OrcEngine*>* const engine = [] {
    absl::StatusOr<std::unique_ptr<OrcEngineImpl>> created = OrcEngineImpl::Create();
    if (!created.ok()) return new absl::StatusOr<OrcEngine*>(created.status());
    return new absl::StatusOr<OrcEngine*>(created->release());
  }();
  return *engine;
}

std::string LlvmVersion() { return LLVM_VERSION_STRING; }

}  // namespace graphjit::compiler
