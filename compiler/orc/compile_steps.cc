#include "compiler/orc/compile_steps.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <regex>

#include "absl/strings/str_cat.h"
#include "compiler/orc/optimize_module.h"
#include "compiler/orc/orc_engine.h"
#include "ir/clock.h"
#include "ir/status_macros.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Pass.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/Timer.h"
#include "llvm/Support/raw_ostream.h"

namespace graphjit::compiler {
namespace {

using ir::Clock;
using ir::SecondsSince;
using PassSeconds = std::vector<std::pair<std::string, double>>;

PassSeconds Sorted(const std::map<std::string, double>& seconds) {
  PassSeconds sorted(seconds.begin(), seconds.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return sorted;
}

// Exclusive wall time of each new-PM pass and analysis: a pass's time less that of the
// passes and analyses it ran inside it (adaptors and pass managers run the others).
class PassClock {
 public:
  void Register(llvm::PassInstrumentationCallbacks& callbacks) {
    callbacks.registerBeforeNonSkippedPassCallback(
        [this](llvm::StringRef id, llvm::Any) { Start(id); });
    callbacks.registerAfterPassCallback(
        [this](llvm::StringRef, llvm::Any, const llvm::PreservedAnalyses&) { Stop(); });
    callbacks.registerAfterPassInvalidatedCallback(
        [this](llvm::StringRef, const llvm::PreservedAnalyses&) { Stop(); });
    callbacks.registerBeforeAnalysisCallback([this](llvm::StringRef id, llvm::Any) { Start(id); });
    callbacks.registerAfterAnalysisCallback([this](llvm::StringRef, llvm::Any) { Stop(); });
  }
  PassSeconds seconds() const { return Sorted(seconds_); }

 private:
  struct Frame {
    std::string name;
    Clock::time_point start;
    double nested = 0;
  };
  void Start(llvm::StringRef id) { stack_.push_back({id.str(), Clock::now()}); }
  void Stop() {
    if (stack_.empty()) return;
    const Frame frame = stack_.back();
    stack_.pop_back();
    const double total = SecondsSince(frame.start);
    seconds_[frame.name] += total - frame.nested;
    if (!stack_.empty()) stack_.back().nested += total;
  }

  std::vector<Frame> stack_;
  std::map<std::string, double> seconds_;
};

// The legacy pass manager's timers (machine code generation still runs there), by pass
// argument (`x86-isel`, `greedy`, ...), from LLVM's JSON dump of every timer group.
PassSeconds MachinePassSeconds() {
  std::string json;
  llvm::raw_string_ostream out(json);
  llvm::TimerGroup::printAllJSONValues(out, "");
  out.flush();
  std::map<std::string, double> seconds;
  static const std::regex kWall(R"re("time\.pass\.(.+)\.wall": ([0-9.eE+-]+))re");
  for (auto it = std::sregex_iterator(json.begin(), json.end(), kWall);
       it != std::sregex_iterator(); ++it) {
    seconds[(*it)[1].str()] += std::stod((*it)[2].str());
  }
  return Sorted(seconds);
}

bool IsIsel(const std::string& pass) { return pass.find("isel") != std::string::npos; }

// Register allocation and the analyses and rewriting only it needs.
bool IsRegalloc(const std::string& pass) {
  static const char* const kPasses[] = {
      "greedy",         "regallocfast",         "virtregrewriter",
      "liveintervals",  "livestacks",           "liveregmatrix",
      "regalloc-evict", "regalloc-priority",    "register-coalescer",
      "livedebugvars",  "spill-code-placement", "edge-bundles"};
  return std::find(std::begin(kPasses), std::end(kPasses), pass) != std::end(kPasses);
}

absl::StatusOr<std::unique_ptr<llvm::Module>> ParseModule(const std::string& text,
                                                          llvm::LLVMContext& context) {
  if (text.empty()) {
    // An empty module: one function that returns, LLVM's fixed cost per module.
    auto module = std::make_unique<llvm::Module>("empty", context);
    auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), false);
    auto* function =
        llvm::Function::Create(type, llvm::Function::ExternalLinkage, "gj_empty", *module);
    llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", function));
    builder.CreateRetVoid();
    return module;
  }
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> module =
      llvm::parseIR(llvm::MemoryBufferRef(text, "module"), diagnostic, context);
  if (module == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("LLVM IR does not parse: line ",
                                                   diagnostic.getLineNo(), ": ",
                                                   diagnostic.getMessage().str()));
  }
  return module;
}

// As the engine's IsolateEntries: the entries stay external (under names no live code
// has: the same kernels may be compiled in this process already), the rest internal.
std::vector<std::string> IsolateRoots(llvm::Module& module) {
  static std::atomic<int> next_id{0};
  const int id = next_id.fetch_add(1);
  std::vector<llvm::Function*> roots;
  for (llvm::Function& function : module) {
    if (function.isDeclaration()) continue;
    const bool called =
        std::any_of(function.users().begin(), function.users().end(),
                    [](const llvm::User* user) { return llvm::isa<llvm::CallBase>(user); });
    if (!called) roots.push_back(&function);
  }
  for (llvm::GlobalValue& value : module.global_values()) {
    if (value.isDeclaration() || value.hasLocalLinkage() || value.getName().starts_with("llvm.")) {
      continue;
    }
    value.setLinkage(llvm::GlobalValue::InternalLinkage);
    value.setVisibility(llvm::GlobalValue::DefaultVisibility);
  }
  std::vector<std::string> symbols;
  for (llvm::Function* root : roots) {
    root->setLinkage(llvm::GlobalValue::ExternalLinkage);
    root->setName(absl::StrCat(root->getName().str(), ".steps", id));
    symbols.push_back(root->getName().str());
  }
  return symbols;
}

}  // namespace

absl::StatusOr<CompileSteps> TimeCompileSteps(const std::string& llvm_ir, CodeTier tier) {
  GJ_ASSIGN_OR_RETURN(OrcEngine * engine, OrcEngine::Get());
  CompileSteps steps;
  llvm::LLVMContext context;
  Clock::time_point start = Clock::now();
  GJ_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module, ParseModule(llvm_ir, context));
  steps.parse = SecondsSince(start);
  module->setDataLayout(engine->data_layout());
  module->setTargetTriple(engine->triple());
  std::string problems;
  llvm::raw_string_ostream problem_stream(problems);
  if (llvm::verifyModule(*module, &problem_stream)) {
    return absl::InvalidArgumentError(absl::StrCat("LLVM IR is invalid: ", problems));
  }
  const std::vector<std::string> symbols = IsolateRoots(*module);
  if (symbols.empty()) return absl::InvalidArgumentError("LLVM IR defines no entry function");
  jit_internal::MarkMathDeclarations(*module);
  steps.instructions = module->getInstructionCount();

  // A machine as the engine's pools build them (the host CPU, PIC for JITLink).
  start = Clock::now();
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> builder =
      llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) return absl::InternalError(llvm::toString(builder.takeError()));
  builder->setCPU(engine->cpu_name());
  builder->setFeatures(engine->cpu_features());
  builder->setCodeGenOptLevel(tier == CodeTier::kBaseline ? llvm::CodeGenOptLevel::None
                                                          : llvm::CodeGenOptLevel::Aggressive);
  builder->setRelocationModel(llvm::Reloc::PIC_);
  builder->setCodeModel(llvm::CodeModel::Small);
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine = builder->createTargetMachine();
  if (!machine) return absl::InternalError(llvm::toString(machine.takeError()));
  // The subtarget of the module's functions (built on first use, then cached in the
  // machine) belongs to this step too: else the first pass that asks pays for it.
  for (const llvm::Function& function : *module) {
    if (!function.isDeclaration()) {
      (*machine)->getSubtargetImpl(function);
      break;
    }
  }
  steps.target_machine = SecondsSince(start);

  PassClock clock;
  llvm::PassInstrumentationCallbacks callbacks;
  clock.Register(callbacks);
  start = Clock::now();
  {
    jit_internal::ModuleOptimizer optimizer(**machine, engine->library_info(), tier, &callbacks);
    steps.pass_setup = SecondsSince(start);
    start = Clock::now();
    optimizer.Run(*module);
    steps.ir_passes = SecondsSince(start);
  }
  steps.optimized_instructions = module->getInstructionCount();
  steps.ir_pass_seconds = clock.seconds();

  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream object_stream(object);
  // The legacy pass manager names its pass timers by the address of the pass: a pass
  // allocated where a freed pass of an earlier run lived inherits that pass's timer (a
  // fast allocator timed as `greedy`). So the pass managers of timed runs are never
  // freed (a few hundred KB per run, for a measuring tool).
  static std::mutex kept_mutex;
  static auto* kept = new std::vector<std::unique_ptr<llvm::legacy::PassManager>>();
  llvm::legacy::PassManager* codegen = nullptr;
  {
    std::lock_guard<std::mutex> lock(kept_mutex);
    codegen = kept->emplace_back(std::make_unique<llvm::legacy::PassManager>()).get();
  }
  if ((*machine)->addPassesToEmitFile(*codegen, object_stream, nullptr,
                                      llvm::CodeGenFileType::ObjectFile)) {
    return absl::InternalError("the host target cannot emit object files");
  }
  llvm::TimerGroup::clearAll();
  const bool timing = llvm::TimePassesIsEnabled;
  llvm::TimePassesIsEnabled = true;
  start = Clock::now();
  codegen->run(*module);
  const double codegen_seconds = SecondsSince(start);
  llvm::TimePassesIsEnabled = timing;
  steps.machine_pass_seconds = MachinePassSeconds();
  llvm::TimerGroup::clearAll();
  for (const auto& [pass, seconds] : steps.machine_pass_seconds) {
    if (IsIsel(pass)) steps.isel += seconds;
    if (IsRegalloc(pass)) steps.regalloc += seconds;
  }
  steps.other_codegen = std::max(0.0, codegen_seconds - steps.isel - steps.regalloc);

  start = Clock::now();
  GJ_ASSIGN_OR_RETURN(std::unique_ptr<OrcCode> code,
                      engine->Load(std::string(object.data(), object.size()), symbols));
  steps.link = SecondsSince(start);
  return steps;
}

}  // namespace graphjit::compiler
