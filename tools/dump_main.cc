// graphjit-dump: prints a model's (or a .gir file's) IR, to inspect what graphjit builds.
//   graphjit-dump decode                      optimized decode layer, symbolic S and P
//   graphjit-dump decode --stage=traced       as the model recorded it
//   graphjit-dump decode --dim S=128          the exact-shape graph for S = 128
//   graphjit-dump decode --print-after-all    the IR after every pass
//   graphjit-dump graph.gir                   parse, verify and re-print a textual IR file
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/analysis/bytes_moved.h"
#include "compiler/analysis/flops.h"
#include "compiler/compiled_graph.h"
#include "compiler/passes/pipeline.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "models/model.h"
#include "tools/flag_util.h"

ABSL_FLAG(std::string, stage, "optimized",
          "what to print: traced (as the model recorded it), optimized (after the pass "
          "pipeline), kernels (the lowered kernel program), llvm (LLVM IR as emitted), "
          "llvm-opt (after LLVM's O2), asm (machine code)");
ABSL_FLAG(std::vector<std::string>, print_after, {},
          "also print the IR after these passes (comma-separated pass names)");
ABSL_FLAG(bool, print_after_all, false, "also print the IR after every pass");
ABSL_FLAG(std::vector<std::string>, dim, {},
          "fix dynamic dims to constants, e.g. --dim S=128 (comma-separated for several)");
ABSL_FLAG(bool, padded, false, "trace with the optional inputs of padded shapes (kmask)");
ABSL_FLAG(bool, stats, false,
          "print node counts (total and computing) after each pass, and pass times");

namespace graphjit {
namespace {

absl::StatusOr<ir::Bindings> ParseDims(const std::vector<std::string>& items) {
  ir::Bindings dims;
  for (const std::string& item : items) {
    std::vector<std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    int64_t value = 0;
    if (kv.size() != 2 || kv[0].empty() || !absl::SimpleAtoi(kv[1], &value) || value < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--dim: expected NAME=non-negative integer, got '", item, "'"));
    }
    dims[kv[0]] = value;
  }
  return dims;
}

// A graph to dump and the parameter values its passes may fold (none for a .gir file).
struct Loaded {
  ir::Graph graph;
  runtime::TensorMap params;
};

absl::StatusOr<Loaded> LoadGraph(const std::string& what, const ir::Bindings& dims) {
  if (absl::EndsWith(what, ".gir")) {
    absl::StatusOr<ir::Graph> g = ir::ParseGraphFile(what);
    if (!g.ok()) return g.status();
    return Loaded{*std::move(g), {}};
  }
  absl::StatusOr<std::unique_ptr<models::Model>> model = models::CreateModel(what);
  if (!model.ok()) return model.status();
  for (const auto& [name, value] : dims) {
    std::vector<std::string> dyn = (*model)->DynamicDims();
    if (std::find(dyn.begin(), dyn.end(), name) == dyn.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--dim: model has no dynamic dim '", name,
                       "' (dynamic dims: ", dyn.empty() ? "none" : absl::StrJoin(dyn, ", "), ")"));
    }
  }
  models::TraceOptions options;
  options.fixed_dims = dims;
  options.padded = absl::GetFlag(FLAGS_padded);
  absl::StatusOr<ir::Graph> g = models::TraceModel(**model, options);
  if (!g.ok()) return g.status();
  return Loaded{*std::move(g), (*model)->params()};
}

void PrintStats(const ir::Graph& traced, const compiler::Pipeline* pipeline) {
  std::printf("# %-18s %7s %9s %10s\n", "stage", "nodes", "computing", "time (us)");
  std::printf("# %-18s %7d %9d %10s\n", "traced", traced.num_nodes(), traced.NumComputeNodes(), "");
  if (pipeline == nullptr) return;
  for (const compiler::PassStats& s : pipeline->stats()) {
    std::printf("# %-18s %7d %9d %10.1f\n", s.name.c_str(), s.nodes_after, s.compute_after,
                s.seconds * 1e6);
  }
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(absl::StrCat(
      "Prints graphjit IR.\nUsage: graphjit-dump MODEL_SPEC|FILE.gir [flags]\nModels: ",
      absl::StrJoin(models::ModelNames(), ", "),
      " (e.g. decode:d=128,H=8,G=2,dh=16,f=344,dtype=f64)"));
  std::vector<std::string> normalized = tools::UnderscoreFlagNames(argc, argv);
  std::vector<char*> raw;
  for (std::string& a : normalized) raw.push_back(a.data());
  std::vector<char*> args = absl::ParseCommandLine(static_cast<int>(raw.size()), raw.data());
  if (args.size() != 2) {
    std::fprintf(stderr, "%s\n", std::string(absl::ProgramUsageMessage()).c_str());
    return 2;
  }
  const std::string stage = absl::GetFlag(FLAGS_stage);
  const std::vector<std::string> stages = {"traced", "optimized", "kernels",
                                           "llvm",   "llvm-opt",  "asm"};
  if (std::find(stages.begin(), stages.end(), stage) == stages.end()) {
    std::fprintf(stderr, "graphjit-dump: unknown --stage '%s' (stages: %s)\n", stage.c_str(),
                 absl::StrJoin(stages, ", ").c_str());
    return 2;
  }
  absl::StatusOr<ir::Bindings> dims = ParseDims(absl::GetFlag(FLAGS_dim));
  absl::StatusOr<Loaded> loaded =
      dims.ok() ? LoadGraph(args[1], *dims) : absl::StatusOr<Loaded>(dims.status());
  if (!loaded.ok()) {
    std::fprintf(stderr, "graphjit-dump: %s\n", std::string(loaded.status().message()).c_str());
    return 1;
  }
  ir::Graph graph = loaded->graph;
  compiler::Pipeline pipeline = compiler::Pipeline::Default();
  std::vector<std::string> print_after = absl::GetFlag(FLAGS_print_after);
  if (absl::GetFlag(FLAGS_print_after_all)) print_after.push_back("*");
  absl::Status status =
      pipeline.SetPrintAfter(print_after, [](const std::string& pass, const ir::Graph& g) {
        std::printf("# IR after %s\n%s", pass.c_str(), ir::PrintGraph(g).c_str());
      });
  bool optimize = stage != "traced" || !print_after.empty();
  compiler::PassContext ctx{loaded->params};
  if (status.ok() && optimize) status = pipeline.Run(&graph, &ctx);
  std::unique_ptr<compiler::CompiledGraph> compiled;
  bool compile = stage == "kernels" || stage == "llvm" || stage == "llvm-opt" || stage == "asm" ||
                 absl::GetFlag(FLAGS_stats);
  if (status.ok() && compile) {
    compiler::CompileGraphOptions options;
    options.optimize = false;  // the pipeline above already ran
    options.codegen.keep_ir = stage == "llvm" || stage == "llvm-opt";
    options.codegen.emit_asm = stage == "asm";
    absl::StatusOr<std::unique_ptr<compiler::CompiledGraph>> cg =
        compiler::CompiledGraph::Compile(graph, ctx.params, options);
    if (cg.ok()) {
      compiled = *std::move(cg);
    } else {
      status = cg.status();
    }
  }
  if (!status.ok()) {
    std::fprintf(stderr, "graphjit-dump: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  if (print_after.empty()) {
    if (stage == "traced") std::fputs(ir::PrintGraph(loaded->graph).c_str(), stdout);
    if (stage == "optimized") std::fputs(ir::PrintGraph(graph).c_str(), stdout);
    if (stage == "kernels")
      std::fputs(compiler::ProgramToString(compiled->program()).c_str(), stdout);
    if (stage == "llvm") std::fputs(compiled->code().llvm_ir().c_str(), stdout);
    if (stage == "llvm-opt") std::fputs(compiled->code().optimized_ir().c_str(), stdout);
    if (stage == "asm") std::fputs(compiled->code().assembly().c_str(), stdout);
  }
  if (absl::GetFlag(FLAGS_stats)) {
    PrintStats(loaded->graph, optimize ? &pipeline : nullptr);
    compiler::TrafficReport traffic = compiler::ProgramTraffic(compiled->program());
    std::printf("# FLOPs (matmul, 2 per multiply-add): %s; kernel bytes read %s, written %s\n",
                compiler::CountFlops(graph).total.ToString().c_str(),
                traffic.bytes_read.ToString().c_str(), traffic.bytes_written.ToString().c_str());
    const compiler::PhaseTimings& t = compiled->timings();
    std::printf(
        "# compile (ms): lower %.2f, llvm ir %.2f, llvm O2 %.2f, codegen %.2f; "
        "kernels %zu, workspace %s bytes\n",
        t.lower * 1e3, t.ir_build * 1e3, t.optimize * 1e3, t.codegen * 1e3,
        compiled->program().kernels.size(), compiled->program().workspace_bytes.ToString().c_str());
  }
  return 0;
}

}  // namespace
}  // namespace graphjit

int main(int argc, char** argv) { return graphjit::Main(argc, argv); }
