// ControlFlow: a graph with regions (ir/regions.h: while loops, ifs) compiled as control
// flow over compiled pieces. The graph's straight-line stretches between its loops and
// ifs are pieces, each compiled by CompiledGraph as a graph of its own; each loop's cond
// and body and each if's branches are compiled the same way (a region with control flow
// of its own recursively). An if runs the code of the branch its condition takes; a scan
// runs its body's code once per row, the row copied into a buffer of its own and each
// per-row value into its row of the stacked result.
// Everything compiles at once, in the one CompiledGraph::Compile of the whole graph: one
// graph, one compile, one cache entry. A run walks the pieces in order and runs each loop
// natively: the cond's compiled code computes the bool, the body's compiled code writes
// the next carried values into buffers swapped with the current ones (no copy, no
// allocation per trip, no return to the caller or graph break per trip).
//
// A runtime node (ir::IsRuntimeOp: nonzero, compress, top_k, ...) is a step of its own
// too: its eager kernel runs between the pieces and binds the symbol it defines (if any)
// from its result, so the pieces after it are compiled code sized by that symbol, read at
// run time like any symbol (PyTorch's unbacked symbols, here without a bound to allocate for:
// the kernel allocates its result once it has counted).
//
// What is not fused: a kernel never spans a piece boundary or a loop boundary (a loop's
// inputs and results are buffers).
#ifndef GRAPHJIT_COMPILER_COMPILED_CONTROL_FLOW_H_
#define GRAPHJIT_COMPILER_COMPILED_CONTROL_FLOW_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {

class CompiledGraph;         // compiler/compiled/compiled_graph.h
struct CompileGraphOptions;  // compiler/compiled/compiled_graph.h
struct PhaseTimings;         // compiler/orc/phase_timings.h

class ControlFlow {
 public:
  ~ControlFlow();

  // Compiles every piece and region of `graph` (already through the passes; it must
  // have regions) with `params` and `options`.
  static absl::StatusOr<std::unique_ptr<ControlFlow>> Compile(const ir::Graph& graph,
                                                              const runtime::TensorMap& params,
                                                              const CompileGraphOptions& options);

  // Runs the graph on `inputs` (checked as CompiledGraph::Run checks them) with
  // `params` for outputs that are weights themselves.
  absl::StatusOr<std::vector<runtime::Tensor>> Run(const runtime::TensorMap& inputs,
                                                   const ir::Bindings& bindings,
                                                   const runtime::TensorMap& params) const;

  // The compiled graphs: the pieces, every loop's cond and body and every if's
  // branches, recursively.
  int num_compiled() const;
  // The compiled graphs at this level, in graph order, each with a label ("piece 0",
  // "while %4 body", "if %7 then", "scan %3 body"), for dumps.
  std::vector<std::pair<std::string, const CompiledGraph*>> Compiled() const;
  // What compiling them cost, summed.
  void AddTimings(PhaseTimings* timings) const;
  // The loops at this level (not counting loops inside regions).
  int num_loops() const;

 private:
  struct Piece;
  struct Loop;
  struct Branch;
  struct ScanLoop;
  // One step of a run, in graph order: piece, loop, if or scan `index`.
  struct Step {
    enum Kind { kPiece, kLoop, kIf, kScan, kRuntime } kind;
    int index;  // a data-dependent step's: its node
  };
  ControlFlow() = default;
  absl::Status RunLoop(const Loop& loop, std::vector<runtime::Tensor>& values,
                       const ir::Bindings& bound) const;
  absl::Status RunBranch(const Branch& branch, std::vector<runtime::Tensor>& values,
                         const ir::Bindings& bound) const;
  absl::Status RunScan(const ScanLoop& scan, std::vector<runtime::Tensor>& values,
                       const ir::Bindings& bound) const;

  ir::Graph graph_;
  std::vector<Piece> pieces_;
  std::vector<Loop> loops_;
  std::vector<Branch> branches_;
  std::vector<ScanLoop> scans_;
  std::vector<Step> steps_;
  // The params and constants a loop, a branch or the outputs read (the pieces make theirs).
  std::vector<ir::ValueId> outer_sources_;
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_COMPILED_CONTROL_FLOW_H_
