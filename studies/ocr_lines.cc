#include "studies/ocr_lines.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "compiler/entries/padding.h"
#include "compiler/entries/policy.h"
#include "ir/clock.h"
#include "ir/status_macros.h"

namespace graphjit::studies {
namespace {

// Plain words, digits and punctuation the recognizer's key list has, so a line reads
// back as rendered and a changed text is the policy's doing, not an unknown character.
constexpr const char* kWords[] = {
    "graphjit", "compiles", "tensor",  "graphs", "with", "LLVM",  "2026",   "under",
    "shape",    "guards",   "pow2",    "pads",   "the",  "width", "to",     "buckets",
    "of",       "128",      "columns", "exact",  "one",  "per",   "length", "symbolic",
};

}  // namespace

std::vector<std::string> OcrStudyTexts(int count) {
  std::vector<std::string> texts;
  constexpr int kShortest = 3, kLongest = 64;
  size_t word = 0;
  for (int i = 0; i < count; ++i) {
    const int length =
        count == 1 ? kShortest : kShortest + (kLongest - kShortest) * i / (count - 1);
    std::string text;
    while (static_cast<int>(text.size()) < length) {
      if (!text.empty()) text += ' ';
      text += kWords[word++ % std::size(kWords)];
    }
    // Cut to the length; a cut that ends on a space would render as a margin.
    text.resize(length);
    texts.push_back(std::string(absl::StripTrailingAsciiWhitespace(text)));
  }
  return texts;
}

int64_t OcrSteps(int64_t width) { return (width + 3) / 4 / 2; }

absl::StatusOr<OcrLinesResult> RunOcrLines(models::OcrRecognizer& recognizer,
                                           absl::Span<const runtime::Tensor> lines,
                                           compiler::entries::ShapePolicy pad_width) {
  const bool pads = compiler::entries::PadsInputs(pad_width);
  OcrLinesResult result;
  for (size_t i = 0; i < lines.size(); ++i) {
    const runtime::Tensor& x = lines[i];
    if (x.rank() != 4 || x.dim(0) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("OCR line ", i, " is ", x.TypeString(), ", expected f32[1, 3, 48, W]"));
    }
    const int64_t width = x.dim(3);
    const int64_t run_width = pads ? compiler::entries::KeyFor(pad_width, width) : width;
    // Padding is part of the call's cost, as it is inside a padding policy's call.
    const ir::Clock::time_point start = ir::Clock::now();
    absl::StatusOr<runtime::Tensor> padded =
        pads ? models::BatchOcrLines({x}, run_width) : absl::StatusOr<runtime::Tensor>(x);
    if (!padded.ok()) return padded.status();
    absl::StatusOr<runtime::Tensor> scores = recognizer.Run(*padded);
    result.call_seconds += ir::SecondsSince(start);
    if (!scores.ok()) {
      return absl::Status(scores.status().code(), absl::StrCat("OCR line ", i, " (W=", width,
                                                               "): ", scores.status().message()));
    }
    GJ_ASSIGN_OR_RETURN(std::vector<std::string> texts,
                        models::CtcGreedyDecode(*scores, recognizer.alphabet()));
    result.texts.push_back(std::string(absl::StripTrailingAsciiWhitespace(texts[0])));
    if (scores->rank() != 3 || scores->dim(1) < OcrSteps(width) ||
        (!pads && scores->dim(1) != OcrSteps(width))) {
      return absl::InternalError(absl::StrCat("OCR line ", i, " (W=", width,
                                              "): expected scores [1, ", OcrSteps(width),
                                              ", C], got ", scores->TypeString()));
    }
    // The scores at the line's own steps: the padded call returns more.
    GJ_ASSIGN_OR_RETURN(runtime::Tensor own,
                        compiler::entries::Resize(*scores, {1, OcrSteps(width), scores->dim(2)}));
    result.scores.push_back(std::move(own));
    result.real_columns += width;
    result.padded_columns += run_width;
  }
  result.stats = recognizer.function().stats();
  return result;
}

}  // namespace graphjit::studies
