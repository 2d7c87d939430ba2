// lower: an optimized graph to a kernel program (fused loop nests plus a buffer plan),
// as a list of named steps that can be printed after.
#ifndef GRAPHJIT_COMPILER_LOWER_LOWER_H_
#define GRAPHJIT_COMPILER_LOWER_LOWER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/lower/kernel_ir.h"
#include "compiler/lower/matmul_strategy.h"
#include "ir/graph.h"
#include "ir/pass_manager.h"

namespace graphjit::compiler {

// How the program's args map back to the graph, for the code that calls it.
struct ArgBinding {
  enum class Kind { kInput, kParam, kConstant, kOutput };
  Kind kind;
  std::string name;       // the input or param name ("" for constants and outputs)
  ir::ValueId value;      // the graph node (constants: its values feed the buffer)
  int output_index = -1;  // kOutput: which graph output
  int donor_arg = -1;     // kOutput written in place: the arg index of the donated input
};

struct LoweredGraph {
  Program program;
  std::vector<ArgBinding> args;  // args[i] describes program arg i
};

// Lowers an optimized graph (composites decomposed; run the pass pipeline first). Every
// node becomes an expression: elementwise and layout ops (broadcast, transpose, reshape,
// slice, concat, iota) are inlined into their consumers as index rewrites, so a chain of
// them costs one loop nest. A value is materialized in a buffer when it is a graph output,
// a reduction, a matmul, a gather or a kv_write, or when several kernels would otherwise
// recompute an expensive expression. Float matmuls of at least 4096 multiply-adds
// (and more than one row) run on materialized operands, as generated register tiles or
// OpenBLAS (LowerOptions::products, compiler/lower/matmul_strategy.h); smaller ones, and
// matrix-vector products, are generated loops. kv_write of a graph input whose old value nobody
// else reads is done in place (the output aliases the donated input). Temps share one
// workspace, reusing space whose live ranges do not overlap (buffer_plan.h). Attention's five
// kernels (scores, max, exp, sum, P @ V) become one (compiler/lower/fuse_attention.h), and a tiled
// product takes the pointwise kernel after it as its epilogue (fuse_epilogues.h), before
// the workspace is planned; fills of constants (a pad's border) run once per workspace
// rather than once per call (constant_fills.h). Last, the kernels' index expressions are simplified
// (compiler/lower/simplify_index.h). Runs LowerPipeline::FromOptions(options).
struct LowerOptions {
  bool simplify_indices = true;  // off: the expressions as built (for tests and --stats)
  bool fuse_attention = true;    // off: attention as five kernels (for tests)
  bool fuse_epilogues = true;    // off: a tiled product's pointwise consumer a kernel of its own
  bool fills_once = true;        // off: constant fills run on every call (to compare)
  ProductKernels products = ProductKernels::kAuto;  // large products: tiles or BLAS
};
absl::StatusOr<LoweredGraph> Lower(const ir::Graph& graph, const LowerOptions& options = {});

// A step of lowering: builds or rewrites the lowered program in place.
struct LowerStep {
  std::string name;
  std::function<absl::Status(const ir::Graph&, const LowerOptions&, LoweredGraph*)> run;
  // The option that turns the step off (null: always runs).
  bool LowerOptions::* option = nullptr;
};

// Lowering's steps, in order (each step's file pair says what it does and why):
//   build_kernels     a kernel per value that gets a buffer (build_kernels.h)
//   fuse_attention    attention's five kernels as one (fuse_attention.h)
//   fuse_epilogues    a tiled product's pointwise consumer applied by its stores
//                     (fuse_epilogues.h)
//   mark_constant_fills  fills of constants run once per workspace (constant_fills.h)
//   plan_workspace    the temps' offsets in one workspace (buffer_plan.h)
//   simplify_indices  index expressions simplified with the loop ranges (simplify_index.h)
//   mark_parallel     each kernel's loop that may split across threads (parallel_loops.h)
const std::vector<LowerStep>& BuiltinLowerSteps();

struct LowerStepStats {
  std::string name;
  int kernels = 0;  // in the program after the step
  double seconds = 0;
};

// Lowering as a list of named steps, run by the pass manager the graph passes use
// (ir/pass_manager.h): each is timed, the program can be printed after any of them, and
// the kernel-program verifier (compiler/lower/verify_program.h) runs after each.
class LowerPipeline {
 public:
  LowerPipeline();
  // The built-in steps the options leave on, in order.
  static LowerPipeline FromOptions(const LowerOptions& options = {});

  // Calls `sink(step, program)` after each step in `names` ("*" means every step).
  // InvalidArgument if a name is not a step of this pipeline.
  absl::Status SetPrintAfter(const std::vector<std::string>& names,
                             std::function<void(const std::string&, const Program&)> sink);

  // Runs the steps in order; the first error is returned as the step gave it (only
  // build_kernels fails, on graphs lowering does not take, naming the node), a verifier
  // failure after a step as Internal naming the step.
  absl::StatusOr<LoweredGraph> Run(const ir::Graph& graph);
  const std::vector<LowerStepStats>& stats() const { return stats_; }
  std::vector<std::string> names() const { return manager_.names(); }
  // Runs the verifier after every step (on by default; off only to test a step's output).
  void set_verify(bool verify) { manager_.set_verify(verify); }

 private:
  struct State {
    const ir::Graph* graph;
    LoweredGraph lowered;
  };
  ir::PassManager<State> manager_;
  std::vector<LowerStepStats> stats_;
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_LOWER_H_
