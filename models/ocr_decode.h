// Reading the OCR recognizer's output (models/ocr.h): its character list and CTC greedy
// decoding of the per-step class probabilities into text.
#ifndef GRAPHJIT_MODELS_OCR_DECODE_H_
#define GRAPHJIT_MODELS_OCR_DECODE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/tensor.h"

namespace graphjit::models {

// The recognizer's classes: index 0 is the CTC blank (""), indices 1..K the K lines of the
// key file in order, K + 1 a space (PaddleOCR's use_space_char).
struct OcrAlphabet {
  std::vector<std::string> classes;

  int64_t size() const { return static_cast<int64_t>(classes.size()); }
};

// The alphabet of a key file's text: one character (UTF-8) per line, '\n' or "\r\n" line
// ends, a final line end optional. InvalidArgument naming `what` for an empty list or an
// empty line (which would make a class decode to nothing).
absl::StatusOr<OcrAlphabet> ParseOcrKeys(absl::string_view text, absl::string_view what);
// Reads the key file `path` (ppocr_keys_v1.txt): NotFound, else as ParseOcrKeys.
absl::StatusOr<OcrAlphabet> ReadOcrKeys(const std::string& path);

// CTC greedy decoding of `probs` ([N, T, C] f32 or f64, per-step scores over C classes;
// probabilities or logits alike, only the argmax counts): per step the class with the
// highest score (the first on ties), repeats merged, blanks dropped, the rest looked up
// in `alphabet`. One string per batch row. InvalidArgument if the rank, dtype or C does
// not fit the alphabet.
absl::StatusOr<std::vector<std::string>> CtcGreedyDecode(const runtime::Tensor& probs,
                                                         const OcrAlphabet& alphabet);

}  // namespace graphjit::models

#endif  // GRAPHJIT_MODELS_OCR_DECODE_H_
