// Resize (opsets 11+) and Upsample as gathers of constant indices and sums weighted by
// constant coefficients, one resized axis after another, as ONNX's reference interpolates
// (separable): nearest (every nearest_mode), linear and cubic (with exclude_outside), in
// the coordinate modes half_pixel, pytorch_half_pixel, align_corners, asymmetric and
// tf_half_pixel_for_nn. The resized dims must be constants (the indices are computed at
// import), or, for a symbolic dim, the scale an integer (each output phase a fixed
// combination of neighbours); tf_crop_and_resize and antialiasing are refused.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "onnx/op_helpers.h"
#include "onnx/ops.h"

namespace graphjit::onnx {
namespace {

using ir::OpCode;
using ir::Shape;
using ir::ValueId;

struct ResizeMode {
  std::string mode;        // nearest, linear, cubic
  std::string coordinate;  // coordinate_transformation_mode
  std::string nearest;     // nearest_mode
  double cubic_a = -0.75;
  bool exclude_outside = false;
};

// The source coordinate of output position `x` on an axis of `in` elements resized by
// `scale` (ONNX's reference, in doubles).
double SourceCoordinate(const ResizeMode& m, double x, int64_t in, double scale) {
  const double out = scale * static_cast<double>(in);
  if (m.coordinate == "align_corners") return out == 1 ? 0 : x * (in - 1) / (out - 1);
  if (m.coordinate == "asymmetric") return x / scale;
  if (m.coordinate == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (m.coordinate == "pytorch_half_pixel") return out == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  return (x + 0.5) / scale - 0.5;  // half_pixel
}

// The interpolation coefficients at `ratio` in (0, 1] (1 when the source coordinate is an
// integer: the reference then takes the pixel on the left's right neighbour).
std::vector<double> Coefficients(const ResizeMode& m, double ratio) {
  if (m.mode == "nearest") {
    if (ratio == 1) return {0, 1};
    if (m.nearest == "round_prefer_ceil")
      return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
    if (m.nearest == "floor") return {1, 0};
    if (m.nearest == "ceil") return {0, 1};
    return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};  // round_prefer_floor
  }
  if (m.mode == "linear") return {1 - ratio, ratio};
  const double a = m.cubic_a, r = ratio, s = 1 - ratio;
  return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
          ((a + 2) * r - (a + 3)) * r * r + 1, ((a + 2) * s - (a + 3)) * s * s + 1,
          ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
}

// x resized along `axis` from `in` to `out` elements.
ValueId ResizeAxis(Context& ctx, ValueId x, int axis, int64_t in, int64_t out, double scale,
                   const ResizeMode& m) {
  const int n = m.mode == "cubic" ? 4 : 2;
  // Per output position: the n source positions (unclamped) and their coefficients.
  std::vector<std::vector<int64_t>> index(n, std::vector<int64_t>(out));
  std::vector<std::vector<double>> coeff(n, std::vector<double>(out));
  for (int64_t o = 0; o < out; ++o) {
    const double src = SourceCoordinate(m, static_cast<double>(o), in, scale);
    const double floor = std::floor(src);
    const double ratio = src == floor ? 1 : src - floor;
    // The reference's n nearest positions: floor - n/2 + 1 .. floor + n/2, or one to the
    // left of that when src is an integer (ratio 1).
    const int64_t base = static_cast<int64_t>(floor) - (ratio == 1 ? 1 : 0) - (n / 2 - 1);
    std::vector<double> c = Coefficients(m, ratio);
    double sum = 0;
    for (int j = 0; j < n; ++j) {
      const int64_t at = base + j;
      if (m.exclude_outside && (at < 0 || at >= in)) c[j] = 0;
      sum += c[j];
    }
    for (int j = 0; j < n; ++j) {
      index[j][o] = std::clamp<int64_t>(base + j, 0, in - 1);  // the edge value beyond
      coeff[j][o] = m.exclude_outside && sum != 0 ? c[j] / sum : c[j];
    }
  }
  if (m.mode == "nearest") {
    // A pick, not a weighted sum: exact, and inf / NaN elsewhere stay where they are.
    std::vector<int64_t> picked(out);
    for (int64_t o = 0; o < out; ++o) picked[o] = coeff[1][o] > 0 ? index[1][o] : index[0][o];
    return TakeAlongAxis(ctx, x, axis, picked);
  }
  Shape coeff_shape(ctx.type(x).rank(), 1);
  coeff_shape[axis] = out;
  ValueId sum = ir::kInvalidValue;
  for (int j = 0; j < n; ++j) {
    ValueId c = ctx.Op(OpCode::kConstant, {},
                       {{"value", coeff[j]}, {"dtype", ctx.type(x).dtype}, {"shape", coeff_shape}});
    ValueId term = ctx.Op(OpCode::kMul, {TakeAlongAxis(ctx, x, axis, index[j]), c});
    sum = sum == ir::kInvalidValue ? term : ctx.Op(OpCode::kAdd, {sum, term});
  }
  return sum;
}

// x[clamp(i + delta, 0, in - 1)] along `axis` (|delta| <= 1): the input shifted by one
// position, its edge element repeated. Holds for any in >= 1, so a symbolic dim too.
ValueId ShiftClamped(Context& ctx, ValueId x, int axis, const ir::SymExpr& in, int delta) {
  auto slice = [&](ir::SymExpr start, ir::SymExpr end) {
    return ctx.Op(OpCode::kSlice, {x}, {{"axis", int64_t{axis}}, {"start", start}, {"end", end}});
  };
  if (delta == 0) return x;
  if (delta > 0) {
    return ctx.Op(OpCode::kConcat, {slice(1, in), slice(in - 1, in)}, {{"axis", int64_t{axis}}});
  }
  return ctx.Op(OpCode::kConcat, {slice(0, 1), slice(0, in - 1)}, {{"axis", int64_t{axis}}});
}

// x resized along `axis` by an integer `scale` when its `in` elements are symbolic. Every
// coordinate mode but align_corners maps output o = k * scale + j to k plus an offset that
// depends on the phase j alone, so each phase is a fixed combination of the input shifted
// by -1, 0 or +1 (edges clamped as the reference clamps), and the phases interleave:
// [.., in, ..] -> [.., in, scale, ..] -> [.., in * scale, ..]. Refused where a tap would
// reach further (cubic) or weights depend on the edge (exclude_outside).
absl::StatusOr<ValueId> ResizeSymbolicAxis(Context& ctx, ValueId x, int axis, const ir::SymExpr& in,
                                           int64_t scale, const ResizeMode& m) {
  if (m.coordinate == "align_corners" || m.mode == "cubic" || m.exclude_outside) {
    return ctx.Unimplemented(absl::StrCat("resizing the symbolic dim ", in.ToString(), " (", m.mode,
                                          ", ", m.coordinate, ")"));
  }
  const int n = 2;
  const Shape shape = ctx.type(x).shape;
  Shape phase_shape = shape;
  phase_shape.insert(phase_shape.begin() + axis + 1, 1);
  std::vector<ValueId> phases;
  for (int64_t j = 0; j < scale; ++j) {
    // The source coordinate of output j (phase j of block k = 0); other blocks add k.
    const double src =
        SourceCoordinate(m, static_cast<double>(j), /*in=*/2, static_cast<double>(scale));
    const double floor = std::floor(src);
    const double ratio = src == floor ? 1 : src - floor;
    const int64_t base = static_cast<int64_t>(floor) - (ratio == 1 ? 1 : 0) - (n / 2 - 1);
    const std::vector<double> c = Coefficients(m, ratio);
    ValueId sum = ir::kInvalidValue;
    for (int t = 0; t < n; ++t) {
      if (m.mode == "nearest" && c[t] == 0) continue;
      if (m.mode == "nearest" && t == 0 && c[1] > 0) continue;  // the pick ResizeAxis makes
      const int64_t delta = base + t;
      if (delta < -1 || delta > 1) {
        return ctx.Unimplemented(absl::StrCat("resizing the symbolic dim ", in.ToString(),
                                              ": a tap ", delta, " positions away"));
      }
      ValueId tap = ShiftClamped(ctx, x, axis, in, static_cast<int>(delta));
      if (m.mode != "nearest") {
        if (c[t] == 0) continue;
        tap = ctx.Op(OpCode::kMul, {tap, ctx.ScalarLike(c[t], x)});
      }
      sum = sum == ir::kInvalidValue ? tap : ctx.Op(OpCode::kAdd, {sum, tap});
      if (m.mode == "nearest") break;
    }
    if (sum == ir::kInvalidValue) sum = ctx.Op(OpCode::kMul, {x, ctx.ScalarLike(0, x)});
    phases.push_back(ctx.Op(OpCode::kReshape, {sum}, {{"shape", phase_shape}}));
  }
  ValueId interleaved = phases.size() == 1
                            ? phases[0]
                            : ctx.Op(OpCode::kConcat, phases, {{"axis", int64_t{axis + 1}}});
  Shape out = shape;
  out[axis] = in * scale;
  return ctx.Op(OpCode::kReshape, {interleaved}, {{"shape", out}});
}

// Resizes input 0 to the sizes or by the scales (per axis), after the checks.
absl::Status ResizeTo(Context& ctx, const ResizeMode& m, const std::vector<double>& scales,
                      const std::vector<int64_t>& sizes) {
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  if (!ir::IsFloat(ctx.type(x).dtype)) return ctx.Unimplemented("Resize of integers");
  const Shape shape = ctx.type(x).shape;
  const int rank = static_cast<int>(shape.size());
  if (m.mode != "nearest" && m.mode != "linear" && m.mode != "cubic") {
    return ctx.Invalid(absl::StrCat("mode '", m.mode, "' (expected nearest, linear or cubic)"));
  }
  if (m.coordinate != "half_pixel" && m.coordinate != "pytorch_half_pixel" &&
      m.coordinate != "align_corners" && m.coordinate != "asymmetric" &&
      m.coordinate != "tf_half_pixel_for_nn") {
    return ctx.Unimplemented(absl::StrCat("coordinate_transformation_mode '", m.coordinate, "'"));
  }
  if (m.mode == "nearest" && m.nearest != "round_prefer_floor" &&
      m.nearest != "round_prefer_ceil" && m.nearest != "floor" && m.nearest != "ceil") {
    return ctx.Invalid(absl::StrCat("nearest_mode '", m.nearest, "'"));
  }
  const bool by_sizes = !sizes.empty();
  if (static_cast<int>(by_sizes ? sizes.size() : scales.size()) != rank) {
    return ctx.Invalid(
        absl::StrCat(by_sizes ? "sizes" : "scales", " need one entry per dim (", rank, ")"));
  }
  for (int d = 0; d < rank; ++d) {
    const std::optional<int64_t> in = shape[d].AsConstant();
    const double scale = by_sizes ? 0 : scales[d];
    if (!by_sizes && !(scale > 0 && scale < 1e6)) {
      return ctx.Invalid(absl::StrCat("scale ", scale, " of dim ", d, " (expected > 0)"));
    }
    if (!in) {
      if (!by_sizes && scale == 1) continue;
      if (by_sizes || scale != std::floor(scale) || scale > 64) {
        return ctx.Unimplemented(absl::StrCat("resizing the symbolic dim ", shape[d].ToString(),
                                              by_sizes ? " to a size" : " by a fractional scale"));
      }
      GJ_ASSIGN_OR_RETURN(x,
                          ResizeSymbolicAxis(ctx, x, d, shape[d], static_cast<int64_t>(scale), m));
      GJ_RETURN_IF_ERROR(ctx.BuilderStatus());
      continue;
    }
    const int64_t out = by_sizes ? sizes[d] : static_cast<int64_t>(std::floor(*in * scale));
    if (out < 0 || out > kMaxIndexVector) {
      return ctx.Invalid(absl::StrCat("output size ", out, " of dim ", d));
    }
    if (*in == 0 || out == 0) {
      if (*in != out) return ctx.Unimplemented("resizing an empty dim");
      continue;
    }
    const double s = by_sizes ? static_cast<double>(out) / static_cast<double>(*in) : scale;
    if (out == *in && s == 1 && m.coordinate != "tf_half_pixel_for_nn" &&
        m.coordinate != "align_corners") {
      continue;  // every mode maps position i to i
    }
    x = ResizeAxis(ctx, x, d, *in, out, s, m);
    GJ_RETURN_IF_ERROR(ctx.BuilderStatus());
  }
  return ctx.SetOut(0, x);
}

absl::Status Resize(Context& ctx) {
  if (ctx.opset() < 11) return ctx.Unimplemented("Resize before opset 11");
  ResizeMode m;
  m.mode = ctx.AttrString("mode", "nearest");
  m.coordinate = ctx.AttrString("coordinate_transformation_mode", "half_pixel");
  m.nearest = ctx.AttrString("nearest_mode", "round_prefer_floor");
  m.cubic_a = ctx.AttrFloat("cubic_coeff_a", -0.75f);
  m.exclude_outside = ctx.AttrInt("exclude_outside", 0) != 0;
  if (m.coordinate == "tf_crop_and_resize") {
    return ctx.Unimplemented("coordinate_transformation_mode 'tf_crop_and_resize'");
  }
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (ctx.HasInput(3)) {
    GJ_ASSIGN_OR_RETURN(sizes, ctx.InConstInts(3));
  }
  if (sizes.empty() && ctx.HasInput(2)) {
    GJ_ASSIGN_OR_RETURN(scales, ctx.InConstDoubles(2));
  }
  if (sizes.empty() && scales.empty()) return ctx.Invalid("needs scales or sizes");
  return ResizeTo(ctx, m, scales, sizes);
}

// Upsample (deprecated since opset 10): Resize with asymmetric coordinates and floor.
absl::Status Upsample(Context& ctx) {
  ResizeMode m;
  m.mode = ctx.AttrString("mode", "nearest");
  m.coordinate = "asymmetric";
  m.nearest = "floor";
  std::vector<double> scales;
  if (ctx.opset() < 9) {
    for (float s : ctx.Attr("scales") ? std::vector<float>(ctx.Attr("scales")->floats().begin(),
                                                           ctx.Attr("scales")->floats().end())
                                      : std::vector<float>{}) {
      scales.push_back(s);
    }
  } else if (ctx.HasInput(1)) {
    GJ_ASSIGN_OR_RETURN(scales, ctx.InConstDoubles(1));
  }
  if (scales.empty()) return ctx.Invalid("needs scales");
  return ResizeTo(ctx, m, scales, {});
}

}  // namespace

void AddResizeOps(OpTable* t) {
  (*t)["Resize"] = Resize;
  (*t)["Upsample"] = Upsample;
}

}  // namespace graphjit::onnx
