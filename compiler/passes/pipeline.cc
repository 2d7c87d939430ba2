#include "compiler/passes/pipeline.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/passes/align_padded_rows.h"
#include "compiler/passes/concat_weights.h"
#include "compiler/passes/constant_fold.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/dce.h"
#include "compiler/passes/decompose.h"
#include "compiler/passes/flatten_matmul_batch.h"
#include "compiler/passes/fold_channel_affine.h"
#include "compiler/passes/fold_norm_weight.h"
#include "compiler/passes/hoist_loop_invariants.h"
#include "compiler/passes/orient_products.h"
#include "compiler/passes/pack_weight_rows.h"
#include "compiler/passes/simplify.h"
#include "compiler/passes/sink_channel_scale.h"
#include "compiler/passes/sink_row_scale.h"
#include "compiler/passes/unroll_scans.h"
#include "compiler/passes/winograd_convolutions.h"
#include "ir/status_macros.h"
#include "ir/verifier.h"

namespace graphjit::compiler {

const std::vector<Pass>& BuiltinPasses() {
  static const auto* passes = new std::vector<Pass>{
      {"unroll_scans", [](ir::Graph* g, PassContext*) { return UnrollScans(g); }},
      {"hoist_loop_invariants", [](ir::Graph* g, PassContext*) { return HoistLoopInvariants(g); }},
      {"decompose", [](ir::Graph* g, PassContext*) { return Decompose(g); }},
      {"cse", [](ir::Graph* g, PassContext*) { return Cse(g); }},
      {"constant_fold", ConstantFold},
      {"simplify", [](ir::Graph* g, PassContext*) { return Simplify(g); }},
      {"fold_channel_affine", FoldChannelAffine},
      {"fold_norm_weight", FoldNormWeight},
      {"sink_row_scale", [](ir::Graph* g, PassContext*) { return SinkRowScale(g); }},
      {"sink_channel_scale", [](ir::Graph* g, PassContext*) { return SinkChannelScale(g); }},
      {"flatten_matmul_batch", [](ir::Graph* g, PassContext*) { return FlattenMatmulBatch(g); }},
      {"winograd_convolutions", WinogradConvolutions},
      {"orient_products", OrientProducts},
      {"pack_weight_rows", PackWeightRows},
      {"align_padded_rows", AlignPaddedRows},
      // Opt-in: see concat_weights.h for what it was measured to cost and save.
      {"concat_weights", ConcatWeights, /*in_default=*/false},
      {"dce", [](ir::Graph* g, PassContext*) { return Dce(g); }},
  };
  return *passes;
}

absl::StatusOr<Pass> GetPass(absl::string_view name) {
  std::vector<std::string> names;
  for (const Pass& p : BuiltinPasses()) {
    if (p.name == name) return p;
    names.push_back(p.name);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown pass '", name, "'; passes: ", absl::StrJoin(names, ", ")));
}

Pipeline Pipeline::Default() {
  Pipeline p;
  for (const Pass& pass : BuiltinPasses()) {
    if (pass.in_default) p.Add(pass);
  }
  return p;
}

absl::StatusOr<Pipeline> Pipeline::FromNames(const std::vector<std::string>& names) {
  Pipeline p;
  for (const std::string& name : names) {
    GJ_ASSIGN_OR_RETURN(Pass pass, GetPass(name));
    p.Add(std::move(pass));
  }
  return p;
}

Pipeline::Pipeline()
    : manager_({.step = "pass", .list = "the pipeline", .verifier = "IR verifier"}) {
  manager_.set_verifier([](const State& s) { return ir::VerifyGraph(*s.graph); });
  manager_.set_counter([](const State& s) -> std::vector<int64_t> {
    return {s.graph->num_nodes(), s.graph->NumComputeNodes()};
  });
}

Pipeline& Pipeline::Add(Pass pass) {
  manager_.Add(pass.name, [run = std::move(pass.run)](State& s) { return run(s.graph, s.ctx); });
  return *this;
}

absl::Status Pipeline::SetPrintAfter(
    const std::vector<std::string>& names,
    std::function<void(const std::string&, const ir::Graph&)> sink) {
  return manager_.SetPrintAfter(names,
                                [sink = std::move(sink)](const std::string& pass, const State& s) {
                                  if (sink) sink(pass, *s.graph);
                                });
}

absl::Status Pipeline::Run(ir::Graph* graph, PassContext* ctx) {
  stats_.clear();
  State state{graph, ctx};
  absl::Status status = manager_.Run(state);
  for (const ir::StepStats& step : manager_.stats()) {
    PassStats& s = stats_.emplace_back();
    s.name = step.name;
    s.nodes_before = static_cast<int>(step.before[0]);
    s.compute_before = static_cast<int>(step.before[1]);
    s.nodes_after = static_cast<int>(step.after[0]);
    s.compute_after = static_cast<int>(step.after[1]);
    s.seconds = step.seconds;
    s.changed = step.changed;
  }
  return status;
}

}  // namespace graphjit::compiler
