// The process-wide ORC LLJIT engine: host CPU target, two code tiers (new-PM O2 with loop
// and SLP vectorization, or the baseline's short pass list and -O0 machine code), libmvec as the
// vector math library, one ResourceTracker per compiled module so its code can be freed.
// Included only inside compiler/orc (compile_steps.cc) and by compiler/codegen/native_code.cc,
// which puts it behind an LLVM-free header; everything else reaches it through that.
#ifndef GRAPHJIT_COMPILER_ORC_ORC_ENGINE_H_
#define GRAPHJIT_COMPILER_ORC_ORC_ENGINE_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/orc/code_tier.h"
#include "compiler/orc/phase_timings.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace graphjit::compiler {

struct OrcRequest {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;  // created in `context`
  std::string function_name;             // the function to look up
  bool keep_ir = false;                  // keep the optimized IR text
  bool emit_asm = false;                 // also produce assembly text
  bool keep_object = false;              // keep the object file (to store it and Load it later)
  CodeTier tier = CodeTier::kOptimized;  // how hard LLVM works on it (compiler/orc/code_tier.h)
  // The widest vectors the machine code may use: 0 (or the host's width or more) the
  // host's; 32 a target without AVX-512 (AVX2 code on an AVX-512 host); 16 the same
  // preferring 128-bit vectors.
  int vector_bytes = 0;
  // Several functions instead of one: the module's functions of these names stay
  // external under exactly these names (their callers make them unique), everything
  // else is internalized; function_name is then ignored. A caller that names functions (after
  // a content key) must not have two live modules with the same names.
  std::vector<std::string> function_names;
};

// Compiled code in the engine; the destructor removes it (ResourceTracker::remove).
class OrcCode {
 public:
  virtual ~OrcCode() = default;
  virtual void* function() const = 0;  // the first function
  // Every function, in OrcRequest::function_names order (one element for a single-function module).
  virtual const std::vector<void*>& functions() const = 0;
  virtual const std::string& optimized_ir() const = 0;
  virtual const std::string& assembly() const = 0;
  virtual const PhaseTimings& timings() const = 0;  // optimize, codegen
  // The relocatable object the code was linked from (empty unless keep_object).
  virtual const std::string& object() const = 0;
};

class OrcEngine {
 public:
  virtual ~OrcEngine() = default;
  // The engine, created on first use (thread-safe); an error if LLVM cannot target the
  // host.
  static absl::StatusOr<OrcEngine*> Get();

  virtual const llvm::DataLayout& data_layout() const = 0;
  virtual const std::string& triple() const = 0;
  virtual const std::string& cpu_name() const = 0;
  virtual const std::string& cpu_features() const = 0;
  // The library info the IR pipelines use (libmvec's vector math when the host has it).
  virtual const llvm::TargetLibraryInfoImpl& library_info() const = 0;
  // Verifies and optimizes the module, compiles it under a new ResourceTracker and looks
  // up the function. Safe to call from several threads. The function is renamed to a symbol
  // unique in the engine and the module's other external definitions are internalized,
  // so any number of modules with the same function name can be live at once; a broken
  // module is InvalidArgument, a link failure (an unresolved symbol) keeps LLVM's message.
  virtual absl::StatusOr<std::unique_ptr<OrcCode>> Compile(OrcRequest request) = 0;
  // Links an object that Compile produced (OrcCode::object) in this or another process
  // of the same target and looks up `symbol`. A malformed object or a missing symbol is
  // an error, never a crash; the object is kept (object() returns it).
  virtual absl::StatusOr<std::unique_ptr<OrcCode>> Load(
      const std::string& object, const std::vector<std::string>& function_names) = 0;

  // Makes the host function or object at `address` callable from JIT code as `name`
  // (runtime helpers that are not exported from the executable). Register before
  // compiling code that uses it; registering a name again at the same address is OK, at
  // another address is AlreadyExists.
  virtual absl::Status RegisterHostSymbol(std::string name, void* address) = 0;
};

// "19.1.7".
std::string LlvmVersion();

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_ORC_ORC_ENGINE_H_
