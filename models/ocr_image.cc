#include "models/ocr_image.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"

namespace graphjit::models {
namespace {

// Larger images are refused rather than allocated: a text line is at most a few thousand
// pixels wide, and a corrupt header must not ask for gigabytes.
constexpr int64_t kMaxPpmDim = 1 << 16;

// Reads the PPM header's tokens: skips whitespace and '#' comments (to the end of the
// line), then returns the next run of non-space bytes ("" at the end of the bytes).
class HeaderReader {
 public:
  explicit HeaderReader(absl::string_view bytes) : bytes_(bytes) {}

  absl::string_view Next() {
    while (pos_ < bytes_.size()) {
      if (bytes_[pos_] == '#') {
        while (pos_ < bytes_.size() && bytes_[pos_] != '\n') ++pos_;
      } else if (std::isspace(static_cast<unsigned char>(bytes_[pos_]))) {
        ++pos_;
      } else {
        break;
      }
    }
    const size_t start = pos_;
    while (pos_ < bytes_.size() && !std::isspace(static_cast<unsigned char>(bytes_[pos_]))) {
      ++pos_;
    }
    return bytes_.substr(start, pos_ - start);
  }
  size_t pos() const { return pos_; }

 private:
  absl::string_view bytes_;
  size_t pos_ = 0;
};

// The header number `token` in [1, max], or InvalidArgument naming `field`.
absl::StatusOr<int64_t> HeaderNumber(absl::string_view token, absl::string_view field, int64_t max,
                                     absl::string_view what) {
  int64_t v = 0;
  bool digits = !token.empty() && token.size() <= 9;
  for (char c : token) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  if (digits) v = std::stoll(std::string(token));
  if (!digits || v < 1 || v > max) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": not a binary PPM: expected the ", field,
                                                   " (an integer in 1..", max,
                                                   ") in the header, got '", token, "'"));
  }
  return v;
}

// Bilinear weights of one output coordinate: source index `i0` (and i0 + 1) and the
// weight of i0 + 1, with half-pixel centres and clamping at the borders.
struct Tap {
  int64_t i0, i1;
  float w1;
};

Tap TapFor(int64_t dst, int64_t src_size, int64_t dst_size) {
  const double scale = static_cast<double>(src_size) / static_cast<double>(dst_size);
  double src = (static_cast<double>(dst) + 0.5) * scale - 0.5;
  src = std::max(src, 0.0);
  int64_t i0 = std::min(static_cast<int64_t>(std::floor(src)), src_size - 1);
  int64_t i1 = std::min(i0 + 1, src_size - 1);
  return {i0, i1, static_cast<float>(src - static_cast<double>(i0))};
}

}  // namespace

absl::StatusOr<RgbImage> ParsePpm(absl::string_view bytes, absl::string_view what) {
  HeaderReader header(bytes);
  absl::string_view magic = header.Next();
  if (magic != "P6") {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": not a binary PPM: expected the magic 'P6', got '", magic.substr(0, 8), "'"));
  }
  GJ_ASSIGN_OR_RETURN(const int64_t width, HeaderNumber(header.Next(), "width", kMaxPpmDim, what));
  GJ_ASSIGN_OR_RETURN(const int64_t height,
                      HeaderNumber(header.Next(), "height", kMaxPpmDim, what));
  GJ_ASSIGN_OR_RETURN(const int64_t maxval, HeaderNumber(header.Next(), "maxval", 65535, what));
  // Exactly one whitespace byte separates the header from the samples.
  const size_t data = header.pos() + 1;
  const int64_t sample_bytes = maxval > 255 ? 2 : 1;
  const int64_t need = width * height * 3 * sample_bytes;
  if (header.pos() >= bytes.size() ||
      static_cast<int64_t>(bytes.size() - std::min(bytes.size(), data)) < need) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": truncated PPM: expected ", need, " bytes of samples for ", width, "x", height,
        " at maxval ", maxval, ", got ", bytes.size() - std::min(bytes.size(), data)));
  }
  RgbImage image;
  image.width = width;
  image.height = height;
  image.rgb.resize(width * height * 3);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + data);
  // Samples are scaled to [0, 255] whatever maxval, so preprocessing sees one range.
  const float scale = 255.0f / static_cast<float>(maxval);
  for (size_t i = 0; i < image.rgb.size(); ++i) {
    const int v = sample_bytes == 1 ? p[i] : (p[2 * i] << 8) | p[2 * i + 1];
    if (v > maxval) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": PPM sample ", i, " is ", v, ", above the maxval ", maxval));
    }
    image.rgb[i] = maxval == 255 ? static_cast<float>(v) : static_cast<float>(v) * scale;
  }
  return image;
}

absl::StatusOr<RgbImage> ReadPpm(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the image"));
  std::ostringstream buf;
  buf << in.rdbuf();
  return ParsePpm(buf.str(), path);
}

RgbImage ResizeBilinear(const RgbImage& image, int64_t width, int64_t height) {
  RgbImage out;
  out.width = width;
  out.height = height;
  out.rgb.resize(width * height * 3);
  std::vector<Tap> xs(width);
  for (int64_t x = 0; x < width; ++x) xs[x] = TapFor(x, image.width, width);
  for (int64_t y = 0; y < height; ++y) {
    const Tap ty = TapFor(y, image.height, height);
    for (int64_t x = 0; x < width; ++x) {
      const Tap& tx = xs[x];
      for (int c = 0; c < 3; ++c) {
        const float top =
            image.at(ty.i0, tx.i0, c) * (1 - tx.w1) + image.at(ty.i0, tx.i1, c) * tx.w1;
        const float bottom =
            image.at(ty.i1, tx.i0, c) * (1 - tx.w1) + image.at(ty.i1, tx.i1, c) * tx.w1;
        out.rgb[(y * width + x) * 3 + c] = top * (1 - ty.w1) + bottom * ty.w1;
      }
    }
  }
  return out;
}

int64_t OcrLineWidth(const RgbImage& image) {
  if (image.height == kOcrLineHeight) return image.width;
  return static_cast<int64_t>(
      std::ceil(static_cast<double>(kOcrLineHeight) * static_cast<double>(image.width) /
                static_cast<double>(image.height)));
}

absl::Status CheckRgbImage(const RgbImage& image, absl::string_view what) {
  if (image.width < 1 || image.height < 1 ||
      static_cast<int64_t>(image.rgb.size()) != image.width * image.height * 3) {
    return absl::InvalidArgumentError(absl::StrCat(what,
                                                   ": expected an RGB image of at least 1x1 "
                                                   "with width * height * 3 samples, got ",
                                                   image.width, "x", image.height, " with ",
                                                   image.rgb.size()));
  }
  return absl::OkStatus();
}

absl::StatusOr<runtime::Tensor> PreprocessOcrLine(const RgbImage& image) {
  if (absl::Status s = CheckRgbImage(image, "OCR line"); !s.ok()) return s;
  const int64_t width = OcrLineWidth(image);
  const RgbImage resized =
      image.height == kOcrLineHeight ? image : ResizeBilinear(image, width, kOcrLineHeight);
  absl::StatusOr<runtime::Tensor> out =
      runtime::Tensor::Empty(ir::DType::kF32, {1, 3, kOcrLineHeight, width});
  if (!out.ok()) return out.status();
  float* dst = out->data<float>();
  const int64_t plane = kOcrLineHeight * width;
  for (int64_t i = 0; i < plane; ++i) {
    for (int c = 0; c < 3; ++c) {
      // In PaddleOCR's order (x / 255, then - 0.5, / 0.5), each step rounded to f32.
      const float unit = resized.rgb[i * 3 + c] / 255.0f;
      dst[c * plane + i] = (unit - 0.5f) / 0.5f;
    }
  }
  return out;
}

absl::StatusOr<runtime::Tensor> BatchOcrLines(absl::Span<const runtime::Tensor> lines,
                                              int64_t width) {
  int64_t widest = 0;
  for (size_t n = 0; n < lines.size(); ++n) {
    const runtime::Tensor& line = lines[n];
    if (line.dtype() != ir::DType::kF32 || line.rank() != 4 || line.dim(0) != 1 ||
        line.dim(1) != 3 || line.dim(2) != kOcrLineHeight) {
      return absl::InvalidArgumentError(absl::StrCat(
          "OCR batch: line ", n, " is ", line.TypeString(), ", expected f32[1, 3, 48, W]"));
    }
    widest = std::max(widest, line.dim(3));
  }
  if (width == 0) width = widest;
  if (lines.empty() || widest > width) {
    return absl::InvalidArgumentError(absl::StrCat("OCR batch: expected 1 or more lines at most ",
                                                   width, " wide, got ", lines.size(),
                                                   " lines, the widest ", widest));
  }
  const int64_t n_lines = static_cast<int64_t>(lines.size());
  absl::StatusOr<runtime::Tensor> out =
      runtime::Tensor::Zeros(ir::DType::kF32, {n_lines, 3, kOcrLineHeight, width});
  if (!out.ok()) return out.status();
  float* dst = out->data<float>();
  for (int64_t n = 0; n < n_lines; ++n) {
    const float* src = lines[n].data<float>();
    const int64_t w = lines[n].dim(3);
    for (int64_t row = 0; row < 3 * kOcrLineHeight; ++row) {
      std::copy(src + row * w, src + (row + 1) * w, dst + (n * 3 * kOcrLineHeight + row) * width);
    }
  }
  return out;
}

}  // namespace graphjit::models
