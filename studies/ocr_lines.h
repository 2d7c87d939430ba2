// The OCR recognizer (models/ocr.h) over a set of text lines of varying widths, one line
// per call, under the shape policy its Jit function was made with: graphjit-study's OCR
// section compares the policies from these runs.
#ifndef GRAPHJIT_STUDIES_OCR_LINES_H_
#define GRAPHJIT_STUDIES_OCR_LINES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/entries/cache_stats.h"
#include "compiler/entries/policy.h"
#include "models/ocr.h"
#include "runtime/tensor.h"

namespace graphjit::studies {

// `count` lines of text, the same on every run: their lengths spread evenly from 3 to 64
// characters, so that rendered at 32 px they span about 80 to 1200 pixels - the range of
// line widths a page gives a recognizer.
std::vector<std::string> OcrStudyTexts(int count);

// The steps of the recognizer's output for an input `width` wide: two stride-2
// convolutions round up, the final 2-wide pooling rounds down.
int64_t OcrSteps(int64_t width);

struct OcrLinesResult {
  // Per line, its scores [1, OcrSteps(W), C] at the line's own steps: those a padded
  // width adds are cut off, so every policy's scores compare with exact's.
  std::vector<runtime::Tensor> scores;
  // Per line, the text decoded from every step the call returned (as PaddleOCR decodes
  // a padded batch), trailing spaces trimmed: padding may read as spaces.
  std::vector<std::string> texts;
  int64_t real_columns = 0;             // the lines' widths, summed
  int64_t padded_columns = 0;           // the widths the calls ran at, summed
  double call_seconds = 0;              // wall time of the calls, compiles included
  compiler::entries::CacheStats stats;  // the Jit function's counters after the last line
};

// Each preprocessed line (f32[1, 3, 48, W], models::PreprocessOcrLine) run through
// `recognizer` in order, one call per line. `pad_width` pow2 or mult128: each line is
// first zero-padded on the right to its width's bucket (models::BatchOcrLines, as
// PaddleOCR pads a batch), so an exact-keyed recognizer compiles once per bucket - what
// those policies do. The Jit's own padding cannot serve this model: it cuts padded
// outputs back only along a bare padded dim, and the recognizer's steps are W / 8. Any
// other policy: the lines run as they are.
absl::StatusOr<OcrLinesResult> RunOcrLines(models::OcrRecognizer& recognizer,
                                           absl::Span<const runtime::Tensor> lines,
                                           compiler::entries::ShapePolicy pad_width);

}  // namespace graphjit::studies

#endif  // GRAPHJIT_STUDIES_OCR_LINES_H_
