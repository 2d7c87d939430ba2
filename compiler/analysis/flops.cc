#include "compiler/analysis/flops.h"

namespace graphjit::compiler {
namespace {

using ir::OpCode;

enum class FlopRule { kFree, kMatmul };

// Every op of ir/ops.def is classified here, without a default: a new op makes the
// compiler warn (-Wswitch) until someone decides whether it is matmul-like.
FlopRule RuleFor(OpCode op) {
  switch (op) {
    case OpCode::kMatmul:
      return FlopRule::kMatmul;
    // Sources.
    case OpCode::kInput:
    case OpCode::kParam:
    case OpCode::kConstant:
    case OpCode::kFull:
    case OpCode::kIota:
    // Elementwise.
    case OpCode::kAdd:
    case OpCode::kSub:
    case OpCode::kMul:
    case OpCode::kDiv:
    case OpCode::kPow:
    case OpCode::kMaximum:
    case OpCode::kMinimum:
    case OpCode::kEq:
    case OpCode::kNe:
    case OpCode::kLt:
    case OpCode::kLe:
    case OpCode::kGt:
    case OpCode::kGe:
    case OpCode::kWhere:
    case OpCode::kNeg:
    case OpCode::kAbs:
    case OpCode::kExp:
    case OpCode::kLog:
    case OpCode::kSqrt:
    case OpCode::kRsqrt:
    case OpCode::kTanh:
    case OpCode::kSigmoid:
    case OpCode::kSin:
    case OpCode::kLog1p:
    case OpCode::kCast:
    // Layout, gathers and their adjoint.
    case OpCode::kTranspose:
    case OpCode::kReshape:
    case OpCode::kExpand:
    case OpCode::kConcat:
    case OpCode::kSlice:
    case OpCode::kGather:
    case OpCode::kScatterAdd:
    // Reductions, scans and composites.
    case OpCode::kReduceSum:
    case OpCode::kReduceMax:
    case OpCode::kReduceMean:
    case OpCode::kArgMin:
    case OpCode::kArgMax:
    case OpCode::kCumSum:
    case OpCode::kSoftmax:
    case OpCode::kRmsNorm:
    case OpCode::kLayerNorm:
    case OpCode::kSilu:
    case OpCode::kGeluTanh:
    case OpCode::kRope:
    case OpCode::kCrossEntropy:
    case OpCode::kCausalMask:
    case OpCode::kKvWrite:
      return FlopRule::kFree;
  }
  return FlopRule::kFree;
}

}  // namespace

ir::SymExpr NodeFlops(const ir::Graph& graph, ir::ValueId id) {
  const ir::Node& n = graph.node(id);
  if (RuleFor(n.op) == FlopRule::kFree) return 0;
  // The result is [batch.., M, N]: its element count is B*M*N, and K is the lhs's last dim.
  const ir::Shape& lhs = graph.type(n.operands[0]).shape;
  return 2 * ir::NumElements(n.type.shape) * lhs.back();
}

FlopCount CountFlops(const ir::Graph& graph) {
  FlopCount count;
  count.per_node.reserve(graph.num_nodes());
  for (ir::ValueId id = 0; id < graph.num_nodes(); ++id) {
    count.per_node.push_back(NodeFlops(graph, id));
    count.total = count.total + count.per_node.back();
  }
  return count;
}

}  // namespace graphjit::compiler
