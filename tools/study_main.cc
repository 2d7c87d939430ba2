// graphjit-study: the lectures' studies with real compilation, on the decode layer.
//   1 policies   the decode loop under exact / pow2 / mult128 / symbolic / auto
//   2 symbolic   one symbolic graph vs exact-shape graphs
//   3 breaks     lazy execution of a data-dependent loop (graph breaks)
//   4 overhead   eager vs interpreter vs compiled code for one decode call
//   5 flops      the 6N table and the GPT-3 arithmetic (FLOPs counted on graphs)
//   6 powerlaws  power laws and why they appear (lecture 4, demos 1 and 2)
//   7 ocr        the policies on a real model, the PP-OCRv4 recognizer (by default only
//                when scripts/fetch_models.sh has fetched it)
// Every number printed comes from this run.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/analysis/flops.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/compiled/graph_store.h"
#include "ir/clock.h"
#include "ir/status_macros.h"
#include "models/model.h"
#include "models/ocr.h"
#include "studies/decode_loop.h"
#include "studies/lazy_demo.h"
#include "studies/powerlaws.h"
#include "studies/six_nd.h"
#include "tools/flag_util.h"
#include "tools/json_writer.h"
#include "tools/study_common.h"
#include "tools/study_table.h"
#include "tools/weights_flag.h"

ABSL_FLAG(std::vector<std::string>, only, {},
          "sections to run (default all; ocr only if its model is fetched): policies, "
          "symbolic, breaks, overhead, flops, powerlaws, ocr");
ABSL_FLAG(int64_t, steps, 512, "decode steps of the policy study");
ABSL_FLAG(int64_t, prompt, 100, "cache rows before the first decode step");
ABSL_FLAG(bool, tiered, false,
          "policy study: tiered compilation (misses interpreted while the code compiles in "
          "the background); the table then shows the worst stall of any step");
ABSL_FLAG(bool, warm_cache, false,
          "reuse code from the disk and remote caches (GRAPHJIT_CACHE_DIR, "
          "GRAPHJIT_REMOTE_CACHE) and report compiled, loaded and reused kernels apart; by "
          "default every study compiles cold (empty code stores of its own, no disk or remote "
          "tier), so compile times say what compiling costs");
ABSL_FLAG(std::string, tier, "o2",
          "code tier the studies compile at: o2 (optimized), baseline (compiles several "
          "times faster, runs slower) or tiered (policy study: misses interpreted while "
          "baseline code compiles in the background, entries called 16 times recompiled "
          "at o2)");
ABSL_FLAG(std::string, dtype, "f64", "f32 or f64 (the decode model's dtype)");
ABSL_FLAG(std::string, model, "decode", "decode model spec (dtype= in it wins over --dtype)");
ABSL_FLAG(int, ocr_lines, 40,
          "ocr study: how many text lines to render and read (widths spread over about "
          "80-1200 px)");
ABSL_FLAG(int, ocr_pages, 6,
          "ocr study: how many pages of different sizes the text detector reads (320 x 768 "
          "up to 960 x 320 pixels, W x H)");
ABSL_FLAG(std::string, ocr_fetch_dir, "",
          "ocr study: where scripts/fetch_models.sh put the model (default "
          "$GRAPHJIT_FETCH_DIR, else third_party/fetched of the source tree)");
ABSL_FLAG(std::string, json, "", "also write the results as JSON to this file");
ABSL_FLAG(std::string, plot, "",
          "write the results to DIR/study.json and draw DIR/policies.png and "
          "DIR/powerlaws.png from it (tools/plot_study.py; needs python3-matplotlib)");
ABSL_FLAG(std::string, weights, "",
          "DIR of NAME.npy files or FILE.safetensors: the weights of --model for the "
          "policies, symbolic and overhead studies, one tensor per parameter with its dtype "
          "and shape (default: the model's seeded weights)");

namespace graphjit {
namespace {

using ir::Clock;
using namespace study;  // the studies and their shared pieces (tools/study_common.h)

std::string CpuModel() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Reproduces the lectures' studies with real compilation.\nUsage: graphjit-study "
      "[--only=policies,symbolic,breaks,overhead,flops,powerlaws,ocr] [--steps N] [--prompt N] "
      "[--dtype f32|f64] [--model SPEC] [--weights DIR|FILE.safetensors] [--ocr_lines N] "
      "[--ocr_pages N] "
      "[--ocr_fetch_dir DIR] [--json FILE] [--plot DIR]");
  std::vector<std::string> normalized = tools::UnderscoreFlagNames(argc, argv);
  std::vector<char*> raw;
  for (std::string& a : normalized) raw.push_back(a.data());
  std::vector<char*> args = absl::ParseCommandLine(static_cast<int>(raw.size()), raw.data());
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "graphjit-study: %s\n", std::string(s.message()).c_str());
    return 1;
  };
  if (args.size() != 1) {
    return fail(absl::InvalidArgumentError(absl::StrCat("unexpected argument '", args[1], "'")));
  }
  const std::vector<std::string> all = {"policies", "symbolic",  "breaks", "overhead",
                                        "flops",    "powerlaws", "ocr"};
  std::vector<std::string> only = absl::GetFlag(FLAGS_only);
  std::string ocr_fetch_dir = absl::GetFlag(FLAGS_ocr_fetch_dir);
  if (ocr_fetch_dir.empty()) ocr_fetch_dir = models::OcrFetchDir(GRAPHJIT_SOURCE_DIR);
  if (only.empty()) {
    // ocr joins the default run only where its model was fetched: without it there is
    // nothing to measure, and a default run must not print a download hint. With it the
    // section takes about 35 s for 40 lines on 2 cores (docs/PERFORMANCE.md).
    only = std::vector<std::string>(all.begin(), all.end() - 1);
    const models::OcrFiles files = models::OcrFilesIn(ocr_fetch_dir);
    std::error_code error;
    if (std::filesystem::exists(files.model, error) && std::filesystem::exists(files.keys, error)) {
      only.push_back("ocr");
    }
  }
  for (const std::string& s : only) {
    if (std::find(all.begin(), all.end(), s) == all.end()) {
      return fail(absl::InvalidArgumentError(absl::StrCat(
          "--only: unknown section '", s, "' (sections: ", absl::StrJoin(all, ", "), ")")));
    }
  }
  auto wants = [&](const char* s) { return std::find(only.begin(), only.end(), s) != only.end(); };
  // Checked before the studies run, not after: the figures draw these two sections.
  if (!absl::GetFlag(FLAGS_plot).empty() && !wants("policies") && !wants("powerlaws")) {
    return fail(absl::InvalidArgumentError(
        "--plot draws the policies and powerlaws sections: add one of them to --only"));
  }
  if (absl::GetFlag(FLAGS_steps) < 1 || absl::GetFlag(FLAGS_prompt) < 0) {
    return fail(absl::InvalidArgumentError("--steps must be >= 1 and --prompt >= 0"));
  }
  if (absl::GetFlag(FLAGS_ocr_lines) < 1) {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("--ocr_lines: expected 1 or more, got ", absl::GetFlag(FLAGS_ocr_lines))));
  }
  if (absl::GetFlag(FLAGS_ocr_pages) < 1) {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("--ocr_pages: expected 1 or more, got ", absl::GetFlag(FLAGS_ocr_pages))));
  }
  const absl::StatusOr<tools::TierFlag> tier = tools::ParseTierFlag(absl::GetFlag(FLAGS_tier));
  if (!tier.ok()) return fail(tier.status());
  const std::string dtype = absl::GetFlag(FLAGS_dtype);
  if (dtype != "f32" && dtype != "f64") {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("--dtype: expected f32 or f64, got '", dtype, "'")));
  }
  std::string spec = absl::GetFlag(FLAGS_model);
  if (spec.find("dtype=") == std::string::npos) {
    spec += absl::StrCat(spec.find(':') == std::string::npos ? ":" : ",", "dtype=", dtype);
  }
  absl::StatusOr<std::unique_ptr<models::Model>> model = models::CreateModel(spec);
  if (!model.ok()) return fail(model.status());
  if ((*model)->Spec().rfind("decode", 0) != 0) {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("--model: the studies run a decode layer, got '", spec, "'")));
  }
  if (const std::string path = absl::GetFlag(FLAGS_weights); !path.empty()) {
    if (absl::Status s = tools::ApplyWeightsFlag(path, **model); !s.ok()) return fail(s);
  }

  compiler::HostTarget target = compiler::DescribeHostTarget();
  // With --weights the spec's seed= no longer says where the weights came from.
  const std::string weights = absl::GetFlag(FLAGS_weights);
  const std::string model_text =
      weights.empty() ? (*model)->Spec() : absl::StrCat((*model)->Spec(), " weights=", weights);
  std::printf("graphjit-study: %s on %s (%u cores), LLVM %s, target %s\n\n", model_text.c_str(),
              CpuModel().c_str(), std::thread::hardware_concurrency(), target.llvm_version.c_str(),
              target.cpu_name.c_str());
  tools::JsonWriter json;
  json.BeginObject();
  json.Key("machine")
      .BeginObject()
      .Member("cpu", CpuModel())
      .Member("cores", static_cast<int64_t>(std::thread::hardware_concurrency()))
      .Member("llvm", target.llvm_version)
      .Member("llvm_cpu", target.cpu_name)
      .Member("model", (*model)->Spec())
      .Member("weights", weights.empty() ? "seeded" : weights)
      .EndObject();
  auto start = Clock::now();
  absl::Status status;
  compiler::KernelStore cold_kernels;  // the cold source's memory tier
  CodeSource source = MakeCodeSource(absl::GetFlag(FLAGS_warm_cache), &cold_kernels, tier->tier);
  source.reoptimize_after = tier->reoptimize_after;
  studies::DecodeLoopOptions loop;
  loop.prompt = absl::GetFlag(FLAGS_prompt);
  loop.steps = absl::GetFlag(FLAGS_steps);
  if (status.ok() && wants("policies")) {
    status =
        StudyPolicies(**model, source, loop, absl::GetFlag(FLAGS_tiered) || tier->tiered(), json);
  }
  if (status.ok() && wants("symbolic")) status = StudySymbolic(**model, source, json);
  if (status.ok() && wants("breaks")) status = StudyBreaks(source, json);
  if (status.ok() && wants("overhead")) status = StudyOverhead(**model, source, json);
  if (status.ok() && wants("flops")) status = StudyFlops(json);
  if (status.ok() && wants("powerlaws")) status = StudyPowerLaws(source, json);
  if (status.ok() && wants("ocr")) {
    OcrStudyOptions ocr;
    ocr.lines = absl::GetFlag(FLAGS_ocr_lines);
    ocr.pages = absl::GetFlag(FLAGS_ocr_pages);
    ocr.fetch_dir = ocr_fetch_dir;
    ocr.render_script = std::string(GRAPHJIT_SOURCE_DIR) + "/scripts/render_text_line.py";
    status = StudyOcr(source, ocr, json);
    if (status.ok()) status = StudyOcrPages(source, ocr, json);
  }
  if (!status.ok()) return fail(status);
  json.Member("total_seconds", ir::SecondsSince(start)).EndObject();
  std::printf("(whole run: %s)\n", tools::FormatSeconds(ir::SecondsSince(start)).c_str());
  if (!absl::GetFlag(FLAGS_json).empty()) {
    std::ofstream out(absl::GetFlag(FLAGS_json));
    out << json.str() << "\n";
    if (!out)
      return fail(absl::InvalidArgumentError(
          absl::StrCat("--json: cannot write ", absl::GetFlag(FLAGS_json))));
  }
  if (const std::string dir = absl::GetFlag(FLAGS_plot); !dir.empty()) {
    const std::string script = std::string(GRAPHJIT_SOURCE_DIR) + "/tools/plot_study.py";
    if (absl::Status s = study::PlotStudy(json.str(), dir, script); !s.ok()) return fail(s);
  }
  return 0;
}

}  // namespace
}  // namespace graphjit

int main(int argc, char** argv) { return graphjit::Main(argc, argv); }
