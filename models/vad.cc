#include "models/vad.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "models/onnx_model.h"
#include "onnx/specialize.h"

namespace graphjit::models {
namespace {

constexpr int64_t kStateWidth = 64;  // h and c: f32[2, batch, 64]

runtime::Tensor ZeroState(int64_t batch) {
  return *runtime::Tensor::Zeros(ir::DType::kF32, {2, batch, kStateWidth});
}

// The index of output `name`, or an error naming what the model has.
absl::StatusOr<size_t> OutputIndex(const onnx::ImportedModel& model, const std::string& name) {
  auto it = absl::c_find(model.output_names, name);
  if (it == model.output_names.end()) {
    return absl::InvalidArgumentError(absl::StrCat("the VAD model has no output '", name,
                                                   "' (Silero VAD v4 has output, hn, cn)"));
  }
  return static_cast<size_t>(it - model.output_names.begin());
}

}  // namespace

std::string SileroVadPath(const std::string& fetch_dir) {
  return fetch_dir + "/silero-vad/silero_vad.onnx";
}

SileroVad::SileroVad(onnx::ImportedModel model, std::unique_ptr<compiler::JitFunction> function,
                     int64_t batch)
    : model_(std::move(model)), function_(std::move(function)), batch_(batch) {
  Reset();
}

absl::StatusOr<std::unique_ptr<SileroVad>> SileroVad::Create(const std::string& path, int64_t batch,
                                                             compiler::JitOptions options) {
  if (batch < 1) return absl::InvalidArgumentError(absl::StrCat("VAD batch ", batch, " < 1"));
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return absl::NotFoundError(absl::StrCat("the VAD model ", path,
                                            " not found: run scripts/fetch_models.sh (it "
                                            "fetches Silero VAD from npm)"));
  }
  GJ_ASSIGN_OR_RETURN(runtime::Tensor chunk,
                      runtime::Tensor::Zeros(ir::DType::kF32, {batch, kChunk}));
  const runtime::TensorMap example = {
      {"input", chunk},
      {"sr", runtime::Tensor::Scalar(ir::DType::kI64, static_cast<double>(kSampleRate))},
      {"h", ZeroState(batch)},
      {"c", ZeroState(batch)}};
  GJ_ASSIGN_OR_RETURN(onnx::SpecializedImport imported, onnx::ImportSpecialized(path, example));
  for (const char* name : {"input", "h", "c"}) {
    if (!absl::c_linear_search(imported.model.input_names, name)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": no input '", name, "' (Silero VAD v4 takes input, sr, h and c)"));
    }
  }
  for (const char* name : {"output", "hn", "cn"}) {
    GJ_RETURN_IF_ERROR(OutputIndex(imported.model, name).status());
  }
  GJ_ASSIGN_OR_RETURN(std::unique_ptr<compiler::JitFunction> function,
                      JitOnnxModel(imported.model, std::move(options)));
  return std::unique_ptr<SileroVad>(
      new SileroVad(std::move(imported.model), std::move(function), batch));
}

void SileroVad::Reset() {
  h_ = ZeroState(batch_);
  c_ = ZeroState(batch_);
}

absl::StatusOr<std::vector<float>> SileroVad::Step(const runtime::Tensor& chunk) {
  if (chunk.dtype() != ir::DType::kF32 || chunk.shape() != std::vector<int64_t>{batch_, kChunk}) {
    return absl::InvalidArgumentError(
        absl::StrCat("a VAD chunk is f32[", batch_, ", ", kChunk, "], got ", chunk.TypeString()));
  }
  GJ_ASSIGN_OR_RETURN(std::vector<runtime::Tensor> out,
                      function_->Run({{"input", chunk}, {"h", h_}, {"c", c_}}));
  GJ_ASSIGN_OR_RETURN(size_t p, OutputIndex(model_, "output"));
  GJ_ASSIGN_OR_RETURN(size_t hn, OutputIndex(model_, "hn"));
  GJ_ASSIGN_OR_RETURN(size_t cn, OutputIndex(model_, "cn"));
  h_ = std::move(out[hn]);
  c_ = std::move(out[cn]);
  const float* probs = out[p].data<float>();
  return std::vector<float>(probs, probs + batch_);
}

absl::StatusOr<std::vector<float>> SileroVad::Probabilities(absl::Span<const float> samples) {
  if (batch_ != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Probabilities runs one stream; this VAD has batch ", batch_));
  }
  Reset();
  std::vector<float> out;
  GJ_ASSIGN_OR_RETURN(runtime::Tensor chunk, runtime::Tensor::Zeros(ir::DType::kF32, {1, kChunk}));
  for (size_t start = 0; start < samples.size(); start += kChunk) {
    const size_t n = std::min<size_t>(kChunk, samples.size() - start);
    float* x = chunk.data<float>();
    std::copy_n(samples.begin() + start, n, x);
    std::fill(x + n, x + kChunk, 0.0f);
    GJ_ASSIGN_OR_RETURN(std::vector<float> p, Step(chunk));
    out.push_back(p[0]);
  }
  return out;
}

std::vector<SpeechSegment> SpeechSegments(absl::Span<const float> probabilities, int64_t samples,
                                          const SegmentOptions& options) {
  const int64_t per_ms = SileroVad::kSampleRate / 1000;
  const int64_t min_speech = options.min_speech_ms * per_ms;
  const int64_t min_silence = options.min_silence_ms * per_ms;
  const int64_t pad = options.speech_pad_ms * per_ms;
  const float low = options.threshold - 0.15f;
  std::vector<std::pair<int64_t, int64_t>> spans;  // samples
  bool speaking = false;
  int64_t start = 0, quiet_from = -1;
  for (size_t i = 0; i < probabilities.size(); ++i) {
    const int64_t at = static_cast<int64_t>(i) * SileroVad::kChunk;
    const float p = probabilities[i];
    if (p >= options.threshold) {
      quiet_from = -1;
      if (!speaking) {
        speaking = true;
        start = at;
      }
      continue;
    }
    if (!speaking || p >= low) continue;
    if (quiet_from < 0) quiet_from = at;
    if (at - quiet_from < min_silence) continue;
    if (quiet_from - start > min_speech) spans.emplace_back(start, quiet_from);
    speaking = false;
    quiet_from = -1;
  }
  if (speaking && samples - start > min_speech) spans.emplace_back(start, samples);
  // Padding, split at the middle where two segments' pads would overlap.
  std::vector<SpeechSegment> out;
  for (size_t i = 0; i < spans.size(); ++i) {
    int64_t a = std::max<int64_t>(0, spans[i].first - pad);
    int64_t b = std::min(samples, spans[i].second + pad);
    if (i > 0) a = std::max(a, (spans[i - 1].second + spans[i].first) / 2);
    if (i + 1 < spans.size()) b = std::min(b, (spans[i].second + spans[i + 1].first) / 2);
    out.push_back({static_cast<double>(a) / SileroVad::kSampleRate,
                   static_cast<double>(b) / SileroVad::kSampleRate});
  }
  return out;
}

}  // namespace graphjit::models
