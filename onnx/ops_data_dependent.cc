// The ops whose output size depends on tensor data: NonZero, Compress, NonMaxSuppression
// and Unique. Each becomes a data-dependent graph op (ir/ops.def) that defines an
// unbacked symbol, `len_<output>`, for its output's count; the rest of the model is sized
// by that symbol like by any dynamic dim, and compiled so (compiler/compiled/
// control_flow.h). Where a broadcasting op combines two different counts, the importer
// asserts them equal (Context::Op: assert_dim, checked when it runs). NonMaxSuppression's scalar
// inputs (the limit and the thresholds) are needed at import: a model that takes them as inputs is
// specialized on their values (onnx/specialize.h).
#include <limits>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "onnx/op_helpers.h"
#include "onnx/ops.h"

namespace graphjit::onnx {
namespace {

using ir::OpCode;
using ir::SymExpr;
using ir::ValueId;

// The unbacked symbol of the node's count: `len_` and its first named output as a symbol
// (ONNX names are unique in a model, so the symbols are).
std::string CountSymbol(Context& ctx) {
  const auto& outputs = ctx.node().output();
  auto named = absl::c_find_if(outputs, [](const std::string& o) { return !o.empty(); });
  const std::string name = ir::ToSymbolName(named == outputs.end() ? "" : *named);
  std::string symbol = name.front() == '_' ? absl::StrCat("len", name) : absl::StrCat("len_", name);
  ctx.NoteCount(symbol);
  return symbol;
}

absl::Status NonZero(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  if (ctx.type(x).rank() == 0) x = Reshape(ctx, x, {1});  // a scalar as one element
  return ctx.SetOut(0, ctx.Op(OpCode::kNonZero, {x}, {{"symbol", CountSymbol(ctx)}}));
}

absl::Status Compress(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId condition, ctx.InNode(1));
  if (ctx.type(condition).dtype != ir::DType::kBool || ctx.type(condition).rank() != 1) {
    return ctx.Invalid(absl::StrCat("condition must be a bool vector, got ",
                                    ir::TypeToString(ctx.type(condition))));
  }
  int64_t axis = 0;
  if (ctx.Attr("axis") == nullptr) {
    x = Reshape(ctx, x, {ir::NumElements(ctx.type(x).shape)});  // no axis: the flattened x
  } else {
    GJ_ASSIGN_OR_RETURN(axis, NormAxis(ctx, ctx.AttrInt("axis", 0), ctx.type(x).rank()));
  }
  return ctx.SetOut(
      0, ctx.Op(OpCode::kCompress, {x, condition}, {{"axis", axis}, {"symbol", CountSymbol(ctx)}}));
}

// Input i, a scalar (or one-element) constant, or `fallback` when it is absent.
absl::StatusOr<double> ScalarInput(Context& ctx, int i, double fallback) {
  if (!ctx.HasInput(i)) return fallback;
  GJ_ASSIGN_OR_RETURN(std::vector<double> v, ctx.InConstDoubles(i));
  if (v.size() != 1) {
    return ctx.Invalid(
        absl::StrCat("input '", ctx.node().input(i), "' must hold one value, got ", v.size()));
  }
  return v[0];
}

absl::Status NonMaxSuppression(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(2, 5));
  GJ_ASSIGN_OR_RETURN(ValueId boxes, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(ValueId scores, ctx.InNode(1));
  GJ_ASSIGN_OR_RETURN(double max_per_class, ScalarInput(ctx, 2, 0));
  GJ_ASSIGN_OR_RETURN(double iou, ScalarInput(ctx, 3, 0));
  GJ_ASSIGN_OR_RETURN(double score, ScalarInput(ctx, 4, -std::numeric_limits<double>::infinity()));
  if (max_per_class < 0) max_per_class = 0;  // ONNX Runtime: nothing selected
  ir::Attrs attrs{{"max_per_class", static_cast<int64_t>(max_per_class)},
                  {"iou_threshold", iou},
                  {"score_threshold", score},
                  {"center_point_box", ctx.AttrInt("center_point_box", 0)},
                  {"symbol", CountSymbol(ctx)}};
  return ctx.SetOut(0, ctx.Op(OpCode::kNonMaxSuppression, {boxes, scores}, std::move(attrs)));
}

// Unique: `unique` for Y (always: it defines the count the other outputs are sized by),
// `unique_indices`, `unique_inverse` and `unique_counts` of it for the other outputs
// wanted. No axis: the unique elements of the flattened x.
absl::Status Unique(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(0));
  int64_t axis = 0;
  if (ctx.Attr("axis") == nullptr) {
    x = Reshape(ctx, x, {ir::NumElements(ctx.type(x).shape)});
  } else {
    GJ_ASSIGN_OR_RETURN(axis, NormAxis(ctx, ctx.AttrInt("axis", 0), ctx.type(x).rank()));
  }
  const bool sorted = ctx.AttrInt("sorted", 1) != 0;
  const ValueId values = ctx.Op(OpCode::kUnique, {x},
                                {{"axis", axis}, {"sorted", sorted}, {"symbol", CountSymbol(ctx)}});
  if (ctx.WantsOutput(0)) GJ_RETURN_IF_ERROR(ctx.SetOut(0, values));
  const OpCode parts[] = {OpCode::kUniqueIndices, OpCode::kUniqueInverse, OpCode::kUniqueCounts};
  for (int i = 1; i <= 3; ++i) {
    if (!ctx.WantsOutput(i)) continue;
    GJ_RETURN_IF_ERROR(
        ctx.SetOut(i, ctx.Op(parts[i - 1], {x, values}, {{"axis", axis}, {"sorted", sorted}}),
                   pb::TensorProto::INT64));
  }
  return absl::OkStatus();
}

}  // namespace

void AddDataDependentOps(OpTable* t) {
  (*t)["NonZero"] = NonZero;
  (*t)["Compress"] = Compress;
  (*t)["NonMaxSuppression"] = NonMaxSuppression;
  (*t)["Unique"] = Unique;
}

}  // namespace graphjit::onnx
