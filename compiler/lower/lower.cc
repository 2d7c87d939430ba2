// Lowering's driver: the list of steps from an optimized graph to a kernel program, run
// in order, each timed and optionally printed after. The steps live in their own files.
#include "compiler/lower/lower.h"

#include <utility>

#include "compiler/lower/buffer_plan.h"
#include "compiler/lower/build_kernels.h"
#include "compiler/lower/constant_fills.h"
#include "compiler/lower/fuse_attention.h"
#include "compiler/lower/fuse_epilogues.h"
#include "compiler/lower/narrow_fills.h"
#include "compiler/lower/order_loops.h"
#include "compiler/lower/parallel_loops.h"
#include "compiler/lower/simplify_index.h"
#include "compiler/lower/verify_program.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

// A step that rewrites only the program.
LowerStep ProgramStep(std::string name, void (*rewrite)(Program*),
                      bool LowerOptions::* option = nullptr) {
  return {std::move(name),
          [rewrite](const ir::Graph&, const LowerOptions&, LoweredGraph* lowered) {
            rewrite(&lowered->program);
            return absl::OkStatus();
          },
          option};
}

}  // namespace

const std::vector<LowerStep>& BuiltinLowerSteps() {
  static const auto* steps = new std::vector<LowerStep>{
      {"build_kernels",
       [](const ir::Graph& graph, const LowerOptions& options,
          LoweredGraph* lowered) -> absl::Status {
         GJ_ASSIGN_OR_RETURN(*lowered, BuildKernels(graph, options.products));
         return absl::OkStatus();
       }},
      ProgramStep("fuse_attention", FuseAttention, &LowerOptions::fuse_attention),
      // A tiled product takes the pointwise ops after it into its stores.
      ProgramStep("fuse_epilogues", FuseEpilogues, &LowerOptions::fuse_epilogues),
      // After fusion, on the final readers: each fill stores only what some kernel reads.
      ProgramStep("narrow_fills", NarrowFills),
      // After fusion (fills move with their products); before the plan, which shares a
      // filled buffer's bytes only with buffers holding the same constants.
      ProgramStep("mark_constant_fills", MarkConstantFills, &LowerOptions::fills_once),
      // After fusion: the fused kernel's dropped temps take no space.
      ProgramStep("plan_workspace", PlanWorkspace),
      // Last, so dumps, the program evaluator and codegen all see simplified kernels.
      ProgramStep("simplify_indices", SimplifyKernelIndices, &LowerOptions::simplify_indices),
      // On simplified indices: which loop of each pointwise kernel its vectors run along.
      ProgramStep("order_loops", OrderLoops),
      // After fusion, on the final kernels: which loop each may split across threads.
      ProgramStep("mark_parallel", MarkParallelLoops),
  };
  return *steps;
}

LowerPipeline::LowerPipeline()
    : manager_({.step = "lowering step",
                .list = "this lowering",
                .verifier = "kernel program verifier",
                .prefix_errors = false}) {
  manager_.set_verifier([](const State& s) { return VerifyProgram(s.lowered.program); });
  manager_.set_counter([](const State& s) -> std::vector<int64_t> {
    return {static_cast<int64_t>(s.lowered.program.kernels.size())};
  });
}

LowerPipeline LowerPipeline::FromOptions(const LowerOptions& options) {
  LowerPipeline p;
  for (const LowerStep& step : BuiltinLowerSteps()) {
    if (step.option != nullptr && !(options.*step.option)) continue;
    p.manager_.Add(step.name, [run = step.run, options](State& s) -> absl::StatusOr<bool> {
      GJ_RETURN_IF_ERROR(run(*s.graph, options, &s.lowered));
      return true;
    });
  }
  return p;
}

absl::Status LowerPipeline::SetPrintAfter(
    const std::vector<std::string>& names,
    std::function<void(const std::string&, const Program&)> sink) {
  return manager_.SetPrintAfter(names,
                                [sink = std::move(sink)](const std::string& step, const State& s) {
                                  if (sink) sink(step, s.lowered.program);
                                });
}

absl::StatusOr<LoweredGraph> LowerPipeline::Run(const ir::Graph& graph) {
  stats_.clear();
  State state{&graph, {}};
  absl::Status status = manager_.Run(state);
  for (const ir::StepStats& step : manager_.stats()) {
    stats_.push_back({step.name, static_cast<int>(step.after[0]), step.seconds});
  }
  GJ_RETURN_IF_ERROR(status);
  return std::move(state.lowered);
}

absl::StatusOr<LoweredGraph> Lower(const ir::Graph& graph, const LowerOptions& options) {
  return LowerPipeline::FromOptions(options).Run(graph);
}

}  // namespace graphjit::compiler
