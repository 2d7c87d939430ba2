// CompileProgram: a kernel program to native code (codegen + JIT), behind a header with
// no LLVM types, so the rest of graphjit never sees LLVM.
#ifndef GRAPHJIT_COMPILER_CODEGEN_NATIVE_CODE_H_
#define GRAPHJIT_COMPILER_CODEGEN_NATIVE_CODE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/lower/kernel_ir.h"
#include "compiler/orc/code_tier.h"
#include "compiler/orc/phase_timings.h"

namespace graphjit::compiler {

struct CompileOptions {
  bool keep_ir = false;   // keep the LLVM IR text before and after optimization
  bool emit_asm = false;  // also produce the assembly (costs a second codegen)
  // CompileModule: keep the object file (NativeModule::object) to store it.
  bool keep_object = false;
  // Matrix-vector style matmuls keep output strips in vector registers across the k loop
  // (compiler/codegen/codegen_matmul.cc). Off only to measure what that buys: the sums
  // are the same in the same order either way. Part of every kernel's content key.
  bool tile_matmuls = true;
  // How hard LLVM works (compiler/orc/code_tier.h): the baseline tier compiles several
  // times faster, for code that runs up to a few times slower. Part of every content key.
  CodeTier tier = CodeTier::kOptimized;
  // The widest vectors, in bytes: 0 for the host's (64 with AVX-512, 32 with AVX, else
  // 16), or 16 / 32 for narrower ones on a wider host. Codegen writes its own vector code
  // (matmuls, attention, the baseline's maps and reductions) at that width and register
  // budget (16 registers), and the machine code targets the host without AVX-512 (at 16
  // also preferring 128-bit vectors, so LLVM's vectorizers pick them): AVX2 code, run and
  // tested on an AVX-512 machine. Part of every content key.
  int max_vector_bytes = 0;
};

// InvalidArgument naming `option` unless `bytes` is a vector width codegen writes
// (CompileOptions::max_vector_bytes: 0, 16, 32 or 64). Codegen checks its options with
// it; CompiledGraph and Jit check theirs first, under their own names.
absl::Status CheckVectorBytes(int bytes, const char* option);

// The compiled code of one program; destroying it frees the code (its ResourceTracker).
class NativeCode {
 public:
  // See compiler/lower/kernel_ir.h (Program) for the calling convention.
  using KernelFn = void (*)(void** args, const int64_t* symbols, char* workspace);

  virtual ~NativeCode() = default;
  virtual KernelFn function() const = 0;
  virtual const std::string& llvm_ir() const = 0;       // empty unless keep_ir
  virtual const std::string& optimized_ir() const = 0;  // empty unless keep_ir
  virtual const std::string& assembly() const = 0;      // empty unless emit_asm
  virtual const PhaseTimings& timings() const = 0;
};

// Emits one llvm::Module for `program`, optimizes it and JIT-compiles it into the
// process-wide engine. Errors from LLVM keep their message.
absl::StatusOr<std::unique_ptr<NativeCode>> CompileProgram(const Program& program,
                                                           const CompileOptions& options = {});

// Several programs compiled as one module (one optimization pipeline, one link: LLVM's
// fixed cost per module is several times that of a small kernel), each its own function.
// Destroying it frees the code of all of them.
class NativeModule {
 public:
  virtual ~NativeModule() = default;
  virtual int size() const = 0;
  virtual NativeCode::KernelFn function(int i) const = 0;
  virtual const std::string& llvm_ir() const = 0;       // empty unless keep_ir
  virtual const std::string& optimized_ir() const = 0;  // empty unless keep_ir
  virtual const std::string& assembly() const = 0;      // empty unless emit_asm
  virtual const PhaseTimings& timings() const = 0;
  virtual const std::string& object() const = 0;  // empty unless keep_object / loaded
};

// Compiles `programs` into one module whose function i is exported as `function_names[i]` (names
// unique among live code).
absl::StatusOr<std::unique_ptr<NativeModule>> CompileModule(
    const std::vector<const Program*>& programs, const std::vector<std::string>& function_names,
    const CompileOptions& options = {});
// Links an object a CompileModule with keep_object produced (in any process of the same
// target) and looks up its functions. InvalidArgument if it does not link.
absl::StatusOr<std::unique_ptr<NativeModule>> LoadModule(
    const std::string& object, const std::vector<std::string>& function_names);

// What the JIT targets, for reports: LLVM's version ("19.1.7"), the host CPU LLVM detected
// ("znver3") and its features; empty strings if the engine could not start.
struct HostTarget {
  std::string llvm_version;
  std::string triple;
  std::string cpu_name;
  std::string cpu_features;
  int64_t l2_bytes = 0;  // HostL2Bytes()
};
HostTarget DescribeHostTarget();

// The vector width in bytes generated code uses under CompileOptions::max_vector_bytes
// `max_vector_bytes` (0: the host's widest: 64 with AVX-512, 32 with AVX, else 16).
int CodegenVectorBytes(int max_vector_bytes);

// The host's per-core L2 cache in bytes, as the C library reports it
// (sysconf(_SC_LEVEL2_CACHE_SIZE)); 512 KiB when it does not. Generated products size
// their blocks by it, so it is part of what the JIT targets (JitIdentity).
int64_t HostL2Bytes();

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_CODEGEN_NATIVE_CODE_H_
