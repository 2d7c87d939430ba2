// The pipeline, and the decode layer and TinyGPT through the default pipeline.
#include "compiler/passes/pipeline.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "models/model.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(Pipeline, DefaultIsTheSeedOrder) {
  EXPECT_THAT(
      Pipeline::Default().names(),
      ElementsAre("unroll_scans", "hoist_loop_invariants", "decompose", "cse", "constant_fold",
                  "simplify", "fold_channel_affine", "fold_norm_weight", "sink_row_scale",
                  "sink_channel_scale", "flatten_matmul_batch", "winograd_convolutions",
                  "orient_products", "pack_weight_rows", "align_padded_rows", "dce"));
  absl::StatusOr<Pipeline> p = Pipeline::FromNames({"cse", "bogus"});
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("unknown pass 'bogus'"));
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("fold_norm_weight"));
}

TEST(Pipeline, VerifierCatchesABrokenPass) {
  auto model = *models::CreateModel("decode");
  ir::Graph g = *models::TraceModel(*model);
  Pipeline p = *Pipeline::FromNames({"decompose"});
  p.Add({"breaker", [](ir::Graph* g, PassContext*) -> absl::StatusOr<bool> {
           // Claims a matmul produces a shape its rule does not give.
           for (ir::ValueId id = 0; id < g->num_nodes(); ++id) {
             if (g->node(id).op == ir::OpCode::kMatmul) {
               g->mutable_node(id).type.shape = {1, 999};
               return true;
             }
           }
           return false;
         }});
  PassContext ctx{model->params()};
  absl::Status s = p.Run(&g, &ctx);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("after pass breaker"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("(matmul)"));
  // Without verification the broken graph goes through: the verifier is what caught it.
  ir::Graph g2 = *models::TraceModel(*model);
  p.set_verify(false);
  EXPECT_TRUE(p.Run(&g2, &ctx).ok());
}

TEST(Pipeline, PrintsAfterChosenPassesAndRecordsStats) {
  auto model = *models::CreateModel("decode");
  ir::Graph g = *models::TraceModel(*model);
  Pipeline p = Pipeline::Default();
  EXPECT_FALSE(p.SetPrintAfter({"nope"}, nullptr).ok());
  std::vector<std::string> printed;
  ASSERT_TRUE(p.SetPrintAfter({"cse", "dce"}, [&](const std::string& pass, const ir::Graph& g) {
                 printed.push_back(pass + ":" + std::to_string(g.num_nodes()));
               }).ok());
  PassContext ctx{model->params()};
  ASSERT_TRUE(p.Run(&g, &ctx).ok());
  ASSERT_EQ(printed.size(), 2u);
  EXPECT_EQ(printed[1], "dce:" + std::to_string(g.num_nodes()));
  ASSERT_EQ(p.stats().size(), 16u);
  EXPECT_FALSE(p.stats()[0].changed);  // unroll_scans: the layer has no loop
  EXPECT_FALSE(p.stats()[1].changed);  // hoist_loop_invariants: nor one to hoist from
  EXPECT_TRUE(p.stats()[2].changed);   // decompose
  EXPECT_GT(p.stats()[2].nodes_after, p.stats()[2].nodes_before);
  // fold_channel_affine: no chain of known scales and shifts in the decode layer (its
  // norm weights are fold_norm_weight's).
  EXPECT_FALSE(p.stats()[6].changed);
  EXPECT_TRUE(p.stats()[7].changed);    // fold_norm_weight
  EXPECT_TRUE(p.stats()[8].changed);    // sink_row_scale: the softmax's division
  EXPECT_FALSE(p.stats()[9].changed);   // sink_channel_scale: no gated convolution
  EXPECT_FALSE(p.stats()[10].changed);  // flatten_matmul_batch: the layer's products are 2-D
  EXPECT_FALSE(p.stats()[11].changed);  // winograd_convolutions: no convolution
  EXPECT_FALSE(p.stats()[12].changed);  // orient_products: its weights are the rhs
  EXPECT_FALSE(p.stats()[13].changed);  // pack_weight_rows: the context has no tiles
  EXPECT_FALSE(p.stats()[14].changed);  // align_padded_rows: no padded buffer
  EXPECT_LT(p.stats()[15].nodes_after, p.stats()[15].nodes_before);  // dce removed something
  for (size_t i = 1; i < p.stats().size(); ++i) {
    EXPECT_EQ(p.stats()[i].nodes_before, p.stats()[i - 1].nodes_after);
  }
}

class OptimizedDecode : public ::testing::TestWithParam<int64_t> {};

// The default pipeline, and the default with the opt-in concat_weights before dce.
Pipeline WithConcat(bool concat) {
  if (!concat) return Pipeline::Default();
  std::vector<std::string> names = Pipeline::Default().names();
  names.insert(names.end() - 1, "concat_weights");
  return *Pipeline::FromNames(names);
}

TEST_P(OptimizedDecode, AgreesWithTheTracedGraph) {
  const int64_t S = GetParam();
  auto model = *models::CreateModel("decode");
  runtime::TensorMap in = *model->ExampleInputs({{"S", S}}, 3);
  ir::Bindings bind = {{"P", S - 1}};
  for (bool symbolic : {true, false}) {
    for (bool concat : {false, true}) {
      SCOPED_TRACE(absl::StrCat(symbolic ? "symbolic" : "exact", concat ? ", concat" : ""));
      models::TraceOptions options;
      if (!symbolic) options.fixed_dims = {{"S", S}};
      ir::Graph traced = *models::TraceModel(*model, options);
      ir::Graph optimized = traced;
      PassContext ctx{model->params()};
      ASSERT_TRUE(WithConcat(concat).Run(&optimized, &ctx).ok());
      // No composite op survives and the five projections that read a norm were folded;
      // with concat_weights they are side by side (q | k | v and gate | up).
      int scaled = 0, concatenated = 0, matmuls = 0;
      for (const ir::Node& n : optimized.nodes()) {
        EXPECT_NE(n.op, ir::OpCode::kSoftmax);
        EXPECT_NE(n.op, ir::OpCode::kRmsNorm);
        EXPECT_NE(n.op, ir::OpCode::kRope);
        EXPECT_NE(n.op, ir::OpCode::kSilu);
        if (n.op == ir::OpCode::kParam && n.name().find(".scaled.") != std::string::npos) {
          (n.name().rfind("concat(", 0) == 0 ? concatenated : scaled) += 1;
        }
        matmuls += n.op == ir::OpCode::kMatmul;
      }
      EXPECT_EQ(scaled, concat ? 0 : 5);
      EXPECT_EQ(concatenated, concat ? 2 : 0);
      EXPECT_EQ(matmuls, concat ? 6 : 9);  // with: qkv, scores, P @ V, out, gate|up, down
      if (concat) {
        for (const std::string name :
             {"concat(wq.scaled.attn_norm,wk.scaled.attn_norm,wv.scaled.attn_norm)",
              "concat(w_gate.scaled.mlp_norm,w_up.scaled.mlp_norm)"}) {
          EXPECT_TRUE(ctx.params.contains(name)) << name;
        }
      }
      auto want = runtime::Interpret(traced, in, model->params(), bind);
      auto got = runtime::Interpret(optimized, in, ctx.params, bind);
      ASSERT_TRUE(want.ok()) << want.status();
      ASSERT_TRUE(got.ok()) << got.status();
      for (int i = 0; i < 3; ++i) {
        EXPECT_LT(runtime::MaxAbsDiff((*want)[i], (*got)[i]), 1e-12) << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(CacheLengths, OptimizedDecode, ::testing::Values(2, 7, 64, 500));

TEST(Pipeline, OptimizedTinyGPTLossAgrees) {
  auto model = *models::CreateModel("tinygpt:L=2,d=16,T=8,V=13,B=2");
  runtime::TensorMap in = *model->ExampleInputs({}, 1);
  ir::Graph traced = *models::TraceModel(*model);
  ir::Graph optimized = traced;
  PassContext ctx{model->params()};
  ASSERT_TRUE(Pipeline::Default().Run(&optimized, &ctx).ok());
  auto want = runtime::Interpret(traced, in, model->params());
  auto got = runtime::Interpret(optimized, in, ctx.params);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_NEAR((*want)[0].ValueAt(0), (*got)[0].ValueAt(0), 1e-12);
}

}  // namespace
}  // namespace graphjit::compiler
