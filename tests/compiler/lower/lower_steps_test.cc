// Lowering as a list of named steps (LowerPipeline): the order, what the options leave
// out, printing the program after a step, and that the list is what Lower() runs.
#include <string>
#include <utility>
#include <vector>

#include "compiler/lower/lower.h"
#include "compiler/passes/pipeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/model.h"

namespace graphjit::compiler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// The decode layer after the pass pipeline, symbolic S and P.
ir::Graph OptimizedDecodeLayer() {
  auto model = *models::CreateModel("decode");
  ir::Graph g = *models::TraceModel(*model, {});
  PassContext ctx{model->params()};
  absl::Status s = Pipeline::Default().Run(&g, &ctx);
  EXPECT_TRUE(s.ok()) << s;
  return g;
}

TEST(LowerSteps, RunInOrderAndPrintAfterTheNamedOnes) {
  const ir::Graph g = OptimizedDecodeLayer();
  LowerPipeline lowering = LowerPipeline::FromOptions();
  EXPECT_THAT(lowering.names(), ElementsAre("build_kernels", "fuse_attention", "fuse_epilogues",
                                            "narrow_fills", "mark_constant_fills", "plan_workspace",
                                            "simplify_indices", "order_loops", "mark_parallel"));
  std::vector<std::pair<std::string, std::string>> printed;
  ASSERT_TRUE(lowering
                  .SetPrintAfter({"build_kernels", "fuse_attention"},
                                 [&](const std::string& step, const Program& program) {
                                   printed.emplace_back(step, ProgramToString(program));
                                 })
                  .ok());
  absl::StatusOr<LoweredGraph> lowered = lowering.Run(g);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ(printed.size(), 2u);
  EXPECT_EQ(printed[0].first, "build_kernels");
  EXPECT_THAT(printed[0].second, Not(HasSubstr("attention over")));
  // Before plan_workspace the temps have no offsets yet.
  EXPECT_THAT(printed[0].second, HasSubstr("; workspace not planned)"));
  EXPECT_THAT(printed[0].second, HasSubstr("@ workspace+?"));
  EXPECT_EQ(printed[1].first, "fuse_attention");
  EXPECT_THAT(printed[1].second, HasSubstr("attention over"));
  // 20 kernels as built, 16 once attention's five are one.
  ASSERT_EQ(lowering.stats().size(), 9u);
  EXPECT_EQ(lowering.stats()[0].kernels, 20);
  EXPECT_EQ(lowering.stats()[1].kernels, 16);
  EXPECT_EQ(lowering.stats()[6].kernels, lowering.stats()[2].kernels);
  EXPECT_EQ(lowering.stats()[8].kernels, lowering.stats()[2].kernels);
  // The list is Lower(): the same program.
  absl::StatusOr<LoweredGraph> direct = Lower(g);
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_EQ(ProgramToString(lowered->program), ProgramToString(direct->program));
}

TEST(LowerSteps, PrintAfterAllPrintsEveryStep) {
  const ir::Graph g = OptimizedDecodeLayer();
  LowerPipeline lowering = LowerPipeline::FromOptions();
  std::vector<std::string> steps;
  ASSERT_TRUE(lowering
                  .SetPrintAfter({"*"}, [&](const std::string& step,
                                            const Program&) { steps.push_back(step); })
                  .ok());
  ASSERT_TRUE(lowering.Run(g).ok());
  EXPECT_EQ(steps, lowering.names());
}

TEST(LowerSteps, OptionsLeaveStepsOutAndUnknownNamesAreRefused) {
  LowerPipeline lowering = LowerPipeline::FromOptions({.simplify_indices = false,
                                                       .fuse_attention = false,
                                                       .fuse_epilogues = false,
                                                       .fills_once = false});
  EXPECT_THAT(lowering.names(), ElementsAre("build_kernels", "narrow_fills", "plan_workspace",
                                            "order_loops", "mark_parallel"));
  absl::Status s = lowering.SetPrintAfter({"fuse_attention"}, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("no lowering step 'fuse_attention' in this lowering "
                                     "(build_kernels, narrow_fills, plan_workspace, order_loops, "
                                     "mark_parallel)"));
  // Without fusion the attention's kernels stay five.
  absl::StatusOr<LoweredGraph> lowered = lowering.Run(OptimizedDecodeLayer());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ(lowered->program.kernels.size(), 20u);
}

}  // namespace
}  // namespace graphjit::compiler
