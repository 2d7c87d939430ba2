#include "compiler/passes/decompose.h"

#include <cmath>
#include <functional>
#include <random>

#include "gtest/gtest.h"
#include "ir/builder.h"
#include "pass_test_util.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {
namespace {

using ir::DType;
using ir::OpCode;
using ir::SymExpr;
using runtime::Tensor;
using testing::RunPassOnText;

TEST(Decompose, SoftmaxSubtractsTheRowMax) {
  absl::StatusOr<std::string> out = RunPassOnText("decompose", R"(graph g {
  %0 = input {name="x"} : f32[4, S]
  %1 = softmax(%0) {axis=-1} : f32[4, S]
  return %1
})");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"(graph g {
  %0 = input {name="x"} : f32[4, S]
  %1 = reduce_max(%0) {axis=-1, keepdim=true} : f32[4, 1]
  %2 = sub(%0, %1) : f32[4, S]
  %3 = exp(%2) : f32[4, S]
  %4 = reduce_sum(%3) {axis=-1, keepdim=true} : f32[4, 1]
  %5 = div(%3, %4) : f32[4, S]
  return %5
}
)");
}

TEST(Decompose, RmsNormKeepsTheWeightMultiplyLast) {
  absl::StatusOr<std::string> out = RunPassOnText("decompose", R"(graph g {
  %0 = input {name="x"} : f64[1, 8]
  %1 = param {name="w"} : f64[8]
  %2 = rmsnorm(%0, %1) {eps=1e-06} : f64[1, 8]
  return %2
})");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"(graph g {
  %0 = input {name="x"} : f64[1, 8]
  %1 = param {name="w"} : f64[8]
  %2 = mul(%0, %0) : f64[1, 8]
  %3 = reduce_mean(%2) {axis=-1, keepdim=true} : f64[1, 1]
  %4 = constant {value=[1e-06]} : f64[]
  %5 = add(%3, %4) : f64[1, 1]
  %6 = rsqrt(%5) : f64[1, 1]
  %7 = mul(%0, %6) : f64[1, 8]
  %8 = mul(%7, %1) : f64[1, 8]
  return %8
}
)");
}

TEST(Decompose, DoesNotFireOnPrimitivesOrAnUnknownMaskOffset) {
  // causal_mask over [T, S] with S - T unknown has no fixed diagonal: it stays composite.
  const std::string text = R"(graph g {
  %0 = input {name="s"} : f64[2, T, S]
  %1 = causal_mask(%0) : f64[2, T, S]
  %2 = exp(%1) : f64[2, T, S]
  return %2
}
)";
  bool changed = true;
  absl::StatusOr<std::string> out = RunPassOnText("decompose", text, nullptr, &changed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(changed);
  EXPECT_EQ(*out, text);
}

// Every composite: the decomposed graph computes what the composite kernel computes.
struct Case {
  const char* name;
  std::function<ir::ValueId(ir::GraphBuilder&, DType)> build;
};

TEST(Decompose, ExpansionsMatchTheCompositeKernels) {
  auto in = [](ir::GraphBuilder& b, const char* name, DType dt, ir::Shape s) {
    return b.Input(name, dt, std::move(s));
  };
  std::vector<Case> cases = {
      {"softmax",
       [&](ir::GraphBuilder& b, DType dt) {
         return b.Add(OpCode::kSoftmax, {in(b, "x", dt, {3, 5, 7})}, {{"axis", int64_t{1}}});
       }},
      {"rmsnorm",
       [&](ir::GraphBuilder& b, DType dt) {
         return b.Add(OpCode::kRmsNorm, {in(b, "x", dt, {3, 8}), in(b, "w", dt, {8})},
                      {{"eps", 1e-6}});
       }},
      {"rmsnorm_unweighted",
       [&](ir::GraphBuilder& b, DType dt) {
         return b.Add(OpCode::kRmsNorm, {in(b, "x", dt, {3, 8})}, {{"eps", 1e-5}});
       }},
      {"layernorm",
       [&](ir::GraphBuilder& b, DType dt) {
         return b.Add(OpCode::kLayerNorm,
                      {in(b, "x", dt, {2, 3, 8}), in(b, "w", dt, {8}), in(b, "b", dt, {8})},
                      {{"eps", 1e-5}});
       }},
      {"silu", [&](ir::GraphBuilder& b,
                   DType dt) { return b.Add(OpCode::kSilu, {in(b, "x", dt, {4, 9})}); }},
      {"gelu_tanh", [&](ir::GraphBuilder& b,
                        DType dt) { return b.Add(OpCode::kGeluTanh, {in(b, "x", dt, {4, 9})}); }},
      {"rope",
       [&](ir::GraphBuilder& b, DType dt) {
         return b.Add(OpCode::kRope, {in(b, "x", dt, {8, 1, 16}), in(b, "c", dt, {1, 1, 16}),
                                      in(b, "s", dt, {1, 1, 16})});
       }},
      {"causal_mask",
       [&](ir::GraphBuilder& b, DType dt) {
         return b.Add(OpCode::kCausalMask, {in(b, "x", dt, {2, 5, 5})});
       }},
      {"causal_mask_offset",
       [&](ir::GraphBuilder& b, DType dt) {
         return b.Add(OpCode::kCausalMask, {in(b, "x", dt, {2, 3, 6})});
       }},
      {"cross_entropy",
       [&](ir::GraphBuilder& b, DType dt) {
         return b.Add(OpCode::kCrossEntropy,
                      {in(b, "x", dt, {2, 4, 11}), in(b, "t", DType::kI64, {2, 4})});
       }},
      {"scatter_add",
       [&](ir::GraphBuilder& b, DType dt) {
         return b.Add(
             OpCode::kScatterAdd,
             {in(b, "x", dt, {11, 3}), in(b, "t", DType::kI64, {2, 4}), in(b, "u", dt, {2, 4, 3})});
       }},
  };
  std::mt19937_64 rng(42);
  std::normal_distribution<double> normal;
  for (DType dt : {DType::kF64, DType::kF32}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.name) + " " + std::string(ir::DTypeName(dt)));
      ir::GraphBuilder b(c.name);
      b.Output(c.build(b, dt));
      absl::StatusOr<ir::Graph> g = std::move(b).Build();
      ASSERT_TRUE(g.ok()) << g.status();
      runtime::TensorMap inputs;
      for (ir::ValueId id : g->Inputs()) {
        const ir::Node& n = g->node(id);
        std::vector<int64_t> dims = *ir::EvaluateShape(n.type.shape, {});
        int64_t count = 1;
        for (int64_t d : dims) count *= d;
        std::vector<double> v(count);
        for (double& e : v) e = n.type.dtype == DType::kI64 ? (rng() % 11) : 2 * normal(rng);
        inputs[n.name()] = *Tensor::FromDoubles(n.type.dtype, dims, v);
      }
      ir::Graph decomposed = *g;
      absl::StatusOr<bool> changed = Decompose(&decomposed);
      ASSERT_TRUE(changed.ok()) << changed.status();
      EXPECT_TRUE(*changed);
      for (const ir::Node& n : decomposed.nodes()) EXPECT_NE(n.op, g->node(g->outputs()[0]).op);
      auto want = runtime::Interpret(*g, inputs, {});
      auto got = runtime::Interpret(decomposed, inputs, {});
      ASSERT_TRUE(want.ok()) << want.status();
      ASSERT_TRUE(got.ok()) << got.status();
      std::vector<double> a = (*want)[0].ToDoubles(), e = (*got)[0].ToDoubles();
      ASSERT_EQ(a.size(), e.size());
      double tol = dt == DType::kF64 ? 1e-12 : 1e-5;
      for (size_t i = 0; i < a.size(); ++i) {
        if (std::isinf(a[i])) {
          EXPECT_EQ(a[i], e[i]) << i;
        } else {
          EXPECT_NEAR(a[i], e[i], tol * (1 + std::abs(a[i]))) << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace graphjit::compiler
