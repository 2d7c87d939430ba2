// The opt-in concat_weights pass through the whole compiler: the decode layer with its
// q | k | v and gate | up weights side by side compiles to fewer kernels whose results
// equal the traced graph's (the slices of the fused products lower to index offsets).
#include "absl/strings/str_cat.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/passes/pipeline.h"
#include "gtest/gtest.h"
#include "models/model.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {
namespace {

TEST(ConcatWeightsCompiled, DecodeLayerMatchesTheTracedGraph) {
  auto model = *models::CreateModel("decode");
  for (int64_t S : {1, 7, 64}) {
    SCOPED_TRACE(S);
    std::vector<std::string> names = Pipeline::Default().names();
    names.insert(names.end() - 1, "concat_weights");
    Pipeline pipeline = *Pipeline::FromNames(names);
    ir::Graph traced = *models::TraceModel(*model);
    ir::Graph optimized = traced;
    PassContext ctx{model->params()};
    ASSERT_TRUE(pipeline.Run(&optimized, &ctx).ok());
    CompileGraphOptions options;
    options.optimize = false;  // already through the pipeline above
    auto fused = CompiledGraph::Compile(optimized, ctx.params, options);
    auto plain = CompiledGraph::Compile(traced, model->params());
    ASSERT_TRUE(fused.ok()) << fused.status();
    ASSERT_TRUE(plain.ok()) << plain.status();
    EXPECT_EQ((*fused)->program().kernels.size() + 5, (*plain)->program().kernels.size());
    runtime::TensorMap in = *model->ExampleInputs({{"S", S}}, 5);
    const ir::Bindings bind = {{"P", S - 1}};
    auto want = runtime::Interpret(traced, in, model->params(), bind);
    ASSERT_TRUE(want.ok()) << want.status();
    // Donated caches are written in place: each run gets its own copies.
    auto copies = [&] {
      runtime::TensorMap c = in;
      for (auto& [name, t] : c) t = t.Clone();
      return c;
    };
    auto got = (*fused)->Run(copies(), bind);
    ASSERT_TRUE(got.ok()) << got.status();
    for (size_t i = 0; i < want->size(); ++i) {
      EXPECT_LT(runtime::MaxAbsDiff((*want)[i], (*got)[i]), 1e-12) << i;
    }
  }
}

}  // namespace
}  // namespace graphjit::compiler
