#include "compiler/passes/simplify.h"

#include "compiler/passes/rewriter.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

using ir::OpCode;

class Simplifier {
 public:
  explicit Simplifier(GraphRewriter& rw) : rw_(rw) {}

  // The simplified value for source node `n` (operands already rewritten), or
  // kInvalidValue to copy it unchanged.
  ValueId Simplify(const ir::Node& n) {
    std::vector<ValueId> in;
    for (ValueId v : n.operands) in.push_back(rw_.Get(v));
    switch (n.op) {
      case OpCode::kAdd:
        if (IsScalar(in[1], 0.0) && SameType(in[0], n)) return in[0];
        if (IsScalar(in[0], 0.0) && SameType(in[1], n)) return in[1];
        break;
      case OpCode::kSub:
        if (IsScalar(in[1], 0.0) && SameType(in[0], n)) return in[0];
        // x - x is 0 only on i64: on floats inf - inf and nan - nan are nan.
        if (in[0] == in[1] && n.type.dtype == ir::DType::kI64) {
          return rw_.Emit(
              OpCode::kFull, std::vector<ValueId>{},
              ir::Attrs{{"value", 0.0}, {"dtype", n.type.dtype}, {"shape", n.type.shape}});
        }
        break;
      case OpCode::kMul:
        if (IsScalar(in[1], 1.0) && SameType(in[0], n)) return in[0];
        if (IsScalar(in[0], 1.0) && SameType(in[1], n)) return in[1];
        break;
      case OpCode::kDiv: {
        if (IsScalar(in[1], 1.0) && SameType(in[0], n)) return in[0];
        std::optional<double> c = Scalar(in[1]);
        if (c && *c != 0.0 && ir::IsFloat(n.type.dtype) && rw_.type(in[1]).rank() == 0) {
          return rw_.Emit(OpCode::kMul, {in[0], rw_.Scalar(1.0 / *c, n.type.dtype)});
        }
        break;
      }
      // Checks whose dims are already what they assert (a constant multiple, one count).
      case OpCode::kFactorDim:
      case OpCode::kAssertDim:
        if (SameType(in[0], n)) return in[0];
        break;
      case OpCode::kNeg:
        if (Producer(in[0]).op == OpCode::kNeg) return Producer(in[0]).operands[0];
        break;
      case OpCode::kExp:
        if (Producer(in[0]).op == OpCode::kLog) {
          ValueId x = Producer(in[0]).operands[0];
          if (KnownNonNegative(x)) return x;
        }
        break;
      case OpCode::kReshape: {
        ValueId x = in[0];
        if (Producer(x).op == OpCode::kReshape) x = Producer(x).operands[0];
        if (rw_.type(x).shape == n.type.shape) return x;
        if (x != in[0]) return rw_.Emit(OpCode::kReshape, {x}, n.attrs);
        break;
      }
      case OpCode::kTranspose: {
        ValueId x = in[0];
        std::vector<int64_t> perm = n.attrs.Get<std::vector<int64_t>>("perm");
        if (Producer(x).op == OpCode::kTranspose) {
          // out[i] = mid[perm[i]] and mid[j] = x[inner[j]]: out[i] = x[inner[perm[i]]].
          const auto& inner = Producer(x).attrs.Get<std::vector<int64_t>>("perm");
          for (int64_t& p : perm) p = inner[p];
          x = Producer(x).operands[0];
        }
        bool identity = true;
        for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
        if (identity) return x;
        if (x != in[0]) return rw_.Emit(OpCode::kTranspose, {x}, ir::Attrs{{"perm", perm}});
        break;
      }
      default:
        break;
    }
    return ir::kInvalidValue;
  }

 private:
  const ir::Node& Producer(ValueId id) const { return rw_.graph().node(id); }
  std::optional<double> Scalar(ValueId id) const { return ScalarConstantValue(rw_.graph(), id); }
  bool IsScalar(ValueId id, double v) const {
    std::optional<double> c = Scalar(id);
    return c.has_value() && *c == v;
  }
  bool SameType(ValueId id, const ir::Node& n) const { return rw_.type(id) == n.type; }

  bool KnownNonNegative(ValueId id) const {
    const ir::Node& p = Producer(id);
    switch (p.op) {
      case OpCode::kExp:
      case OpCode::kSigmoid:
      case OpCode::kSqrt:
      case OpCode::kRsqrt:
      case OpCode::kAbs:
      case OpCode::kSoftmax:
        return true;
      case OpCode::kConstant: {
        for (double v : p.attrs.Get<std::vector<double>>("value")) {
          if (!(v >= 0.0)) return false;
        }
        return true;
      }
      case OpCode::kFull:
        return p.attrs.GetFloat("value") >= 0.0;
      default:
        return false;
    }
  }

  GraphRewriter& rw_;
};

}  // namespace

absl::StatusOr<bool> Simplify(ir::Graph* graph) {
  GraphRewriter rw(*graph);
  Simplifier simplifier(rw);
  bool changed = false;
  for (ValueId id = 0; id < graph->num_nodes(); ++id) {
    ValueId v = simplifier.Simplify(graph->node(id));
    if (v == ir::kInvalidValue) {
      rw.Copy(id);
    } else {
      rw.Map(id, v);
      changed = true;
    }
  }
  GJ_ASSIGN_OR_RETURN(*graph, std::move(rw).Finish());
  return changed;
}

}  // namespace graphjit::compiler
