#include "tools/study_common.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "ir/clock.h"

namespace graphjit::study {

using ir::Clock;
using runtime::TensorMap;

double MedianCallSeconds(const std::function<void()>& f, int reps, int batches) {
  std::vector<double> t;
  for (int b = 0; b < batches; ++b) {
    auto start = Clock::now();
    for (int i = 0; i < reps; ++i) f();
    t.push_back(ir::SecondsSince(start) / reps);
  }
  return ir::Median(std::move(t));
}

void Progress(const std::string& what) {
  if (isatty(STDERR_FILENO)) std::fprintf(stderr, "\r\033[K%s", what.c_str());
}
void ProgressDone() {
  if (isatty(STDERR_FILENO)) std::fprintf(stderr, "\r\033[K");
}

void Observations(const std::vector<std::string>& lines) {
  std::printf("\nObservations:\n");
  for (const std::string& l : lines) std::printf("  - %s\n", l.c_str());
  std::printf("\n");
}

CodeSource MakeCodeSource(bool warm, compiler::KernelStore* cold_kernels, compiler::CodeTier tier) {
  CodeSource source;
  source.warm = warm;
  source.tier = tier;
  source.env = warm ? compiler::CompileEnv::FromEnvironment() : compiler::CompileEnv::MemoryOnly();
  if (!warm) source.env.kernels = cold_kernels;
  return source;
}

std::string Describe(const CodeSource& source) {
  std::string tier = absl::StrCat("; code tier ", compiler::CodeTierName(source.tier));
  if (source.reoptimize_after > 0) {
    absl::StrAppend(&tier, ", entries called ", source.reoptimize_after,
                    " times recompiled at o2 in the background");
  }
  if (!source.warm) {
    return absl::StrCat(
        "cold: every compile is real (empty code stores, no disk or remote cache; "
        "--warm_cache reuses them)",
        tier);
  }
  return absl::StrCat(
      "warm: code reused from memory", source.env.disk != nullptr ? ", the disk cache" : "",
      source.env.remote != nullptr ? ", the remote cache" : "",
      " where it was compiled before (compiled, loaded and reused kept apart)", tier);
}

TensorMap FreshCaches(const TensorMap& in) {
  TensorMap out = in;
  for (const char* n : {"k_cache", "v_cache"}) out[n] = in.at(n).Clone();
  return out;
}

namespace {

// `text` as one single-quoted shell word.
std::string ShellQuote(const std::string& text) {
  return absl::StrCat("'", absl::StrReplaceAll(text, {{"'", "'\\''"}}), "'");
}

}  // namespace

absl::Status PlotStudy(const std::string& json, const std::string& dir, const std::string& script) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  const std::string json_path = (std::filesystem::path(dir) / "study.json").string();
  std::ofstream out(json_path);
  out << json << "\n";
  out.close();
  if (error || !out) {
    return absl::FailedPreconditionError(absl::StrCat("--plot: cannot write ", json_path));
  }
  if (!std::filesystem::exists(script)) {
    return absl::FailedPreconditionError(absl::StrCat("--plot: no plot script at ", script,
                                                      " (tools/plot_study.py of the source tree)"));
  }
  // Debian's matplotlib is visible to its own python3 only.
  const std::string command = absl::StrCat("/usr/bin/python3 ", ShellQuote(script), " ",
                                           ShellQuote(json_path), " ", ShellQuote(dir));
  std::fflush(stdout);
  const int rc = std::system(command.c_str());
  if (rc != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--plot: ", script, " failed (exit status ", WIFEXITED(rc) ? WEXITSTATUS(rc) : rc,
        "); the JSON is in ", json_path, "; matplotlib: apt-get install -y python3-matplotlib"));
  }
  return absl::OkStatus();
}

}  // namespace graphjit::study
