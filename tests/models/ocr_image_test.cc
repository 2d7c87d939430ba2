// The OCR recognizer's input side without the model: PPM parsing (and its refusals of
// malformed files), bilinear resizing and PaddleOCR's normalization, and batching.
#include "models/ocr_image.h"

#include <cstdio>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphjit::models {
namespace {

using ::testing::HasSubstr;

// A P6 file of `w` x `h` with `samples` (3 per pixel) after `header_extra`.
std::string Ppm(int w, int h, const std::string& samples, const std::string& maxval = "255") {
  return "P6\n" + std::to_string(w) + " " + std::to_string(h) + "\n" + maxval + "\n" + samples;
}

TEST(OcrImage, ParsesAP6FileWithComments) {
  const std::string bytes =
      "P6 # a comment\n# another\n2 1\n255\n" + std::string("\x00\x80\xff\x0a\x0b\x0c", 6);
  absl::StatusOr<RgbImage> image = ParsePpm(bytes, "two.ppm");
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->width, 2);
  EXPECT_EQ(image->height, 1);
  EXPECT_EQ(image->rgb, (std::vector<float>{0, 128, 255, 10, 11, 12}));
}

TEST(OcrImage, ScalesSixteenBitSamplesTo255) {
  // maxval 1023: two bytes per sample, big-endian; 1023 -> 255, 0 -> 0.
  absl::StatusOr<RgbImage> image =
      ParsePpm(Ppm(1, 1, std::string("\x03\xff\x00\x00\x03\xff", 6), "1023"), "deep.ppm");
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->rgb, (std::vector<float>{255, 0, 255}));
}

TEST(OcrImage, MalformedFilesAreInvalidArgumentNamingTheFileAndWhatWasExpected) {
  struct Case {
    std::string bytes, expected;
  };
  const Case cases[] = {
      {"", "expected the magic 'P6', got ''"},
      {"P3\n1 1\n255\n0 0 0\n", "expected the magic 'P6', got 'P3'"},
      {"\x89PNG\r\n", "expected the magic 'P6'"},
      {"P6\n", "expected the width"},
      {"P6\n-3 2\n255\n", "expected the width (an integer in 1..65536) in the header, got '-3'"},
      {"P6\n0 2\n255\n", "got '0'"},
      {"P6\n4 x\n255\n", "expected the height"},
      {"P6\n99999999 1\n255\n", "expected the width"},
      {"P6\n1 1\n70000\n", "expected the maxval (an integer in 1..65535)"},
      {"P6\n1 1\n255", "truncated PPM: expected 3 bytes of samples for 1x1 at maxval 255, got 0"},
      {Ppm(2, 2, std::string(11, '\0')), "expected 12 bytes of samples for 2x2"},
      {Ppm(1, 1, std::string(5, '\0'), "1000"), "expected 6 bytes of samples"},
      {Ppm(1, 1, std::string("\x00\x09\xff\xff\x00\x00", 6), "1000"), "above the maxval 1000"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<RgbImage> image = ParsePpm(c.bytes, "line.ppm");
    ASSERT_FALSE(image.ok()) << "accepted: " << c.bytes;
    EXPECT_EQ(image.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(image.status().message(), HasSubstr("line.ppm: "));
    EXPECT_THAT(image.status().message(), HasSubstr(c.expected));
  }
}

TEST(OcrImage, AMissingFileIsNotFoundNamingIt) {
  absl::StatusOr<RgbImage> image = ReadPpm("/nonexistent/line.ppm");
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(image.status().message(), HasSubstr("/nonexistent/line.ppm"));
}

TEST(OcrImage, ReadsAFileBackAsWritten) {
  const std::string path = ::testing::TempDir() + "/ocr_image_test.ppm";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  const std::string bytes = Ppm(1, 2, "abcdef");
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  absl::StatusOr<RgbImage> image = ReadPpm(path);
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_EQ(image->rgb, (std::vector<float>{'a', 'b', 'c', 'd', 'e', 'f'}));
}

RgbImage Gray(int64_t w, int64_t h, std::vector<float> values) {
  RgbImage image{w, h, {}};
  for (float v : values) image.rgb.insert(image.rgb.end(), {v, v, v});
  return image;
}

TEST(OcrImage, BilinearResizeUsesHalfPixelCentres) {
  // 2 -> 4 wide: output centres at source x = -0.25 (clamped to 0), 0.25, 0.75, 1.25
  // (clamped to the last pixel): 0, 25, 75, 100, as OpenCV's INTER_LINEAR.
  const RgbImage out = ResizeBilinear(Gray(2, 1, {0, 100}), 4, 1);
  ASSERT_EQ(out.rgb.size(), 12u);
  EXPECT_FLOAT_EQ(out.at(0, 0, 0), 0);
  EXPECT_FLOAT_EQ(out.at(0, 1, 1), 25);
  EXPECT_FLOAT_EQ(out.at(0, 2, 2), 75);
  EXPECT_FLOAT_EQ(out.at(0, 3, 0), 100);
  // Same size is the identity; 2x2 -> 1x1 averages the four.
  EXPECT_EQ(ResizeBilinear(Gray(2, 1, {3, 7}), 2, 1).rgb, Gray(2, 1, {3, 7}).rgb);
  EXPECT_FLOAT_EQ(ResizeBilinear(Gray(2, 2, {0, 10, 20, 30}), 1, 1).at(0, 0, 0), 15);
}

TEST(OcrImage, PreprocessingNormalizesToMinusOneOneInNchw) {
  // A 48-high line is not resized: x / 255, then (x - 0.5) / 0.5, channel planes.
  RgbImage line{2, kOcrLineHeight, {}};
  for (int64_t i = 0; i < 2 * kOcrLineHeight; ++i) line.rgb.insert(line.rgb.end(), {0, 255, 51});
  absl::StatusOr<runtime::Tensor> x = PreprocessOcrLine(line);
  ASSERT_TRUE(x.ok()) << x.status();
  EXPECT_EQ(x->shape(), (std::vector<int64_t>{1, 3, 48, 2}));
  EXPECT_EQ(x->dtype(), ir::DType::kF32);
  const int64_t plane = 2 * kOcrLineHeight;
  EXPECT_EQ(x->ValueAt(0), -1.0);                 // R = 0
  EXPECT_EQ(x->ValueAt(plane + 5), 1.0);          // G = 255
  EXPECT_FLOAT_EQ(x->ValueAt(2 * plane), -0.6f);  // B = 51: 0.2 -> -0.6
}

TEST(OcrImage, PreprocessingResizesToHeight48KeepingTheAspectRatio) {
  // 10 x 24 -> ceil(48 * 10 / 24) = 20 wide, 48 high.
  std::vector<float> values(10 * 24, 255);
  absl::StatusOr<runtime::Tensor> x = PreprocessOcrLine(Gray(10, 24, values));
  ASSERT_TRUE(x.ok()) << x.status();
  EXPECT_EQ(x->shape(), (std::vector<int64_t>{1, 3, 48, 20}));
  for (double v : x->ToDoubles()) ASSERT_EQ(v, 1.0);                    // white stays white
  EXPECT_EQ(OcrLineWidth(Gray(7, 96, std::vector<float>(7 * 96))), 4);  // ceil(3.5)
  EXPECT_FALSE(PreprocessOcrLine(RgbImage{}).ok());
}

TEST(OcrImage, BatchingPadsEachLineWithZerosOnTheRight) {
  RgbImage narrow{1, kOcrLineHeight, std::vector<float>(kOcrLineHeight * 3, 255)};
  RgbImage wide{3, kOcrLineHeight, std::vector<float>(3 * kOcrLineHeight * 3, 0)};
  runtime::Tensor a = *PreprocessOcrLine(narrow), b = *PreprocessOcrLine(wide);
  absl::StatusOr<runtime::Tensor> batch = BatchOcrLines({a, b}, 4);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->shape(), (std::vector<int64_t>{2, 3, 48, 4}));
  // Row 0 of channel 0 of each line: the line's values, then zeros.
  EXPECT_EQ(batch->ValueAt(0), 1.0);
  EXPECT_EQ(batch->ValueAt(1), 0.0);
  const int64_t line = 3 * 48 * 4;
  EXPECT_EQ(batch->ValueAt(line + 2), -1.0);
  EXPECT_EQ(batch->ValueAt(line + 3), 0.0);
  // The last row of the last channel too.
  EXPECT_EQ(batch->ValueAt(2 * line - 4), -1.0);
  EXPECT_EQ(batch->ValueAt(2 * line - 1), 0.0);
  EXPECT_EQ(BatchOcrLines({a, b})->dim(3), 3);  // width 0: the widest
  absl::StatusOr<runtime::Tensor> too_narrow = BatchOcrLines({a, b}, 2);
  ASSERT_FALSE(too_narrow.ok());
  EXPECT_THAT(too_narrow.status().message(), HasSubstr("at most 2 wide"));
  EXPECT_FALSE(BatchOcrLines({}).ok());
  EXPECT_FALSE(BatchOcrLines({*runtime::Tensor::Zeros(ir::DType::kF32, {3, 48, 2})}).ok());
}

}  // namespace
}  // namespace graphjit::models
