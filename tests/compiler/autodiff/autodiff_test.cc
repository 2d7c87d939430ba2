// BuildGradientGraph: which gradients it builds, its errors, and central-difference checks
// on whole models (TinyGPT, the decode layer) in the interpreter and compiled.
#include "compiler/autodiff/autodiff.h"

#include <cmath>
#include <cstdio>

#include "compiler/compiled/compiled_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/parser.h"
#include "models/model.h"
#include "models/tinygpt.h"
#include "tests/compiler/autodiff/grad_check_util.h"

namespace graphjit::compiler {
namespace {

using ir::DType;
using ir::OpCode;
using ::testing::HasSubstr;

int CountOps(const ir::Graph& g, OpCode op) {
  int n = 0;
  for (const ir::Node& node : g.nodes()) n += node.op == op;
  return n;
}

ir::Graph Parse(const char* text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  return *g;
}

// loss = sum(x @ w): lecture 4's bias-free linear layer, 4 -> 3 on 2 tokens.
constexpr char kLinear[] = R"(graph linear {
  %0 = input {name="x"} : f64[2, 4]
  %1 = param {name="w"} : f64[4, 3]
  %2 = matmul(%0, %1) : f64[2, 3]
  %3 = reduce_sum(%2) {axis=0, keepdim=false} : f64[3]
  %4 = reduce_sum(%3) {axis=0, keepdim=false} : f64[]
  return %4
}
)";

TEST(Autodiff, BuildsOnlyTheGradientsThatAreNeeded) {
  ir::Graph g = Parse(kLinear);
  // dW = x^T @ dY only: dX is not needed (x does not require grad).
  absl::StatusOr<ir::Graph> w_only = BuildGradientGraph(g, {"w"});
  ASSERT_TRUE(w_only.ok()) << w_only.status();
  EXPECT_EQ(CountOps(*w_only, OpCode::kMatmul), 2);
  // Both: forward + dX + dW.
  absl::StatusOr<ir::Graph> both = BuildGradientGraph(g, {"x", "w"});
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(CountOps(*both, OpCode::kMatmul), 3);
  ASSERT_EQ(both->outputs().size(), 3u);
  EXPECT_EQ(both->type(both->outputs()[1]), g.type(g.FindInput("x")));
  EXPECT_EQ(both->type(both->outputs()[2]), g.type(g.FindParam("w")));
}

TEST(Autodiff, ValuesTheLossDoesNotReadGetZeros) {
  ir::Graph g = Parse(R"(graph g {
  %0 = input {name="x"} : f64[3]
  %1 = input {name="unused"} : f64[2]
  %2 = param {name="w"} : f64[3]
  %3 = gt(%2, %0) : bool[3]
  %4 = cast(%3) {dtype=f64} : f64[3]
  %5 = mul(%4, %0) : f64[3]
  %6 = reduce_sum(%5) {axis=0, keepdim=false} : f64[]
  return %6
}
)");
  // w reaches the loss only through a comparison: its gradient is zero, as is `unused`'s.
  absl::StatusOr<ir::Graph> grads = BuildGradientGraph(g, {"unused", "w", "x"});
  ASSERT_TRUE(grads.ok()) << grads.status();
  runtime::TensorMap in = {{"x", *runtime::Tensor::FromDoubles(DType::kF64, {3}, {1, 2, 3})},
                           {"unused", *runtime::Tensor::FromDoubles(DType::kF64, {2}, {5, 6})}};
  runtime::TensorMap params = {{"w", *runtime::Tensor::FromDoubles(DType::kF64, {3}, {2, 0, 9})}};
  absl::StatusOr<std::vector<runtime::Tensor>> out = runtime::Interpret(*grads, in, params);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ValueAt(0), 1.0 + 3.0);
  EXPECT_EQ((*out)[1].ToDoubles(), std::vector<double>({0, 0}));
  EXPECT_EQ((*out)[2].ToDoubles(), std::vector<double>({0, 0, 0}));
  EXPECT_EQ((*out)[3].ToDoubles(), std::vector<double>({1, 0, 1}));
}

TEST(Autodiff, RejectsBadLossesAndNames) {
  ir::Graph g = Parse(kLinear);
  absl::StatusOr<ir::Graph> r = BuildGradientGraph(g, {"nope"});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("no param or input named 'nope' (have: x, w)"));
  r = BuildGradientGraph(g, {"w"}, 1);
  EXPECT_THAT(r.status().message(), HasSubstr("loss output 1 does not exist"));

  ir::Graph vector_loss = Parse(R"(graph g {
  %0 = input {name="x"} : f64[2]
  %1 = input {name="i"} : i64[2]
  %2 = exp(%0) : f64[2]
  return %2
}
)");
  r = BuildGradientGraph(vector_loss, {"x"});
  EXPECT_THAT(r.status().message(), HasSubstr("the loss must be a scalar f32 or f64, got f64[2]"));
  absl::StatusOr<ir::Graph> summed = SumOutputToScalar(vector_loss);
  ASSERT_TRUE(summed.ok()) << summed.status();
  EXPECT_TRUE(BuildGradientGraph(*summed, {"x"}).ok());
  r = BuildGradientGraph(*summed, {"i"});
  EXPECT_THAT(r.status().message(), HasSubstr("'i' is i64[2]; only f32 and f64"));
  EXPECT_EQ(DifferentiableSources(*summed), std::vector<std::string>({"x"}));
}

TEST(Autodiff, RefusesLoops) {
  ir::Graph loop = Parse(R"(graph g {
  %0 = input {name="x"} : f64[]
  %1 = while(%0) {carried=1, max_trips=3} : f64[]
    region graph cond {
      %0 = input {name="x"} : f64[]
      %1 = full {value=1.0} : bool[]
      return %1
    }
    region graph body {
      %0 = input {name="x"} : f64[]
      %1 = mul(%0, %0) : f64[]
      return %1
    }
  return %1
}
)");
  absl::StatusOr<ir::Graph> r = BuildGradientGraph(loop, {"x"});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(r.status().message(), HasSubstr("%1 (while) is control flow with regions"));
}

models::GPTConfig SmallGPT() {
  models::GPTConfig c;
  c.n_layer = 2;
  c.d_model = 16;  // two heads of 8
  c.block_size = 4;
  c.vocab_size = 7;
  c.batch = 2;
  return c;
}

// Every param of a small TinyGPT (f64) against central differences: gather (a tied
// embedding read twice), layernorm, the causal softmax attention, gelu and cross entropy.
TEST(Autodiff, TinyGPTGradientsMatchCentralDifferences) {
  auto model = models::MakeTinyGPTModel(SmallGPT(), DType::kF64, 3);
  absl::StatusOr<ir::Graph> g = models::TraceModel(*model);
  ASSERT_TRUE(g.ok()) << g.status();
  runtime::TensorMap in = *model->ExampleInputs({}, 5);
  // Non-trivial norm weights and biases, so their gradients are not a special case.
  runtime::TensorMap params = model->params();
  std::mt19937_64 rng(11);
  for (auto& [name, t] : params) {
    t = testutil::RandomTensor(rng, DType::kF64, ir::ConstShape(t.shape()), {},
                               testutil::InputKind::kNormal, 0);
  }
  std::vector<std::string> wrt = DifferentiableSources(*g);
  EXPECT_EQ(wrt.size(), params.size());
  testutil::GradCheckResult r = testutil::CheckGradients(*g, wrt, in, params, {}, 6, 1);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_GE(r.checked, 100);
  EXPECT_LT(r.max_error, 1e-6) << r.worst;
  std::printf("TinyGPT: %d elements checked, max error %.1e\n", r.checked, r.max_error);
}

// The decode layer (symbolic S, kv_write at P): gradients w.r.t. the caches, the input and
// the weights, differentiated once symbolically; then the same gradient graph compiled.
TEST(Autodiff, DecodeLayerGradientsInterpretedAndCompiled) {
  auto model = *models::CreateModel("decode:d=16,H=4,G=2,dh=4,f=24");
  absl::StatusOr<ir::Graph> traced = models::TraceModel(*model);
  ASSERT_TRUE(traced.ok()) << traced.status();
  absl::StatusOr<ir::Graph> loss = SumOutputToScalar(*traced);
  ASSERT_TRUE(loss.ok()) << loss.status();
  const std::vector<std::string> wrt = {"x",  "k_cache", "v_cache",  "wq",
                                        "wk", "w_down",  "attn_norm"};
  absl::StatusOr<ir::Graph> grads = BuildGradientGraph(*loss, wrt);
  ASSERT_TRUE(grads.ok()) << grads.status();
  CompileGraphOptions options;
  options.params_are_constant = false;
  auto compiled = CompiledGraph::Compile(*grads, model->params(), options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  for (int64_t S : {3, 8}) {
    SCOPED_TRACE(absl::StrCat("S=", S));
    ir::Bindings bind = {{"S", S}, {"P", S - 1}};
    runtime::TensorMap in = *model->ExampleInputs(bind, 2);
    testutil::GradCheckResult r =
        testutil::CheckGradients(*loss, wrt, in, model->params(), bind, 5, 3);
    ASSERT_TRUE(r.status.ok()) << r.status;
    EXPECT_LT(r.max_error, 1e-6) << r.worst;
    std::printf("decode S=%d: %d elements checked, max error %.1e\n", static_cast<int>(S),
                r.checked, r.max_error);
    auto want = runtime::Interpret(*grads, in, model->params(), bind);
    auto got = (*compiled)->Run(in, bind);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    for (size_t i = 0; i < want->size(); ++i) {
      std::vector<double> a = (*want)[i].ToDoubles(), b = (*got)[i].ToDoubles();
      ASSERT_EQ(a.size(), b.size());
      for (size_t j = 0; j < a.size(); ++j) {
        EXPECT_NEAR(a[j], b[j], 1e-10 * (1 + std::abs(a[j]))) << "output " << i << "[" << j << "]";
      }
    }
  }
}

}  // namespace
}  // namespace graphjit::compiler
