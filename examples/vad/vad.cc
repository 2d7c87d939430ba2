// Finds the speech in a recording with Silero VAD v4 compiled by graphjit: 512-sample
// chunks of 16 kHz mono audio, the model's LSTM state carried from chunk to chunk.
//
//   vad AUDIO.wav [--probs FILE.npy] [FETCH_DIR]
//
// AUDIO.wav: 16 kHz mono, any encoding libsndfile reads (convert others with sox:
// `sox in.wav -r 16000 -c 1 out.wav`). Prints each speech segment as "START - END" in
// seconds; --probs writes every chunk's speech probability as f32[chunks]. FETCH_DIR:
// where scripts/fetch_models.sh put the model (default $GRAPHJIT_FETCH_DIR or
// third_party/fetched). Exit 1 with a message on error.
#include "models/vad.h"

#include <sndfile.h>

#include <cstdio>
#include <string>
#include <vector>

#include "models/ocr.h"
#include "runtime/npy.h"

namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "vad: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  namespace gj = graphjit;
  std::string audio, probs_file, fetch_dir;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--probs" && i + 1 < argc) {
      probs_file = argv[++i];
    } else if (a.rfind("--", 0) == 0) {
      return Fail("unknown flag " + a + "\nusage: vad AUDIO.wav [--probs FILE.npy] [FETCH_DIR]");
    } else if (audio.empty()) {
      audio = a;
    } else if (fetch_dir.empty()) {
      fetch_dir = a;
    } else {
      return Fail("usage: vad AUDIO.wav [--probs FILE.npy] [FETCH_DIR]");
    }
  }
  if (audio.empty()) return Fail("usage: vad AUDIO.wav [--probs FILE.npy] [FETCH_DIR]");
  if (fetch_dir.empty()) fetch_dir = gj::models::OcrFetchDir(".");

  SF_INFO info{};
  SNDFILE* file = sf_open(audio.c_str(), SFM_READ, &info);
  if (file == nullptr) return Fail(audio + ": " + sf_strerror(nullptr));
  if (info.samplerate != gj::models::SileroVad::kSampleRate || info.channels != 1) {
    sf_close(file);
    return Fail(audio + ": " + std::to_string(info.samplerate) + " Hz, " +
                std::to_string(info.channels) +
                " channel(s); expected 16000 Hz mono (sox IN -r 16000 -c 1 OUT.wav)");
  }
  std::vector<float> samples(static_cast<size_t>(info.frames));
  const sf_count_t read = sf_readf_float(file, samples.data(), info.frames);
  sf_close(file);
  samples.resize(static_cast<size_t>(read));

  auto vad = gj::models::SileroVad::Create(gj::models::SileroVadPath(fetch_dir));
  if (!vad.ok()) return Fail(vad.status().ToString());
  auto probs = (*vad)->Probabilities(samples);
  if (!probs.ok()) return Fail(probs.status().ToString());
  for (const auto& s : gj::models::SpeechSegments(*probs, static_cast<int64_t>(samples.size()))) {
    std::printf("%.2f - %.2f\n", s.start_s, s.end_s);
  }
  if (!probs_file.empty()) {
    auto t = gj::runtime::Tensor::FromVector<float>({static_cast<int64_t>(probs->size())}, *probs);
    absl::Status s = t.ok() ? gj::runtime::WriteNpy(probs_file, *t) : t.status();
    if (!s.ok()) return Fail(s.ToString());
  }
  return 0;
}
