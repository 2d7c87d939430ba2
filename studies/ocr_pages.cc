#include "studies/ocr_pages.h"

#include "absl/strings/str_cat.h"
#include "compiler/entries/padding.h"
#include "ir/clock.h"
#include "ir/status_macros.h"

namespace graphjit::studies {

std::vector<std::pair<int64_t, int64_t>> OcrStudyPageSizes(int count) {
  std::vector<std::pair<int64_t, int64_t>> sizes;
  for (int i = 0; i < count; ++i) {
    // In units of 32 pixels: heights 10 .. 30, widths 24 .. 10.
    const int64_t step = count == 1 ? 0 : i * 20 / (count - 1);
    sizes.push_back({32 * (24 - step * 14 / 20), 32 * (10 + step)});
  }
  return sizes;
}

absl::StatusOr<OcrPagesResult> RunOcrPages(models::OnnxFunction& detector,
                                           absl::Span<const runtime::Tensor> pages,
                                           compiler::entries::ShapePolicy pad_sides) {
  namespace entries = compiler::entries;
  const bool pads = entries::PadsInputs(pad_sides);
  if (detector.input_names().size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a detector with one input, got ", detector.input_names().size()));
  }
  const std::string& input = detector.input_names()[0];
  OcrPagesResult result;
  for (size_t i = 0; i < pages.size(); ++i) {
    const runtime::Tensor& x = pages[i];
    if (x.rank() != 4 || x.dim(0) != 1 || x.dim(1) != 3) {
      return absl::InvalidArgumentError(
          absl::StrCat("OCR page ", i, " is ", x.TypeString(), ", expected f32[1, 3, H, W]"));
    }
    const int64_t h = x.dim(2), w = x.dim(3);
    const int64_t run_h = pads ? entries::KeyFor(pad_sides, h) : h;
    const int64_t run_w = pads ? entries::KeyFor(pad_sides, w) : w;
    // Padding is part of the call's cost, as it is inside a padding policy's call.
    const ir::Clock::time_point start = ir::Clock::now();
    absl::StatusOr<runtime::Tensor> padded =
        pads ? entries::Resize(x, {1, 3, run_h, run_w}) : absl::StatusOr<runtime::Tensor>(x);
    if (!padded.ok()) return padded.status();
    absl::StatusOr<std::vector<runtime::Tensor>> out = detector.Run({{input, *padded}});
    result.call_seconds += ir::SecondsSince(start);
    const std::string page = absl::StrCat("OCR page ", i, " (", w, " x ", h, ")");
    if (!out.ok()) {
      return absl::Status(out.status().code(), absl::StrCat(page, ": ", out.status().message()));
    }
    const runtime::Tensor& map = out->front();
    if (map.rank() != 4 || map.dim(2) != run_h || map.dim(3) != run_w) {
      return absl::InternalError(absl::StrCat(page, ": expected a map [1, 1, ", run_h, ", ", run_w,
                                              "], got ", map.TypeString()));
    }
    GJ_ASSIGN_OR_RETURN(runtime::Tensor own, entries::Resize(map, {1, 1, h, w}));
    GJ_ASSIGN_OR_RETURN(std::vector<models::OcrBox> boxes, models::DetectOcrBoxes(own, w, h));
    result.maps.push_back(std::move(own));
    result.boxes.push_back(std::move(boxes));
    result.real_pixels += h * w;
    result.padded_pixels += run_h * run_w;
  }
  result.stats = detector.stats();
  return result;
}

}  // namespace graphjit::studies
