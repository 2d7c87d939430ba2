// The IR pipelines of the two code tiers (O2 with vectorizers, the baseline's short list)
// and libmvec for the JIT engine.
#include "compiler/orc/optimize_module.h"

#include <string_view>

#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TypeSize.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Scalar/EarlyCSE.h"
#include "llvm/Transforms/Scalar/LICM.h"
#include "llvm/Transforms/Scalar/LoopPassManager.h"
#include "llvm/Transforms/Scalar/LoopRotation.h"
#include "llvm/Transforms/Scalar/SROA.h"
#include "llvm/Transforms/Scalar/SimplifyCFG.h"
#include "llvm/Transforms/Vectorize/LoopVectorize.h"

namespace graphjit::compiler::jit_internal {
namespace {

// libm functions without side effects once errno is ignored; each also with an `f` suffix
// for float.
constexpr std::string_view kPureMathFunctions[] = {
    "acos",  "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "ceil",
    "cos",   "cosh",  "erf",  "erfc",  "exp",  "exp2",  "expm1", "fabs", "floor",
    "fmax",  "fmin",  "fmod", "hypot", "log",  "log10", "log1p", "log2", "pow",
    "round", "sin",   "sinh", "sqrt",  "tan",  "tanh",  "trunc",
};

bool IsPureMathName(std::string_view name) {
  for (std::string_view base : kPureMathFunctions) {
    if (name == base) return true;
    if (name.size() == base.size() + 1 && name.starts_with(base) && name.back() == 'f') {
      return true;
    }
  }
  return false;
}

// A declaration named like a libm function but with other types is someone else's.
bool HasFloatingSignature(const llvm::Function& function) {
  if (!function.getReturnType()->isFloatingPointTy()) return false;
  for (const llvm::Argument& arg : function.args()) {
    if (!arg.getType()->isFloatingPointTy()) return false;
  }
  return true;
}

llvm::VecDesc FixedVecDesc(const char* scalar, const char* vector, unsigned lanes,
                           const char* vabi_prefix) {
  return llvm::VecDesc(scalar, vector, llvm::ElementCount::getFixed(lanes), /*Masked=*/false,
                       vabi_prefix);
}

// Runs `passes` on the functions with a loop codegen marked for the vectorizer
// (KernelEmitter::VectorizeLoops: a loop metadata node on a latch) and skips the rest.
class OnMarkedLoops : public llvm::PassInfoMixin<OnMarkedLoops> {
 public:
  explicit OnMarkedLoops(llvm::FunctionPassManager passes) : passes_(std::move(passes)) {}
  llvm::PreservedAnalyses run(llvm::Function& function, llvm::FunctionAnalysisManager& analyses) {
    for (const llvm::BasicBlock& block : function) {
      const llvm::Instruction* end = block.getTerminator();
      if (end != nullptr && end->getMetadata(llvm::LLVMContext::MD_loop) != nullptr) {
        return passes_.run(function, analyses);
      }
    }
    return llvm::PreservedAnalyses::all();
  }

 private:
  llvm::FunctionPassManager passes_;
};

// The baseline tier's passes, chosen on the decode layer (exact S = 64, f64) on a 2-core
// AMD EPYC znver4 (AVX-512), 2026-12-02. First pass, quiet machine (compile =
// `graphjit-dump decode --stats` wall on 2 threads; steps = bench_roofline's
// BM_DecodeStep kept-frame medians f64 S=64 / S=512, f32 S=64 / S=512):
//   O2, machine code -O3                                        225 ms; 19 / 28 / 10 / 15 us
//   sroa, early-cse, instcombine, simplifycfg; -O0               30 ms; 38 / 97 / 31 / 76 us
//   the same + licm, loop-vectorize, instcombine, simplifycfg;
//     -O0                                                        42 ms; 33 / 82 / 23 / 56 us
//     -O1 (greedy register allocation: 184 ms of codegen)       119 ms
//     -O2                                                       186 ms; 21 / 44 / 12 / 28 us
// Then with loop-rotate and more, on a busier machine (O2: 361-392 ms, steps 14-19 /
// 19-30 / 8-9 / 10-14 us), wall median of 5 and each step the median of 3 profiles of
// 500 calls (`graphjit-dump decode[:dtype=f32] --dim S=N --profile --tier=baseline`):
//   licm, loop-vectorize; -O0                    80 ms (0.21x); 34 / 84 / 29 / 58 us
//   + loop-rotate (this pipeline)                98 ms (0.26x); 44 / 57 / 22 / 27 us
//   + loop-rotate, indvars                      115 ms (0.31x); 39 / 53 / 18 / 31 us
//   + loop-rotate, indvars, slp-vectorizer      144 ms (0.38x); 27 / 51 / 19 / 30 us
// Without loop-rotate no reduction vectorizes (the exit test must be at the bottom): it
// halves the S = 512 steps for a fifth more compile. indvars and SLP speed the attention
// kernel up further but cost what the tier is for. Machine code at -O0 is what makes
// the tier cheap (fast instruction selection and register allocation: 25-30 ms of codegen
// against 165 ms at -O3). What it cost at run time, the fast register allocator keeping
// loop values in stack slots between blocks, is gone since -O0 allocates registers as
// O2 does (AllocateRegistersAtO0 in machine_code.h, with the measurements): the steps
// above came to within 1.25x of O2's for about a quarter more compile.
// Since codegen writes the matmuls' and attention's vector code itself, the vectorizer
// takes only the loops codegen marks (maps, reductions, the staged lhs of a matmul):
// vectorizing the zero fills and scalar tails of the others bought nothing and cost IR
// passes and instruction selection (decode, exact S = 64, znver5, 2026-12-03: IR after
// the passes 565 / 999 / 908 -> 487 / 916 / 752 instructions per module, 51 -> 45 ms
// wall; the kernels' times the same within noise, `graphjit-dump --profile`).
// Since codegen writes the vectors of maps and reductions too (codegen_lanes.cc), most
// kernels have no marked loop, and their functions skip loop-rotate, LICM and the
// vectorizer (OnMarkedLoops): decode at the baseline 20.6-20.8 -> 17.1-19.3 ms (exact
// S = 64), 25.6-26.7 -> 20.2-23.3 ms (symbolic), the steps equal within noise; LICM
// kept for every function bought nothing measurable either (bench_compile's
// BM_CompileDecode/*/1 and bench_roofline's baseline BM_DecodeStep medians, alternating
// runs, znver5, 2026-12-04).
llvm::ModulePassManager BaselinePipeline() {
  // instcombine's fixpoint check is for LLVM's own tests (the default pipelines turn it
  // off too): with it, a module that needs a second round aborts the process.
  const auto instcombine = [] {
    return llvm::InstCombinePass(llvm::InstCombineOptions().setVerifyFixpoint(false));
  };
  llvm::FunctionPassManager function;
  function.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
  function.addPass(llvm::EarlyCSEPass());
  function.addPass(instcombine());
  function.addPass(llvm::SimplifyCFGPass());
  // The loop passes and the vectorizer, for the functions with a loop left to it.
  // Rotated loops (the exit test at the bottom) are what the loop vectorizer takes:
  // without loop-rotate no reduction vectorizes.
  llvm::FunctionPassManager vectorize;
  llvm::LoopPassManager loops;
  loops.addPass(llvm::LoopRotatePass());
  loops.addPass(llvm::LICMPass(llvm::LICMOptions()));
  vectorize.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(loops),
                                                          /*UseMemorySSA=*/true));
  // Only the loops codegen marks (KernelEmitter::VectorizeLoops): the vector code of
  // the rest it wrote itself, and analysing them cost the vectorizer's time for nothing.
  vectorize.addPass(
      llvm::LoopVectorizePass(llvm::LoopVectorizeOptions().setVectorizeOnlyWhenForced(true)));
  vectorize.addPass(instcombine());
  vectorize.addPass(llvm::SimplifyCFGPass());
  function.addPass(OnMarkedLoops(std::move(vectorize)));
  llvm::ModulePassManager module;
  module.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(function)));
  return module;
}

}  // namespace

llvm::TargetLibraryInfoImpl MakeTargetLibraryInfo(const llvm::Triple& triple, bool use_libmvec) {
  llvm::TargetLibraryInfoImpl info(triple);
  if (use_libmvec && triple.isX86()) {
    info.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86, triple);
    // LLVM 19's table stops short of tanh, which glibc >= 2.35 exports as
    // _ZGV{b,d}N*v_tanh[f]. "_ZGV_LLVM_N<lanes>v" is the VFABI prefix of an unmasked
    // variant taking one vector argument. The strings are literals: VecDesc keeps
    // StringRefs.
    const llvm::VecDesc tanh_variants[] = {
        FixedVecDesc("tanh", "_ZGVbN2v_tanh", 2, "_ZGV_LLVM_N2v"),
        FixedVecDesc("tanh", "_ZGVdN4v_tanh", 4, "_ZGV_LLVM_N4v"),
        FixedVecDesc("tanhf", "_ZGVbN4v_tanhf", 4, "_ZGV_LLVM_N4v"),
        FixedVecDesc("tanhf", "_ZGVdN8v_tanhf", 8, "_ZGV_LLVM_N8v"),
        FixedVecDesc("llvm.tanh.f64", "_ZGVbN2v_tanh", 2, "_ZGV_LLVM_N2v"),
        FixedVecDesc("llvm.tanh.f64", "_ZGVdN4v_tanh", 4, "_ZGV_LLVM_N4v"),
        FixedVecDesc("llvm.tanh.f32", "_ZGVbN4v_tanhf", 4, "_ZGV_LLVM_N4v"),
        FixedVecDesc("llvm.tanh.f32", "_ZGVdN8v_tanhf", 8, "_ZGV_LLVM_N8v"),
    };
    info.addVectorizableFunctions(tanh_variants);
  }
  return info;
}

void MarkMathDeclarations(llvm::Module& module) {
  for (llvm::Function& function : module) {
    if (!function.isDeclaration() || function.isIntrinsic()) continue;
    if (!IsPureMathName(function.getName()) || !HasFloatingSignature(function)) continue;
    function.setDoesNotAccessMemory();
    function.setDoesNotThrow();
    function.setWillReturn();
  }
}

namespace {

llvm::PipelineTuningOptions Tuning() {
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;  // off by default in PipelineTuningOptions
  // Measured on the decode layer (exact S = 64, f64, this 2-core machine, one run each):
  //   unroll on,  interleave on : O2 + codegen ~170 ms, step ~39 us
  //   unroll off, interleave on : O2 + codegen  ~81 ms, step ~32 us
  //   unroll off, interleave off: O2 + codegen  ~65 ms, step ~38 us
  // The vectorizer's interleaving already hides FMA latency in the matvec loops; full
  // unrolling of the fixed-trip-count loops doubles compile time for no run-time gain.
  tuning.LoopUnrolling = false;
  tuning.LoopInterleaving = true;
  return tuning;
}

}  // namespace

ModuleOptimizer::ModuleOptimizer(llvm::TargetMachine& machine,
                                 const llvm::TargetLibraryInfoImpl& library_info, CodeTier tier,
                                 llvm::PassInstrumentationCallbacks* callbacks)
    : builder_(&machine, Tuning(), std::nullopt, callbacks) {
  // Registered before the defaults, which then keep this one (registerPass does not
  // replace an existing analysis).
  function_analyses_.registerPass([&] { return llvm::TargetLibraryAnalysis(library_info); });
  builder_.registerModuleAnalyses(module_analyses_);
  builder_.registerCGSCCAnalyses(cgscc_analyses_);
  builder_.registerFunctionAnalyses(function_analyses_);
  builder_.registerLoopAnalyses(loop_analyses_);
  builder_.crossRegisterProxies(loop_analyses_, function_analyses_, cgscc_analyses_,
                                module_analyses_);

  // O2 stays, measured against leaner pipelines on the decode layer (exact S = 64, this
  // 2-core AMD EPYC, AVX2; compile = bench_compile's BM_CompileDecode/0 median, steps =
  // bench_roofline's BM_DecodeStep tiled medians, f64 S=64 / S=512, f32 S=64 / S=512):
  //   default<O2>                                       134-144 ms; 40 / 68 / 22 / 32 us
  //   default<O2>, CodeGenOptLevel::Less                    130 ms; 40 / 74 / 27 / 34 us
  //   default<O1> (no vectorizers)                          102 ms; 58 / 197 / 33 / 169 us
  //   sroa, inline, early-cse, instcombine, simplifycfg,
  //     loop-rotate, licm, indvars, loop-vectorize, slp     102 ms; 52 / 98 / 26 / 57 us
  //   the same plus reassociate, gvn, loop-load-elim        113 ms; 48 / 102 / 23 / 57 us
  // The lean pipelines save a quarter of the compile and lose up to 3x at S = 512, where
  // the attention loops need O2's loop passes; about half the compile is machine-code
  // generation, which no IR pipeline removes.
  passes_ = tier == CodeTier::kBaseline
                ? BaselinePipeline()
                : builder_.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
}

void OptimizeModule(llvm::Module& module, llvm::TargetMachine& machine,
                    const llvm::TargetLibraryInfoImpl& library_info, CodeTier tier) {
  ModuleOptimizer(machine, library_info, tier).Run(module);
}

}  // namespace graphjit::compiler::jit_internal
