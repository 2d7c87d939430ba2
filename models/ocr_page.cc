#include "models/ocr_page.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "models/onnx_model.h"

namespace graphjit::models {
namespace {

// The classifier's verdict a line is turned needs at least this probability (PaddleOCR's
// cls_thresh).
constexpr float kTurnedThreshold = 0.9f;

// The only output of `fn` on `x` as its only input `name`.
absl::StatusOr<runtime::Tensor> RunOne(compiler::JitFunction& fn, const std::string& name,
                                       const runtime::Tensor& x) {
  GJ_ASSIGN_OR_RETURN(std::vector<runtime::Tensor> out, fn.Run({{name, x}}));
  if (out.empty()) return absl::InternalError(absl::StrCat("input '", name, "': no output"));
  return std::move(out[0]);
}

}  // namespace

OcrPageFiles OcrPageFilesIn(const std::string& fetch_dir) {
  const std::string dir = fetch_dir + "/ocr-models/";
  return {dir + "ch_PP-OCRv4_det_infer.onnx", dir + "ch_ppocr_mobile_v2.0_cls_infer.onnx",
          OcrFilesIn(fetch_dir)};
}

absl::StatusOr<std::unique_ptr<OcrPageReader>> OcrPageReader::Create(const OcrPageFiles& files,
                                                                     compiler::JitOptions options) {
  GJ_RETURN_IF_ERROR(NeedOcrFile(files.detector, "the OCR text detector"));
  GJ_RETURN_IF_ERROR(NeedOcrFile(files.classifier, "the OCR angle classifier"));
  GJ_ASSIGN_OR_RETURN(std::unique_ptr<OcrRecognizer> recognizer,
                      OcrRecognizer::Create(files.recognizer, options));
  GJ_ASSIGN_OR_RETURN(std::unique_ptr<OnnxFunction> detector,
                      OnnxFunction::Open(files.detector, options));
  GJ_ASSIGN_OR_RETURN(onnx::ImportedModel cls, onnx::Import(files.classifier));
  if (cls.input_names.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        files.classifier, ": expected a classifier with one input, got ", cls.input_names.size()));
  }
  const std::string cls_input = cls.input_names[0];
  GJ_ASSIGN_OR_RETURN(std::unique_ptr<compiler::JitFunction> classifier,
                      JitOnnxModel(cls, options));
  const std::vector<std::string> det_inputs = detector->input_names();
  if (det_inputs.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        files.detector, ": expected a detector with one input, got ", det_inputs.size()));
  }
  std::unique_ptr<OcrPageReader> reader(new OcrPageReader({}, recognizer->alphabet()));
  OnnxFunction* det = detector.get();
  compiler::JitFunction* clf = classifier.get();
  OcrRecognizer* rec = recognizer.get();
  reader->models_.detect =
      [det, name = det_inputs[0]](const runtime::Tensor& x) -> absl::StatusOr<runtime::Tensor> {
    GJ_ASSIGN_OR_RETURN(std::vector<runtime::Tensor> out, det->Run({{name, x}}));
    if (out.empty()) return absl::InternalError("the OCR text detector gave no output");
    return std::move(out[0]);
  };
  reader->models_.classify = [clf, cls_input](const runtime::Tensor& x) {
    return RunOne(*clf, cls_input, x);
  };
  reader->models_.recognize = [rec](const runtime::Tensor& x) { return rec->Run(x); };
  reader->detector_ = std::move(detector);
  reader->classifier_ = std::move(classifier);
  reader->recognizer_ = std::move(recognizer);
  return reader;
}

std::unique_ptr<OcrPageReader> OcrPageReader::WithModels(OcrPageModels models,
                                                         OcrAlphabet alphabet) {
  return std::unique_ptr<OcrPageReader>(new OcrPageReader(std::move(models), std::move(alphabet)));
}

absl::StatusOr<std::vector<OcrLine>> OcrPageReader::Read(const RgbImage& page) {
  GJ_ASSIGN_OR_RETURN(runtime::Tensor x, PreprocessOcrPage(page));
  GJ_ASSIGN_OR_RETURN(runtime::Tensor probabilities, models_.detect(x));
  GJ_ASSIGN_OR_RETURN(std::vector<OcrBox> boxes,
                      DetectOcrBoxes(probabilities, page.width, page.height));
  SortOcrBoxes(&boxes);
  std::vector<OcrLine> lines;
  for (const OcrBox& box : boxes) {
    OcrLine line;
    line.box = box;
    // A margin of a quarter of the line's height around the box, as the recognizer was
    // trained on lines with room around the text (a tight crop reads without its spaces).
    OcrBox padded = box;
    const int64_t margin = box.height() / 4;
    padded.x0 -= margin, padded.x1 += margin, padded.y0 -= margin, padded.y1 += margin;
    RgbImage crop = CropOcrBox(page, padded);
    GJ_ASSIGN_OR_RETURN(runtime::Tensor angle_x, PreprocessOcrAngle(crop));
    GJ_ASSIGN_OR_RETURN(runtime::Tensor angle, models_.classify(angle_x));
    if (angle.numel() != 2 || angle.dtype() != ir::DType::kF32) {
      return absl::InvalidArgumentError(
          absl::StrCat("OCR angle classifier: expected f32[1, 2], got ", angle.TypeString()));
    }
    const float* p = angle.data<float>();
    if (p[1] > p[0] && p[1] > kTurnedThreshold) {
      crop = RotateHalfTurn(crop);
      line.turned = true;
    }
    GJ_ASSIGN_OR_RETURN(runtime::Tensor line_x, PreprocessOcrLine(crop));
    GJ_ASSIGN_OR_RETURN(runtime::Tensor scores, models_.recognize(line_x));
    GJ_ASSIGN_OR_RETURN(std::vector<std::string> text, CtcGreedyDecode(scores, alphabet_));
    if (text.size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("OCR recognizer: expected scores for one line, got ", scores.TypeString()));
    }
    line.text = std::move(text[0]);
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace graphjit::models
