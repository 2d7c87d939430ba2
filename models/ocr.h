// PaddleOCR's PP-OCRv4 text recognizer (an ONNX model, fetched by scripts/fetch_models.sh)
// imported and run under compiler::Jit: a text-line image in, its text out. The pieces
// (models/ocr_image.h, models/ocr_decode.h) are shared by examples/ocr, the test and
// benchmarks/ort_compare.
#ifndef GRAPHJIT_MODELS_OCR_H_
#define GRAPHJIT_MODELS_OCR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/jit.h"
#include "models/ocr_decode.h"
#include "models/ocr_image.h"
#include "onnx/import.h"
#include "runtime/tensor.h"

namespace graphjit::models {

// Where scripts/fetch_models.sh puts the recognizer and its keys under `fetch_dir`
// (third_party/fetched in a checkout).
struct OcrFiles {
  std::string model;  // FETCH_DIR/ocr-models/ch_PP-OCRv4_rec_infer.onnx
  std::string keys;   // FETCH_DIR/ocr-models/ppocr_keys_v1.txt
};
OcrFiles OcrFilesIn(const std::string& fetch_dir);
// The fetch dir: $GRAPHJIT_FETCH_DIR if set, else `source_dir`/third_party/fetched.
std::string OcrFetchDir(const std::string& source_dir);
// OK if `path` (`what`, e.g. "the OCR model") is a file, else NotFound saying to run
// scripts/fetch_models.sh.
absl::Status NeedOcrFile(const std::string& path, absl::string_view what);

class OcrRecognizer {
 public:
  // Imports the model and reads the keys. NotFound for a missing file (the message says
  // to run scripts/fetch_models.sh); the importer's errors (Unimplemented naming the file,
  // node and op it cannot import); InvalidArgument if the model's classes do not match
  // the keys. `options` as for JitOnnxModel.
  static absl::StatusOr<std::unique_ptr<OcrRecognizer>> Create(const OcrFiles& files,
                                                               compiler::JitOptions options = {});

  // The model on a preprocessed batch x: f32[N, 3, 48, W] -> the per-step class
  // probabilities f32[N, W / 8, classes], compiled by graphjit.
  absl::StatusOr<runtime::Tensor> Run(const runtime::Tensor& x);
  // Run, then CTC greedy decoding: one text per batch row.
  absl::StatusOr<std::vector<std::string>> RecognizeBatch(const runtime::Tensor& x);
  // One line: preprocessed (PreprocessOcrLine), run and decoded.
  absl::StatusOr<std::string> Recognize(const RgbImage& image);

  const onnx::ImportedModel& model() const { return model_; }
  const OcrAlphabet& alphabet() const { return alphabet_; }
  compiler::JitFunction& function() { return *function_; }

 private:
  OcrRecognizer(onnx::ImportedModel model, OcrAlphabet alphabet,
                std::unique_ptr<compiler::JitFunction> function)
      : model_(std::move(model)), alphabet_(std::move(alphabet)), function_(std::move(function)) {}

  onnx::ImportedModel model_;
  OcrAlphabet alphabet_;
  std::unique_ptr<compiler::JitFunction> function_;
};

}  // namespace graphjit::models

#endif  // GRAPHJIT_MODELS_OCR_H_
