// KernelSet: a lowered program's kernels as separately compiled, content-addressed units
// (compiler/lower/kernel_unit.h) and the host-side driver that runs them in order. Equal
// kernels - within one graph (the layers of a model) or across graphs (the exact
// entries of a growing cache) - are compiled once and shared through the KernelStore;
// the distinct ones of a graph compile in parallel.
#ifndef GRAPHJIT_COMPILER_COMPILED_KERNEL_SET_H_
#define GRAPHJIT_COMPILER_COMPILED_KERNEL_SET_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "compiler/codegen/native_code.h"
#include "compiler/compiled/step_choice.h"
#include "compiler/lower/kernel_ir.h"
#include "compiler/store/content_key.h"
#include "compiler/store/content_store.h"
#include "ir/clock.h"
#include "ir/pass_manager.h"
#include "runtime/phased_job.h"

namespace graphjit::compiler {

class DiskCache;    // compiler/store/disk_cache.h
class RemoteCache;  // compiler/store/remote_cache.h
class BackEnd;      // compiler/compiled/back_end.h

// Where splitting a kernel starts to pay. Measured on the 2-core Zen 4 (bench_overhead):
// a fork-join of 2 parts on the spinning pool costs 100-140 ns (BM_PoolRun/2); a unit of
// Kernel::parallel_work takes 0.01-0.08 ns vectorized (a 128 x 128 f64 matvec, 32k units,
// 1.5 us; a 128-element multiply, 384 units, 30 ns). From 16k units (~0.7 us) a split on
// two cores saves more than twice its cost; every part gets at least half of it.
inline constexpr int64_t kDefaultMinParallelWork = 16384;
// The least work (2 units per multiply-add) of every part of a split BLAS call, the
// smallest included: OpenBLAS 0.3.21 computes products of up to 100^3 multiply-adds with
// its small-matrix kernels (the AVX-512 builds), which sum in another order, so a part
// below that changes bits (an 80-row sgemm split 48 / 32 at N = 120, K = 240 did).
inline constexpr int64_t kMinBlasPartWork = int64_t{1} << 21;

// One kernel of a program as canonicalizing it binds it (compiler/lower/kernel_unit.h):
// its content key, and the program buffers and symbols of its unit's args and symbols.
// The disk cache's graph-level record (compiler/compiled/graph_record.h) keeps them, so a
// warm start need not canonicalize the kernels again.
struct KernelBinding {
  ContentKey key;
  std::vector<int> buffers;
  std::vector<int> symbols;
};

struct KernelSetOptions {
  CompileOptions codegen;  // keep_ir / emit_asm compile privately (the text is kept)
  // Threads compiling one program's kernels (CompileEnv::compile_threads).
  int threads = 1;
  // Threads running one call's kernels (CompileEnv::threads, CompileGraphOptions::threads):
  // a kernel with a parallel loop (compiler/lower/parallel_loops.h) and enough work splits
  // it into up to this many ranges on the runtime's thread pool. 1..runtime::kMaxThreads.
  int run_threads = 1;
  // A kernel splits from this much work (Kernel::parallel_work units), each part getting
  // at least half of it; measured (kernel_set.cc). 0: every parallel loop splits.
  int64_t min_parallel_work = kDefaultMinParallelWork;
  // Live kernels by content key, shared with every other set compiled through it.
  KernelStore* store = &KernelStore::Default();
  // Object code of kernels by content key across processes; null: memory only.
  // CompiledGraph passes CompileEnv::disk.
  DiskCache* disk = nullptr;
  // The shared tier below `disk` (Redis, GRAPHJIT_REMOTE_CACHE): on a local miss the
  // module is fetched from it (and stored on disk), or compiled once across processes
  // under its lock and stored in both. Null: none. CompiledGraph passes
  // CompileEnv::remote.
  RemoteCache* remote = nullptr;
  // The program's kernels as an earlier KernelSet bound them (bindings(), one per kernel),
  // used instead of canonicalizing when every kernel's code is live or on disk; else, or
  // if they do not fit the program, the program is canonicalized as without them.
  const std::vector<KernelBinding>* bindings = nullptr;
  // Calls `sink(step, text)` with a listing of the back end's state after each of these
  // steps (compiler/compiled/back_end.h; "*" for all). InvalidArgument from Compile for a
  // name that is no step.
  std::vector<std::string> print_after = {};
  std::function<void(const std::string& step, const std::string& text)> print_sink = {};
};

struct KernelSetStats {
  int kernels = 0;   // kernels of the program
  int distinct = 0;  // distinct canonical kernels among them
  int compiled = 0;  // distinct kernels this set compiled
  int reused = 0;    // distinct kernels found live in the store
  int loaded = 0;    // distinct kernels loaded from the disk or the remote cache
  int fetched = 0;   // of them, from the remote cache
  int modules = 0;   // LLVM modules the missing kernels compiled (or loaded) as
  int threads = 0;   // compile threads used
  // The remote cache (when one is set), in modules: values found, keys missing, keys
  // waited on while another process compiled them, keys compiled without its lock
  // (server unreachable / slow / failing, or the wait ran out).
  bool remote = false;
  int remote_hits = 0;
  int remote_misses = 0;
  int remote_lock_waits = 0;
  int remote_fallbacks = 0;
  PhaseTimings timings;  // summed over the compiled kernels
  // Each module this set compiled (not the loaded or shared ones): its kernels' names
  // (program order of their first use) and its phases and IR instruction counts.
  struct Module {
    std::vector<std::string> kernels;
    PhaseTimings timings;
  };
  std::vector<Module> compiled_modules;
  double wall_seconds = 0;  // the whole KernelSet::Compile
  // The back end's steps (compiler/compiled/back_end.h), each with its wall seconds.
  std::vector<ir::StepStats> steps;
};

class KernelSet {
 public:
  // Runs the back end's steps (compiler/compiled/back_end.h): canonicalize the kernels
  // into units and content keys (equal keys are one distinct kernel); plan each kernel's
  // call; reuse the distinct kernels live in the KernelStore; group the missing ones into
  // modules (compiler/compiled/kernel_modules.h); get or compile each module through the
  // stores (live, disk, remote, else compiled in parallel); link: add the modules' kernels
  // to the KernelStore and bind each kernel's call to its code.
  static absl::StatusOr<std::unique_ptr<KernelSet>> Compile(const Program& program,
                                                            const KernelSetOptions& options = {});

  // Runs the kernels in order with Program's calling convention (see kernel_ir.h), each
  // split over up to run_threads() threads where it has a parallel loop and the work to
  // pay for the split (the results are the same bits either way). On more than one thread
  // the whole call is one job for the pool (runtime/phased_job.h): consecutive kernels
  // that touch no memory another writes form a phase (step_phases.h) whose kernels and
  // parts run on different threads at once, one synchronization per phase. Safe to call
  // from several threads at once (with distinct args and workspaces).
  void Run(void** args, const int64_t* symbols, char* workspace) const;
  // The same, adding each kernel's wall seconds to kernel_seconds[k] (program order, one
  // slot per kernel): what the profiler (compiler/compiled/profile.h) reads. Kernels run
  // one at a time here (each split as by Run, with its own fork-join), so each has a time.
  void RunTimed(void** args, const int64_t* symbols, char* workspace, double* kernel_seconds) const;
  // Both skip the kernels that store the same constants every call (Kernel::once) when
  // the workspace's header (compiler/lower/buffer_plan.h) says this set ran on it last,
  // for the same symbol values; else they run them. Every call writes the header, so a
  // workspace another program used in between gets its constants again.
  // A workspace fresh from the allocator must have its header cleared first: its bytes
  // may happen to look like a set's.
  static void ClearHeader(char* workspace, int64_t bytes);

  const KernelSetStats& stats() const { return stats_; }
  int run_threads() const { return run_threads_; }
  // How many ranges kernel k (program order) splits into at these symbols' values.
  int PartsOf(int k, const int64_t* symbols) const;
  // Where Run puts each kernel at these symbols' values: one element per task, in phase
  // order (graphjit-dump --stats prints it). Empty when the call would not fork.
  struct StepTask {
    int phase = 0;
    int kernel = 0;  // program order
    int thread = 0;
    int64_t begin = 0, end = 0;  // the range of its parallel loop; whole: 0, extent
    bool ranged = false;
  };
  std::vector<StepTask> PlanOf(const int64_t* symbols) const;
  // The content key of each kernel, in program order.
  std::vector<ContentKey> keys() const;
  // Each kernel's binding, in program order (for KernelSetOptions::bindings).
  std::vector<KernelBinding> bindings() const;
  // Whether the kernels were bound from KernelSetOptions::bindings (not canonicalized).
  bool bound() const { return bound_; }
  // Concatenated per-module texts (empty unless keep_ir / emit_asm).
  const std::string& llvm_ir() const { return llvm_ir_; }
  const std::string& optimized_ir() const { return optimized_ir_; }
  const std::string& assembly() const { return assembly_; }

 private:
  friend class BackEnd;  // builds the set, step by step

  struct Call {
    std::shared_ptr<const KernelCode> code;
    NativeCode::KernelFn function = nullptr;
    std::vector<int> buffers;  // program buffer of each unit arg
    std::vector<int> symbols;  // program symbol of each unit symbol
    ContentKey key;
    // The unit takes a range of its parallel loop (two symbols past its own); that loop's
    // extent and one iteration's work over the program's symbols (null: the kernel runs
    // whole), split points' multiple; a call of OpenBLAS.
    bool ranged = false;
    ExprPtr parallel_extent, parallel_work;
    int64_t parallel_align = 1;
    bool blas = false;
    // The whole kernel's work (null: not evaluable by the host) and its step phase
    // (compiler/compiled/step_phases.h).
    ExprPtr work;
    int phase = 0;
    bool once = false;  // Kernel::once
  };
  // Whether the once kernels' constants are in `workspace` from an earlier call of this
  // set at the same symbols; writes the header for this call either way.
  bool ConstantsKept(const int64_t* symbols, char* workspace) const;
  // Where each program buffer is for this call.
  void Locate(void** args, const int64_t* symbols, char* workspace,
              absl::InlinedVector<void*, 64>* address) const;
  // Each call in order (but the once ones when `skip_once`), its unit args and symbols.
  template <typename OnCall>
  void RunCalls(void** args, const int64_t* symbols, char* workspace, bool skip_once,
                OnCall on_call) const;
  // Runs `call` with its unit args and symbols (program symbols for the split), split
  // over up to `threads` threads.
  void RunCall(const Call& call, void** unit_args, const int64_t* unit_symbols,
               const int64_t* symbols, int threads) const;
  // The step as a phased job for the thread pool: each phase's split kernels in ranges
  // across the threads (part p on thread p, as RunCall splits them), then its whole
  // kernels, costliest first, on the least loaded thread (an idle one only for a kernel
  // worth a split). BLAS calls run single-threaded from then on.
  // With `plan`, also lists the tasks there (args may then be null).
  void PlanStep(void** args, const int64_t* symbols, char* workspace, runtime::PhasedJob* job,
                std::vector<StepTask>* plan = nullptr, bool skip_once = false) const;
  // Whether PlanStep would give any thread but the first a task at these symbols.
  bool StepForks(const int64_t* symbols) const;
  // The work (Kernel::parallel_work units) of all kernels at these symbols.
  int64_t StepWork(const int64_t* symbols) const;
  // Part p's range [first, second) of `call`'s parallel loop split into `parts`.
  static std::pair<int64_t, int64_t> PartRange(const Call& call, int64_t extent, int parts, int p);
  // The ranges `call` splits into on up to `threads` threads, and its parallel loop's
  // extent.
  int Parts(const Call& call, const int64_t* symbols, int threads, int64_t* extent) const;
  // Where each program buffer is at run time: an arg, or the workspace at an offset
  // (constant, or an i64 expression of the symbols).
  struct Address {
    int arg = -1;
    int64_t offset = 0;
    ExprPtr offset_expr;
  };
  static std::vector<Address> AddressesOf(const Program& program);
  std::vector<Call> calls_;
  // The workspace header: this set's identity (unique in the process), whether the
  // program has a workspace (and so a header), its symbol count, and any once kernel.
  uint64_t identity_ = 0;
  bool has_header_ = false;
  bool any_once_ = false;
  int num_symbols_ = 0;
  bool bound_ = false;
  int run_threads_ = 1;
  int64_t min_parallel_work_ = kDefaultMinParallelWork;
  std::optional<bool> fixed_forks_;    // StepForks of a program without symbols
  std::optional<int64_t> fixed_work_;  // StepWork of a program without symbols
  // Whether a step that forks runs on the pool or on the caller, measured (null when
  // min_parallel_work is 0: every such step runs on the pool, as tests of splits want).
  std::unique_ptr<StepChoice> choice_;
  std::vector<Address> addresses_;
  KernelSetStats stats_;
  std::string llvm_ir_, optimized_ir_, assembly_;
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_COMPILED_KERNEL_SET_H_
