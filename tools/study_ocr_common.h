// What graphjit-study's two OCR sections (the recognizer's lines, tools/study_ocr.cc; the
// detector's pages, tools/study_ocr_pages.cc) share: text rendered by
// scripts/render_text_line.py (PIL and DejaVu fonts, which Debian's python3 has once
// scripts/bootstrap.sh ran), the Jit options of one policy's cold run, a skipped section.
#ifndef GRAPHJIT_TOOLS_STUDY_OCR_COMMON_H_
#define GRAPHJIT_TOOLS_STUDY_OCR_COMMON_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "compiler/entries/policy.h"
#include "compiler/jit.h"
#include "models/ocr_image.h"
#include "tools/json_writer.h"
#include "tools/study_common.h"

namespace graphjit::study {

// `/usr/bin/python3 script args... OUT.ppm`, the image it wrote. Unavailable (with the
// script's own message, e.g. that PIL is missing, and what installs it) when it cannot
// render: a section then skips rather than fails.
absl::StatusOr<models::RgbImage> RenderWithScript(const std::string& script,
                                                  const std::vector<std::string>& args);

// The Jit options one policy's run of a model uses: `env` (source.Fresh: cold, empty code
// stores of the run's own) and source's tier; a padding policy keys exact, the section
// padding the inputs itself to the buckets (studies/ocr_lines.h says why the Jit's own
// padding cannot serve these models).
compiler::JitOptions OcrJitOptions(const CodeSource& source, compiler::entries::ShapePolicy policy,
                                   const compiler::CompileEnv* env);

// A section's output when it cannot run: why, and how to get what is missing, printed and
// as `"key": {"skipped": why}`; OK, since a missing download is not a failed study.
absl::Status SkipOcrSection(absl::string_view key, const std::string& why, tools::JsonWriter& json);

// One policy's row of a section's table: its result `r` (a studies::Ocr*Result), and how
// it compares with exact's.
template <typename Result>
struct OcrPolicyRow {
  std::string name;
  Result r;
  double run_seconds = 0;  // the calls without their compiles
  double max_diff = 0;     // of the model's outputs at each input's own size, against exact
  int changed = 0;         // inputs that read otherwise than under exact (text, boxes)
};

// Per policy (entries::AllPolicies, in the table's order), cold with fresh code stores of
// its own, `run(policy, jit_options)`: a section's rows, each named by its policy, with the
// result `r` (a studies::Ocr*Result) and `run_seconds`, its calls less their compiles.
template <typename Row, typename Run>
absl::StatusOr<std::vector<Row>> RunEveryPolicy(const CodeSource& source, absl::string_view what,
                                                Run run) {
  namespace entries = compiler::entries;
  std::vector<Row> rows;
  for (entries::ShapePolicy p : entries::AllPolicies()) {
    Progress(absl::StrCat(what, ": ", entries::PolicyName(p), " ..."));
    compiler::KernelStore kernels;
    const compiler::CompileEnv env = source.Fresh(&kernels);
    auto r = run(p, OcrJitOptions(source, p, &env));
    if (!r.ok()) return r.status();
    Row row{std::string(entries::PolicyName(p)), *std::move(r)};
    row.run_seconds = row.r.call_seconds - row.r.stats.compile_seconds;
    rows.push_back(std::move(row));
  }
  ProgressDone();
  return rows;
}

// The row of policy `name` (rows[0] when there is none).
template <typename Row>
const Row& FindPolicyRow(const std::vector<Row>& rows, absl::string_view name) {
  for (const Row& r : rows) {
    if (r.name == name) return r;
  }
  return rows[0];
}

}  // namespace graphjit::study

#endif  // GRAPHJIT_TOOLS_STUDY_OCR_COMMON_H_
