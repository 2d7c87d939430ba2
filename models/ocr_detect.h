// The pieces around PaddleOCR's PP-OCRv4 text detector and angle classifier, as PaddleOCR
// runs them, without OpenCV: a page's preprocessing into the detector's input, DB
// post-processing of its probability map into line boxes, each box's crop, the angle
// classifier's input, and PaddleOCR's reading order. models/ocr_page.h runs the models.
#ifndef GRAPHJIT_MODELS_OCR_DETECT_H_
#define GRAPHJIT_MODELS_OCR_DETECT_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "models/ocr_image.h"
#include "runtime/tensor.h"

namespace graphjit::models {

// PaddleOCR's DetResizeForTest (limit_type max): a page whose long side exceeds this is
// scaled down to it; each side is then rounded to a multiple of 32.
inline constexpr int64_t kOcrPageLongSide = 960;

// The detector's input for `page`: resized so each side is a multiple of 32 (at least 32)
// with the long side at most 960, then x / 255 normalized by ImageNet's mean and std, as
// f32[1, 3, H, W]. InvalidArgument for an empty image. Channels in RGB order, as the
// recognizer's (models/ocr_image.h): PaddleOCR feeds OpenCV's BGR with the same means,
// which differs only for coloured text.
absl::StatusOr<runtime::Tensor> PreprocessOcrPage(const RgbImage& page);

// A text line's box on the page, in the page's pixels: [x0, x1) x [y0, y1).
struct OcrBox {
  int64_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  float score = 0;  // the mean probability inside the unexpanded box

  int64_t width() const { return x1 - x0; }
  int64_t height() const { return y1 - y0; }
};

// PaddleOCR's DB post-processing (DBPostProcess with its defaults, for horizontal lines):
// the probability map f32[1, 1, H, W] thresholded at 0.3, each 8-connected region's box
// kept if its mean probability is at least 0.6 and each side at least 3 pixels, expanded
// by area * 1.5 / perimeter on every side (the unclip of a rectangle), then scaled to the
// page's `page_width` x `page_height` and clipped to it. InvalidArgument for a map of
// another shape.
absl::StatusOr<std::vector<OcrBox>> DetectOcrBoxes(const runtime::Tensor& probabilities,
                                                   int64_t page_width, int64_t page_height);

// PaddleOCR's reading order: boxes by top, then left; a box whose top is within 10 pixels
// of the previous one's and which starts left of it comes first.
void SortOcrBoxes(std::vector<OcrBox>* boxes);

// The pixels of `box` on `page` (clipped to it).
RgbImage CropOcrBox(const RgbImage& page, const OcrBox& box);

// The angle classifier's input for a line: resized to height 48 keeping its aspect ratio
// (at most 192 wide), (x / 255 - 0.5) / 0.5, padded with zeros to f32[1, 3, 48, 192].
absl::StatusOr<runtime::Tensor> PreprocessOcrAngle(const RgbImage& line);

// `image` turned by 180 degrees.
RgbImage RotateHalfTurn(const RgbImage& image);

}  // namespace graphjit::models

#endif  // GRAPHJIT_MODELS_OCR_DETECT_H_
