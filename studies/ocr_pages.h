// The OCR text detector (PP-OCRv4's, run as models::OnnxFunction: its sides import as
// multiples of 32) over pages of varying sizes, one page per call, under the shape policy
// its function was opened with: graphjit-study's OCR section compares the policies from
// these runs, as it does the recognizer's over lines (studies/ocr_lines.h).
#ifndef GRAPHJIT_STUDIES_OCR_PAGES_H_
#define GRAPHJIT_STUDIES_OCR_PAGES_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/entries/cache_stats.h"
#include "compiler/entries/policy.h"
#include "models/ocr_detect.h"
#include "models/onnx_function.h"
#include "runtime/tensor.h"

namespace graphjit::studies {

// `count` page sizes (width, height) in pixels, the same on every run: multiples of 32
// with the long side at most 960 (what PaddleOCR's preprocessing gives the detector),
// heights rising from 320 to 960 while widths fall from 768 to 320, so that no two pages
// share a size.
std::vector<std::pair<int64_t, int64_t>> OcrStudyPageSizes(int count);

struct OcrPagesResult {
  // Per page, its probability map f32[1, 1, H, W] at the page's own size: what a padded
  // call computes past it is cut off, so every policy's maps compare with exact's.
  std::vector<runtime::Tensor> maps;
  // Per page, the line boxes DB post-processing finds in that map.
  std::vector<std::vector<models::OcrBox>> boxes;
  int64_t real_pixels = 0;              // the pages' H * W, summed
  int64_t padded_pixels = 0;            // the sizes the calls ran at, summed
  double call_seconds = 0;              // wall time of the calls, compiles included
  compiler::entries::CacheStats stats;  // the detector's counters after the last page
};

// Each preprocessed page (f32[1, 3, H, W], models::PreprocessOcrPage) run through
// `detector` in order, one call per page. `pad_sides` pow2 or mult128: both sides are
// first zero-padded at the bottom and right to their buckets, so an exact-keyed detector
// compiles once per pair of buckets (the zeros are the mean colour after normalization;
// the detector has no mask and averages channels over the whole map, so they move the map
// everywhere). Any other policy: the pages run as they are.
absl::StatusOr<OcrPagesResult> RunOcrPages(models::OnnxFunction& detector,
                                           absl::Span<const runtime::Tensor> pages,
                                           compiler::entries::ShapePolicy pad_sides);

}  // namespace graphjit::studies

#endif  // GRAPHJIT_STUDIES_OCR_PAGES_H_
