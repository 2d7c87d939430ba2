// A whole OCR page (models/ocr_page.h): the pieces around the models against hand-made
// maps and images; the three PP-OCRv4 models compiled by graphjit reading a rendered page
// of six lines at three sizes exactly, in reading order, one of them upside down; and
// ONNX Runtime behind the same pre- and post-processing reading the same; the detector
// matching ONNX Runtime's maps under the exact and the symbolic policy. The page tests
// skip with a message when scripts/fetch_models.sh has not fetched the models (or ONNX
// Runtime) or PIL cannot render the page.
#include "models/ocr_page.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/onnx_function.h"
#include "runtime/npy.h"

namespace graphjit::models {
namespace {

using ::testing::HasSubstr;

runtime::Tensor Map(int64_t h, int64_t w, const std::vector<std::vector<int64_t>>& blobs,
                    float value) {
  runtime::Tensor t = *runtime::Tensor::Zeros(ir::DType::kF32, {1, 1, h, w});
  float* p = t.data<float>();
  for (const std::vector<int64_t>& b : blobs) {  // x0, y0, x1, y1 inclusive
    for (int64_t y = b[1]; y <= b[3]; ++y) {
      for (int64_t x = b[0]; x <= b[2]; ++x) p[y * w + x] = value;
    }
  }
  return t;
}

// Two regions become two boxes, each expanded by area * 1.5 / perimeter and scaled to the
// page; a faint region (below the box threshold) and a thin one (a side under 3) are not
// lines.
TEST(OcrDetect, RegionsOfTheProbabilityMapBecomeUnclippedBoxes) {
  runtime::Tensor map = Map(64, 128, {{10, 10, 50, 20}, {60, 40, 100, 50}, {5, 60, 120, 61}}, 0.9f);
  float* p = map.data<float>();
  for (int64_t y = 30; y <= 35; ++y) {
    for (int64_t x = 10; x <= 30; ++x) p[y * 128 + x] = 0.5f;  // over 0.3, under 0.6
  }
  absl::StatusOr<std::vector<OcrBox>> boxes = DetectOcrBoxes(map, 256, 128);
  ASSERT_TRUE(boxes.ok()) << boxes.status();
  ASSERT_EQ(boxes->size(), 2u);
  // 40 x 10 between pixel centres: d = 400 * 1.5 / 100 = 6; then twice as large.
  const OcrBox& a = (*boxes)[0];
  EXPECT_EQ(a.x0, 8);
  EXPECT_EQ(a.x1, 112);
  EXPECT_EQ(a.y0, 8);
  EXPECT_EQ(a.y1, 52);
  EXPECT_FLOAT_EQ(a.score, 0.9f);
  EXPECT_EQ((*boxes)[1].x0, 108);
  absl::StatusOr<std::vector<OcrBox>> bad =
      DetectOcrBoxes(*runtime::Tensor::Zeros(ir::DType::kF32, {1, 2, 4, 4}), 4, 4);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("f32[1, 1, H, W]"));
}

TEST(OcrDetect, PagesAreResizedToMultiplesOf32AndBoxesSortedAsPaddleOcrReads) {
  RgbImage page{800, 600, std::vector<float>(800 * 600 * 3, 255.0f)};
  absl::StatusOr<runtime::Tensor> x = PreprocessOcrPage(page);
  ASSERT_TRUE(x.ok()) << x.status();
  EXPECT_EQ(x->shape(), (std::vector<int64_t>{1, 3, 608, 800}));
  // White: (1 - mean) / std per channel.
  EXPECT_NEAR(x->data<float>()[0], (1 - 0.485f) / 0.229f, 1e-5);
  RgbImage wide{2000, 1000, std::vector<float>(2000 * 1000 * 3, 0.0f)};
  EXPECT_EQ(PreprocessOcrPage(wide)->shape(), (std::vector<int64_t>{1, 3, 480, 960}));
  EXPECT_FALSE(PreprocessOcrPage(RgbImage{}).ok());

  std::vector<OcrBox> boxes = {{300, 100, 400, 120}, {10, 104, 200, 124}, {10, 10, 90, 30}};
  SortOcrBoxes(&boxes);
  EXPECT_EQ(boxes[0].y0, 10);
  EXPECT_EQ(boxes[1].x0, 10);  // 4 pixels lower but left: the same line, read first
  EXPECT_EQ(boxes[2].x0, 300);

  RgbImage tiny{2, 1, {1, 2, 3, 4, 5, 6}};
  EXPECT_EQ(RotateHalfTurn(tiny).rgb, (std::vector<float>{4, 5, 6, 1, 2, 3}));
  EXPECT_EQ(CropOcrBox(tiny, {1, 0, 5, 1}).rgb, (std::vector<float>{4, 5, 6}));
  absl::StatusOr<runtime::Tensor> angle = PreprocessOcrAngle(page);
  ASSERT_TRUE(angle.ok()) << angle.status();
  EXPECT_EQ(angle->shape(), (std::vector<int64_t>{1, 3, 48, 192}));
}

const std::vector<std::string>& PageLines() {
  static const auto* lines = new std::vector<std::string>{
      "The quick brown fox", "jumps over the lazy dog", "graphjit reads pages",
      "one line at a time",  "then the next",           "compiled kernels"};
  return *lines;
}

// A file in this process's temporary dir.
std::string Scratch(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/ocr_page.", getpid(), ".", name);
}

// PageLines() drawn at 24, 32 and 40 pixels on an 800 x 600 page, line 4 upside down; an
// error status if scripts/render_text_line.py fails (no PIL).
absl::StatusOr<RgbImage> RenderPage() {
  const std::vector<std::string>& l = PageLines();
  const std::string path = Scratch("page.ppm");
  const std::string command = absl::StrCat(
      "/usr/bin/python3 ", GRAPHJIT_SOURCE_DIR, "/scripts/render_text_line.py",
      " --page '40,30,32,", l[0], "' --page '40,100,24,", l[1], "' --page '300,180,40,", l[2],
      "' --page '40,260,24,", l[3], "' --page '420,330,32,", l[4], "' --page '40,420,40,", l[5],
      "' --turn 4 ", path);
  if (std::system(command.c_str()) != 0) {
    return absl::UnavailableError(
        "scripts/render_text_line.py failed: install python3-pil (scripts/bootstrap.sh)");
  }
  absl::StatusOr<RgbImage> page = ReadPpm(path);
  std::filesystem::remove(path);
  return page;
}

// What a skipped test says is missing: the models (or ONNX Runtime, with `ort`).
std::string Missing(bool ort) {
  const OcrPageFiles files = OcrPageFilesIn(OcrFetchDir(GRAPHJIT_SOURCE_DIR));
  for (const std::string& f : {files.detector, files.classifier, files.recognizer.model}) {
    if (!std::filesystem::exists(f)) {
      return absl::StrCat("run scripts/fetch_models.sh to fetch the PP-OCRv4 models (no ", f, ")");
    }
  }
  const std::string node_modules =
      OcrFetchDir(GRAPHJIT_SOURCE_DIR) + "/onnxruntime-node/node_modules/onnxruntime-node";
  if (ort && (!std::filesystem::exists(node_modules) ||
              std::system("node --version > /dev/null 2>&1") != 0)) {
    return "run scripts/fetch_models.sh to install onnxruntime-node (and apt-get install nodejs)";
  }
  return "";
}

#define SKIP_IF(missing_or_page)                                 \
  if (const std::string why = (missing_or_page); !why.empty()) { \
    GTEST_SKIP() << why;                                         \
  }

// ONNX Runtime's output 0 of `model` on input x (benchmarks/ort_compare/ort_run.js, one
// process per call).
absl::StatusOr<runtime::Tensor> RunOrt(const std::string& model, const runtime::Tensor& x) {
  static int calls = 0;
  const std::string in = Scratch(absl::StrCat("x", calls, ".npy"));
  const std::string out = Scratch(absl::StrCat("out", calls++));
  if (absl::Status s = runtime::WriteNpy(in, x); !s.ok()) return s;
  const std::string command =
      absl::StrCat("node ", GRAPHJIT_SOURCE_DIR, "/benchmarks/ort_compare/ort_run.js '", model,
                   "' --input x=@", in, " --output-dir ", out, " > /dev/null");
  if (std::system(command.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("ort_run.js failed: ", command));
  }
  absl::StatusOr<runtime::Tensor> y = runtime::ReadNpy(out + "/output0.npy");
  std::filesystem::remove(in);
  std::filesystem::remove_all(out);
  return y;
}

std::string PageOrWhy(const absl::StatusOr<RgbImage>& page) {
  return page.ok() ? "" : std::string(page.status().message());
}

// Six lines at 24, 32 and 40 pixels, one drawn upside down, read back exactly in reading
// order by the three models under graphjit.
TEST(OcrPage, ReadsEveryLineOfARenderedPage) {
  SKIP_IF(Missing(/*ort=*/false));
  const absl::StatusOr<RgbImage> page = RenderPage();
  SKIP_IF(PageOrWhy(page));
  absl::StatusOr<std::unique_ptr<OcrPageReader>> reader =
      OcrPageReader::Create(OcrPageFilesIn(OcrFetchDir(GRAPHJIT_SOURCE_DIR)));
  ASSERT_TRUE(reader.ok()) << reader.status();
  absl::StatusOr<std::vector<OcrLine>> read = (*reader)->Read(*page);
  ASSERT_TRUE(read.ok()) << read.status();
  std::vector<std::string> texts;
  for (const OcrLine& l : *read) texts.push_back(l.text);
  EXPECT_EQ(texts, PageLines());
  ASSERT_EQ(read->size(), PageLines().size());
  for (size_t i = 0; i < read->size(); ++i) EXPECT_EQ((*read)[i].turned, i == 4) << i;
  // The boxes hold the lines drawn at (40, 30) and (300, 180).
  EXPECT_NEAR((*read)[0].box.x0, 40, 8);
  EXPECT_NEAR((*read)[0].box.y0, 30, 8);
  EXPECT_NEAR((*read)[2].box.x0, 300, 8);
  EXPECT_NEAR((*read)[2].box.y0, 180, 8);
}

// ONNX Runtime running the same three models behind the same pre- and post-processing
// (benchmarks/ort_compare/ort_run.js, one process per call) reads the same lines in the
// same boxes.
TEST(OcrPage, OnnxRuntimeReadsTheSameLinesInTheSameBoxes) {
  SKIP_IF(Missing(/*ort=*/true));
  const absl::StatusOr<RgbImage> page = RenderPage();
  SKIP_IF(PageOrWhy(page));
  const OcrPageFiles files = OcrPageFilesIn(OcrFetchDir(GRAPHJIT_SOURCE_DIR));
  auto ort = [](std::string model) {
    return [model](const runtime::Tensor& x) { return RunOrt(model, x); };
  };
  absl::StatusOr<OcrAlphabet> alphabet = ReadOcrKeys(files.recognizer.keys);
  ASSERT_TRUE(alphabet.ok()) << alphabet.status();
  std::unique_ptr<OcrPageReader> with_ort = OcrPageReader::WithModels(
      {ort(files.detector), ort(files.classifier), ort(files.recognizer.model)}, *alphabet);
  absl::StatusOr<std::unique_ptr<OcrPageReader>> with_graphjit = OcrPageReader::Create(files);
  ASSERT_TRUE(with_graphjit.ok()) << with_graphjit.status();
  absl::StatusOr<std::vector<OcrLine>> want = with_ort->Read(*page);
  absl::StatusOr<std::vector<OcrLine>> got = (*with_graphjit)->Read(*page);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ((*got)[i].text, (*want)[i].text);
    EXPECT_EQ((*got)[i].turned, (*want)[i].turned);
    // A pixel of the probability map right at the threshold may fall either way.
    EXPECT_NEAR((*got)[i].box.x0, (*want)[i].box.x0, 2);
    EXPECT_NEAR((*got)[i].box.y0, (*want)[i].box.y0, 2);
    EXPECT_NEAR((*got)[i].box.x1, (*want)[i].box.x1, 2);
    EXPECT_NEAR((*got)[i].box.y1, (*want)[i].box.y1, 2);
  }
}

// The detector under the exact and the symbolic policy at 640 x 640 and 544 x 960: its
// probability maps equal ONNX Runtime's within 1e-4. Its sides line up only as multiples of
// 32, so under the symbolic policy it is one specialization, symbolic in side / 32, for
// both pages.
TEST(OcrPage, TheDetectorMatchesOnnxRuntimeUnderTheExactAndTheSymbolicPolicy) {
  SKIP_IF(Missing(/*ort=*/true));
  const std::string detector = OcrPageFilesIn(OcrFetchDir(GRAPHJIT_SOURCE_DIR)).detector;
  std::vector<runtime::Tensor> pages, want;
  for (auto [h, w] : std::vector<std::pair<int64_t, int64_t>>{{640, 640}, {544, 960}}) {
    std::vector<double> v(3 * h * w);
    for (size_t i = 0; i < v.size(); ++i) {
      v[i] = std::sin(0.013 * static_cast<double>(i % w)) * std::cos(0.021 * (i / w)) * 2;
    }
    pages.push_back(*runtime::Tensor::FromDoubles(ir::DType::kF32, {1, 3, h, w}, v));
    absl::StatusOr<runtime::Tensor> y = RunOrt(detector, pages.back());
    ASSERT_TRUE(y.ok()) << y.status();
    want.push_back(*std::move(y));
  }
  for (compiler::entries::ShapePolicy policy :
       {compiler::entries::ShapePolicy::kExact, compiler::entries::ShapePolicy::kSymbolic}) {
    SCOPED_TRACE(compiler::entries::PolicyName(policy));
    compiler::JitOptions options;
    options.policy = policy;
    absl::StatusOr<std::unique_ptr<OnnxFunction>> fn = OnnxFunction::Open(detector, options);
    ASSERT_TRUE(fn.ok()) << fn.status();
    for (size_t i = 0; i < pages.size(); ++i) {
      absl::StatusOr<std::vector<runtime::Tensor>> got =
          (*fn)->Run({{(*fn)->input_names()[0], pages[i]}});
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_EQ((*got)[0].shape(), want[i].shape());
      EXPECT_LE(runtime::MaxAbsDiff((*got)[0], want[i]), 1e-4) << pages[i].TypeString();
    }
    EXPECT_EQ((*fn)->specializations(), 1);  // the sides' multiples of 32: one key
  }
}

}  // namespace
}  // namespace graphjit::models
