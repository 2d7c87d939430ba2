#include "compiler/passes/pipeline.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/passes/concat_weights.h"
#include "compiler/passes/constant_fold.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/dce.h"
#include "compiler/passes/decompose.h"
#include "compiler/passes/flatten_matmul_batch.h"
#include "compiler/passes/fold_channel_affine.h"
#include "compiler/passes/fold_norm_weight.h"
#include "compiler/passes/simplify.h"
#include "compiler/passes/sink_row_scale.h"
#include "ir/clock.h"
#include "ir/status_macros.h"
#include "ir/verifier.h"

namespace graphjit::compiler {

const std::vector<Pass>& BuiltinPasses() {
  static const auto* passes = new std::vector<Pass>{
      {"decompose", [](ir::Graph* g, PassContext*) { return Decompose(g); }},
      {"cse", [](ir::Graph* g, PassContext*) { return Cse(g); }},
      {"constant_fold", ConstantFold},
      {"simplify", [](ir::Graph* g, PassContext*) { return Simplify(g); }},
      {"fold_channel_affine", FoldChannelAffine},
      {"fold_norm_weight", FoldNormWeight},
      {"sink_row_scale", [](ir::Graph* g, PassContext*) { return SinkRowScale(g); }},
      {"flatten_matmul_batch", [](ir::Graph* g, PassContext*) { return FlattenMatmulBatch(g); }},
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

Pipeline& Pipeline::Add(Pass pass) {
  passes_.push_back(std::move(pass));
  return *this;
}

std::vector<std::string> Pipeline::names() const {
  std::vector<std::string> names;
  for (const Pass& p : passes_) names.push_back(p.name);
  return names;
}

absl::Status Pipeline::SetPrintAfter(
    const std::vector<std::string>& names,
    std::function<void(const std::string&, const ir::Graph&)> sink) {
  std::vector<std::string> known = this->names();
  for (const std::string& name : names) {
    if (name == "*") {
      print_all_ = true;
    } else if (std::find(known.begin(), known.end(), name) == known.end()) {
      return absl::InvalidArgumentError(absl::StrCat("--print-after: no pass '", name,
                                                     "' in the pipeline (",
                                                     absl::StrJoin(known, ", "), ")"));
    } else {
      print_after_.insert(name);
    }
  }
  sink_ = std::move(sink);
  return absl::OkStatus();
}

absl::Status Pipeline::Run(ir::Graph* graph, PassContext* ctx) {
  stats_.clear();
  for (const Pass& pass : passes_) {
    PassStats s;
    s.name = pass.name;
    s.nodes_before = graph->num_nodes();
    s.compute_before = graph->NumComputeNodes();
    const ir::Clock::time_point start = ir::Clock::now();
    absl::StatusOr<bool> changed = pass.run(graph, ctx);
    s.seconds = ir::SecondsSince(start);
    if (!changed.ok()) {
      return absl::Status(changed.status().code(),
                          absl::StrCat("pass ", pass.name, ": ", changed.status().message()));
    }
    // A pass that reports no change left the graph as the last verification saw it.
    if (verify_ && *changed) {
      if (absl::Status v = ir::VerifyGraph(*graph); !v.ok()) {
        return absl::InternalError(
            absl::StrCat("IR verifier failed after pass ", pass.name, ": ", v.message()));
      }
    }
    s.changed = *changed;
    s.nodes_after = graph->num_nodes();
    s.compute_after = graph->NumComputeNodes();
    stats_.push_back(s);
    if (sink_ && (print_all_ || print_after_.contains(pass.name))) sink_(pass.name, *graph);
  }
  return absl::OkStatus();
}

}  // namespace graphjit::compiler
