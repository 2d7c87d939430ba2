// Text-line images for the OCR recognizer (models/ocr.h): binary PPM files read without
// an image library, and PaddleOCR's preprocessing into the recognizer's input tensor.
#ifndef GRAPHJIT_MODELS_OCR_IMAGE_H_
#define GRAPHJIT_MODELS_OCR_IMAGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/tensor.h"

namespace graphjit::models {

// An RGB image, row-major, 3 floats per pixel in [0, 255].
struct RgbImage {
  int64_t width = 0;
  int64_t height = 0;
  std::vector<float> rgb;  // width * height * 3

  float at(int64_t y, int64_t x, int c) const { return rgb[(y * width + x) * 3 + c]; }
};

// The recognizer's input height (PP-OCRv4's rec_image_shape [3, 48, 320]).
inline constexpr int64_t kOcrLineHeight = 48;

// OK for an image of at least 1x1 with width * height * 3 samples, else InvalidArgument
// starting with `what` ("OCR line") and giving its size.
absl::Status CheckRgbImage(const RgbImage& image, absl::string_view what);

// Parses a binary PPM (P6: magic, width, height, maxval up to 65535, '#' comments in the
// header, then the samples). Anything else - another magic, a truncated header or data,
// a zero or absurd size - is InvalidArgument starting with `what` and saying what was
// expected.
absl::StatusOr<RgbImage> ParsePpm(absl::string_view bytes, absl::string_view what);
// Reads the file `path`: NotFound if it cannot be read, else as ParsePpm.
absl::StatusOr<RgbImage> ReadPpm(const std::string& path);

// `image` resized to `width` x `height` by bilinear interpolation with half-pixel
// centres, as OpenCV's INTER_LINEAR (which PaddleOCR uses) does for upscaling.
RgbImage ResizeBilinear(const RgbImage& image, int64_t width, int64_t height);

// The width a line of `image` has at height 48, keeping the aspect ratio:
// ceil(48 * width / height), as PaddleOCR's resize_norm_img computes it.
int64_t OcrLineWidth(const RgbImage& image);

// PaddleOCR's recognizer preprocessing: resized to height 48 keeping the aspect ratio
// (unchanged if already 48 high), x / 255, then (x - 0.5) / 0.5, as f32[1, 3, 48, W]
// (NCHW, RGB). InvalidArgument for an empty image.
absl::StatusOr<runtime::Tensor> PreprocessOcrLine(const RgbImage& image);

// Preprocessed lines (each f32[1, 3, 48, W_i]) as one batch f32[N, 3, 48, width], each
// padded on the right with zeros (after normalization, as PaddleOCR pads); `width` 0
// takes the widest line. InvalidArgument for a line wider than `width` or not a
// preprocessed line.
absl::StatusOr<runtime::Tensor> BatchOcrLines(absl::Span<const runtime::Tensor> lines,
                                              int64_t width = 0);

}  // namespace graphjit::models

#endif  // GRAPHJIT_MODELS_OCR_IMAGE_H_
