#include "onnx/op_helpers.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"

namespace graphjit::onnx {

using ir::OpCode;
using ir::Shape;
using ir::SymExpr;
using ir::ValueId;

std::optional<std::vector<SymExpr>> KnownGrid(const Value& v) {
  std::optional<std::vector<SymExpr>> known = Context::KnownInts(v);
  if (!known) return std::nullopt;
  int64_t count = 1;
  for (const SymExpr& d : v.shape) {
    std::optional<int64_t> c = d.AsConstant();
    if (!c || *c < 0 || __builtin_mul_overflow(count, *c, &count)) return std::nullopt;
  }
  if (count != static_cast<int64_t>(known->size())) return std::nullopt;
  return known;
}

std::vector<int64_t> ConstDims(const Value& v) {
  std::vector<int64_t> dims;
  for (const SymExpr& d : v.shape) {
    std::optional<int64_t> c = d.AsConstant();
    GJ_CHECK(c.has_value()) << "known value of symbolic shape " << ir::ShapeToString(v.shape);
    dims.push_back(*c);
  }
  return dims;
}

bool TryFoldElementwise(Context& ctx, const FoldFn& fn, int32_t out_elem) {
  std::vector<std::vector<SymExpr>> ins;
  std::vector<std::vector<int64_t>> dims;
  int32_t first_elem = 0;
  if (ctx.num_inputs() == 0) return false;  // a malformed node: the handler reports it
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Value* v = ctx.HasInput(i) ? ctx.Find(ctx.node().input(i)) : nullptr;
    if (v == nullptr) return false;
    std::optional<std::vector<SymExpr>> known = Context::KnownInts(*v);
    if (!known) return false;
    if (i == 0) first_elem = v->elem_type;
    ins.push_back(*std::move(known));
    dims.push_back(ConstDims(*v));
  }
  // numpy broadcasting of the concrete shapes.
  size_t rank = 0;
  for (const auto& d : dims) rank = std::max(rank, d.size());
  std::vector<int64_t> out(rank, 1);
  for (const auto& d : dims) {
    for (size_t k = 0; k < d.size(); ++k) {
      int64_t& o = out[rank - d.size() + k];
      if (d[k] == o || d[k] == 1) continue;
      if (o != 1) return false;  // not broadcastable: let the graph op report it
      o = d[k];
    }
  }
  int64_t n = 1;
  for (int64_t d : out) n *= d;
  // Shape vectors are short; a large broadcast is data, computed by the graph.
  if (n > 4096) return false;
  std::vector<SymExpr> result;
  std::vector<SymExpr> args(ins.size());
  for (int64_t flat = 0; flat < n; ++flat) {
    for (size_t i = 0; i < ins.size(); ++i) {
      // The input's row-major index of output index `flat`, stretching its size-1 dims.
      int64_t rem = flat, index = 0, stride = 1;
      const auto& d = dims[i];
      for (size_t k = rank; k-- > 0;) {
        const int64_t coord = rem % out[k];
        rem /= out[k];
        if (k >= rank - d.size()) {
          const int64_t dk = d[k - (rank - d.size())];
          index += (dk == 1 ? 0 : coord) * stride;
          stride *= dk;
        }
      }
      args[i] = ins[i][index];
    }
    std::optional<SymExpr> r = fn(args);
    if (!r) return false;
    result.push_back(*std::move(r));
  }
  ctx.SetOutInts(0, out_elem ? out_elem : first_elem, out, std::move(result));
  return true;
}

absl::StatusOr<int> NormAxis(const Context& ctx, int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) {
    return ctx.Invalid(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

absl::StatusOr<std::vector<int>> NormAxes(const Context& ctx, const std::vector<int64_t>& axes,
                                          int rank) {
  std::vector<int> out;
  for (int64_t a : axes) {
    GJ_ASSIGN_OR_RETURN(int axis, NormAxis(ctx, a, rank));
    out.push_back(axis);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

ValueId Reshape(Context& ctx, ValueId x, Shape shape) {
  if (ctx.b().status().ok() && ctx.type(x).shape == shape) return x;
  return ctx.Op(OpCode::kReshape, {x}, {{"shape", std::move(shape)}});
}

ValueId Transpose(Context& ctx, ValueId x, std::vector<int64_t> perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
  if (identity) return x;
  return ctx.Op(OpCode::kTranspose, {x}, {{"perm", std::move(perm)}});
}

ValueId ConstI64(Context& ctx, const std::vector<int64_t>& values) {
  std::vector<double> v(values.begin(), values.end());
  return ctx.Op(OpCode::kConstant, {},
                {{"value", std::move(v)},
                 {"dtype", ir::DType::kI64},
                 {"shape", Shape{static_cast<int64_t>(values.size())}}});
}

ValueId TakeAlongAxis(Context& ctx, ValueId x, int axis, const std::vector<int64_t>& indices) {
  if (!ctx.b().status().ok()) return ir::kInvalidValue;
  const int rank = ctx.type(x).rank();
  std::vector<int64_t> to_front = {axis};
  for (int d = 0; d < rank; ++d) {
    if (d != axis) to_front.push_back(d);
  }
  ValueId moved = Transpose(ctx, x, to_front);
  ValueId taken = ctx.Op(OpCode::kGather, {moved, ConstI64(ctx, indices)});
  // taken is [n, the other dims in order]: put n back at `axis`.
  std::vector<int64_t> back;
  for (int d = 1; d <= axis; ++d) back.push_back(d);
  back.push_back(0);
  for (int d = axis + 1; d < rank; ++d) back.push_back(d);
  return Transpose(ctx, taken, back);
}

ValueId ReduceAxes(Context& ctx, OpCode op, ValueId x, const std::vector<int>& axes,
                   bool keepdims) {
  // Adjacent axes (a mean over H and W) are one axis of a reshape, reduced once: as one
  // reduction per axis, the second pass reads the first's partial results a row apart.
  const bool adjacent =
      axes.size() > 1 && axes.back() - axes.front() + 1 == static_cast<int>(axes.size());
  if (adjacent && ctx.b().status().ok()) {
    const Shape shape = ctx.type(x).shape;
    const int first = axes.front(), last = axes.back();
    Shape merged(shape.begin(), shape.begin() + first);
    merged.push_back(DimProduct(shape, first, last + 1));
    merged.insert(merged.end(), shape.begin() + last + 1, shape.end());
    x = ctx.Op(op, {Reshape(ctx, x, merged)}, {{"axis", int64_t{first}}, {"keepdim", true}});
    Shape kept = shape;
    for (int axis : axes) kept[axis] = 1;
    x = Reshape(ctx, x, kept);
  } else {
    for (int axis : axes) {
      x = ctx.Op(op, {x}, {{"axis", int64_t{axis}}, {"keepdim", true}});
    }
  }
  if (keepdims || !ctx.b().status().ok()) return x;
  Shape shape;
  const Shape& kept = ctx.type(x).shape;
  for (int d = 0; d < static_cast<int>(kept.size()); ++d) {
    if (!std::binary_search(axes.begin(), axes.end(), d)) shape.push_back(kept[d]);
  }
  return Reshape(ctx, x, shape);
}

namespace {

SymExpr FromAtom(const SymExpr::AtomView& atom) {
  switch (atom.kind) {
    case SymExpr::AtomView::Kind::kSymbol:
      return SymExpr::Symbol(atom.name);
    case SymExpr::AtomView::Kind::kFloorDiv:
      return SymExpr::FloorDiv(*atom.lhs, *atom.rhs);
    case SymExpr::AtomView::Kind::kMod:
      return SymExpr::Mod(*atom.lhs, *atom.rhs);
    case SymExpr::AtomView::Kind::kMax:
      return SymExpr::Max(*atom.lhs, *atom.rhs);
    case SymExpr::AtomView::Kind::kMin:
      return SymExpr::Min(*atom.lhs, *atom.rhs);
  }
  GJ_FATAL() << "atom kind " << static_cast<int>(atom.kind);
}

}  // namespace

std::optional<SymExpr> ExactDiv(const SymExpr& a, const SymExpr& b) {
  const SymExpr floor = SymExpr::FloorDiv(a, b);
  if (floor * b == a) return floor;
  const std::vector<SymExpr::TermView> divisor = b.Terms();
  if (divisor.size() != 1 || divisor[0].coeff == 0) return std::nullopt;
  std::vector<std::string> atoms;
  for (const auto& f : divisor[0].factors) atoms.push_back(FromAtom(f).ToString());
  SymExpr quotient = 0;
  for (const SymExpr::TermView& term : a.Terms()) {
    if (term.coeff % divisor[0].coeff != 0) return std::nullopt;
    std::vector<std::string> left = atoms;
    SymExpr t = term.coeff / divisor[0].coeff;
    for (const auto& f : term.factors) {
      const SymExpr atom = FromAtom(f);
      auto it = std::find(left.begin(), left.end(), atom.ToString());
      if (it != left.end()) {
        left.erase(it);
      } else {
        t = t * atom;
      }
    }
    if (!left.empty()) return std::nullopt;
    quotient = quotient + t;
  }
  if (quotient * b != a) return std::nullopt;
  return quotient;
}

SymExpr DimProduct(const Shape& shape, int from, int to) {
  SymExpr p = 1;
  for (int d = from; d < to; ++d) p = p * shape[d];
  return p;
}

}  // namespace graphjit::onnx

namespace graphjit::onnx {

ir::ValueId PadWithConstant(Context& ctx, ir::ValueId x, int axis, int64_t before, int64_t after,
                            double value) {
  if (before == 0 && after == 0) return x;
  std::vector<ir::ValueId> parts;
  auto fill = [&](int64_t n) {
    ir::Shape s = ctx.type(x).shape;
    s[axis] = n;
    return ctx.Op(ir::OpCode::kFull, {},
                  {{"value", value}, {"dtype", ctx.type(x).dtype}, {"shape", s}});
  };
  if (before > 0) parts.push_back(fill(before));
  parts.push_back(x);
  if (after > 0) parts.push_back(fill(after));
  return ctx.Op(ir::OpCode::kConcat, parts, {{"axis", int64_t{axis}}});
}

std::vector<ir::ValueId> RegionInputs(ir::GraphBuilder& b,
                                      const std::vector<ir::ValueType>& types) {
  std::vector<ir::ValueId> ids;
  for (size_t k = 0; k < types.size(); ++k) {
    ids.push_back(b.Input(absl::StrCat("a", k), types[k].dtype, types[k].shape));
  }
  return ids;
}

ir::ValueId ReverseRows(Context& ctx, ir::ValueId x) {
  const ir::SymExpr length = ctx.type(x).shape[0];
  const ir::ValueId ones =
      ctx.Op(ir::OpCode::kFull, {},
             {{"value", 1.0}, {"dtype", ir::DType::kI64}, {"shape", ir::Shape{length}}});
  const ir::ValueId n =
      ctx.Op(ir::OpCode::kReduceSum, {ones}, {{"axis", int64_t{0}}, {"keepdim", false}});
  const ir::ValueId iota =
      ctx.Op(ir::OpCode::kIota, {},
             {{"axis", int64_t{0}}, {"dtype", ir::DType::kI64}, {"shape", ir::Shape{length}}});
  const ir::ValueId last = ctx.Op(ir::OpCode::kSub, {n, ctx.ScalarLike(1, n)});
  return ctx.Op(ir::OpCode::kGather, {x, ctx.Op(ir::OpCode::kSub, {last, iota})});
}

}  // namespace graphjit::onnx
