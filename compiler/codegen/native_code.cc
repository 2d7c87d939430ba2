// CompileProgram: kernel program -> llvm::Module (EmitModule) -> OrcEngine, with the
// LLVM types kept behind NativeCode.
#include "compiler/codegen/native_code.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen.h"
#include "compiler/codegen/codegen_emitter.h"
#include "compiler/orc/orc_engine.h"
#include "ir/clock.h"
#include "ir/status_macros.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "runtime/jit_helpers.h"

namespace graphjit::compiler {
namespace {

// The engine renames it per module, so every program can use the same one.
constexpr char kFunctionName[] = "graphjit_kernel";

class NativeCodeImpl : public NativeCode {
 public:
  NativeCodeImpl(std::unique_ptr<OrcCode> code, std::string llvm_ir, PhaseTimings timings)
      : code_(std::move(code)), llvm_ir_(std::move(llvm_ir)), timings_(timings) {}

  // The JIT returns a data address; the function-pointer cast is the usual JIT idiom.
  KernelFn function() const override { return reinterpret_cast<KernelFn>(code_->function()); }
  const std::string& llvm_ir() const override { return llvm_ir_; }
  const std::string& optimized_ir() const override { return code_->optimized_ir(); }
  const std::string& assembly() const override { return code_->assembly(); }
  const PhaseTimings& timings() const override { return timings_; }

 private:
  std::unique_ptr<OrcCode> code_;
  std::string llvm_ir_;
  PhaseTimings timings_;
};

class NativeModuleImpl : public NativeModule {
 public:
  NativeModuleImpl(std::unique_ptr<OrcCode> code, std::string llvm_ir, PhaseTimings timings)
      : code_(std::move(code)), llvm_ir_(std::move(llvm_ir)), timings_(timings) {}

  int size() const override { return static_cast<int>(code_->functions().size()); }
  NativeCode::KernelFn function(int i) const override {
    return reinterpret_cast<NativeCode::KernelFn>(code_->functions()[i]);
  }
  const std::string& llvm_ir() const override { return llvm_ir_; }
  const std::string& optimized_ir() const override { return code_->optimized_ir(); }
  const std::string& assembly() const override { return code_->assembly(); }
  const PhaseTimings& timings() const override { return timings_; }
  const std::string& object() const override { return code_->object(); }

 private:
  std::unique_ptr<OrcCode> code_;
  std::string llvm_ir_;
  PhaseTimings timings_;
};

// The host functions generated code may call, registered once per process: they live in
// the static runtime library, so the JIT cannot find them among the exported symbols.
absl::Status RegisterRuntimeHelpers(OrcEngine& engine) {
  static const absl::Status* const status = [&engine] {
    absl::Status s = engine.RegisterHostSymbol("graphjit_rt_matmul_f32",
                                               reinterpret_cast<void*>(&graphjit_rt_matmul_f32));
    if (s.ok()) {
      s = engine.RegisterHostSymbol("graphjit_rt_matmul_f64",
                                    reinterpret_cast<void*>(&graphjit_rt_matmul_f64));
    }
    return new absl::Status(std::move(s));
  }();
  return *status;
}

// What every compile shares: a fresh context, the module `emit` builds in it, the IR
// text if kept, then optimization, machine code and linking by the engine. `request`
// brings the functions and what to keep.
struct Compiled {
  std::unique_ptr<OrcCode> code;
  std::string llvm_ir;
  PhaseTimings timings;
};
using EmitFn = absl::FunctionRef<absl::StatusOr<std::unique_ptr<llvm::Module>>(llvm::LLVMContext&,
                                                                               const OrcEngine&)>;

// LLVM reports a loop marked for vectorization (the baseline's maps and reductions,
// KernelEmitter::VectorizeLoops) that it cannot vectorize, say one of a single
// iteration, as a warning on stderr: for a kernel that is no fault, and a library must
// not write to its user's terminal. Errors keep LLVM's handling.
struct QuietOptimizationDiagnostics : llvm::DiagnosticHandler {
  bool handleDiagnostics(const llvm::DiagnosticInfo& info) override {
    return info.getSeverity() != llvm::DS_Error;
  }
};

absl::StatusOr<Compiled> EmitAndCompile(EmitFn emit, OrcRequest request) {
  GJ_ASSIGN_OR_RETURN(OrcEngine * engine, OrcEngine::Get());
  GJ_RETURN_IF_ERROR(RegisterRuntimeHelpers(*engine));
  const ir::Clock::time_point start = ir::Clock::now();
  // One context per compile: LLVM contexts are not thread-safe, and the JIT frees the
  // context with the module once it is compiled.
  auto context = std::make_unique<llvm::LLVMContext>();
  context->setDiagnosticHandler(std::make_unique<QuietOptimizationDiagnostics>());
  GJ_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module, emit(*context, *engine));
  Compiled out;
  out.timings.ir_build = ir::SecondsSince(start);
  if (request.keep_ir) {
    llvm::raw_string_ostream text(out.llvm_ir);
    module->print(text, /*AAW=*/nullptr);
  }
  request.context = std::move(context);
  request.module = std::move(module);
  GJ_ASSIGN_OR_RETURN(std::unique_ptr<OrcCode> code, engine->Compile(std::move(request)));
  out.timings += code->timings();  // optimize, codegen
  out.code = std::move(code);
  return out;
}

OrcRequest RequestFor(const CompileOptions& options) {
  OrcRequest request;
  request.keep_ir = options.keep_ir;
  request.emit_asm = options.emit_asm;
  request.keep_object = options.keep_object;
  request.tier = options.tier;
  request.vector_bytes = options.max_vector_bytes;
  return request;
}

}  // namespace

absl::Status CheckVectorBytes(int bytes, const char* option) {
  if (bytes == 0 || bytes == 16 || bytes == 32 || bytes == 64) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      option, " must be 0 (the host's widest vectors), 16, 32 or 64 bytes, got ", bytes));
}

absl::StatusOr<std::unique_ptr<NativeCode>> CompileProgram(const Program& program,
                                                           const CompileOptions& options) {
  OrcRequest request = RequestFor(options);
  request.function_name = kFunctionName;
  absl::StatusOr<Compiled> c = EmitAndCompile(
      [&](llvm::LLVMContext& context, const OrcEngine& engine) {
        return EmitModule(program, context, engine.data_layout(), engine.triple(), kFunctionName,
                          options);
      },
      std::move(request));
  if (!c.ok()) return c.status();
  return std::make_unique<NativeCodeImpl>(std::move(c->code), std::move(c->llvm_ir), c->timings);
}

absl::StatusOr<std::unique_ptr<NativeModule>> CompileModule(
    const std::vector<const Program*>& programs, const std::vector<std::string>& function_names,
    const CompileOptions& options) {
  OrcRequest request = RequestFor(options);
  request.function_names = function_names;
  absl::StatusOr<Compiled> c = EmitAndCompile(
      [&](llvm::LLVMContext& context, const OrcEngine& engine) {
        return EmitFunctionsModule(programs, function_names, context, engine.data_layout(),
                                   engine.triple(), options);
      },
      std::move(request));
  if (!c.ok()) return c.status();
  return std::make_unique<NativeModuleImpl>(std::move(c->code), std::move(c->llvm_ir), c->timings);
}

absl::StatusOr<std::unique_ptr<NativeModule>> LoadModule(
    const std::string& object, const std::vector<std::string>& function_names) {
  GJ_ASSIGN_OR_RETURN(OrcEngine * engine, OrcEngine::Get());
  // Loaded code may call the runtime helpers too.
  GJ_RETURN_IF_ERROR(RegisterRuntimeHelpers(*engine));
  const ir::Clock::time_point start = ir::Clock::now();
  GJ_ASSIGN_OR_RETURN(std::unique_ptr<OrcCode> code, engine->Load(object, function_names));
  PhaseTimings timings;
  timings.codegen = ir::SecondsSince(start);
  return std::make_unique<NativeModuleImpl>(std::move(code), "", timings);
}

HostTarget DescribeHostTarget() {
  HostTarget t;
  t.llvm_version = LlvmVersion();
  absl::StatusOr<OrcEngine*> engine = OrcEngine::Get();
  if (engine.ok()) {
    t.triple = (*engine)->triple();
    t.cpu_name = (*engine)->cpu_name();
    t.cpu_features = (*engine)->cpu_features();
  }
  t.l2_bytes = HostL2Bytes();
  return t;
}

int CodegenVectorBytes(int max_vector_bytes) {
  const int host = codegen_internal::HostVectorBytes();
  return max_vector_bytes > 0 ? std::min(max_vector_bytes, host) : host;
}

int64_t HostL2Bytes() {
  static const int64_t bytes = [] {
    const long reported = sysconf(_SC_LEVEL2_CACHE_SIZE);
    // Some hosts (containers, other C libraries) report 0 or -1.
    return reported >= (64 << 10) ? int64_t{reported} : int64_t{512 << 10};
  }();
  return bytes;
}

}  // namespace graphjit::compiler
