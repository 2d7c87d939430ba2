#include "compiler/passes/decompose.h"

#include <cmath>

#include "compiler/passes/rewriter.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

using ir::Attrs;
using ir::OpCode;

// Emits the expansion of one composite node; returns kInvalidValue if it has none.
class Expander {
 public:
  Expander(GraphRewriter& rw, const ir::Node& n) : rw_(rw), n_(n), dt_(n.type.dtype) {}

  ValueId Expand() {
    switch (n_.op) {
      case OpCode::kSoftmax:
        return Softmax(In(0), n_.attrs.GetInt("axis"));
      case OpCode::kRmsNorm:
        return RmsNorm();
      case OpCode::kLayerNorm:
        return LayerNorm();
      case OpCode::kSilu:
        // silu(z) = z / (1 + exp(-z)), as the spec writes it.
        return Bin(OpCode::kDiv, In(0),
                   Bin(OpCode::kAdd, S(1.0), Un(OpCode::kExp, Un(OpCode::kNeg, In(0)))));
      case OpCode::kGeluTanh:
        return GeluTanh();
      case OpCode::kRope:
        return Rope();
      case OpCode::kCrossEntropy:
        return CrossEntropy();
      case OpCode::kCausalMask:
        return CausalMask();
      case OpCode::kScatterAdd:
        return ScatterAdd();
        // The primitives: case labels generated from ir/ops.def, so that an op marked
        // Composite there fails to compile (-Werror=switch) until it has an expansion here.
#define GJ_OP(name, spelling, min_arity, max_arity, schema, rule, lowering, ...) \
  GJ_PRIMITIVE_##lowering(name)
#define GJ_PRIMITIVE_Composite(name)
#define GJ_PRIMITIVE_IndexComposite(name)
#define GJ_PRIMITIVE_Source(name) case OpCode::k##name:
#define GJ_PRIMITIVE_Pointwise(name) case OpCode::k##name:
#define GJ_PRIMITIVE_Index(name) case OpCode::k##name:
#define GJ_PRIMITIVE_Kernel(name) case OpCode::k##name:
#define GJ_PRIMITIVE_Region(name) case OpCode::k##name:
#define GJ_PRIMITIVE_Runtime(name) case OpCode::k##name:
#include "ir/ops.def"
#undef GJ_OP
#undef GJ_PRIMITIVE_Composite
#undef GJ_PRIMITIVE_IndexComposite
#undef GJ_PRIMITIVE_Source
#undef GJ_PRIMITIVE_Pointwise
#undef GJ_PRIMITIVE_Index
#undef GJ_PRIMITIVE_Kernel
#undef GJ_PRIMITIVE_Region
#undef GJ_PRIMITIVE_Runtime
        return ir::kInvalidValue;
    }
    return ir::kInvalidValue;
  }

 private:
  ValueId In(int i) const { return rw_.Get(n_.operands[i]); }
  ValueId S(double v) { return rw_.Scalar(v, dt_); }
  ValueId Un(OpCode op, ValueId x) { return rw_.Emit(op, {x}); }
  ValueId Bin(OpCode op, ValueId a, ValueId b) { return rw_.Emit(op, {a, b}); }
  ValueId Reduce(OpCode op, ValueId x, int64_t axis) {
    return rw_.Emit(op, {x}, Attrs{{"axis", axis}, {"keepdim", true}});
  }
  // Norm statistics are computed in the accumulation type, as the interpreter's kernels
  // do (docs/OPS.md): f64 for f32, whose squares overflow above 1.8e19. Widen casts into
  // it, Narrow back to the op's dtype; both are no-ops for f64.
  ir::DType Acc() const { return dt_ == ir::DType::kF32 ? ir::DType::kF64 : dt_; }
  ValueId Cast(ValueId x, ir::DType to) {
    return rw_.Emit(OpCode::kCast, {x}, Attrs{{"dtype", to}});
  }
  ValueId Widen(ValueId x) { return Acc() == dt_ ? x : Cast(x, Acc()); }
  ValueId Narrow(ValueId x) { return Acc() == dt_ ? x : Cast(x, dt_); }
  ValueId AccScalar(double v) { return rw_.Scalar(v, Acc()); }

  ValueId Softmax(ValueId x, int64_t axis) {
    ValueId e = Un(OpCode::kExp, Bin(OpCode::kSub, x, Reduce(OpCode::kReduceMax, x, axis)));
    return Bin(OpCode::kDiv, e, Reduce(OpCode::kReduceSum, e, axis));
  }

  // x * rsqrt(mean(x*x) + eps), then * w: the weight multiply stays the last op so that
  // fold_norm_weight can move it into the following matmuls.
  ValueId RmsNorm() {
    ValueId x = In(0);
    ValueId wide = Widen(x);
    ValueId ms = Reduce(OpCode::kReduceMean, Bin(OpCode::kMul, wide, wide), -1);
    ValueId r =
        Narrow(Un(OpCode::kRsqrt, Bin(OpCode::kAdd, ms, AccScalar(n_.attrs.GetFloat("eps")))));
    ValueId normed = Bin(OpCode::kMul, x, r);
    return n_.operands.size() > 1 ? Bin(OpCode::kMul, normed, In(1)) : normed;
  }

  ValueId LayerNorm() {
    ValueId x = In(0);
    ValueId wide = Widen(x);
    ValueId mean = Reduce(OpCode::kReduceMean, wide, -1);
    ValueId wide_xc = Bin(OpCode::kSub, wide, mean);
    ValueId var = Reduce(OpCode::kReduceMean, Bin(OpCode::kMul, wide_xc, wide_xc), -1);
    ValueId r =
        Narrow(Un(OpCode::kRsqrt, Bin(OpCode::kAdd, var, AccScalar(n_.attrs.GetFloat("eps")))));
    // x - mean in the op's dtype, as the interpreter: the mean rounded to it first.
    ValueId xc = Acc() == dt_ ? wide_xc : Bin(OpCode::kSub, x, Narrow(mean));
    return Bin(OpCode::kAdd, Bin(OpCode::kMul, Bin(OpCode::kMul, xc, r), In(1)), In(2));
  }

  ValueId GeluTanh() {
    ValueId x = In(0);
    ValueId cube = Bin(OpCode::kMul, Bin(OpCode::kMul, x, x), x);
    ValueId inner = Bin(OpCode::kMul, S(std::sqrt(2.0 / M_PI)),
                        Bin(OpCode::kAdd, x, Bin(OpCode::kMul, S(0.044715), cube)));
    ValueId t = Bin(OpCode::kAdd, S(1.0), Un(OpCode::kTanh, inner));
    return Bin(OpCode::kMul, Bin(OpCode::kMul, S(0.5), x), t);
  }

  // x * cos + rotate_half(x) * sin, rotate_half([a, b]) = [-b, a].
  ValueId Rope() {
    ValueId x = In(0);
    int64_t d = *n_.type.shape.back().AsConstant();
    auto half = [&](int64_t start) {
      return rw_.Emit(OpCode::kSlice, {x},
                      Attrs{{"axis", int64_t{-1}},
                            {"start", ir::SymExpr(start)},
                            {"end", ir::SymExpr(start + d / 2)}});
    };
    ValueId rot = rw_.Emit(OpCode::kConcat, {Un(OpCode::kNeg, half(d / 2)), half(0)},
                           Attrs{{"axis", int64_t{-1}}});
    return Bin(OpCode::kAdd, Bin(OpCode::kMul, x, In(1)), Bin(OpCode::kMul, rot, In(2)));
  }

  // mean over rows of logsumexp(row) - row[target], with the row max subtracted before exp;
  // the target logit is picked with a one-hot `where` (not a multiply, so a -inf logit
  // elsewhere in the row cannot turn into NaN).
  ValueId CrossEntropy() {
    ValueId logits = In(0);
    const ir::Shape shape = rw_.type(logits).shape;  // a copy: emitting nodes may move it
    int64_t last = static_cast<int64_t>(shape.size()) - 1;
    ValueId m = Reduce(OpCode::kReduceMax, logits, -1);
    ValueId sum = Reduce(OpCode::kReduceSum, Un(OpCode::kExp, Bin(OpCode::kSub, logits, m)), -1);
    ValueId lse = Bin(OpCode::kAdd, Un(OpCode::kLog, sum), m);
    ir::Shape target_shape = rw_.type(In(1)).shape;
    target_shape.push_back(1);
    ValueId targets = rw_.Emit(OpCode::kReshape, {In(1)}, Attrs{{"shape", target_shape}});
    ValueId column = rw_.Emit(OpCode::kIota, {},
                              Attrs{{"dtype", ir::DType::kI64}, {"shape", shape}, {"axis", last}});
    ValueId hot = Bin(OpCode::kEq, column, targets);
    ValueId picked =
        Reduce(OpCode::kReduceSum, rw_.Emit(OpCode::kWhere, {hot, logits, S(0.0)}), -1);
    ValueId per_row = Bin(OpCode::kSub, lse, picked);
    ValueId flat = rw_.Emit(OpCode::kReshape, {per_row},
                            Attrs{{"shape", ir::Shape{ir::NumElements(rw_.type(per_row).shape)}}});
    return rw_.Emit(OpCode::kReduceMean, {flat}, Attrs{{"axis", int64_t{0}}, {"keepdim", false}});
  }

  // s where j <= i + (U - T), -inf elsewhere; needs U - T constant.
  ValueId CausalMask() {
    const ir::Shape& shape = n_.type.shape;
    const ir::SymExpr& T = shape[shape.size() - 2];
    const ir::SymExpr& U = shape.back();
    std::optional<int64_t> offset = (U - T).AsConstant();
    if (!offset) return ir::kInvalidValue;
    ir::Shape square = {T, U};
    auto iota = [&](int64_t axis) {
      return rw_.Emit(OpCode::kIota, {},
                      Attrs{{"dtype", ir::DType::kI64}, {"shape", square}, {"axis", axis}});
    };
    ValueId row = iota(0);
    if (*offset != 0) row = Bin(OpCode::kAdd, row, rw_.Scalar(*offset, ir::DType::kI64));
    ValueId keep = Bin(OpCode::kLe, iota(1), row);
    return rw_.Emit(OpCode::kWhere, {keep, In(0), S(-INFINITY)});
  }

  // table + reduce_sum over n of where(idx[n] == v, updates[n, ..], 0): a one-hot sum with
  // V x N x row work rather than N x row, but it fuses into one reduce kernel of existing
  // ops (the kernel IR has no accumulating store). An out-of-range index matches no row.
  ValueId ScatterAdd() {
    const ir::Shape table = rw_.type(In(0)).shape;  // copies: emitting nodes may move them
    const ir::Shape idx = rw_.type(In(1)).shape;
    const ir::SymExpr n = ir::NumElements(idx);
    const ir::Shape row(table.begin() + 1, table.end());
    ValueId flat = rw_.Emit(OpCode::kReshape, {In(1)}, Attrs{{"shape", ir::Shape{1, n}}});
    ValueId rows = rw_.Emit(
        OpCode::kIota, {},
        Attrs{{"dtype", ir::DType::kI64}, {"shape", ir::Shape{table[0], n}}, {"axis", int64_t{0}}});
    ir::Shape hit_shape = {table[0], n};
    hit_shape.resize(2 + row.size(), 1);
    ValueId hit =
        rw_.Emit(OpCode::kReshape, {Bin(OpCode::kEq, rows, flat)}, Attrs{{"shape", hit_shape}});
    ir::Shape update_shape = {1, n};
    update_shape.insert(update_shape.end(), row.begin(), row.end());
    ValueId updates = rw_.Emit(OpCode::kReshape, {In(2)}, Attrs{{"shape", update_shape}});
    ValueId picked = rw_.Emit(OpCode::kWhere, {hit, updates, S(0.0)});
    ValueId summed =
        rw_.Emit(OpCode::kReduceSum, {picked}, Attrs{{"axis", int64_t{1}}, {"keepdim", false}});
    return Bin(OpCode::kAdd, In(0), summed);
  }

  GraphRewriter& rw_;
  const ir::Node& n_;
  ir::DType dt_;
};

}  // namespace

absl::StatusOr<bool> Decompose(ir::Graph* graph) {
  GraphRewriter rw(*graph);
  bool changed = false;
  for (ValueId id = 0; id < graph->num_nodes(); ++id) {
    ValueId expanded = Expander(rw, graph->node(id)).Expand();
    if (expanded == ir::kInvalidValue) {
      rw.Copy(id);
    } else {
      rw.Map(id, expanded);
      changed = true;
    }
  }
  GJ_ASSIGN_OR_RETURN(*graph, std::move(rw).Finish());
  return changed;
}

}  // namespace graphjit::compiler
