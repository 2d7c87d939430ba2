// EvalNode: dispatch to the op's kernel through a table built from ir/ops.def.
#include "runtime/eager.h"

#include <array>

#include "runtime/kernels.h"

namespace graphjit::runtime {
namespace {

using Kernel = absl::StatusOr<Tensor> (*)(const ir::Node&, absl::Span<const Tensor* const>,
                                          const ir::Bindings&);

// Indexed by OpCode; the same list generates the enum, so the order matches.
constexpr std::array<Kernel, ir::kNumOps> kKernels = {
#define GJ_OP(name, ...) &kernels::Eval##name,
#include "ir/ops.def"
#undef GJ_OP
};

}  // namespace

absl::StatusOr<Tensor> EvalNode(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                const ir::Bindings& bindings) {
  const auto index = static_cast<size_t>(node.op);
  if (index >= kKernels.size()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown op code ", index));
  }
  return kKernels[index](node, operands, bindings);
}

}  // namespace graphjit::runtime
