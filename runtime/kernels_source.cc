// Kernels of the source ops: input and param are the caller's tensors (an error here),
// constant, full and iota materialize their attributes.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "runtime/kernels.h"

namespace graphjit::runtime::kernels {
namespace {

absl::Status SuppliedByCaller(const ir::Node& node, absl::string_view what) {
  return absl::FailedPreconditionError(absl::StrCat(ir::OpName(node.op), " '", node.name(),
                                                    "': the caller supplies ", what,
                                                    " tensors; EvalNode does not compute them"));
}

}  // namespace

absl::StatusOr<Tensor> EvalInput(const ir::Node& node, absl::Span<const Tensor* const>,
                                 const ir::Bindings&) {
  return SuppliedByCaller(node, "input");
}

absl::StatusOr<Tensor> EvalParam(const ir::Node& node, absl::Span<const Tensor* const>,
                                 const ir::Bindings&) {
  return SuppliedByCaller(node, "parameter");
}

absl::StatusOr<Tensor> EvalConstant(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                    const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  return Tensor::FromDoubles(p.dtype, p.shape, p.attrs().Get<std::vector<double>>("value"));
}

absl::StatusOr<Tensor> EvalFull(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const double value = p.attrs().GetFloat("value");
  return Dispatch<GJ_ALL_TYPES>(node, p.dtype, [&](auto tag) -> absl::StatusOr<Tensor> {
    using T = decltype(tag);
    absl::StatusOr<Tensor> out = NewResult(p);
    if (!out.ok()) return out;
    const T v = ConvertElement<T>(value);
    T* o = out->template data<T>();
    for (int64_t i = 0, n = out->numel(); i < n; ++i) o[i] = v;
    return out;
  });
}

absl::StatusOr<Tensor> EvalIota(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const int rank = static_cast<int>(p.shape.size());
  GJ_ASSIGN_OR_RETURN(int axis, ir::NormalizeAxis(p.Int("axis"), rank, "iota"));
  const int64_t outer = Product(p.shape, 0, axis);
  const int64_t n = p.shape[axis];
  const int64_t inner = Product(p.shape, axis + 1, rank);
  return Dispatch<GJ_NUMERIC_TYPES>(node, p.dtype, [&](auto tag) -> absl::StatusOr<Tensor> {
    using T = decltype(tag);
    absl::StatusOr<Tensor> out = NewResult(p);
    if (!out.ok()) return out;
    T* o = out->template data<T>();
    for (int64_t b = 0; b < outer; ++b) {
      for (int64_t i = 0; i < n; ++i) {
        const T v = static_cast<T>(i);
        std::fill(o, o + inner, v);
        o += inner;
      }
    }
    return out;
  });
}

}  // namespace graphjit::runtime::kernels
