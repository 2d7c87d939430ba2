// graphjit-dump: prints a model's (or a .gir file's) IR, to inspect what graphjit builds.
//   graphjit-dump decode                      traced decode layer, symbolic S and P
//   graphjit-dump decode --dim S=128          the exact-shape graph for S = 128
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
#include "ir/parser.h"
#include "ir/printer.h"
#include "models/model.h"

ABSL_FLAG(std::string, stage, "traced", "IR stage to print: traced");
ABSL_FLAG(std::vector<std::string>, dim, {},
          "fix dynamic dims to constants, e.g. --dim S=128 (comma-separated for several)");
ABSL_FLAG(bool, padded, false, "trace with the optional inputs of padded shapes (kmask)");
ABSL_FLAG(bool, stats, false, "print node counts after the IR");

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

absl::StatusOr<ir::Graph> LoadGraph(const std::string& what, const ir::Bindings& dims) {
  if (absl::EndsWith(what, ".gir")) return ir::ParseGraphFile(what);
  absl::StatusOr<std::unique_ptr<models::Model>> model = models::CreateModel(what);
  if (!model.ok()) return model.status();
  for (const auto& [name, value] : dims) {
    std::vector<std::string> dyn = (*model)->DynamicDims();
    if (std::find(dyn.begin(), dyn.end(), name) == dyn.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--dim: model has no dynamic dim '", name, "' (dynamic dims: ",
                       dyn.empty() ? "none" : absl::StrJoin(dyn, ", "), ")"));
    }
  }
  models::TraceOptions options;
  options.fixed_dims = dims;
  options.padded = absl::GetFlag(FLAGS_padded);
  return models::TraceModel(**model, options);
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(absl::StrCat(
      "Prints graphjit IR.\nUsage: graphjit-dump MODEL_SPEC|FILE.gir [flags]\nModels: ",
      absl::StrJoin(models::ModelNames(), ", "),
      " (e.g. decode:d=128,H=8,G=2,dh=16,f=344,dtype=f64)"));
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() != 2) {
    std::fprintf(stderr, "%s\n", absl::ProgramUsageMessage());
    return 2;
  }
  if (absl::GetFlag(FLAGS_stage) != "traced") {
    std::fprintf(stderr, "graphjit-dump: unknown --stage '%s' (available: traced)\n",
                 absl::GetFlag(FLAGS_stage).c_str());
    return 2;
  }
  absl::StatusOr<ir::Bindings> dims = ParseDims(absl::GetFlag(FLAGS_dim));
  absl::StatusOr<ir::Graph> graph =
      dims.ok() ? LoadGraph(args[1], *dims) : absl::StatusOr<ir::Graph>(dims.status());
  if (!graph.ok()) {
    std::fprintf(stderr, "graphjit-dump: %s\n", std::string(graph.status().message()).c_str());
    return 1;
  }
  std::fputs(ir::PrintGraph(*graph).c_str(), stdout);
  if (absl::GetFlag(FLAGS_stats)) {
    std::printf("# nodes: %d (compute: %d, inputs: %zu, params: %zu); symbols: %s\n",
                graph->num_nodes(), graph->NumComputeNodes(), graph->Inputs().size(),
                graph->Params().size(), absl::StrJoin(graph->Symbols(), ", ").c_str());
  }
  return 0;
}

}  // namespace
}  // namespace graphjit

int main(int argc, char** argv) { return graphjit::Main(argc, argv); }
