#include "compiler/compiled_graph.h"

#include <chrono>

#include "compiler/lower/call_frame.h"

namespace graphjit::compiler {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

absl::StatusOr<std::unique_ptr<CompiledGraph>> CompiledGraph::Compile(
    const ir::Graph& graph, const runtime::TensorMap& params, const CompileGraphOptions& options) {
  std::unique_ptr<CompiledGraph> cg(new CompiledGraph());
  cg->graph_ = graph;
  PassContext ctx{params, options.params_are_constant};
  auto start = std::chrono::steady_clock::now();
  if (options.optimize) {
    Pipeline pipeline = Pipeline::Default();
    if (absl::Status s = pipeline.Run(&cg->graph_, &ctx); !s.ok()) return s;
    cg->pass_stats_ = pipeline.stats();
  }
  cg->params_ = std::move(ctx.params);
  cg->timings_.passes = SecondsSince(start);

  start = std::chrono::steady_clock::now();
  absl::StatusOr<LoweredGraph> lowered = Lower(cg->graph_);
  if (!lowered.ok()) return lowered.status();
  cg->lowered_ = *std::move(lowered);
  cg->constants_ = ConstantTensors(cg->graph_, cg->lowered_);
  cg->timings_.lower = SecondsSince(start);

  absl::StatusOr<std::unique_ptr<NativeCode>> code =
      CompileProgram(cg->lowered_.program, options.codegen);
  if (!code.ok()) return code.status();
  cg->code_ = *std::move(code);
  cg->timings_.ir_build = cg->code_->timings().ir_build;
  cg->timings_.optimize = cg->code_->timings().optimize;
  cg->timings_.codegen = cg->code_->timings().codegen;
  return cg;
}

absl::StatusOr<std::vector<runtime::Tensor>> CompiledGraph::Run(
    const runtime::TensorMap& inputs, const ir::Bindings& bindings) const {
  absl::StatusOr<CallFrame> frame =
      PrepareCall(graph_, lowered_, inputs, params_, constants_, bindings);
  if (!frame.ok()) return frame.status();
  code_->entry()(frame->args.data(), frame->symbols.data(), frame->workspace.get());
  return std::move(frame->outputs);
}

std::vector<std::string> CompiledGraph::donated_inputs() const {
  std::vector<std::string> names;
  for (const ArgBinding& arg : lowered_.args) {
    if (arg.kind == ArgBinding::Kind::kOutput && arg.donor_arg >= 0) {
      names.push_back(lowered_.args[arg.donor_arg].name);
    }
  }
  return names;
}

}  // namespace graphjit::compiler
