// Every pass's `changed` answer agrees with the printed IR (as XLA checks its passes):
// true exactly when the graph's text differs afterwards. A pass that says false but
// rewrote the graph would let a fixpoint driver stop early; one that says true for no
// change hides which passes did work in the per-pass stats.
#include "compiler/passes/pipeline.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "models/model.h"

namespace graphjit::compiler {
namespace {

// Runs the built-in passes in order on `graph`, each once and then a second time on its
// own output, checking each answer against the text.
void CheckChangedAnswers(ir::Graph graph, runtime::TensorMap params) {
  PassContext ctx{std::move(params)};
  for (const Pass& pass : BuiltinPasses()) {
    for (int round = 0; round < 2; ++round) {
      SCOPED_TRACE(absl::StrCat(pass.name, " round ", round));
      const std::string before = ir::PrintGraph(graph);
      absl::StatusOr<bool> changed = pass.run(&graph, &ctx);
      ASSERT_TRUE(changed.ok()) << changed.status();
      const std::string after = ir::PrintGraph(graph);
      EXPECT_EQ(*changed, before != after)
          << (*changed ? "said changed, text equal" : "said unchanged, text differs:\n")
          << (*changed ? "" : after);
    }
  }
}

TEST(ChangedAnswer, ModelsThroughEveryPass) {
  for (const char* spec : {"decode", "decode:dtype=f32", "tinygpt", "linear"}) {
    SCOPED_TRACE(spec);
    auto model = *models::CreateModel(spec);
    CheckChangedAnswers(*models::TraceModel(*model), model->params());
  }
}

// Graphs where some passes have nothing to do (must report false) and some do.
TEST(ChangedAnswer, SmallGraphs) {
  const char* const kGraphs[] = {
      // Nothing to decompose, fold, simplify or remove.
      R"(graph plain {
  %0 = input {name="x"} : f64[4]
  %1 = exp(%0) : f64[4]
  return %1
})",
      // A duplicate, a foldable constant expression and a dead node.
      R"(graph busy {
  %0 = input {name="x"} : f64[S, 4]
  %1 = constant {value=[2]} : f64[]
  %2 = constant {value=[3]} : f64[]
  %3 = mul(%1, %2) : f64[]
  %4 = exp(%0) : f64[S, 4]
  %5 = exp(%0) : f64[S, 4]
  %6 = add(%4, %5) : f64[S, 4]
  %7 = mul(%6, %3) : f64[S, 4]
  %8 = neg(%0) : f64[S, 4]
  return %7
})",
      // A composite to decompose.
      R"(graph composite {
  %0 = input {name="x"} : f32[2, 8]
  %1 = softmax(%0) {axis=-1} : f32[2, 8]
  return %1
})",
  };
  for (const char* text : kGraphs) {
    absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
    ASSERT_TRUE(g.ok()) << g.status();
    SCOPED_TRACE(g->name());
    CheckChangedAnswers(*g, {});
  }
}

}  // namespace
}  // namespace graphjit::compiler
