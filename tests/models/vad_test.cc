// Silero VAD v4 (scripts/fetch_models.sh) on a sentence spoken by espeak-ng between two
// silences (sox pads it): the speech is found where it was put, the compiled
// probabilities equal the interpreter's chunk by chunk (the LSTM state carried), the
// baseline tier's equal O2's, three streams in one batch equal each stream alone, and bad
// chunks and files are refused. Skips, saying how to get them, without the model or
// without espeak-ng and sox.
#include "models/vad.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/orc/code_tier.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/ocr.h"
#include "runtime/interpreter.h"

namespace graphjit::models {
namespace {

using ::testing::HasSubstr;

constexpr double kPadBefore = 1.0, kPadAfter = 1.2;  // seconds of silence around the speech

std::string ModelPath() { return SileroVadPath(OcrFetchDir(GRAPHJIT_SOURCE_DIR)); }

// A sentence spoken by espeak-ng at 16 kHz mono between kPadBefore and kPadAfter seconds
// of silence, as floats; empty when espeak-ng or sox is missing or fails. sox -D: no
// dither, which is random per run and would make every run's input another.
const std::vector<float>& Speech() {
  static const std::vector<float>* samples = [] {
    auto* out = new std::vector<float>;
    const std::string dir = absl::StrCat(::testing::TempDir(), "/graphjit_vad_", ::getpid());
    std::filesystem::create_directories(dir);
    const std::string command = absl::StrCat(
        "espeak-ng -w ", dir, "/s.wav 'graphjit finds the speech in this sentence' && sox -D ", dir,
        "/s.wav -r 16000 -c 1 -b 16 ", dir, "/s16.wav pad ", kPadBefore, " ", kPadAfter, " && sox ",
        dir, "/s16.wav -t f32 ", dir, "/s.f32 > ", dir, "/log 2>&1");
    if (std::system(command.c_str()) == 0) {
      std::ifstream in(dir + "/s.f32", std::ios::binary);
      float x;
      while (in.read(reinterpret_cast<char*>(&x), sizeof(x))) out->push_back(x);
    }
    std::filesystem::remove_all(dir);
    return out;
  }();
  return *samples;
}

#define SKIP_WITHOUT_VAD()                                                               \
  if (!std::filesystem::exists(ModelPath()))                                             \
    GTEST_SKIP() << ModelPath() << " is missing: run scripts/fetch_models.sh";           \
  if (Speech().empty())                                                                  \
  GTEST_SKIP() << "espeak-ng or sox is missing: apt-get install espeak-ng sox (scripts/" \
                  "bootstrap.sh does)"

compiler::JitOptions Options(compiler::CodeTier tier = compiler::CodeTier::kOptimized) {
  compiler::JitOptions options;
  options.log = {};
  options.compile.env = &compiler::CompileEnv::MemoryOnly();
  options.compile.codegen.tier = tier;
  return options;
}

// The model's graph interpreted over `samples` chunk by chunk, the state carried.
std::vector<float> Interpreted(const onnx::ImportedModel& model,
                               const std::vector<float>& samples) {
  runtime::Tensor h = *runtime::Tensor::Zeros(ir::DType::kF32, {2, 1, 64}), c = h;
  std::vector<float> out;
  for (size_t start = 0; start < samples.size(); start += SileroVad::kChunk) {
    runtime::Tensor x = *runtime::Tensor::Zeros(ir::DType::kF32, {1, SileroVad::kChunk});
    for (size_t i = start; i < std::min(samples.size(), start + SileroVad::kChunk); ++i)
      x.data<float>()[i - start] = samples[i];
    absl::StatusOr<std::vector<runtime::Tensor>> y =
        runtime::Interpret(model.graph, {{"input", x}, {"h", h}, {"c", c}}, model.params);
    EXPECT_TRUE(y.ok()) << y.status();
    if (!y.ok()) return out;
    out.push_back(y->at(0).data<float>()[0]);  // output, hn, cn
    h = y->at(1);
    c = y->at(2);
  }
  return out;
}

TEST(SileroVad, FindsTheSpokenSentenceBetweenItsSilences) {
  SKIP_WITHOUT_VAD();
  absl::StatusOr<std::unique_ptr<SileroVad>> vad = SileroVad::Create(ModelPath(), 1, Options());
  ASSERT_TRUE(vad.ok()) << vad.status();
  const std::vector<float>& speech = Speech();
  absl::StatusOr<std::vector<float>> probs = (*vad)->Probabilities(speech);
  ASSERT_TRUE(probs.ok()) << probs.status();
  ASSERT_EQ(probs->size(), (speech.size() + SileroVad::kChunk - 1) / SileroVad::kChunk);
  const double seconds = static_cast<double>(speech.size()) / SileroVad::kSampleRate;
  const std::vector<SpeechSegment> segments =
      SpeechSegments(*probs, static_cast<int64_t>(speech.size()));
  ASSERT_FALSE(segments.empty()) << "no speech found";
  EXPECT_NEAR(segments.front().start_s, kPadBefore, 0.3);
  EXPECT_NEAR(segments.back().end_s, seconds - kPadAfter, 0.4);
  // Silence is silence: no chunk of the leading pause is speech.
  for (int64_t i = 0; i < static_cast<int64_t>(0.8 * SileroVad::kSampleRate / SileroVad::kChunk);
       ++i)
    EXPECT_LT((*probs)[i], 0.1) << "chunk " << i;

  // The same probabilities from the interpreter, and from the baseline tier.
  const std::vector<float> want = Interpreted((*vad)->model(), speech);
  ASSERT_EQ(want.size(), probs->size());
  absl::StatusOr<std::unique_ptr<SileroVad>> baseline =
      SileroVad::Create(ModelPath(), 1, Options(compiler::CodeTier::kBaseline));
  ASSERT_TRUE(baseline.ok()) << baseline.status();
  absl::StatusOr<std::vector<float>> fast = (*baseline)->Probabilities(speech);
  ASSERT_TRUE(fast.ok()) << fast.status();
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR((*probs)[i], want[i], 1e-5) << "chunk " << i << " O2 vs the interpreter";
    EXPECT_NEAR((*fast)[i], want[i], 1e-5) << "chunk " << i << " baseline vs the interpreter";
  }
}

TEST(SileroVad, ThreeStreamsInABatchEqualEachStreamAlone) {
  SKIP_WITHOUT_VAD();
  const std::vector<float>& speech = Speech();
  constexpr int64_t kChunks = 60;
  ASSERT_GE(speech.size(), size_t{kChunks * SileroVad::kChunk});
  // Stream 0 the sentence, 1 silence, 2 the sentence half as loud from its second second.
  auto sample = [&](int64_t stream, int64_t i) -> float {
    if (stream == 0) return speech[i];
    if (stream == 1) return 0.0f;
    return 0.5f * speech[i + SileroVad::kSampleRate];
  };
  absl::StatusOr<std::unique_ptr<SileroVad>> batch = SileroVad::Create(ModelPath(), 3, Options());
  absl::StatusOr<std::unique_ptr<SileroVad>> single = SileroVad::Create(ModelPath(), 1, Options());
  ASSERT_TRUE(batch.ok() && single.ok()) << batch.status() << single.status();
  std::vector<std::vector<float>> alone(3);
  for (int64_t s = 0; s < 3; ++s) {
    (*single)->Reset();
    for (int64_t k = 0; k < kChunks; ++k) {
      runtime::Tensor x = *runtime::Tensor::Zeros(ir::DType::kF32, {1, SileroVad::kChunk});
      for (int64_t i = 0; i < SileroVad::kChunk; ++i)
        x.data<float>()[i] = sample(s, k * SileroVad::kChunk + i);
      absl::StatusOr<std::vector<float>> p = (*single)->Step(x);
      ASSERT_TRUE(p.ok()) << p.status();
      alone[s].push_back((*p)[0]);
    }
  }
  for (int64_t k = 0; k < kChunks; ++k) {
    runtime::Tensor x = *runtime::Tensor::Zeros(ir::DType::kF32, {3, SileroVad::kChunk});
    for (int64_t s = 0; s < 3; ++s)
      for (int64_t i = 0; i < SileroVad::kChunk; ++i)
        x.data<float>()[s * SileroVad::kChunk + i] = sample(s, k * SileroVad::kChunk + i);
    absl::StatusOr<std::vector<float>> p = (*batch)->Step(x);
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_EQ(p->size(), 3u);
    for (int64_t s = 0; s < 3; ++s)
      EXPECT_NEAR((*p)[s], alone[s][k], 1e-5) << "stream " << s << " chunk " << k;
  }
}

TEST(SileroVad, BadChunksAndFilesAreRefused) {
  absl::StatusOr<std::unique_ptr<SileroVad>> missing = SileroVad::Create("/nonexistent/vad.onnx");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("scripts/fetch_models.sh"));
  EXPECT_EQ(SileroVad::Create(ModelPath(), 0).status().code(), absl::StatusCode::kInvalidArgument);
  if (!std::filesystem::exists(ModelPath())) GTEST_SKIP() << "run scripts/fetch_models.sh";
  absl::StatusOr<std::unique_ptr<SileroVad>> vad = SileroVad::Create(ModelPath(), 1, Options());
  ASSERT_TRUE(vad.ok()) << vad.status();
  absl::StatusOr<std::vector<float>> wrong =
      (*vad)->Step(*runtime::Tensor::Zeros(ir::DType::kF32, {1, 256}));
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong.status().message(), HasSubstr("a VAD chunk is f32[1, 512], got f32[1, 256]"));
  wrong = (*vad)->Step(*runtime::Tensor::Zeros(ir::DType::kF64, {1, 512}));
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SpeechSegments, HysteresisMinimumsAndPadding) {
  // 32 ms chunks: speech in chunks 10..29, a 2-chunk dip (64 ms < 100 ms: bridged), then
  // silence; a 3-chunk blip at 60 (96 ms < 250 ms: dropped).
  std::vector<float> p(80, 0.05f);
  for (int i = 10; i < 30; ++i) p[i] = 0.9f;
  p[18] = p[19] = 0.2f;
  for (int i = 60; i < 63; ++i) p[i] = 0.9f;
  const int64_t samples = 80 * SileroVad::kChunk;
  std::vector<SpeechSegment> s = SpeechSegments(p, samples);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_NEAR(s[0].start_s, 10 * 0.032 - 0.03, 1e-9);
  EXPECT_NEAR(s[0].end_s, 30 * 0.032 + 0.03, 1e-9);
  SegmentOptions strict;
  strict.min_silence_ms = 30;  // the dip (its second chunk) now ends the first segment
  strict.speech_pad_ms = 0;
  s = SpeechSegments(p, samples, strict);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_NEAR(s[0].end_s, 18 * 0.032, 1e-9);
  EXPECT_NEAR(s[1].start_s, 20 * 0.032, 1e-9);
}

}  // namespace
}  // namespace graphjit::models
