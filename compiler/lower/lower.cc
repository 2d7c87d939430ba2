// Lowering's driver: the list of steps from an optimized graph to a kernel program, run
// in order, each timed and optionally printed after. The steps live in their own files.
#include "compiler/lower/lower.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/lower/buffer_plan.h"
#include "compiler/lower/build_kernels.h"
#include "compiler/lower/fuse_attention.h"
#include "compiler/lower/parallel_loops.h"
#include "compiler/lower/simplify_index.h"
#include "ir/clock.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

// A step that rewrites only the program.
LowerStep ProgramStep(std::string name, void (*rewrite)(Program*),
                      bool LowerOptions::* option = nullptr) {
  return {std::move(name),
          [rewrite](const ir::Graph&, LoweredGraph* lowered) {
            rewrite(&lowered->program);
            return absl::OkStatus();
          },
          option};
}

}  // namespace

const std::vector<LowerStep>& BuiltinLowerSteps() {
  static const auto* steps = new std::vector<LowerStep>{
      {"build_kernels",
       [](const ir::Graph& graph, LoweredGraph* lowered) -> absl::Status {
         GJ_ASSIGN_OR_RETURN(*lowered, BuildKernels(graph));
         return absl::OkStatus();
       }},
      ProgramStep("fuse_attention", FuseAttention, &LowerOptions::fuse_attention),
      // After fusion: the fused kernel's dropped temps take no space.
      ProgramStep("plan_workspace", PlanWorkspace),
      // Last, so dumps, the program evaluator and codegen all see simplified kernels.
      ProgramStep("simplify_indices", SimplifyKernelIndices, &LowerOptions::simplify_indices),
      // After fusion, on the final kernels: which loop each may split across threads.
      ProgramStep("mark_parallel", MarkParallelLoops),
  };
  return *steps;
}

LowerPipeline LowerPipeline::FromOptions(const LowerOptions& options) {
  LowerPipeline p;
  for (const LowerStep& step : BuiltinLowerSteps()) {
    if (step.option == nullptr || options.*step.option) p.steps_.push_back(step);
  }
  return p;
}

std::vector<std::string> LowerPipeline::names() const {
  std::vector<std::string> names;
  for (const LowerStep& s : steps_) names.push_back(s.name);
  return names;
}

absl::Status LowerPipeline::SetPrintAfter(
    const std::vector<std::string>& names,
    std::function<void(const std::string&, const Program&)> sink) {
  const std::vector<std::string> known = this->names();
  for (const std::string& name : names) {
    if (name == "*") {
      print_all_ = true;
    } else if (std::find(known.begin(), known.end(), name) == known.end()) {
      return absl::InvalidArgumentError(absl::StrCat("--print-after: no lowering step '", name,
                                                     "' in this lowering (",
                                                     absl::StrJoin(known, ", "), ")"));
    } else {
      print_after_.push_back(name);
    }
  }
  sink_ = std::move(sink);
  return absl::OkStatus();
}

absl::StatusOr<LoweredGraph> LowerPipeline::Run(const ir::Graph& graph) {
  stats_.clear();
  LoweredGraph lowered;
  for (const LowerStep& step : steps_) {
    const ir::Clock::time_point start = ir::Clock::now();
    GJ_RETURN_IF_ERROR(step.run(graph, &lowered));
    stats_.push_back(
        {step.name, static_cast<int>(lowered.program.kernels.size()), ir::SecondsSince(start)});
    if (sink_ && (print_all_ || std::find(print_after_.begin(), print_after_.end(), step.name) !=
                                    print_after_.end())) {
      sink_(step.name, lowered.program);
    }
  }
  return lowered;
}

absl::StatusOr<LoweredGraph> Lower(const ir::Graph& graph, const LowerOptions& options) {
  return LowerPipeline::FromOptions(options).Run(graph);
}

}  // namespace graphjit::compiler
