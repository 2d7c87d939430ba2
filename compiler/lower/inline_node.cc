#include "compiler/lower/inline_node.h"

#include <cmath>
#include <optional>
#include <utility>

#include "compiler/lower/index_exprs.h"
#include "ir/check.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {

using ir::OpCode;
using ir::ValueId;

ExprPtr InlineNode(const ir::Graph& g, ValueId v, const std::vector<ExprPtr>& idx,
                   const std::vector<std::string>& symbols, ValueFn value) {
  const ir::Node& n = g.node(v);
  const ir::Shape& out = n.type.shape;
  auto sym = [&](const ir::SymExpr& e) { return SymToExpr(e, symbols); };
  auto operand = [&](int i, const std::vector<ExprPtr>& at) { return value(n.operands[i], at); };
  auto broadcast = [&](int i) {
    return operand(i, BroadcastIndex(g.type(n.operands[i]).shape, out, idx));
  };
  if (std::optional<ScalarOp> op = ScalarOpFor(n.op)) {  // the Pointwise ops
    if (IsUnary(*op)) return Op(*op, operand(0, idx));
    return Op(*op, broadcast(0), broadcast(1));
  }
  // Every other op by hand; the ones that never reach here have their case labels
  // generated from ir/ops.def, so a new Index op fails to compile (-Werror=switch)
  // until it has a case.
  switch (n.op) {
    case OpCode::kConstant: {
      // Constants of one element are inlined (larger ones are param buffers); a constant
      // of no elements is never read (every loop over it runs zero times).
      const auto& values = n.attrs.Get<std::vector<double>>("value");
      return ConstF(values.empty() ? 0.0 : values[0], n.type.dtype);
    }
    case OpCode::kFull:
      return ConstF(n.attrs.GetFloat("value"), n.type.dtype);
    case OpCode::kIota: {
      int64_t axis = n.attrs.GetInt("axis");
      if (axis < 0) axis += n.type.rank();
      return Cast(idx[axis], n.type.dtype);
    }
    case OpCode::kWhere:
      return Select(broadcast(0), broadcast(1), broadcast(2));
    case OpCode::kCast:
      return Cast(operand(0, idx), n.type.dtype);
    case OpCode::kTranspose: {
      const auto& perm = n.attrs.Get<std::vector<int64_t>>("perm");
      std::vector<ExprPtr> in(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) in[perm[i]] = idx[i];
      return operand(0, in);
    }
    case OpCode::kReshape:
      return operand(0, ReshapeIndex(g.type(n.operands[0]).shape, out, idx, symbols));
    case OpCode::kExpand:
      return broadcast(0);
    case OpCode::kSlice: {
      int axis = ir::ValueOrDie(ir::NormalizeAxis(n.attrs.GetInt("axis"), n.type.rank(), "slice"));
      std::vector<ExprPtr> in = idx;
      in[axis] = Op(ScalarOp::kAdd, idx[axis], sym(n.attrs.GetDim("start")));
      return operand(0, in);
    }
    case OpCode::kWindow:
      return operand(0, WindowIndex(idx, n.attrs.Get<std::vector<int64_t>>("kernel"),
                                    n.attrs.Get<std::vector<int64_t>>("strides"),
                                    n.attrs.Get<std::vector<int64_t>>("dilations")));
    case OpCode::kConcat: {
      int axis = ir::ValueOrDie(ir::NormalizeAxis(n.attrs.GetInt("axis"), n.type.rank(), "concat"));
      // Later pieces first, so the outermost select picks the first piece. Each piece's
      // index is clamped into range: select evaluates both arms, so every load must be
      // in bounds even where its value is discarded.
      ExprPtr result;
      ir::SymExpr offset = 0;
      std::vector<std::pair<ir::SymExpr, ValueId>> starts;
      for (ValueId p : n.operands) {
        starts.push_back({offset, p});
        offset = offset + g.type(p).shape[axis];
      }
      for (size_t i = starts.size(); i-- > 0;) {
        const ir::SymExpr& start = starts[i].first;
        ExprPtr size = sym(g.type(starts[i].second).shape[axis]);
        std::vector<ExprPtr> in = idx;
        ExprPtr local = Op(ScalarOp::kSub, idx[axis], sym(start));
        in[axis] = Op(ScalarOp::kMax,
                      Op(ScalarOp::kMin, local, Op(ScalarOp::kSub, size, ConstI(1))), ConstI(0));
        ExprPtr piece = value(starts[i].second, in);
        result = result == nullptr ? piece
                                   : Select(Op(ScalarOp::kLt, idx[axis],
                                               sym(start + g.type(starts[i].second).shape[axis])),
                                            piece, result);
      }
      return result;
    }
    case OpCode::kCausalMask: {
      size_t r = out.size();
      ir::SymExpr offset = out[r - 1] - out[r - 2];
      ExprPtr keep = Op(ScalarOp::kLe, idx[r - 1], Op(ScalarOp::kAdd, idx[r - 2], sym(offset)));
      return Select(keep, operand(0, idx), ConstF(-INFINITY, n.type.dtype));
    }
    case OpCode::kInput:
    case OpCode::kParam:  // always buffers
#define GJ_OP(name, spelling, min_arity, max_arity, schema, rule, lowering, ...) \
  GJ_NOT_INLINED_##lowering(name)
#define GJ_NOT_INLINED_Source(name)
#define GJ_NOT_INLINED_Index(name)
#define GJ_NOT_INLINED_IndexComposite(name)
#define GJ_NOT_INLINED_Pointwise(name) case OpCode::k##name:
#define GJ_NOT_INLINED_Kernel(name) case OpCode::k##name:
#define GJ_NOT_INLINED_Composite(name) case OpCode::k##name:
#define GJ_NOT_INLINED_Region(name) case OpCode::k##name:
#define GJ_NOT_INLINED_Runtime(name) case OpCode::k##name:
#include "ir/ops.def"
#undef GJ_OP
#undef GJ_NOT_INLINED_Source
#undef GJ_NOT_INLINED_Index
#undef GJ_NOT_INLINED_IndexComposite
#undef GJ_NOT_INLINED_Pointwise
#undef GJ_NOT_INLINED_Kernel
#undef GJ_NOT_INLINED_Composite
#undef GJ_NOT_INLINED_Region
#undef GJ_NOT_INLINED_Runtime
      break;
  }
  GJ_CHECK(false) << "no inline lowering for " << ir::OpName(n.op);
  return nullptr;
}

}  // namespace graphjit::compiler
