// The pieces the studies of graphjit-study share: timing, progress lines, observations,
// and where their code comes from (cold by default, or the process's caches).
#ifndef GRAPHJIT_TOOLS_STUDY_COMMON_H_
#define GRAPHJIT_TOOLS_STUDY_COMMON_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/compiled/compile_env.h"
#include "models/model.h"
#include "runtime/interpreter.h"
#include "studies/decode_loop.h"
#include "tools/json_writer.h"

namespace graphjit::study {

// Median over `batches` of the mean time of `reps` calls of f.
double MedianCallSeconds(const std::function<void()>& f, int reps, int batches = 7);
// A progress line on stderr, only when it is a terminal.
void Progress(const std::string& what);
void ProgressDone();
void Observations(const std::vector<std::string>& lines);
// --plot DIR: writes `json` to DIR/study.json (DIR created) and runs `script`
// (tools/plot_study.py) on it with Debian's /usr/bin/python3, which draws
// DIR/policies.png and DIR/powerlaws.png. FailedPrecondition naming what failed: no
// script, no matplotlib (the script says how to install it), an unwritable DIR.
absl::Status PlotStudy(const std::string& json, const std::string& dir, const std::string& script);
// Copies of the inputs' KV caches, so a call that writes them in place leaves `in` alone.
runtime::TensorMap FreshCaches(const runtime::TensorMap& in);

// Where the studies' code comes from: cold (the default) or the process's caches.
struct CodeSource {
  compiler::CompileEnv env;
  bool warm = false;
  compiler::CodeTier tier = compiler::CodeTier::kOptimized;  // what the studies compile at
  // With the baseline tier: Jit entries called this often are recompiled at O2
  // (JitOptions::reoptimize_after); 0 never.
  int64_t reoptimize_after = 0;
  // Compile options with this source's env and tier.
  compiler::CompileGraphOptions Options() const {
    compiler::CompileGraphOptions options;
    options.codegen.tier = tier;
    options.env = &env;
    return options;
  }
  // A fresh memory tier, for a study that must not find code an earlier one compiled.
  compiler::CompileEnv Fresh(compiler::KernelStore* kernels) const {
    compiler::CompileEnv e = env;
    if (!warm) e.kernels = kernels;
    return e;
  }
};
// Warm: CompileEnv::FromEnvironment(); cold: no disk or remote tier, `cold_kernels` as
// the memory tier.
CodeSource MakeCodeSource(bool warm, compiler::KernelStore* cold_kernels, compiler::CodeTier tier);
std::string Describe(const CodeSource& source);

// The studies (tools/study_decode.cc and tools/study_lectures.cc), each printing its
// table and observations and adding its results to `json`.
absl::Status StudyPolicies(const models::Model& model, const CodeSource& source,
                           const studies::DecodeLoopOptions& loop, bool tiered,
                           tools::JsonWriter& json);
absl::Status StudySymbolic(const models::Model& model, const CodeSource& source,
                           tools::JsonWriter& json);
absl::Status StudyBreaks(const CodeSource& source, tools::JsonWriter& json);
absl::Status StudyOverhead(const models::Model& model, const CodeSource& source,
                           tools::JsonWriter& json);
absl::Status StudyFlops(tools::JsonWriter& json);
absl::Status StudyPowerLaws(const CodeSource& source, tools::JsonWriter& json);

// 7 (tools/study_ocr.cc): the policies on the PP-OCRv4 recognizer, reading `lines`
// rendered text lines of varying widths; 8 (tools/study_ocr_pages.cc): on its text
// detector, finding the lines of `pages` pages of varying sizes. Without the model or
// without PIL each prints why and how to get them, and returns OK: a missing download is
// not a failed study.
struct OcrStudyOptions {
  int lines = 40;
  int pages = 6;
  std::string fetch_dir;      // where scripts/fetch_models.sh put the model
  std::string render_script;  // scripts/render_text_line.py
};
absl::Status StudyOcr(const CodeSource& source, const OcrStudyOptions& options,
                      tools::JsonWriter& json);
absl::Status StudyOcrPages(const CodeSource& source, const OcrStudyOptions& options,
                           tools::JsonWriter& json);

}  // namespace graphjit::study

#endif  // GRAPHJIT_TOOLS_STUDY_COMMON_H_
