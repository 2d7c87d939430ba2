// Finite-difference checks of every gradient rule: for each differentiable op, the gradient
// graph's values (run in the interpreter, f64) against central differences of the loss
// sum(op(..) * r) with a random r, so every output element has its own weight.
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "compiler/autodiff/autodiff.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/printer.h"
#include "tests/compiler/autodiff/grad_check_util.h"

namespace graphjit::compiler {
namespace {

using ir::DType;
using ir::GraphBuilder;
using ir::OpCode;
using ir::Shape;
using ir::SymExpr;
using ir::ValueId;
using testutil::InputKind;

const SymExpr kS = SymExpr::Symbol("S");
const SymExpr kP = SymExpr::Symbol("P");

struct InputSpec {
  std::string name;
  DType dtype;
  Shape shape;
  InputKind kind = InputKind::kNormal;
  int64_t index_limit = 0;  // kIndex: values in [0, index_limit)
};

struct GradCase {
  std::string name;
  std::vector<OpCode> covers;
  std::vector<InputSpec> inputs;
  std::function<ValueId(GraphBuilder&, const std::vector<ValueId>&)> body;
  ir::Bindings bindings = {};  // symbols of the shapes (and attributes)
};

InputSpec F(std::string name, Shape shape, InputKind kind = InputKind::kNormal) {
  return {std::move(name), DType::kF64, std::move(shape), kind};
}
InputSpec Index(std::string name, Shape shape, int64_t limit) {
  return {std::move(name), DType::kI64, std::move(shape), InputKind::kIndex, limit};
}

ValueId Op(GraphBuilder& b, OpCode op, std::initializer_list<ValueId> in, ir::Attrs attrs = {}) {
  return b.Add(op, in, std::move(attrs));
}

std::vector<GradCase> Cases() {
  std::vector<GradCase> cases;
  // Elementwise binary ops with broadcasting on both sides: [2, 1, 3] with [4, 1].
  for (OpCode op : {OpCode::kAdd, OpCode::kSub, OpCode::kMul, OpCode::kMaximum, OpCode::kMinimum}) {
    cases.push_back({std::string(ir::OpName(op)),
                     {op},
                     {F("a", {2, 1, 3}), F("b", {4, 1})},
                     [op](GraphBuilder& b, const std::vector<ValueId>& in) {
                       return Op(b, op, {in[0], in[1]});
                     }});
  }
  cases.push_back({"div",
                   {OpCode::kDiv},
                   {F("a", {2, 1, 3}), F("b", {4, 1}, InputKind::kPositive)},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kDiv, {in[0], in[1]});
                   }});
  cases.push_back({"pow",
                   {OpCode::kPow},
                   {F("a", {3, 4}, InputKind::kPositive), F("b", {4})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kPow, {in[0], in[1]});
                   }});
  cases.push_back({"where",
                   {OpCode::kWhere, OpCode::kGt},
                   {F("c", {3, 4}), F("a", {3, 4}), F("b", {4})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     ValueId cond = Op(b, OpCode::kGt, {in[0], b.Scalar(0.0, DType::kF64)});
                     return Op(b, OpCode::kWhere, {cond, in[1], in[2]});
                   }});
  for (OpCode op : {OpCode::kNeg, OpCode::kAbs, OpCode::kExp, OpCode::kTanh, OpCode::kSigmoid,
                    OpCode::kSin, OpCode::kSilu, OpCode::kGeluTanh}) {
    cases.push_back(
        {std::string(ir::OpName(op)),
         {op},
         {F("x", {3, 4})},
         [op](GraphBuilder& b, const std::vector<ValueId>& in) { return Op(b, op, {in[0]}); }});
  }
  for (OpCode op : {OpCode::kLog, OpCode::kLog1p, OpCode::kSqrt, OpCode::kRsqrt}) {
    cases.push_back(
        {std::string(ir::OpName(op)),
         {op},
         {F("x", {3, 4}, InputKind::kPositive)},
         [op](GraphBuilder& b, const std::vector<ValueId>& in) { return Op(b, op, {in[0]}); }});
  }
  // x * float(int(3x)): the integer path carries no gradient, so d/dx = float(int(3x)).
  cases.push_back({"cast",
                   {OpCode::kCast},
                   {F("x", {3, 4})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     ValueId x3 = Op(b, OpCode::kMul, {in[0], b.Scalar(3.0, DType::kF64)});
                     ValueId i = Op(b, OpCode::kCast, {x3}, {{"dtype", DType::kI64}});
                     ValueId f = Op(b, OpCode::kCast, {i}, {{"dtype", DType::kF64}});
                     ValueId same = Op(b, OpCode::kCast, {in[0]}, {{"dtype", DType::kF64}});
                     return Op(b, OpCode::kMul, {same, f});
                   }});
  struct MatmulShapes {
    const char* name;
    Shape a, b;
  };
  for (const MatmulShapes& m :
       {MatmulShapes{"matmul", {3, 4}, {4, 2}}, MatmulShapes{"matmul_weight", {2, 3, 4}, {4, 5}},
        MatmulShapes{"matmul_batched_rhs", {3, 4}, {2, 4, 5}},
        MatmulShapes{"matmul_broadcast", {2, 1, 3, 4}, {5, 4, 2}}}) {
    cases.push_back({m.name,
                     {OpCode::kMatmul},
                     {F("a", m.a), F("b", m.b)},
                     [](GraphBuilder& b, const std::vector<ValueId>& in) {
                       return Op(b, OpCode::kMatmul, {in[0], in[1]});
                     }});
  }
  cases.push_back({"transpose",
                   {OpCode::kTranspose},
                   {F("x", {2, 3, 4})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kTranspose, {in[0]},
                               {{"perm", std::vector<int64_t>{2, 0, 1}}});
                   }});
  cases.push_back({"reshape",
                   {OpCode::kReshape},
                   {F("x", {2, 3, 4})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kReshape, {in[0]}, {{"shape", Shape{4, 6}}});
                   }});
  cases.push_back({"expand",
                   {OpCode::kExpand},
                   {F("x", {3, 1})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kExpand, {in[0]}, {{"shape", Shape{2, 3, 4}}});
                   }});
  cases.push_back({"concat",
                   {OpCode::kConcat},
                   {F("a", {2, 3}), F("b", {2, 1}), F("c", {2, 2})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return b.Add(OpCode::kConcat, {in[0], in[1], in[2]}, {{"axis", int64_t{-1}}});
                   }});
  for (auto [start, end] : {std::pair<int64_t, int64_t>{1, 3}, {0, 2}, {2, 5}}) {
    cases.push_back(
        {absl::StrCat("slice_", start, "_", end),
         {OpCode::kSlice},
         {F("x", {4, 5})},
         [start, end](GraphBuilder& b, const std::vector<ValueId>& in) {
           return Op(b, OpCode::kSlice, {in[0]},
                     {{"axis", int64_t{1}}, {"start", SymExpr(start)}, {"end", SymExpr(end)}});
         }});
  }
  cases.push_back({"slice_symbolic",
                   {OpCode::kSlice},
                   {F("x", {2, kS})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kSlice, {in[0]},
                               {{"axis", int64_t{1}}, {"start", kP}, {"end", kS}});
                   },
                   {{"S", 5}, {"P", 2}}});
  // Overlapping windows (stride < span) sum their gradients; a stride past the span skips
  // elements, whose gradient is 0.
  cases.push_back({"window_overlapping",
                   {OpCode::kWindow},
                   {F("x", {2, 7, 6})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kWindow, {in[0]},
                               {{"kernel", std::vector<int64_t>{3, 2}},
                                {"strides", std::vector<int64_t>{2, 1}},
                                {"dilations", std::vector<int64_t>{1, 2}}});
                   }});
  cases.push_back({"window_sparse",
                   {OpCode::kWindow},
                   {F("x", {9})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kWindow, {in[0]},
                               {{"kernel", std::vector<int64_t>{2}},
                                {"strides", std::vector<int64_t>{4}},
                                {"dilations", std::vector<int64_t>{1}}});
                   }});
  // Few rows, many indices: repeated rows must sum their gradients.
  cases.push_back({"gather",
                   {OpCode::kGather},
                   {F("table", {3, 2}), Index("idx", {2, 4}, 3)},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kGather, {in[0], in[1]});
                   }});
  cases.push_back({"scatter_add",
                   {OpCode::kScatterAdd},
                   {F("base", {3, 2}), Index("idx", {5}, 3), F("upd", {5, 2})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kScatterAdd, {in[0], in[1], in[2]});
                   }});
  cases.push_back({"reduce_sum",
                   {OpCode::kReduceSum},
                   {F("x", {2, 3, 4})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kReduceSum, {in[0]},
                               {{"axis", int64_t{1}}, {"keepdim", false}});
                   }});
  cases.push_back({"reduce_mean",
                   {OpCode::kReduceMean},
                   {F("x", {2, 3, 4})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kReduceMean, {in[0]},
                               {{"axis", int64_t{0}}, {"keepdim", true}});
                   }});
  cases.push_back({"reduce_mean_symbolic",
                   {OpCode::kReduceMean},
                   {F("x", {kS, 3})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kReduceMean, {in[0]},
                               {{"axis", int64_t{0}}, {"keepdim", false}});
                   },
                   {{"S", 4}}});
  cases.push_back({"reduce_max",
                   {OpCode::kReduceMax},
                   {F("x", {2, 3, 4})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kReduceMax, {in[0]},
                               {{"axis", int64_t{-1}}, {"keepdim", false}});
                   }});
  // An index path carries no gradient, the value it selects does: x[argmax(x)] * x.
  cases.push_back({"gather_at_argmax",
                   {OpCode::kArgMax},
                   {F("x", {6})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     ValueId i =
                         Op(b, OpCode::kArgMax, {in[0]}, {{"axis", int64_t{0}}, {"keepdim", true}});
                     return Op(b, OpCode::kMul, {Op(b, OpCode::kGather, {in[0], i}), in[0]});
                   }});
  for (int64_t axis : {0, 1, -1}) {
    cases.push_back({absl::StrCat("cumsum", axis),
                     {OpCode::kCumSum},
                     {F("x", {3, 4, 5})},
                     [axis](GraphBuilder& b, const std::vector<ValueId>& in) {
                       return Op(b, OpCode::kCumSum, {in[0]}, {{"axis", axis}});
                     }});
  }
  for (int64_t axis : {0, -1}) {
    cases.push_back({absl::StrCat("softmax", axis),
                     {OpCode::kSoftmax},
                     {F("x", {3, 5})},
                     [axis](GraphBuilder& b, const std::vector<ValueId>& in) {
                       return Op(b, OpCode::kSoftmax, {in[0]}, {{"axis", axis}});
                     }});
  }
  cases.push_back({"rmsnorm",
                   {OpCode::kRmsNorm},
                   {F("x", {3, 6}), F("w", {6})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kRmsNorm, {in[0], in[1]}, {{"eps", 1e-5}});
                   }});
  cases.push_back({"rmsnorm_unweighted",
                   {OpCode::kRmsNorm},
                   {F("x", {2, 2, 6})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kRmsNorm, {in[0]}, {{"eps", 1e-6}});
                   }});
  cases.push_back({"layernorm",
                   {OpCode::kLayerNorm},
                   {F("x", {2, 3, 6}), F("w", {6}), F("b", {6})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kLayerNorm, {in[0], in[1], in[2]}, {{"eps", 1e-5}});
                   }});
  // Tables that differ between the halves, so a rule that assumed RoPE's usual equal halves
  // would fail; and a broadcast cos.
  cases.push_back({"rope",
                   {OpCode::kRope},
                   {F("x", {2, 3, 8}), F("cos", {3, 8}), F("sin", {3, 8})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kRope, {in[0], in[1], in[2]});
                   }});
  cases.push_back({"rope_broadcast",
                   {OpCode::kRope},
                   {F("x", {2, 3, 4}), F("cos", {1, 4}), F("sin", {3, 1})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kRope, {in[0], in[1], in[2]});
                   }});
  cases.push_back({"cross_entropy",
                   {OpCode::kCrossEntropy},
                   {F("logits", {2, 3, 5}), Index("t", {2, 3}, 5)},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kCrossEntropy, {in[0], in[1]});
                   }});
  // exp(-inf) = 0 keeps the loss finite where the mask writes -inf.
  for (const Shape& s : {Shape{2, 4, 4}, Shape{2, 3, 5}, Shape{2, kS, kS + 1}}) {
    cases.push_back({absl::StrCat("causal_mask", ir::ShapeToString(s)),
                     {OpCode::kCausalMask},
                     {F("x", s)},
                     [](GraphBuilder& b, const std::vector<ValueId>& in) {
                       return Op(b, OpCode::kExp, {Op(b, OpCode::kCausalMask, {in[0]})});
                     },
                     {{"S", 3}}});
  }
  cases.push_back({"kv_write",
                   {OpCode::kKvWrite},
                   {F("cache", {2, 5, 3}), F("rows", {2, 2, 3})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kKvWrite, {in[0], in[1]}, {{"pos", SymExpr(1)}});
                   }});
  cases.push_back({"kv_write_symbolic",
                   {OpCode::kKvWrite},
                   {F("cache", {2, kS, 3}), F("rows", {2, 1, 3})},
                   [](GraphBuilder& b, const std::vector<ValueId>& in) {
                     return Op(b, OpCode::kKvWrite, {in[0], in[1]}, {{"pos", kP}});
                   },
                   {{"S", 4}, {"P", 2}}});
  return cases;
}

// Ops with Grad = None in ir/ops.def carry no gradient (sources, comparisons, the
// index-valued argmin / argmax, piecewise-constant functions); every other op needs a
// gradient check here.
TEST(GradCheck, EveryOpHasAGradientCheckOrIsNotDifferentiable) {
  std::set<OpCode> covered;
  for (const GradCase& c : Cases()) covered.insert(c.covers.begin(), c.covers.end());
  for (int i = 0; i < ir::kNumOps; ++i) {
    const auto op = static_cast<OpCode>(i);
    EXPECT_TRUE(covered.contains(op) || !ir::HasGradient(op))
        << "no gradient check for '" << ir::OpName(op) << "'";
  }
  // The table's None is meant: inputs, comparisons and argmax are among those ops.
  for (OpCode op : {OpCode::kInput, OpCode::kEq, OpCode::kArgMax}) {
    EXPECT_FALSE(ir::HasGradient(op)) << ir::OpName(op);
  }
  EXPECT_TRUE(ir::HasGradient(OpCode::kMatmul));
}

TEST(GradCheck, EveryRuleMatchesCentralDifferences) {
  std::mt19937_64 rng(7);
  for (const GradCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    GraphBuilder b(c.name);
    std::vector<ValueId> ins;
    std::vector<std::string> wrt;
    for (const InputSpec& s : c.inputs) {
      ins.push_back(b.Input(s.name, s.dtype, s.shape));
      if (ir::IsFloat(s.dtype)) wrt.push_back(s.name);
    }
    ValueId out = c.body(b, ins);
    ASSERT_TRUE(b.status().ok()) << b.status();
    // loss = sum(out * r): r weights each output element differently.
    const ir::ValueType out_type = b.type(out);
    ValueId r = b.Input("r", DType::kF64, out_type.shape);
    ValueId loss = Op(b, OpCode::kMul, {out, r});
    for (int i = 0; i < out_type.rank(); ++i) {
      loss = Op(b, OpCode::kReduceSum, {loss}, {{"axis", int64_t{0}}, {"keepdim", false}});
    }
    b.Output(loss);
    absl::StatusOr<ir::Graph> forward = std::move(b).Build();
    ASSERT_TRUE(forward.ok()) << forward.status();

    runtime::TensorMap inputs;
    for (const InputSpec& s : c.inputs) {
      inputs[s.name] =
          testutil::RandomTensor(rng, s.dtype, s.shape, c.bindings, s.kind, s.index_limit);
    }
    inputs["r"] =
        testutil::RandomTensor(rng, DType::kF64, out_type.shape, c.bindings, InputKind::kNormal, 0);
    testutil::GradCheckResult result =
        testutil::CheckGradients(*forward, wrt, inputs, {}, c.bindings);
    ASSERT_TRUE(result.status.ok()) << result.status;
    EXPECT_GT(result.checked, 0);
    EXPECT_LT(result.max_error, 1e-7) << "worst: " << result.worst;
    std::printf("%-28s %4d elements, max error %.1e\n", c.name.c_str(), result.checked,
                result.max_error);
  }
}

}  // namespace
}  // namespace graphjit::compiler
