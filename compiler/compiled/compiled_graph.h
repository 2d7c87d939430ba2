// CompiledGraph: a graph through the whole compiler (passes, lowering, LLVM, ORC) into
// native code you can call with named tensors.
#ifndef GRAPHJIT_COMPILER_COMPILED_COMPILED_GRAPH_H_
#define GRAPHJIT_COMPILER_COMPILED_COMPILED_GRAPH_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/codegen/native_code.h"
#include "compiler/compiled/call_frame.h"
#include "compiler/compiled/compile_env.h"
#include "compiler/compiled/control_flow.h"
#include "compiler/compiled/kernel_set.h"
#include "compiler/lower/lower.h"
#include "compiler/orc/phase_timings.h"
#include "compiler/passes/pass_context.h"
#include "compiler/passes/pipeline.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {

struct CompileGraphOptions {
  bool optimize = true;             // run the default pass pipeline first (else the graph must
                                    // already be decomposed)
  bool params_are_constant = true;  // weights fixed for the code's life: passes may fold
  CompileOptions codegen = {};      // keep IR text, emit assembly
  // Lowering runs attention (scores, softmax, P @ V) as one kernel with an online softmax
  // (compiler/lower/fuse_attention.h). Off only to measure what that buys.
  bool fuse_attention = true;
  // A tiled product applies the pointwise ops after it (bias, activation, residual) as it
  // stores each tile (compiler/lower/fuse_epilogues.h). Off only to measure what that buys.
  bool fuse_epilogues = true;
  // Kernels that store the same constants every call (a pad's border of zeros) run once
  // per workspace (compiler/lower/constant_fills.h). Off only to measure what that buys.
  bool fills_once = true;
  // Where kernels are found and kept (memory, disk, Redis), compile threads, dumps,
  // profiling and logging; null: CompileEnv::FromEnvironment(). Must outlive the compile.
  const CompileEnv* env = nullptr;
  // Threads running one call's kernels (CompileEnv::threads when unset): 1..1024, else
  // Compile fails with InvalidArgument. The results are the same bits for any count.
  std::optional<int> threads;
  // The work (Kernel::parallel_work units) from which a kernel splits across threads;
  // -1: the measured default (compiler/compiled/kernel_set.h). 0 splits every parallel
  // loop, however small: what tests use to run uneven splits on tiny shapes.
  int64_t min_parallel_work = -1;
  // The kernels of large products: generated tiles or OpenBLAS (auto: measured per
  // shape; compiler/lower/matmul_strategy.h). Unset: CompileEnv::products
  // (GRAPHJIT_PRODUCTS).
  std::optional<ProductKernels> products = {};
  // The back end's state printed after these of its steps (compiler/compiled/back_end.h,
  // KernelSetOptions::print_after; graphjit-dump --print-after=group_modules).
  std::vector<std::string> print_after_back_end = {};
  std::function<void(const std::string& step, const std::string& text)> back_end_sink = {};
};

// InvalidArgument naming `option` unless threads is unset or in [1, runtime::kMaxThreads].
absl::Status CheckThreads(const std::optional<int>& threads, const char* option);
// The environment a compile with `options` uses: options.env, else the process's.
const CompileEnv& EnvOf(const CompileGraphOptions& options);
// The threads a graph compiled with `options` runs its kernels on.
int ThreadsOf(const CompileGraphOptions& options);
// The product kernels a graph compiled with `options` uses.
ProductKernels ProductsOf(const CompileGraphOptions& options);
// The context the pass pipeline runs with when a graph with `params` is compiled under
// `options`; tools that run the pipeline themselves (optimize = false) use it too, so
// what they print is what a compile makes.
PassContext PassContextFor(const runtime::TensorMap& params, const CompileGraphOptions& options);

class CompiledGraph {
 public:
  ~CompiledGraph();

  // Compiles `graph` with parameter values `params` (kept by the compiled graph, with
  // whatever weights the passes fold). A graph with regions (a while loop) compiles as
  // control flow over compiled pieces (compiler/compiled/control_flow.h): its program()
  // is then empty and control_flow() holds the pieces.
  static absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(
      const ir::Graph& graph, const runtime::TensorMap& params,
      const CompileGraphOptions& options = {});

  // Runs the native code. Inputs are checked like the interpreter's (dtype, rank, dims,
  // symbols bound consistently) before any memory is touched. Inputs named by
  // donated_inputs() are updated in place: the corresponding outputs share their buffer.
  // With CompileEnv::profile (GRAPHJIT_PROFILE=1) every call is timed per kernel and the
  // table of compiler/compiled/profile.h goes to stderr when the compiled graph is destroyed.
  absl::StatusOr<std::vector<runtime::Tensor>> Run(const runtime::TensorMap& inputs,
                                                   const ir::Bindings& bindings = {}) const;
  // Run, adding each kernel's wall seconds to (*kernel_seconds)[k] (resized to one slot
  // per kernel of program()) and setting *symbols to the program symbols' values.
  absl::StatusOr<std::vector<runtime::Tensor>> RunTimed(const runtime::TensorMap& inputs,
                                                        const ir::Bindings& bindings,
                                                        std::vector<double>* kernel_seconds,
                                                        ir::Bindings* symbols) const;

  // Inputs whose buffers the code writes (kv_write in place).
  std::vector<std::string> donated_inputs() const;

  const ir::Graph& graph() const { return graph_; }  // after the passes
  const runtime::TensorMap& params() const { return params_; }
  const Program& program() const { return lowered_.program; }
  // The pieces and loops of a graph with regions; null for a straight-line graph.
  const ControlFlow* control_flow() const { return control_.get(); }
  // The kernels' code, their content keys and what compiling them cost.
  const KernelSet& kernels() const { return *kernels_; }
  const PhaseTimings& timings() const { return timings_; }
  // Whether the passes and lowering were skipped: their result came from the disk cache's
  // graph-level record (compiler/compiled/graph_record.h), and pass_stats() is empty.
  bool from_record() const { return from_record_; }
  const std::vector<PassStats>& pass_stats() const { return pass_stats_; }

 private:
  // Compile, reading the disk cache's graph record only if `read_record` (a record whose
  // bindings turn out not to match is removed and the graph compiled without one).
  static absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(const ir::Graph& graph,
                                                                const runtime::TensorMap& params,
                                                                const CompileGraphOptions& options,
                                                                bool read_record);
  explicit CompiledGraph(bool profile);
  // The pass pipeline (when options.optimize): graph_, params_.
  absl::Status Optimize(const ir::Graph& graph, const runtime::TensorMap& params,
                        const CompileGraphOptions& options);
  // Optimize and lowering: graph_, params_, lowered_.
  absl::Status OptimizeAndLower(const ir::Graph& graph, const runtime::TensorMap& params,
                                const CompileGraphOptions& options);
  // The passes, then ControlFlow::Compile (a graph with regions).
  absl::Status OptimizeAndCompileControl(const ir::Graph& graph, const runtime::TensorMap& params,
                                         const CompileGraphOptions& options);
  // Takes the graph, params and lowered program from the graph-level record of `key`
  // (compiler/compiled/graph_record.h) if `disk` has an intact one: true. A record that
  // fails its checks is rejected (removed, logged) and false returned: compile instead.
  // Also gives the kernels' bindings the record keeps (KernelSetOptions::bindings).
  bool ReadRecord(DiskCache& disk, const ContentKey& key, const runtime::TensorMap& params,
                  std::vector<KernelBinding>* bindings);
  friend class CompiledCall;  // compiler/compiled/compiled_call.h binds args_ once
  struct EnvProfile;          // GRAPHJIT_PROFILE's sums (compiled_graph.cc)

  ir::Graph graph_;
  runtime::TensorMap params_;
  LoweredGraph lowered_;
  std::vector<runtime::Tensor> constants_;
  DynamicBounds bounds_;  // the per-call bounds checks, prepared once
  std::unique_ptr<KernelSet> kernels_;
  PhaseTimings timings_;
  bool from_record_ = false;
  std::vector<PassStats> pass_stats_;
  std::unique_ptr<EnvProfile> env_profile_;  // null unless CompileEnv::profile
  std::unique_ptr<ControlFlow> control_;     // a graph with regions only
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_COMPILED_COMPILED_GRAPH_H_
