// The eager op library: one kernel per op of ir/ops.def, f32 and f64 (i64 / bool where
// the op takes them). Each call allocates its result, as an eager framework does.
#ifndef GRAPHJIT_RUNTIME_EAGER_H_
#define GRAPHJIT_RUNTIME_EAGER_H_

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/graph.h"
#include "runtime/tensor.h"

namespace graphjit::runtime {

// Computes `node` (its op and attributes; its symbolic type is only used where the op
// needs it, e.g. constant/full shapes) on concrete operand tensors. `bindings` gives
// symbols used by attributes (kv_write's `pos`, slice bounds, full shapes).
// Source ops input/param are not computed here (the caller supplies their tensors).
// Bad operands (wrong dtype, shapes that do not match the op's rule, an index out of
// range) give InvalidArgument naming the op; never a crash.
absl::StatusOr<Tensor> EvalNode(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                const ir::Bindings& bindings);

}  // namespace graphjit::runtime

#endif  // GRAPHJIT_RUNTIME_EAGER_H_
