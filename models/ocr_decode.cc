#include "models/ocr_decode.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace graphjit::models {
namespace {

// The first index of the highest of `classes` scores.
template <typename T>
int64_t ArgMax(const T* row, int64_t classes) {
  int64_t best = 0;
  for (int64_t c = 1; c < classes; ++c) {
    if (row[c] > row[best]) best = c;
  }
  return best;
}

template <typename T>
std::vector<std::string> Decode(const runtime::Tensor& probs, const OcrAlphabet& alphabet) {
  const int64_t n_rows = probs.dim(0), steps = probs.dim(1), classes = probs.dim(2);
  const T* data = probs.data<T>();
  std::vector<std::string> texts(n_rows);
  for (int64_t n = 0; n < n_rows; ++n) {
    int64_t previous = 0;
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t c = ArgMax(data + (n * steps + t) * classes, classes);
      // A class repeated over consecutive steps is one character; a blank between two
      // equal classes separates them ("ll" in "Hello").
      if (c != 0 && c != previous) texts[n] += alphabet.classes[c];
      previous = c;
    }
  }
  return texts;
}

}  // namespace

absl::StatusOr<OcrAlphabet> ParseOcrKeys(absl::string_view text, absl::string_view what) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();  // the final line end
  if (lines.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": expected one character per line, got an empty key list"));
  }
  OcrAlphabet alphabet;
  alphabet.classes.reserve(lines.size() + 2);
  alphabet.classes.emplace_back();  // the CTC blank
  for (size_t i = 0; i < lines.size(); ++i) {
    absl::string_view line = lines[i];
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": line ", i + 1, " is empty, expected one character per line"));
    }
    alphabet.classes.emplace_back(line);
  }
  alphabet.classes.emplace_back(" ");
  return alphabet;
}

absl::StatusOr<OcrAlphabet> ReadOcrKeys(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the key file"));
  std::ostringstream buf;
  buf << in.rdbuf();
  return ParseOcrKeys(buf.str(), path);
}

absl::StatusOr<std::vector<std::string>> CtcGreedyDecode(const runtime::Tensor& probs,
                                                         const OcrAlphabet& alphabet) {
  if (probs.rank() != 3 || probs.dim(2) != alphabet.size() ||
      (probs.dtype() != ir::DType::kF32 && probs.dtype() != ir::DType::kF64)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CTC decode: expected scores f32 or f64[N, T, ", alphabet.size(), "] (the blank, ",
        alphabet.size() - 2, " keys and a space), got ", probs.TypeString()));
  }
  if (probs.dtype() == ir::DType::kF32) return Decode<float>(probs, alphabet);
  return Decode<double>(probs, alphabet);
}

}  // namespace graphjit::models
