// The back end as a list of named steps (compiler/compiled/back_end.h): every compile
// runs and times them in order, the state can be printed after any of them, and an
// unknown step name is refused naming the steps.
#include "compiler/compiled/back_end.h"

#include <string>
#include <utility>
#include <vector>

#include "compiler/compiled/compiled_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/model.h"

namespace graphjit::compiler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<std::unique_ptr<CompiledGraph>> CompileDecode(const CompileGraphOptions& options) {
  auto model = *models::CreateModel("decode:d=32,H=4,G=2,dh=8,f=64,seed=77");
  models::TraceOptions trace;
  trace.fixed_dims = {{"S", 5}};
  absl::StatusOr<ir::Graph> graph = models::TraceModel(*model, trace);
  if (!graph.ok()) return graph.status();
  return CompiledGraph::Compile(*graph, model->params(), options);
}

TEST(BackEnd, StepsRunInOrderAndAreTimed) {
  EXPECT_THAT(BackEnd::StepNames(), ElementsAre("canonicalize", "plan_calls", "find_live",
                                                "group_modules", "get_modules", "link"));
  absl::StatusOr<std::unique_ptr<CompiledGraph>> cg = CompileDecode({});
  ASSERT_TRUE(cg.ok()) << cg.status();
  const KernelSetStats& stats = (*cg)->kernels().stats();
  std::vector<std::string> names;
  double sum = 0;
  for (const ir::StepStats& s : stats.steps) {
    names.push_back(s.name);
    EXPECT_GE(s.seconds, 0) << s.name;
    sum += s.seconds;
  }
  EXPECT_EQ(names, BackEnd::StepNames());
  EXPECT_LE(sum, stats.wall_seconds);
}

TEST(BackEnd, PrintsItsStateAfterNamedSteps) {
  std::vector<std::pair<std::string, std::string>> printed;
  CompileGraphOptions options;
  options.print_after_back_end = {"group_modules", "link"};
  options.back_end_sink = [&](const std::string& step, const std::string& text) {
    printed.emplace_back(step, text);
  };
  absl::StatusOr<std::unique_ptr<CompiledGraph>> first = CompileDecode(options);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(printed.size(), 2u);
  EXPECT_EQ(printed[0].first, "group_modules");
  EXPECT_THAT(printed[0].second, HasSubstr("kernels "));
  EXPECT_THAT(printed[0].second, HasSubstr("module 0 "));
  EXPECT_EQ(printed[1].first, "link");
  // The same graph again while the first holds its code: every kernel is live.
  printed.clear();
  absl::StatusOr<std::unique_ptr<CompiledGraph>> second = CompileDecode(options);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(printed.size(), 2u);
  EXPECT_THAT(printed[0].second, HasSubstr(", live\n"));
  EXPECT_THAT(printed[0].second, Not(HasSubstr("module 0 ")));
  EXPECT_EQ((*second)->kernels().stats().compiled, 0);
}

TEST(BackEnd, UnknownStepIsRefusedNamingTheSteps) {
  CompileGraphOptions options;
  options.print_after_back_end = {"nope"};
  absl::StatusOr<std::unique_ptr<CompiledGraph>> cg = CompileDecode(options);
  ASSERT_FALSE(cg.ok());
  EXPECT_EQ(cg.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(cg.status().message(),
              HasSubstr("no back-end step 'nope' in the back end (canonicalize, plan_calls"));
}

}  // namespace
}  // namespace graphjit::compiler
