#include "models/ocr_detect.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"

namespace graphjit::models {
namespace {

constexpr float kBinaryThreshold = 0.3f;  // DBPostProcess's thresh
constexpr float kBoxThreshold = 0.6f;     // box_thresh
constexpr double kUnclipRatio = 1.5;      // unclip_ratio
constexpr int64_t kMinSide = 3;           // min_size
constexpr int64_t kAngleWidth = 192;      // cls_image_shape [3, 48, 192]

// Python's round(): halves to even, as the default rounding mode does.
int64_t RoundHalfEven(double v) { return static_cast<int64_t>(std::nearbyint(v)); }

}  // namespace

absl::StatusOr<runtime::Tensor> PreprocessOcrPage(const RgbImage& page) {
  if (absl::Status s = CheckRgbImage(page, "OCR page"); !s.ok()) return s;
  const int64_t long_side = std::max(page.width, page.height);
  const double ratio =
      long_side > kOcrPageLongSide ? static_cast<double>(kOcrPageLongSide) / long_side : 1.0;
  auto side = [&](int64_t n) {
    const int64_t scaled = static_cast<int64_t>(static_cast<double>(n) * ratio);
    return std::max<int64_t>(RoundHalfEven(static_cast<double>(scaled) / 32) * 32, 32);
  };
  const int64_t w = side(page.width), h = side(page.height);
  const RgbImage resized = w == page.width && h == page.height ? page : ResizeBilinear(page, w, h);
  absl::StatusOr<runtime::Tensor> out = runtime::Tensor::Empty(ir::DType::kF32, {1, 3, h, w});
  if (!out.ok()) return out.status();
  static constexpr float kMean[3] = {0.485f, 0.456f, 0.406f};
  static constexpr float kStd[3] = {0.229f, 0.224f, 0.225f};
  float* dst = out->data<float>();
  const int64_t plane = h * w;
  for (int64_t i = 0; i < plane; ++i) {
    for (int c = 0; c < 3; ++c) {
      dst[c * plane + i] = (resized.rgb[i * 3 + c] / 255.0f - kMean[c]) / kStd[c];
    }
  }
  return out;
}

absl::StatusOr<std::vector<OcrBox>> DetectOcrBoxes(const runtime::Tensor& probabilities,
                                                   int64_t page_width, int64_t page_height) {
  const std::vector<int64_t>& s = probabilities.shape();
  if (probabilities.dtype() != ir::DType::kF32 || s.size() != 4 || s[0] != 1 || s[1] != 1 ||
      s[2] < 1 || s[3] < 1 || page_width < 1 || page_height < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "OCR detector output: expected a probability map f32[1, 1, H, W] and a page size, got ",
        probabilities.TypeString(), " for a ", page_width, "x", page_height, " page"));
  }
  const int64_t h = s[2], w = s[3];
  const float* p = probabilities.data<float>();
  std::vector<int32_t> region(h * w, -1);
  std::vector<OcrBox> boxes;
  std::vector<int64_t> stack;
  for (int64_t start = 0; start < h * w; ++start) {
    if (p[start] <= kBinaryThreshold || region[start] >= 0) continue;
    // One 8-connected region of the thresholded map: its bounding rectangle.
    const int32_t id = static_cast<int32_t>(boxes.size());
    int64_t x0 = w, y0 = h, x1 = -1, y1 = -1;
    region[start] = id;
    stack.assign(1, start);
    while (!stack.empty()) {
      const int64_t at = stack.back();
      stack.pop_back();
      const int64_t y = at / w, x = at % w;
      x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
      for (int64_t dy = -1; dy <= 1; ++dy) {
        for (int64_t dx = -1; dx <= 1; ++dx) {
          const int64_t ny = y + dy, nx = x + dx;
          if (ny < 0 || ny >= h || nx < 0 || nx >= w) continue;
          const int64_t n = ny * w + nx;
          if (p[n] > kBinaryThreshold && region[n] < 0) {
            region[n] = id;
            stack.push_back(n);
          }
        }
      }
    }
    OcrBox box;
    box.x0 = x0, box.y0 = y0, box.x1 = x1, box.y1 = y1;  // corner pixels, inclusive for now
    boxes.push_back(box);
  }
  std::vector<OcrBox> kept;
  for (const OcrBox& b : boxes) {
    // The contour's rectangle spans pixel centres: sides x1 - x0 and y1 - y0.
    const double bw = static_cast<double>(b.x1 - b.x0), bh = static_cast<double>(b.y1 - b.y0);
    if (std::min(bw, bh) < kMinSide) continue;
    double sum = 0;
    for (int64_t y = b.y0; y <= b.y1; ++y) {
      for (int64_t x = b.x0; x <= b.x1; ++x) sum += p[y * w + x];
    }
    const float score =
        static_cast<float>(sum / static_cast<double>((b.x1 - b.x0 + 1) * (b.y1 - b.y0 + 1)));
    if (score < kBoxThreshold) continue;
    // Unclip: the rectangle offset by area * ratio / perimeter on every side.
    const double d = bw * bh * kUnclipRatio / (2 * (bw + bh));
    if (std::min(bw, bh) + 2 * d < kMinSide + 2) continue;
    auto to_page = [](double v, int64_t from, int64_t to) {
      return std::clamp<int64_t>(
          RoundHalfEven(v / static_cast<double>(from) * static_cast<double>(to)), 0, to);
    };
    OcrBox out;
    out.x0 = to_page(static_cast<double>(b.x0) - d, w, page_width);
    out.x1 = to_page(static_cast<double>(b.x1) + d, w, page_width);
    out.y0 = to_page(static_cast<double>(b.y0) - d, h, page_height);
    out.y1 = to_page(static_cast<double>(b.y1) + d, h, page_height);
    out.score = score;
    if (out.width() > 0 && out.height() > 0) kept.push_back(out);
  }
  return kept;
}

void SortOcrBoxes(std::vector<OcrBox>* boxes) {
  std::stable_sort(boxes->begin(), boxes->end(), [](const OcrBox& a, const OcrBox& b) {
    return a.y0 != b.y0 ? a.y0 < b.y0 : a.x0 < b.x0;
  });
  // PaddleOCR's sorted_boxes: neighbours on about the same line go left to right.
  for (size_t i = 0; i + 1 < boxes->size(); ++i) {
    for (size_t j = i + 1; j-- > 0;) {
      OcrBox& a = (*boxes)[j];
      OcrBox& b = (*boxes)[j + 1];
      if (std::abs(b.y0 - a.y0) < 10 && b.x0 < a.x0) {
        std::swap(a, b);
      } else {
        break;
      }
    }
  }
}

RgbImage CropOcrBox(const RgbImage& page, const OcrBox& box) {
  const int64_t x0 = std::clamp<int64_t>(box.x0, 0, page.width);
  const int64_t x1 = std::clamp<int64_t>(box.x1, x0, page.width);
  const int64_t y0 = std::clamp<int64_t>(box.y0, 0, page.height);
  const int64_t y1 = std::clamp<int64_t>(box.y1, y0, page.height);
  RgbImage crop;
  crop.width = x1 - x0;
  crop.height = y1 - y0;
  if (crop.width == 0 || crop.height == 0) return crop;
  crop.rgb.reserve(crop.width * crop.height * 3);
  for (int64_t y = y0; y < y1; ++y) {
    const float* row = page.rgb.data() + (y * page.width + x0) * 3;
    crop.rgb.insert(crop.rgb.end(), row, row + crop.width * 3);
  }
  return crop;
}

absl::StatusOr<runtime::Tensor> PreprocessOcrAngle(const RgbImage& line) {
  if (absl::Status s = CheckRgbImage(line, "OCR line"); !s.ok()) return s;
  const int64_t width = std::min(kAngleWidth, OcrLineWidth(line));
  const RgbImage resized = ResizeBilinear(line, width, kOcrLineHeight);
  absl::StatusOr<runtime::Tensor> out =
      runtime::Tensor::Zeros(ir::DType::kF32, {1, 3, kOcrLineHeight, kAngleWidth});
  if (!out.ok()) return out.status();
  float* dst = out->data<float>();
  const int64_t plane = kOcrLineHeight * kAngleWidth;
  for (int64_t y = 0; y < kOcrLineHeight; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      for (int c = 0; c < 3; ++c) {
        const float unit = resized.at(y, x, c) / 255.0f;
        dst[c * plane + y * kAngleWidth + x] = (unit - 0.5f) / 0.5f;
      }
    }
  }
  return out;
}

RgbImage RotateHalfTurn(const RgbImage& image) {
  RgbImage out = image;
  const int64_t pixels = image.width * image.height;
  for (int64_t i = 0; i < pixels; ++i) {
    for (int c = 0; c < 3; ++c) out.rgb[i * 3 + c] = image.rgb[(pixels - 1 - i) * 3 + c];
  }
  return out;
}

}  // namespace graphjit::models
