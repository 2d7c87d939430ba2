// Helpers shared by the eager kernels: validation of a call against the op's shape rule
// on concrete shapes, and broadcast strides.
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "runtime/kernels.h"

namespace graphjit::runtime::kernels {
namespace {

bool IsSymbolic(const ir::AttrValue& v) {
  if (const auto* dim = std::get_if<ir::SymExpr>(&v)) return !dim->IsConstant();
  if (const auto* dims = std::get_if<std::vector<ir::SymExpr>>(&v)) {
    for (const ir::SymExpr& d : *dims) {
      if (!d.IsConstant()) return true;
    }
  }
  return false;
}

absl::StatusOr<ir::SymExpr> EvaluateDim(const ir::Node& node, absl::string_view attr,
                                        const ir::SymExpr& dim, const ir::Bindings& bindings) {
  absl::StatusOr<int64_t> v = dim.Evaluate(bindings);
  if (!v.ok()) {
    return OpError(node, absl::StrCat("attribute '", attr, "' = ", dim.ToString(), ": ",
                                      v.status().message()));
  }
  return ir::SymExpr(*v);
}

// A copy of the node's attributes with every dim evaluated under `bindings`, so the shape
// rule sees only constants and checks bounds exactly.
absl::StatusOr<ir::Attrs> ConcreteAttrs(const ir::Node& node, const ir::Bindings& bindings) {
  ir::Attrs out;
  for (const auto& [name, value] : node.attrs.items()) {
    if (const auto* dim = std::get_if<ir::SymExpr>(&value)) {
      GJ_ASSIGN_OR_RETURN(ir::SymExpr v, EvaluateDim(node, name, *dim, bindings));
      out.Set(name, std::move(v));
    } else if (const auto* dims = std::get_if<std::vector<ir::SymExpr>>(&value)) {
      std::vector<ir::SymExpr> values;
      for (const ir::SymExpr& d : *dims) {
        GJ_ASSIGN_OR_RETURN(ir::SymExpr v, EvaluateDim(node, name, d, bindings));
        values.push_back(std::move(v));
      }
      out.Set(name, std::move(values));
    } else {
      out.Set(name, value);
    }
  }
  return out;
}

// A SymExpr constant allocates (its canonical term map and text), which would dominate
// the cost of validating a small op; real dims are mostly small, so they are copied
// (a reference count increment) from a table built once.
ir::Shape ConcreteShape(const std::vector<int64_t>& dims) {
  constexpr int64_t kTableSize = 1024;
  static const std::vector<ir::SymExpr>* const table = [] {
    auto* t = new std::vector<ir::SymExpr>();
    t->reserve(kTableSize);
    for (int64_t v = 0; v < kTableSize; ++v) t->emplace_back(v);
    return t;
  }();
  ir::Shape shape;
  shape.reserve(dims.size());
  for (int64_t d : dims) {
    shape.push_back(d >= 0 && d < kTableSize ? (*table)[d] : ir::SymExpr(d));
  }
  return shape;
}

}  // namespace

absl::Status OpError(const ir::Node& node, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(ir::OpName(node.op), ": ", what));
}

int64_t Product(const std::vector<int64_t>& shape, int begin, int end) {
  int64_t n = 1;
  for (int i = begin; i < end; ++i) n *= shape[i];
  return n;
}

absl::StatusOr<Tensor> SlicesAt(const Tensor& x, int axis, absl::Span<const int64_t> indices) {
  std::vector<int64_t> shape = x.shape();
  shape[axis] = static_cast<int64_t>(indices.size());
  GJ_ASSIGN_OR_RETURN(Tensor out, Tensor::Empty(x.dtype(), shape));
  // Per outer index, each slice is a row of `inner` elements.
  const int64_t outer = Product(x.shape(), 0, axis);
  const int64_t inner_bytes = Product(x.shape(), axis + 1, x.rank()) * ir::DTypeSize(x.dtype());
  const auto* src = static_cast<const char*>(x.raw_data());
  auto* dst = static_cast<char*>(out.raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i : indices) {
      std::memcpy(dst, src + (o * x.dim(axis) + i) * inner_bytes, static_cast<size_t>(inner_bytes));
      dst += inner_bytes;
    }
  }
  return out;
}

int64_t Prepared::Dim(absl::string_view name) const {
  std::optional<int64_t> v = attrs().GetDim(name).AsConstant();
  GJ_CHECK(v.has_value()) << "dim attribute '" << name << "' was not evaluated";
  return *v;
}

absl::StatusOr<Prepared> Prepare(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                 const ir::Bindings& bindings) {
  Prepared p;
  p.attrs_ = &node.attrs;
  for (const auto& [name, value] : node.attrs.items()) {
    if (!IsSymbolic(value)) continue;
    GJ_ASSIGN_OR_RETURN(p.owned_attrs_, ConcreteAttrs(node, bindings));
    break;
  }
  std::vector<ir::ValueType> types;
  types.reserve(operands.size());
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands[i] == nullptr || !operands[i]->valid()) {
      return OpError(node, absl::StrCat("operand ", i, " holds no tensor"));
    }
    types.push_back({operands[i]->dtype(), ConcreteShape(operands[i]->shape())});
  }
  absl::StatusOr<ir::ValueType> type = ir::InferType(node.op, types, p.attrs());
  if (!type.ok()) {
    // Shape rules mostly name the op already; make sure every message does.
    absl::string_view msg = type.status().message();
    if (absl::StartsWith(msg, ir::OpName(node.op))) {
      return absl::InvalidArgumentError(msg);
    }
    return OpError(node, msg);
  }
  p.dtype = type->dtype;
  p.shape.reserve(type->shape.size());
  for (const ir::SymExpr& d : type->shape) {
    std::optional<int64_t> c = d.AsConstant();
    if (!c && ir::IsRuntimeOp(node.op)) c = -1;  // the count the kernel makes
    if (!c) {
      return absl::InternalError(
          absl::StrCat(ir::OpName(node.op), ": result dim ", d.ToString(), " is not constant"));
    }
    p.shape.push_back(*c);
  }
  return p;
}

std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& shape,
                                      const std::vector<int64_t>& out) {
  std::vector<int64_t> strides(out.size(), 0);
  const size_t offset = out.size() - shape.size();
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[offset + i] = shape[i] == 1 && out[offset + i] != 1 ? 0 : stride;
    stride *= shape[i];
  }
  return strides;
}

}  // namespace graphjit::runtime::kernels
