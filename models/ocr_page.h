// A whole page of text read by PaddleOCR's three PP-OCRv4 models compiled by graphjit (all
// fetched by scripts/fetch_models.sh): the text detector finds the lines, the angle
// classifier turns upside-down ones, the recognizer reads each, and the lines come back
// in reading order with their boxes. The pieces around the models are models/ocr_detect.h.
#ifndef GRAPHJIT_MODELS_OCR_PAGE_H_
#define GRAPHJIT_MODELS_OCR_PAGE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/jit.h"
#include "models/ocr.h"
#include "models/ocr_detect.h"
#include "models/onnx_function.h"

namespace graphjit::models {

// Where scripts/fetch_models.sh puts the three models under `fetch_dir`.
struct OcrPageFiles {
  std::string detector;    // FETCH_DIR/ocr-models/ch_PP-OCRv4_det_infer.onnx
  std::string classifier;  // FETCH_DIR/ocr-models/ch_ppocr_mobile_v2.0_cls_infer.onnx
  OcrFiles recognizer;
};
OcrPageFiles OcrPageFilesIn(const std::string& fetch_dir);

// One line of a page: its box, whether the classifier turned it by 180 degrees, its text.
struct OcrLine {
  OcrBox box;
  bool turned = false;
  std::string text;
};

// What runs each model on its input (graphjit's compiled code, or in a test ONNX Runtime
// behind the same pre- and post-processing).
using OcrModelFn = std::function<absl::StatusOr<runtime::Tensor>(const runtime::Tensor&)>;
struct OcrPageModels {
  OcrModelFn detect;     // f32[1, 3, H, W] -> probability map f32[1, 1, H, W]
  OcrModelFn classify;   // f32[1, 3, 48, 192] -> f32[1, 2]: upright, turned
  OcrModelFn recognize;  // f32[1, 3, 48, W] -> f32[1, T, classes]
};

class OcrPageReader {
 public:
  // The three models under graphjit: the detector as an OnnxFunction (its sides line up
  // only as multiples of 32, which pages are: one specialization for every page, compiled
  // per size or once symbolic as `options.policy` says), the classifier and the
  // recognizer as Jit functions with `options`. NotFound for a missing file (saying
  // to run scripts/fetch_models.sh), the importer's errors otherwise.
  static absl::StatusOr<std::unique_ptr<OcrPageReader>> Create(const OcrPageFiles& files,
                                                               compiler::JitOptions options = {});
  // The same pipeline over other runners of the models.
  static std::unique_ptr<OcrPageReader> WithModels(OcrPageModels models, OcrAlphabet alphabet);

  // The page's lines in reading order. InvalidArgument for an empty image; a model's
  // error otherwise.
  absl::StatusOr<std::vector<OcrLine>> Read(const RgbImage& page);

  // The runners Read calls (valid while this reader lives) and the alphabet: what a
  // benchmark wraps to time or record each model's calls (WithModels).
  const OcrPageModels& models() const { return models_; }
  const OcrAlphabet& alphabet() const { return alphabet_; }

 private:
  OcrPageReader(OcrPageModels models, OcrAlphabet alphabet)
      : models_(std::move(models)), alphabet_(std::move(alphabet)) {}

  OcrPageModels models_;
  OcrAlphabet alphabet_;
  // graphjit's models when Create made them (models_ calls them).
  std::unique_ptr<OnnxFunction> detector_;
  std::unique_ptr<compiler::JitFunction> classifier_;
  std::unique_ptr<OcrRecognizer> recognizer_;
};

}  // namespace graphjit::models

#endif  // GRAPHJIT_MODELS_OCR_PAGE_H_
