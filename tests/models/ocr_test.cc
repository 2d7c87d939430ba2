// The PP-OCRv4 recognizer end to end on rendered text lines: through ONNX Runtime with
// graphjit's preprocessing and decoding (which checks those two against the real model),
// and compiled by graphjit, whose text must be the rendered text and whose scores must
// match ONNX Runtime's. Skipped with a message when scripts/fetch_models.sh has not
// fetched the model (or ONNX Runtime), or when PIL cannot render the lines.
#include "models/ocr.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "compiler/orc/code_tier.h"
#include "gtest/gtest.h"
#include "runtime/npy.h"

namespace graphjit::models {
namespace {

// Lines the recognizer reads back exactly (checked through ONNX Runtime).
const char* const kLines[] = {"Hello graphjit 2026", "PP-OCRv4 reads text", "The quick brown fox"};

std::string FetchDir() { return OcrFetchDir(GRAPHJIT_SOURCE_DIR); }
std::string Quote(const std::string& s) {
  return "'" + absl::StrReplaceAll(s, {{"'", "'\\''"}}) + "'";
}
// A file in this process's scratch dir, removed at exit: ctest runs each test in its own
// process, two at a time, so the dir is per process.
std::string Scratch(const std::string& name) {
  struct Dir {
    std::string path = absl::StrCat(::testing::TempDir(), "/ocr_test.", getpid());
    Dir() { std::filesystem::create_directories(path); }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static Dir dir;
  return dir.path + "/" + name;
}

// The message a skipped test gives: what is missing and how to get it.
std::string MissingModel() {
  const OcrFiles files = OcrFilesIn(FetchDir());
  if (std::filesystem::exists(files.model) && std::filesystem::exists(files.keys)) return "";
  return absl::StrCat("run scripts/fetch_models.sh to fetch the PP-OCRv4 recognizer (no ",
                      files.model, ")");
}
std::string MissingOrt() {
  const std::string ort = FetchDir() + "/onnxruntime-node/node_modules/onnxruntime-node";
  if (!std::filesystem::exists(ort)) {
    return absl::StrCat("run scripts/fetch_models.sh to install onnxruntime-node (no ", ort, ")");
  }
  if (std::system("node --version > /dev/null 2>&1") != 0) return "node is not installed";
  return "";
}

// `text` rendered by scripts/render_text_line.py (padded to `width` if > 0) and read
// back; an error status if the script fails (no PIL).
absl::StatusOr<RgbImage> Render(const std::string& text, int width = 0) {
  const std::string path = Scratch(absl::StrCat("line", std::hash<std::string>()(text), ".ppm"));
  std::string command = absl::StrCat("/usr/bin/python3 ", GRAPHJIT_SOURCE_DIR,
                                     "/scripts/render_text_line.py ", Quote(text), " ", path);
  if (width > 0) absl::StrAppend(&command, " --width ", width);
  if (std::system(command.c_str()) != 0) {
    return absl::UnavailableError(
        "scripts/render_text_line.py failed: install python3-pil (scripts/bootstrap.sh)");
  }
  return ReadPpm(path);
}

// ONNX Runtime's output on `x`, by benchmarks/ort_compare/ort_run.js.
absl::StatusOr<runtime::Tensor> RunOrt(const runtime::Tensor& x) {
  const std::string in = Scratch("x.npy"), out = Scratch("ort_out");
  if (absl::Status s = runtime::WriteNpy(in, x); !s.ok()) return s;
  std::filesystem::remove_all(out);
  const std::string command =
      absl::StrCat("node ", GRAPHJIT_SOURCE_DIR, "/benchmarks/ort_compare/ort_run.js ",
                   Quote(OcrFilesIn(FetchDir()).model), " --input x=@", in, " --output-dir ", out,
                   " > ", Scratch("ort.json"));
  if (std::system(command.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("ort_run.js failed: ", command));
  }
  return runtime::ReadNpy(out + "/output0.npy");
}

#define SKIP_IF_MISSING(what)                     \
  if (const std::string m = (what); !m.empty()) { \
    GTEST_SKIP() << m;                            \
  }

#define ASSERT_RENDERED(image)                  \
  if (!(image).ok()) {                          \
    GTEST_SKIP() << (image).status().message(); \
  }

TEST(OcrOnnxRuntime, ReadsRenderedLinesThroughGraphjitsPreprocessingAndDecoding) {
  SKIP_IF_MISSING(MissingModel());
  SKIP_IF_MISSING(MissingOrt());
  absl::StatusOr<OcrAlphabet> alphabet = ReadOcrKeys(OcrFilesIn(FetchDir()).keys);
  ASSERT_TRUE(alphabet.ok()) << alphabet.status();
  std::vector<runtime::Tensor> lines;
  for (const char* text : kLines) {
    absl::StatusOr<RgbImage> image = Render(text);
    ASSERT_RENDERED(image);
    absl::StatusOr<runtime::Tensor> x = PreprocessOcrLine(*image);
    ASSERT_TRUE(x.ok()) << x.status();
    lines.push_back(*x);
    absl::StatusOr<runtime::Tensor> probs = RunOrt(*x);
    ASSERT_TRUE(probs.ok()) << probs.status();
    // W / 8 steps: two stride-2 convolutions round up, the final 2-wide pooling down.
    EXPECT_EQ(probs->dim(1), (x->dim(3) + 3) / 4 / 2);
    EXPECT_EQ(*CtcGreedyDecode(*probs, *alphabet), std::vector<std::string>{text});
  }
  // As one batch, each line padded with zeros to the widest plus a margin.
  absl::StatusOr<runtime::Tensor> batch = BatchOcrLines(lines, 384);
  ASSERT_TRUE(batch.ok()) << batch.status();
  absl::StatusOr<runtime::Tensor> probs = RunOrt(*batch);
  ASSERT_TRUE(probs.ok()) << probs.status();
  EXPECT_EQ(*CtcGreedyDecode(*probs, *alphabet), std::vector<std::string>(kLines, kLines + 3));
}

TEST(OcrRecognizer, MissingFilesAreNotFoundSayingHowToFetchThem) {
  absl::StatusOr<std::unique_ptr<OcrRecognizer>> r = OcrRecognizer::Create(OcrFilesIn("/none"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("/none/ocr-models/ch_PP-OCRv4_rec_infer.onnx"),
            std::string::npos)
      << r.status();
  EXPECT_NE(r.status().message().find("scripts/fetch_models.sh"), std::string::npos);
}

TEST(OcrRecognizer, ReadsRenderedLinesBackCompiledByGraphjit) {
  SKIP_IF_MISSING(MissingModel());
  absl::StatusOr<std::unique_ptr<OcrRecognizer>> recognizer =
      OcrRecognizer::Create(OcrFilesIn(FetchDir()));
  ASSERT_TRUE(recognizer.ok()) << recognizer.status();
  for (const char* text : kLines) {
    absl::StatusOr<RgbImage> image = Render(text);
    ASSERT_RENDERED(image);
    absl::StatusOr<std::string> got = (*recognizer)->Recognize(*image);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, text);
  }
}

TEST(OcrRecognizer, ScoresMatchOnnxRuntimesAtEveryWidth) {
  SKIP_IF_MISSING(MissingModel());
  SKIP_IF_MISSING(MissingOrt());
  std::vector<runtime::Tensor> lines, scores;  // ONNX Runtime's, computed once
  for (int width : {0, 384, 640}) {            // 0: the fitted width
    absl::StatusOr<RgbImage> image = Render(kLines[0], width);
    ASSERT_RENDERED(image);
    absl::StatusOr<runtime::Tensor> x = PreprocessOcrLine(*image);
    ASSERT_TRUE(x.ok()) << x.status();
    absl::StatusOr<runtime::Tensor> want = RunOrt(*x);
    ASSERT_TRUE(want.ok()) << want.status();
    lines.push_back(*x);
    scores.push_back(*want);
  }
  for (compiler::CodeTier tier : {compiler::CodeTier::kOptimized, compiler::CodeTier::kBaseline}) {
    SCOPED_TRACE(compiler::CodeTierName(tier));
    compiler::JitOptions options;
    options.compile.codegen.tier = tier;
    absl::StatusOr<std::unique_ptr<OcrRecognizer>> recognizer =
        OcrRecognizer::Create(OcrFilesIn(FetchDir()), options);
    ASSERT_TRUE(recognizer.ok()) << recognizer.status();
    for (size_t i = 0; i < lines.size(); ++i) {
      absl::StatusOr<runtime::Tensor> got = (*recognizer)->Run(lines[i]);
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_EQ(got->shape(), scores[i].shape());
      EXPECT_LE(runtime::MaxAbsDiff(*got, scores[i]), 1e-4) << "W = " << lines[i].dim(3);
      EXPECT_EQ(*CtcGreedyDecode(*got, (*recognizer)->alphabet()),
                *CtcGreedyDecode(scores[i], (*recognizer)->alphabet()));
    }
  }
}

// Split across 2 and 3 threads (3 on a 2-core machine: uneven parts), every parallel loop
// however small, the scores are the 1-thread bits: the products split by whole OpenBLAS
// blocks, and the pads, reshapes and depthwise convolutions by channel.
TEST(OcrRecognizer, ScoresAreTheSameBitsOnOneTwoAndThreeThreads) {
  SKIP_IF_MISSING(MissingModel());
  absl::StatusOr<RgbImage> image = Render(kLines[1], 384);
  ASSERT_RENDERED(image);
  absl::StatusOr<runtime::Tensor> x = PreprocessOcrLine(*image);
  ASSERT_TRUE(x.ok()) << x.status();
  absl::StatusOr<runtime::Tensor> want;
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(absl::StrCat(threads, " threads"));
    compiler::JitOptions options;
    options.compile.threads = threads;
    options.compile.min_parallel_work = threads == 1 ? -1 : 0;
    absl::StatusOr<std::unique_ptr<OcrRecognizer>> recognizer =
        OcrRecognizer::Create(OcrFilesIn(FetchDir()), options);
    ASSERT_TRUE(recognizer.ok()) << recognizer.status();
    absl::StatusOr<runtime::Tensor> got = (*recognizer)->Run(*x);
    ASSERT_TRUE(got.ok()) << got.status();
    if (threads == 1) {
      want = *got;
      continue;
    }
    ASSERT_EQ(got->shape(), want->shape());
    ASSERT_EQ(got->nbytes(), want->nbytes());
    EXPECT_EQ(std::memcmp(got->raw_data(), want->raw_data(), got->nbytes()), 0);
  }
}

}  // namespace
}  // namespace graphjit::models
