// Shape inference rules, one per family of ops; ir/ops.def names which op uses which.
#ifndef GRAPHJIT_IR_SHAPE_RULES_H_
#define GRAPHJIT_IR_SHAPE_RULES_H_

#include "ir/op.h"

namespace graphjit::ir {

#define GJ_DECLARE_RULE(rule) \
  absl::StatusOr<ValueType> rule(OpCode op, absl::Span<const ValueType> in, const Attrs& attrs);
GJ_DECLARE_RULE(SourceRule)
GJ_DECLARE_RULE(ConstantRule)
GJ_DECLARE_RULE(IotaRule)
GJ_DECLARE_RULE(BinaryRule)
GJ_DECLARE_RULE(FloatBinaryRule)
GJ_DECLARE_RULE(CompareRule)
GJ_DECLARE_RULE(WhereRule)
GJ_DECLARE_RULE(NumericUnaryRule)
GJ_DECLARE_RULE(FloatUnaryRule)
GJ_DECLARE_RULE(CastRule)
GJ_DECLARE_RULE(MatmulRule)
GJ_DECLARE_RULE(TransposeRule)
GJ_DECLARE_RULE(ReshapeRule)
GJ_DECLARE_RULE(ExpandRule)
GJ_DECLARE_RULE(ConcatRule)
GJ_DECLARE_RULE(SliceRule)
GJ_DECLARE_RULE(WindowRule)
GJ_DECLARE_RULE(GatherRule)
GJ_DECLARE_RULE(ScatterAddRule)
GJ_DECLARE_RULE(ReduceRule)
GJ_DECLARE_RULE(FloatReduceRule)
GJ_DECLARE_RULE(ArgReduceRule)
GJ_DECLARE_RULE(ScanRule)
GJ_DECLARE_RULE(NormRule)
GJ_DECLARE_RULE(RopeRule)
GJ_DECLARE_RULE(CrossEntropyRule)
GJ_DECLARE_RULE(CausalMaskRule)
GJ_DECLARE_RULE(KvWriteRule)
GJ_DECLARE_RULE(WhileRule)
GJ_DECLARE_RULE(LoopResultRule)
GJ_DECLARE_RULE(IfRule)
GJ_DECLARE_RULE(ScanLoopRule)
GJ_DECLARE_RULE(ScanOutputRule)
GJ_DECLARE_RULE(NonZeroRule)
GJ_DECLARE_RULE(CompressRule)
GJ_DECLARE_RULE(NonMaxSuppressionRule)
GJ_DECLARE_RULE(AssertDimRule)
GJ_DECLARE_RULE(TopKRule)
GJ_DECLARE_RULE(FactorDimRule)
GJ_DECLARE_RULE(UniqueRule)
GJ_DECLARE_RULE(UniquePartRule)
#undef GJ_DECLARE_RULE

}  // namespace graphjit::ir

#endif  // GRAPHJIT_IR_SHAPE_RULES_H_
