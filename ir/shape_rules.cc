// Shape inference on symbolic shapes. Dims are compared structurally (SymExpr canonical
// form); a dim that cannot be proven equal to what a rule needs is an error, so a graph
// that verifies is valid for every binding of its symbols (with symbols assumed >= 2).
#include "ir/shape_rules.h"

#include <numeric>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/shape_rules_internal.h"
#include "ir/status_macros.h"

namespace graphjit::ir {
namespace shape_rules_internal {

absl::Status Error(OpCode op, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(OpName(op), ": ", what));
}

absl::Status RequireFloat(OpCode op, const ValueType& t, absl::string_view which) {
  if (IsFloat(t.dtype)) return absl::OkStatus();
  return Error(op, absl::StrCat(which, " must be f32 or f64, got ", TypeToString(t)));
}

absl::Status RequireSameDType(OpCode op, const ValueType& a, const ValueType& b) {
  if (a.dtype == b.dtype) return absl::OkStatus();
  return Error(op, absl::StrCat("operand dtypes differ: ", TypeToString(a), " vs ", TypeToString(b),
                                " (insert a cast)"));
}

// Also rules out dims, and element counts, whose constants overflowed int64 (a graph built
// in C++ can hold them; the parser rejects them at the dim).
absl::Status RequireNonNegativeDims(OpCode op, const Shape& shape) {
  for (const SymExpr& d : shape) {
    if (d.Overflowed()) {
      return Error(op, absl::StrCat("dim ", d.ToString(), " in shape ", ShapeToString(shape),
                                    " overflows int64"));
    }
    if (std::optional<int64_t> c = d.AsConstant(); c && *c < 0) {
      return Error(op, absl::StrCat("negative dim ", *c, " in shape ", ShapeToString(shape)));
    }
  }
  if (NumElements(shape).Overflowed()) {
    return Error(
        op, absl::StrCat("the element count of shape ", ShapeToString(shape), " overflows int64"));
  }
  return absl::OkStatus();
}

}  // namespace shape_rules_internal

using shape_rules_internal::Error;
using shape_rules_internal::RequireFloat;
using shape_rules_internal::RequireNonNegativeDims;
using shape_rules_internal::RequireSameDType;

absl::StatusOr<ValueType> SourceRule(OpCode op, absl::Span<const ValueType>, const Attrs& attrs) {
  ValueType t{attrs.Get<DType>("dtype"), attrs.GetDims("shape")};
  GJ_RETURN_IF_ERROR(RequireNonNegativeDims(op, t.shape));
  if (attrs.Has("name") && attrs.Get<std::string>("name").empty()) {
    return Error(op, "name must not be empty");
  }
  return t;
}

absl::StatusOr<ValueType> ConstantRule(OpCode op, absl::Span<const ValueType> in,
                                       const Attrs& attrs) {
  absl::StatusOr<ValueType> t = SourceRule(op, in, attrs);
  if (!t.ok()) return t;
  std::optional<int64_t> n = NumElements(t->shape).AsConstant();
  if (!n) return Error(op, absl::StrCat("shape must be constant, got ", ShapeToString(t->shape)));
  size_t count = attrs.Get<std::vector<double>>("value").size();
  if (static_cast<int64_t>(count) != *n) {
    return Error(op, absl::StrCat("has ", count, " value(s) for shape ", ShapeToString(t->shape),
                                  " (", *n, " elements)"));
  }
  return t;
}

absl::StatusOr<ValueType> IotaRule(OpCode op, absl::Span<const ValueType> in, const Attrs& attrs) {
  absl::StatusOr<ValueType> t = SourceRule(op, in, attrs);
  if (!t.ok()) return t;
  if (t->dtype == DType::kBool) return Error(op, "dtype must be numeric, got bool");
  GJ_RETURN_IF_ERROR(NormalizeAxis(attrs.GetInt("axis"), t->rank(), "iota").status());
  return t;
}

absl::StatusOr<ValueType> BinaryRule(OpCode op, absl::Span<const ValueType> in, const Attrs&) {
  GJ_RETURN_IF_ERROR(RequireSameDType(op, in[0], in[1]));
  if (in[0].dtype == DType::kBool && op != OpCode::kMaximum && op != OpCode::kMinimum) {
    return Error(op, "arithmetic on bool operands");
  }
  absl::StatusOr<Shape> shape = BroadcastShapes(in[0].shape, in[1].shape);
  if (!shape.ok()) return Error(op, shape.status().message());
  return ValueType{in[0].dtype, *shape};
}

absl::StatusOr<ValueType> FloatBinaryRule(OpCode op, absl::Span<const ValueType> in,
                                          const Attrs& attrs) {
  GJ_RETURN_IF_ERROR(RequireFloat(op, in[0], "operand"));
  return BinaryRule(op, in, attrs);
}

absl::StatusOr<ValueType> CompareRule(OpCode op, absl::Span<const ValueType> in, const Attrs&) {
  GJ_RETURN_IF_ERROR(RequireSameDType(op, in[0], in[1]));
  absl::StatusOr<Shape> shape = BroadcastShapes(in[0].shape, in[1].shape);
  if (!shape.ok()) return Error(op, shape.status().message());
  return ValueType{DType::kBool, *shape};
}

absl::StatusOr<ValueType> WhereRule(OpCode op, absl::Span<const ValueType> in, const Attrs&) {
  if (in[0].dtype != DType::kBool) {
    return Error(op, absl::StrCat("condition must be bool, got ", TypeToString(in[0])));
  }
  GJ_RETURN_IF_ERROR(RequireSameDType(op, in[1], in[2]));
  absl::StatusOr<Shape> shape = BroadcastShapes(in[1].shape, in[2].shape);
  if (shape.ok()) shape = BroadcastShapes(in[0].shape, *shape);
  if (!shape.ok()) return Error(op, shape.status().message());
  return ValueType{in[1].dtype, *shape};
}

absl::StatusOr<ValueType> NumericUnaryRule(OpCode op, absl::Span<const ValueType> in,
                                           const Attrs&) {
  if (in[0].dtype == DType::kBool) return Error(op, "operand must be numeric, got bool");
  return in[0];
}

absl::StatusOr<ValueType> FloatUnaryRule(OpCode op, absl::Span<const ValueType> in,
                                         const Attrs& attrs) {
  GJ_RETURN_IF_ERROR(RequireFloat(op, in[0], "operand"));
  if (attrs.Has("axis")) {
    GJ_RETURN_IF_ERROR(NormalizeAxis(attrs.GetInt("axis"), in[0].rank(), OpName(op)).status());
  }
  return in[0];
}

absl::StatusOr<ValueType> CastRule(OpCode, absl::Span<const ValueType> in, const Attrs& attrs) {
  return ValueType{attrs.Get<DType>("dtype"), in[0].shape};
}

absl::StatusOr<ValueType> MatmulRule(OpCode op, absl::Span<const ValueType> in, const Attrs&) {
  const ValueType& a = in[0];
  const ValueType& b = in[1];
  GJ_RETURN_IF_ERROR(RequireSameDType(op, a, b));
  GJ_RETURN_IF_ERROR(RequireFloat(op, a, "lhs"));
  if (a.rank() < 2 || b.rank() < 2) {
    return Error(op, absl::StrCat("operands must have rank >= 2, got ", TypeToString(a), " and ",
                                  TypeToString(b)));
  }
  const SymExpr& k_a = a.shape[a.rank() - 1];
  const SymExpr& k_b = b.shape[b.rank() - 2];
  if (k_a != k_b) {
    return Error(
        op, absl::StrCat("contraction dims differ: ", TypeToString(a), " @ ", TypeToString(b), " (",
                         k_a.ToString(), " vs ", k_b.ToString(), ")"));
  }
  Shape batch_a(a.shape.begin(), a.shape.end() - 2);
  Shape batch_b(b.shape.begin(), b.shape.end() - 2);
  absl::StatusOr<Shape> batch = BroadcastShapes(batch_a, batch_b);
  if (!batch.ok()) return Error(op, absl::StrCat("batch dims: ", batch.status().message()));
  Shape out = *batch;
  out.push_back(a.shape[a.rank() - 2]);
  out.push_back(b.shape[b.rank() - 1]);
  return ValueType{a.dtype, out};
}

absl::StatusOr<ValueType> TransposeRule(OpCode op, absl::Span<const ValueType> in,
                                        const Attrs& attrs) {
  const std::vector<int64_t>& perm = attrs.Get<std::vector<int64_t>>("perm");
  if (static_cast<int>(perm.size()) != in[0].rank()) {
    return Error(op, absl::StrCat("perm [", absl::StrJoin(perm, ", "), "] does not match rank ",
                                  in[0].rank()));
  }
  std::vector<bool> seen(perm.size(), false);
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= in[0].rank() || seen[p]) {
      return Error(op, absl::StrCat("perm [", absl::StrJoin(perm, ", "),
                                    "] is not a permutation of 0..", in[0].rank() - 1));
    }
    seen[p] = true;
    out.push_back(in[0].shape[p]);
  }
  return ValueType{in[0].dtype, out};
}

absl::StatusOr<ValueType> ReshapeRule(OpCode op, absl::Span<const ValueType> in,
                                      const Attrs& attrs) {
  const Shape& shape = attrs.GetDims("shape");
  GJ_RETURN_IF_ERROR(RequireNonNegativeDims(op, shape));
  if (NumElements(shape) != NumElements(in[0].shape)) {
    return Error(op,
                 absl::StrCat("cannot reshape ", TypeToString(in[0]), " to ", ShapeToString(shape),
                              ": element counts ", NumElements(in[0].shape).ToString(), " vs ",
                              NumElements(shape).ToString()));
  }
  return ValueType{in[0].dtype, shape};
}

absl::StatusOr<ValueType> ExpandRule(OpCode op, absl::Span<const ValueType> in,
                                     const Attrs& attrs) {
  const Shape& shape = attrs.GetDims("shape");
  // Broadcasting lets a target dim be anything the operand's 1 can stretch to, so a
  // negative target would pass BroadcastShapes.
  GJ_RETURN_IF_ERROR(RequireNonNegativeDims(op, shape));
  absl::StatusOr<Shape> out = BroadcastShapes(in[0].shape, shape);
  if (!out.ok() || *out != shape) {
    return Error(op,
                 absl::StrCat("cannot expand ", TypeToString(in[0]), " to ", ShapeToString(shape)));
  }
  return ValueType{in[0].dtype, shape};
}

absl::StatusOr<ValueType> ConcatRule(OpCode op, absl::Span<const ValueType> in,
                                     const Attrs& attrs) {
  GJ_ASSIGN_OR_RETURN(int axis, NormalizeAxis(attrs.GetInt("axis"), in[0].rank(), "concat"));
  Shape out = in[0].shape;
  for (size_t i = 1; i < in.size(); ++i) {
    if (in[i].dtype != in[0].dtype || in[i].rank() != in[0].rank()) {
      return Error(op, absl::StrCat("operand ", i, " is ", TypeToString(in[i]),
                                    ", expected dtype and rank of ", TypeToString(in[0])));
    }
    for (int d = 0; d < in[0].rank(); ++d) {
      if (d != axis && in[i].shape[d] != in[0].shape[d]) {
        return Error(op, absl::StrCat("operand ", i, " is ", TypeToString(in[i]), ", dim ", d,
                                      " must be ", in[0].shape[d].ToString()));
      }
    }
    out[axis] = out[axis] + in[i].shape[axis];
  }
  return ValueType{in[0].dtype, out};
}

absl::StatusOr<ValueType> SliceRule(OpCode op, absl::Span<const ValueType> in, const Attrs& attrs) {
  GJ_ASSIGN_OR_RETURN(int axis, NormalizeAxis(attrs.GetInt("axis"), in[0].rank(), "slice"));
  const SymExpr& start = attrs.GetDim("start");
  const SymExpr& end = attrs.GetDim("end");
  const SymExpr& dim = in[0].shape[axis];
  // 0 <= start <= end <= dim. Each difference that is a constant must be >= 0, including
  // the implied ones (end >= 0, start <= dim): with a symbolic end, start = 5 on a dim of 4
  // is out of range for every value of the end.
  bool out_of_range = false;
  for (const SymExpr& gap : {start, end - start, dim - end, end, dim - start}) {
    std::optional<int64_t> c = gap.AsConstant();
    out_of_range |= c && *c < 0;
  }
  if (out_of_range) {
    return Error(op, absl::StrCat("range [", start.ToString(), ", ", end.ToString(),
                                  ") is not within dim ", axis, " of ", TypeToString(in[0])));
  }
  Shape out = in[0].shape;
  out[axis] = end - start;
  return ValueType{in[0].dtype, out};
}

absl::StatusOr<ValueType> WindowRule(OpCode op, absl::Span<const ValueType> in,
                                     const Attrs& attrs) {
  const auto& kernel = attrs.Get<std::vector<int64_t>>("kernel");
  const auto& strides = attrs.Get<std::vector<int64_t>>("strides");
  const auto& dilations = attrs.Get<std::vector<int64_t>>("dilations");
  const int k = static_cast<int>(kernel.size());
  if (k == 0 || strides.size() != kernel.size() || dilations.size() != kernel.size()) {
    return Error(
        op, absl::StrCat("kernel [", absl::StrJoin(kernel, ", "), "], strides [",
                         absl::StrJoin(strides, ", "), "] and dilations [",
                         absl::StrJoin(dilations, ", "), "] must be non-empty and of one length"));
  }
  if (in[0].rank() < k) {
    return Error(op, absl::StrCat("a window over ", k, " dims needs rank >= ", k, ", got ",
                                  TypeToString(in[0])));
  }
  const int batch = in[0].rank() - k;
  Shape out(in[0].shape.begin(), in[0].shape.begin() + batch);
  Shape spatial;
  for (int i = 0; i < k; ++i) {
    if (kernel[i] < 1 || strides[i] < 1 || dilations[i] < 1 || kernel[i] > (int64_t{1} << 31) ||
        strides[i] > (int64_t{1} << 31) || dilations[i] > (int64_t{1} << 31)) {
      return Error(op, absl::StrCat("kernel, stride and dilation of window dim ", i,
                                    " must be in [1, 2^31], got ", kernel[i], ", ", strides[i],
                                    ", ", dilations[i]));
    }
    const int64_t span = dilations[i] * (kernel[i] - 1) + 1;
    const SymExpr& s = in[0].shape[batch + i];
    if (std::optional<int64_t> c = s.AsConstant(); c && *c < span) {
      return Error(op, absl::StrCat("dim ", batch + i, " of ", TypeToString(in[0]),
                                    " is shorter than the window's span ", span));
    }
    out.push_back(kernel[i]);
    spatial.push_back((s - span) / strides[i] + 1);
  }
  out.insert(out.end(), spatial.begin(), spatial.end());
  return ValueType{in[0].dtype, out};
}

absl::StatusOr<ValueType> GatherRule(OpCode op, absl::Span<const ValueType> in, const Attrs&) {
  if (in[0].rank() < 1) return Error(op, "table must have rank >= 1");
  if (in[1].dtype != DType::kI64) {
    return Error(op, absl::StrCat("indices must be i64, got ", TypeToString(in[1])));
  }
  Shape out = in[1].shape;
  out.insert(out.end(), in[0].shape.begin() + 1, in[0].shape.end());
  return ValueType{in[0].dtype, out};
}

absl::StatusOr<ValueType> ScatterAddRule(OpCode op, absl::Span<const ValueType> in,
                                         const Attrs& attrs) {
  // The updates are what gather(table, indices) would return, so reuse its rule.
  GJ_ASSIGN_OR_RETURN(ValueType gathered, GatherRule(op, in.subspan(0, 2), attrs));
  if (in[0].dtype == DType::kBool) return Error(op, "table must be numeric, got bool");
  if (in[2] != gathered) {
    return Error(op, absl::StrCat("updates must be ", TypeToString(gathered), " (indices ",
                                  TypeToString(in[1]), " then table ", TypeToString(in[0]),
                                  " without its first dim), got ", TypeToString(in[2])));
  }
  return in[0];
}

absl::StatusOr<ValueType> ReduceRule(OpCode op, absl::Span<const ValueType> in,
                                     const Attrs& attrs) {
  if (in[0].dtype == DType::kBool) return Error(op, "operand must be numeric, got bool");
  GJ_ASSIGN_OR_RETURN(int axis, NormalizeAxis(attrs.GetInt("axis"), in[0].rank(), OpName(op)));
  Shape out = in[0].shape;
  if (attrs.Get<bool>("keepdim")) {
    out[axis] = 1;
  } else {
    out.erase(out.begin() + axis);
  }
  return ValueType{in[0].dtype, out};
}

absl::StatusOr<ValueType> FloatReduceRule(OpCode op, absl::Span<const ValueType> in,
                                          const Attrs& attrs) {
  GJ_RETURN_IF_ERROR(RequireFloat(op, in[0], "operand"));
  return ReduceRule(op, in, attrs);
}

absl::StatusOr<ValueType> ArgReduceRule(OpCode op, absl::Span<const ValueType> in,
                                        const Attrs& attrs) {
  absl::StatusOr<ValueType> reduced = ReduceRule(op, in, attrs);
  if (!reduced.ok()) return reduced;
  // An index into an empty axis does not exist (numpy raises too). A symbolic axis is
  // assumed non-empty, like every symbol here.
  const int axis = ValueOrDie(NormalizeAxis(attrs.GetInt("axis"), in[0].rank(), OpName(op)));
  if (in[0].shape[axis].AsConstant() == 0) {
    return Error(op, absl::StrCat("axis ", axis, " of ", TypeToString(in[0]),
                                  " is empty: there is no index to return"));
  }
  return ValueType{DType::kI64, reduced->shape};
}

absl::StatusOr<ValueType> ScanRule(OpCode op, absl::Span<const ValueType> in, const Attrs& attrs) {
  if (in[0].dtype == DType::kBool) return Error(op, "operand must be numeric, got bool");
  GJ_RETURN_IF_ERROR(NormalizeAxis(attrs.GetInt("axis"), in[0].rank(), OpName(op)).status());
  return in[0];
}

absl::StatusOr<ValueType> NormRule(OpCode op, absl::Span<const ValueType> in, const Attrs&) {
  GJ_RETURN_IF_ERROR(RequireFloat(op, in[0], "operand"));
  if (in[0].rank() < 1) return Error(op, "operand must have rank >= 1");
  const SymExpr& last = in[0].shape.back();
  for (size_t i = 1; i < in.size(); ++i) {
    const char* which = i == 1 ? "weight" : "bias";
    if (in[i].dtype != in[0].dtype || in[i].rank() != 1 || in[i].shape[0] != last) {
      return Error(op, absl::StrCat(which, " must be ", DTypeName(in[0].dtype), "[",
                                    last.ToString(), "], got ", TypeToString(in[i])));
    }
  }
  return in[0];
}

absl::StatusOr<ValueType> RopeRule(OpCode op, absl::Span<const ValueType> in, const Attrs&) {
  GJ_RETURN_IF_ERROR(RequireFloat(op, in[0], "operand"));
  if (in[0].rank() < 1) return Error(op, "operand must have rank >= 1");
  std::optional<int64_t> dh = in[0].shape.back().AsConstant();
  if (!dh || *dh % 2 != 0) {
    return Error(op, absl::StrCat("last dim must be an even constant, got ", TypeToString(in[0])));
  }
  for (int i = 1; i <= 2; ++i) {
    GJ_RETURN_IF_ERROR(RequireSameDType(op, in[0], in[i]));
    absl::StatusOr<Shape> b = BroadcastShapes(in[0].shape, in[i].shape);
    if (!b.ok() || *b != in[0].shape) {
      return Error(op, absl::StrCat(i == 1 ? "cos " : "sin ", TypeToString(in[i]),
                                    " does not broadcast to ", TypeToString(in[0])));
    }
  }
  return in[0];
}

absl::StatusOr<ValueType> CrossEntropyRule(OpCode op, absl::Span<const ValueType> in,
                                           const Attrs&) {
  GJ_RETURN_IF_ERROR(RequireFloat(op, in[0], "logits"));
  if (in[1].dtype != DType::kI64) {
    return Error(op, absl::StrCat("targets must be i64, got ", TypeToString(in[1])));
  }
  Shape rows(in[0].shape.begin(), in[0].shape.end() - (in[0].rank() > 0 ? 1 : 0));
  if (in[0].rank() < 1 || rows != in[1].shape) {
    return Error(op, absl::StrCat("targets ", TypeToString(in[1]), " must have the shape of ",
                                  "logits ", TypeToString(in[0]), " without its last dim"));
  }
  return ValueType{in[0].dtype, {}};
}

absl::StatusOr<ValueType> CausalMaskRule(OpCode op, absl::Span<const ValueType> in, const Attrs&) {
  GJ_RETURN_IF_ERROR(RequireFloat(op, in[0], "operand"));
  if (in[0].rank() < 2) return Error(op, "operand must have rank >= 2");
  return in[0];
}

absl::StatusOr<ValueType> KvWriteRule(OpCode op, absl::Span<const ValueType> in,
                                      const Attrs& attrs) {
  const ValueType& cache = in[0];
  const ValueType& rows = in[1];
  GJ_RETURN_IF_ERROR(RequireSameDType(op, cache, rows));
  if (cache.rank() < 2 || rows.rank() != cache.rank()) {
    return Error(op, absl::StrCat("cache ", TypeToString(cache), " and new rows ",
                                  TypeToString(rows), " must have the same rank >= 2"));
  }
  int axis = cache.rank() - 2;
  for (int d = 0; d < cache.rank(); ++d) {
    if (d != axis && cache.shape[d] != rows.shape[d]) {
      return Error(op, absl::StrCat("new rows ", TypeToString(rows), " do not match cache ",
                                    TypeToString(cache), " in dim ", d));
    }
  }
  const SymExpr& pos = attrs.GetDim("pos");
  const SymExpr& size = cache.shape[axis];
  const SymExpr& count = rows.shape[axis];
  // 0 <= pos and pos + count <= size. As for slice, the implied bounds (count <= size,
  // pos <= size) catch writes that are out of range whatever the symbolic part is.
  bool out_of_range = false;
  for (const SymExpr& gap : {pos, size - count - pos, size - count, size - pos}) {
    std::optional<int64_t> c = gap.AsConstant();
    out_of_range |= c && *c < 0;
  }
  if (out_of_range) {
    return Error(op,
                 absl::StrCat("rows [", pos.ToString(), ", ", (pos + rows.shape[axis]).ToString(),
                              ") are outside cache dim ", axis, " of ", TypeToString(cache)));
  }
  return cache;
}

// The regions' signatures are checked against the operands by ir/regions.h (a rule sees
// only operand types); here only what the attributes alone decide.
absl::StatusOr<ValueType> WhileRule(OpCode op, absl::Span<const ValueType> in, const Attrs& attrs) {
  const int64_t carried = attrs.GetInt("carried");
  if (carried < 1 || carried > static_cast<int64_t>(in.size())) {
    return Error(op, absl::StrCat("carried=", carried, " must be in [1, ", in.size(),
                                  "] (the operands are the carried values, then the invariants)"));
  }
  if (attrs.Has("max_trips") && attrs.GetInt("max_trips") < 0) {
    return Error(op, absl::StrCat("max_trips=", attrs.GetInt("max_trips"), " is negative"));
  }
  return in[0];
}

absl::StatusOr<ValueType> LoopResultRule(OpCode op, absl::Span<const ValueType> in,
                                         const Attrs& attrs) {
  if (attrs.GetInt("index") < 1) {
    return Error(op, absl::StrCat("index=", attrs.GetInt("index"),
                                  " must be >= 1 (carried value 0 is the while node itself)"));
  }
  return in[1];
}

// The result is declared (a branch's value need not be typed like any operand); the
// regions must return it (ir/regions.h).
absl::StatusOr<ValueType> IfRule(OpCode op, absl::Span<const ValueType> in, const Attrs& attrs) {
  if (!(in[0] == ValueType{DType::kBool, {}})) {
    return Error(op, absl::StrCat("the condition must be bool[], got ", TypeToString(in[0])));
  }
  return SourceRule(op, in, attrs);
}

absl::StatusOr<ValueType> ScanLoopRule(OpCode op, absl::Span<const ValueType> in,
                                       const Attrs& attrs) {
  const int64_t carried = attrs.GetInt("carried"), scanned = attrs.GetInt("scanned");
  const int64_t n = static_cast<int64_t>(in.size());
  if (carried < 1 || scanned < 1 || carried + scanned > n) {
    return Error(op, absl::StrCat("carried=", carried, " and scanned=", scanned,
                                  " must be >= 1 each and together at most the ", n,
                                  " operands (carried values, scanned inputs, invariants)"));
  }
  const ValueType& first = in[carried];
  for (int64_t k = carried; k < carried + scanned; ++k) {
    if (in[k].rank() < 1 || in[k].shape[0] != first.shape[0]) {
      return Error(op, absl::StrCat("scanned input ", k - carried, " is ", TypeToString(in[k]),
                                    ": every scanned input has rank >= 1 and the length ",
                                    first.rank() > 0 ? first.shape[0].ToString() : "of the first",
                                    " in dim 0"));
    }
  }
  return in[0];
}

// The stacked type is declared (the region gives it); ir/regions.h checks it.
absl::StatusOr<ValueType> ScanOutputRule(OpCode op, absl::Span<const ValueType> in,
                                         const Attrs& attrs) {
  if (attrs.GetInt("index") < 0) {
    return Error(op, absl::StrCat("index=", attrs.GetInt("index"), " is negative"));
  }
  return SourceRule(op, in, attrs);
}

}  // namespace graphjit::ir
