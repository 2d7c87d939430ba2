// The pass pipeline: a list of named graph passes run by the one pass manager
// (ir/pass_manager.h): the IR verifier after each that changed the graph, optional IR
// printing after chosen passes, and per-pass statistics.
#ifndef GRAPHJIT_COMPILER_PASSES_PIPELINE_H_
#define GRAPHJIT_COMPILER_PASSES_PIPELINE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/passes/pass_context.h"
#include "ir/graph.h"
#include "ir/pass_manager.h"

namespace graphjit::compiler {

// A pass rewrites the graph in place and says whether it changed anything.
using PassFn = std::function<absl::StatusOr<bool>(ir::Graph*, PassContext*)>;
struct Pass {
  std::string name;
  PassFn run;
  // In Pipeline::Default(). Opt-in passes (FromNames) are ones measured not to pay for
  // the decode layer on the machines this project is measured on; each says why.
  bool in_default = true;
};

// Every built-in pass, in the default pipeline's order (the lecture's: decompose, cse,
// constant_fold, simplify, fold_norm_weight, then sink_row_scale and dce), opt-in passes
// where they would go.
const std::vector<Pass>& BuiltinPasses();
// A built-in pass by name; InvalidArgument lists the valid names.
absl::StatusOr<Pass> GetPass(absl::string_view name);

struct PassStats {
  std::string name;
  int nodes_before = 0;  // all nodes, inputs and params included
  int nodes_after = 0;
  int compute_before = 0;  // nodes that compute (Graph::NumComputeNodes)
  int compute_after = 0;
  double seconds = 0;
  bool changed = false;
};

class Pipeline {
 public:
  Pipeline();

  // The built-in passes that are in_default, in order.
  static Pipeline Default();
  // Built-in passes by name, in the given order.
  static absl::StatusOr<Pipeline> FromNames(const std::vector<std::string>& names);

  Pipeline& Add(Pass pass);
  // Runs the verifier after every pass that changed the graph (on by default: it costs
  // far less than the code generation that follows, and a pass bug caught here names the
  // pass).
  void set_verify(bool verify) { manager_.set_verify(verify); }
  // Calls `sink(pass, graph)` after each pass in `names` ("*" means every pass).
  // InvalidArgument if a name is not a pass of this pipeline.
  absl::Status SetPrintAfter(const std::vector<std::string>& names,
                             std::function<void(const std::string&, const ir::Graph&)> sink);

  // Runs the passes in order. A pass error, or a verifier failure after a pass, is
  // returned with the pass named.
  absl::Status Run(ir::Graph* graph, PassContext* ctx);
  const std::vector<PassStats>& stats() const { return stats_; }
  std::vector<std::string> names() const { return manager_.names(); }

 private:
  // What the manager's steps see: the graph and what passes may know beyond it.
  struct State {
    ir::Graph* graph;
    PassContext* ctx;
  };
  ir::PassManager<State> manager_;
  std::vector<PassStats> stats_;
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_PIPELINE_H_
