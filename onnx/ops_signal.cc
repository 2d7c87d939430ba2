// Signal windows: HannWindow, HammingWindow and BlackmanWindow (opset 17). A window's
// size must be known at import (it is the output's shape): a model that takes it as an
// input is specialized on its value (onnx/specialize.h). The window is built as graph ops
// (an iota, a cosine or two), which constant folding turns into a constant.
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "onnx/op_helpers.h"
#include "onnx/ops.h"

namespace graphjit::onnx {
namespace {

using ir::DType;
using ir::OpCode;
using ir::Shape;
using ir::ValueId;

// w[n] = sum_j (-1)^j a_j cos(2 pi j n / N'), n < size, N' = size (periodic) or size - 1
// (symmetric), in doubles, then cast to the output type.
absl::Status CosineWindow(Context& ctx, const std::vector<double>& a) {
  GJ_ASSIGN_OR_RETURN(std::vector<int64_t> size, ctx.InConstInts(0));
  if (size.size() != 1 || size[0] < 0) return ctx.Invalid("size must be a scalar >= 0");
  const int32_t elem = static_cast<int32_t>(ctx.AttrInt("output_datatype", 1));  // FLOAT
  std::optional<DType> dtype = DTypeOfElem(elem);
  if (!dtype) return ctx.Unimplemented(absl::StrCat("output type ", ElemTypeName(elem)));
  const bool periodic = ctx.AttrInt("periodic", 1) != 0;
  const int64_t n = size[0];
  // N' = 0 (a symmetric window of one sample): ONNX's reference divides by it; the one
  // sample is then a_0 - a_1 + ..., its value at n = 0 taken as cos(0) = 1.
  const double period = static_cast<double>(periodic ? n : n - 1);
  const double step = period > 0 ? 2 * M_PI / period : 0;
  ValueId iota = ctx.Op(OpCode::kIota, {},
                        {{"axis", int64_t{0}}, {"dtype", DType::kF64}, {"shape", Shape{n}}});
  ValueId angle = ctx.Op(OpCode::kMul, {iota, ctx.b().Scalar(step, DType::kF64)});
  ValueId w = ctx.b().Scalar(a[0], DType::kF64);
  for (size_t j = 1; j < a.size(); ++j) {
    ValueId cos = ctx.Op(
        OpCode::kCos,
        {ctx.Op(OpCode::kMul, {angle, ctx.b().Scalar(static_cast<double>(j), DType::kF64)})});
    ValueId term = ctx.Op(OpCode::kMul, {cos, ctx.b().Scalar(a[j], DType::kF64)});
    w = ctx.Op(j % 2 == 1 ? OpCode::kSub : OpCode::kAdd, {w, term});
  }
  if (ctx.type(w).shape != Shape{n}) {  // every a_j but a_0 zero: broadcast the constant
    w = ctx.Op(OpCode::kExpand, {w}, {{"shape", Shape{n}}});
  }
  return ctx.SetOut(0, ctx.Op(OpCode::kCast, {w}, {{"dtype", *dtype}}), elem);
}

absl::Status HannWindow(Context& ctx) { return CosineWindow(ctx, {0.5, 0.5}); }
absl::Status HammingWindow(Context& ctx) { return CosineWindow(ctx, {25.0 / 46, 21.0 / 46}); }
absl::Status BlackmanWindow(Context& ctx) { return CosineWindow(ctx, {0.42, 0.5, 0.08}); }

}  // namespace

void AddSignalOps(OpTable* t) {
  (*t)["HannWindow"] = HannWindow;
  (*t)["HammingWindow"] = HammingWindow;
  (*t)["BlackmanWindow"] = BlackmanWindow;
}

}  // namespace graphjit::onnx
