// Silero VAD v4 (an ONNX model, fetched by scripts/fetch_models.sh) imported and run under
// compiler::Jit: 16 kHz audio in 512-sample chunks, the LSTM state carried from chunk to
// chunk, a speech probability per chunk, and the speech segments those probabilities
// mark. The model's If on the sample rate and on the batch is decided at import (sr and
// the chunk's shape fixed, onnx/specialize.h); its LSTMs are unrolled over their steps.
// Shared by examples/vad, its test and benchmarks/ort_compare.
#ifndef GRAPHJIT_MODELS_VAD_H_
#define GRAPHJIT_MODELS_VAD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/jit.h"
#include "onnx/import.h"
#include "runtime/tensor.h"

namespace graphjit::models {

// FETCH_DIR/silero-vad/silero_vad.onnx, where scripts/fetch_models.sh puts the model.
std::string SileroVadPath(const std::string& fetch_dir);

class SileroVad {
 public:
  static constexpr int64_t kSampleRate = 16000;
  static constexpr int64_t kChunk = 512;  // samples per call: 32 ms

  // Imports the model at `batch` streams of kChunk samples at kSampleRate and compiles
  // it. NotFound for a missing file (the message says to run scripts/fetch_models.sh);
  // the importer's errors; InvalidArgument for a batch < 1. `options` as for JitOnnxModel.
  static absl::StatusOr<std::unique_ptr<SileroVad>> Create(const std::string& path,
                                                           int64_t batch = 1,
                                                           compiler::JitOptions options = {});

  // One chunk of every stream: f32[batch, kChunk] -> each stream's speech probability,
  // the state carried to the next call. InvalidArgument for another shape or dtype.
  absl::StatusOr<std::vector<float>> Step(const runtime::Tensor& chunk);
  // Back to silence: the state of a stream that has not started.
  void Reset();
  // A whole recording of one stream (batch 1) from a reset state: the probability of each
  // kChunk samples, the last chunk padded with zeros.
  absl::StatusOr<std::vector<float>> Probabilities(absl::Span<const float> samples);

  int64_t batch() const { return batch_; }
  // The model as imported at this batch (sr and shapes fixed): what the VAD compiles.
  const onnx::ImportedModel& model() const { return model_; }
  compiler::JitFunction& function() { return *function_; }

 private:
  SileroVad(onnx::ImportedModel model, std::unique_ptr<compiler::JitFunction> function,
            int64_t batch);

  onnx::ImportedModel model_;
  std::unique_ptr<compiler::JitFunction> function_;
  int64_t batch_;
  runtime::Tensor h_, c_;  // f32[2, batch, 64]
};

// How probabilities become segments (Silero's own defaults): speech starts at a chunk of
// probability >= threshold and ends after min_silence_ms below threshold - 0.15; segments
// shorter than min_speech_ms are dropped; each is widened by speech_pad_ms.
struct SegmentOptions {
  float threshold = 0.5f;
  int64_t min_speech_ms = 250;
  int64_t min_silence_ms = 100;
  int64_t speech_pad_ms = 30;
};

struct SpeechSegment {
  double start_s = 0, end_s = 0;
};

// The speech segments of per-chunk probabilities of a recording `samples` long.
std::vector<SpeechSegment> SpeechSegments(absl::Span<const float> probabilities, int64_t samples,
                                          const SegmentOptions& options = {});

}  // namespace graphjit::models

#endif  // GRAPHJIT_MODELS_VAD_H_
