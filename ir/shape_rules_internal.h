// Helpers the shape rules share (ir/shape_rules.cc and its siblings); private to ir/.
#ifndef GRAPHJIT_IR_SHAPE_RULES_INTERNAL_H_
#define GRAPHJIT_IR_SHAPE_RULES_INTERNAL_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ir/op.h"

namespace graphjit::ir::shape_rules_internal {

// InvalidArgument `op: what`.
absl::Status Error(OpCode op, absl::string_view what);
// `which` (an operand) must be f32 or f64.
absl::Status RequireFloat(OpCode op, const ValueType& t, absl::string_view which);
absl::Status RequireSameDType(OpCode op, const ValueType& a, const ValueType& b);
// No negative dim, and no dim or element count whose constants overflowed int64.
absl::Status RequireNonNegativeDims(OpCode op, const Shape& shape);

}  // namespace graphjit::ir::shape_rules_internal

#endif  // GRAPHJIT_IR_SHAPE_RULES_INTERNAL_H_
