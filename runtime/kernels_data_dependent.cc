// The data-dependent ops (ir/ops.def: nonzero, compress, non_max_suppression): each
// result has a dim only the run gives, so each kernel counts first and then allocates its
// result at that size; assert_dim checks that two such counts agree. Compiled code runs these same
// kernels between its compiled pieces (compiler/compiled/control_flow.h).
#include <algorithm>
#include <numeric>

#include "ir/status_macros.h"
#include "runtime/kernels.h"

namespace graphjit::runtime::kernels {
namespace {

// The result's shape: the rule's, with its one symbolic dim (Prepare's -1) set to `count`.
std::vector<int64_t> WithCount(const Prepared& p, int64_t count) {
  std::vector<int64_t> shape = p.shape;
  for (int64_t& d : shape) {
    if (d < 0) d = count;
  }
  return shape;
}

// Whether element i of x is non-zero (NaN is: it is not equal to zero).
template <typename T>
bool NonZeroAt(const Tensor& x, int64_t i) {
  return x.data<T>()[i] != T{};
}

}  // namespace

absl::StatusOr<Tensor> EvalNonZero(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                   const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const Tensor& x = *operands[0];
  std::vector<int64_t> hits;
  auto collect = [&](auto tag) -> absl::StatusOr<Tensor> {
    using T = decltype(tag);
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (NonZeroAt<T>(x, i)) hits.push_back(i);
    }
    return Tensor();
  };
  absl::StatusOr<Tensor> scanned =
      Dispatch<float, double, int64_t, bool, int32_t>(node, x.dtype(), collect);
  if (!scanned.ok()) return scanned.status();
  const int64_t count = static_cast<int64_t>(hits.size());
  GJ_ASSIGN_OR_RETURN(Tensor out, Tensor::Empty(ir::DType::kI64, WithCount(p, count)));
  int64_t* dst = out.data<int64_t>();
  // Row a holds every hit's index along axis a: the flat index split by the strides.
  for (int64_t k = 0; k < count; ++k) {
    int64_t flat = hits[k];
    for (int a = x.rank(); a-- > 0;) {
      dst[a * count + k] = flat % x.dim(a);
      flat /= x.dim(a);
    }
  }
  return out;
}

absl::StatusOr<Tensor> EvalCompress(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                    const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const Tensor& x = *operands[0];
  const Tensor& condition = *operands[1];
  const int axis = ir::ValueOrDie(ir::NormalizeAxis(p.Int("axis"), x.rank(), "compress"));
  if (condition.dim(0) > x.dim(axis)) {
    return OpError(node, absl::StrCat("condition ", condition.TypeString(), " is longer than axis ",
                                      axis, " of ", x.TypeString()));
  }
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < condition.dim(0); ++i) {
    if (condition.data<bool>()[i]) kept.push_back(i);
  }
  return SlicesAt(x, axis, kept);
}

namespace {

// A box as corners (y1 <= y2, x1 <= x2), whichever format it came in.
struct Corners {
  float y1, x1, y2, x2;
  float Area() const { return (y2 - y1) * (x2 - x1); }
};

Corners ToCorners(const float* b, bool center_point) {
  if (center_point) {  // [x_center, y_center, width, height]
    return {b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2};
  }
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

// Whether IoU(a, b) > threshold; boxes without area or overlap never suppress (ONNX
// Runtime's rule).
bool Overlaps(const Corners& a, const Corners& b, float threshold) {
  const float area_a = a.Area(), area_b = b.Area();
  if (area_a <= 0 || area_b <= 0) return false;
  const float h = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const float w = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (h <= 0 || w <= 0) return false;
  const float intersection = h * w;
  return intersection / (area_a + area_b - intersection) > threshold;
}

}  // namespace

absl::StatusOr<Tensor> EvalNonMaxSuppression(const ir::Node& node,
                                             absl::Span<const Tensor* const> operands,
                                             const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const Tensor& boxes = *operands[0];
  const Tensor& scores = *operands[1];
  const int64_t batches = boxes.dim(0), n = boxes.dim(1), classes = scores.dim(1);
  const int64_t max_per_class = p.Int("max_per_class");
  const auto iou_threshold = static_cast<float>(p.attrs().GetFloat("iou_threshold"));
  const auto score_threshold = static_cast<float>(p.attrs().GetFloat("score_threshold"));
  const bool center_point = p.Int("center_point_box") == 1;
  std::vector<int64_t> selected;  // (batch, class, box) triples
  std::vector<int64_t> order;
  std::vector<Corners> kept;
  for (int64_t b = 0; b < batches; ++b) {
    const float* box = boxes.data<float>() + b * n * 4;
    for (int64_t c = 0; c < classes; ++c) {
      const float* score = scores.data<float>() + (b * classes + c) * n;
      order.clear();
      for (int64_t i = 0; i < n; ++i) {
        if (score[i] > score_threshold) order.push_back(i);
      }
      // Descending score; equal scores by index (a stable order on every platform).
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t i, int64_t j) { return score[i] > score[j]; });
      kept.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_per_class) break;
        const Corners candidate = ToCorners(box + i * 4, center_point);
        bool suppressed = false;
        for (const Corners& k : kept) suppressed |= Overlaps(candidate, k, iou_threshold);
        if (suppressed) continue;
        kept.push_back(candidate);
        selected.insert(selected.end(), {b, c, i});
      }
    }
  }
  const auto count = static_cast<int64_t>(selected.size() / 3);
  GJ_ASSIGN_OR_RETURN(Tensor out, Tensor::Empty(ir::DType::kI64, WithCount(p, count)));
  std::copy(selected.begin(), selected.end(), out.data<int64_t>());
  return out;
}

absl::StatusOr<Tensor> EvalAssertDim(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                     const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const Tensor& x = *operands[0];
  const int axis = ir::ValueOrDie(ir::NormalizeAxis(p.Int("axis"), x.rank(), "assert_dim"));
  if (x.dim(axis) != p.Dim("dim")) {
    return OpError(node, absl::StrCat("dim ", axis, " of ", x.TypeString(), " must equal ",
                                      node.attrs.GetDim("dim").ToString(), " = ", p.Dim("dim"),
                                      ": two counts computed from data differ"));
  }
  return x;  // the same buffer: nothing writes an operand
}

absl::StatusOr<Tensor> EvalFactorDim(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                     const ir::Bindings& bindings) {
  // Prepare's shape rule checks the dim (a multiple of the factor) on the concrete shape.
  GJ_RETURN_IF_ERROR(Prepare(node, operands, bindings).status());
  return *operands[0];  // the same buffer: nothing writes an operand
}

}  // namespace graphjit::runtime::kernels
