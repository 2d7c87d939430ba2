// The per-kernel profiler: facts about its table (one row per kernel, in program order,
// bytes from the traffic analysis at the call's symbols), never timings.
#include "compiler/compiled/profile.h"

#include "absl/strings/match.h"
#include "compiler/analysis/bytes_moved.h"
#include "compiler/compiled/compiled_graph.h"
#include "gtest/gtest.h"
#include "models/model.h"

namespace graphjit::compiler {
namespace {

struct Decode {
  std::unique_ptr<models::Model> model = *models::CreateModel("decode");
  std::unique_ptr<CompiledGraph> cg =
      *CompiledGraph::Compile(*models::TraceModel(*model), model->params());  // symbolic S
};

TEST(Profile, NamesEveryKernelOnceWithTheAnalysisBytes) {
  Decode d;
  const int64_t S = 37;
  runtime::TensorMap in = *d.model->ExampleInputs({{"S", S}}, 1);
  absl::StatusOr<KernelProfile> p = ProfileKernels(*d.cg, in, {{"P", S - 1}}, 4, 1);
  ASSERT_TRUE(p.ok()) << p.status();
  const Program& program = d.cg->program();
  ASSERT_EQ(p->kernels.size(), program.kernels.size());
  EXPECT_EQ(p->calls, 4);
  const TrafficReport traffic = ProgramTraffic(program);
  const ir::Bindings symbols = {{"S", S}, {"P", S - 1}};
  int64_t read = 0, written = 0;
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    const KernelProfileRow& row = p->kernels[k];
    EXPECT_EQ(row.name, program.kernels[k].name);
    EXPECT_EQ(row.bytes_read, *traffic.items[k].bytes_read.Evaluate(symbols)) << row.name;
    EXPECT_EQ(row.bytes_written, *traffic.items[k].bytes_written.Evaluate(symbols)) << row.name;
    EXPECT_GE(row.seconds, 0) << row.name;
    read += row.bytes_read;
    written += row.bytes_written;
  }
  EXPECT_EQ(read, *traffic.bytes_read.Evaluate(symbols));
  EXPECT_EQ(written, *traffic.bytes_written.Evaluate(symbols));
  // The table lists each kernel on a line of its own, once.
  const std::string table = FormatProfile(*p);
  for (const Kernel& k : program.kernels) {
    EXPECT_TRUE(absl::StrContains(table, absl::StrCat("  ", k.name, " "))) << k.name;
    const size_t first = table.find(absl::StrCat("  ", k.name, " "));
    EXPECT_EQ(table.find(absl::StrCat("  ", k.name, " "), first + 1), std::string::npos) << k.name;
  }
}

TEST(Profile, SummedSecondsBecomeMeansPerCall) {
  Decode d;
  std::vector<double> sums(d.cg->program().kernels.size(), 0.0);
  for (size_t k = 0; k < sums.size(); ++k) sums[k] = 2.0 * (k + 1);
  KernelProfile p = MakeProfile(d.cg->program(), sums, 4, {{"S", 8}, {"P", 7}});
  ASSERT_EQ(p.kernels.size(), sums.size());
  for (size_t k = 0; k < sums.size(); ++k) EXPECT_DOUBLE_EQ(p.kernels[k].seconds, 0.5 * (k + 1));
  EXPECT_GT(p.seconds(), 0);
}

TEST(Profile, BadCallsAndBadInputsAreErrors) {
  Decode d;
  runtime::TensorMap in = *d.model->ExampleInputs({{"S", 4}}, 1);
  absl::StatusOr<KernelProfile> none = ProfileKernels(*d.cg, in, {{"P", 3}}, 0);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  in.erase("x");
  absl::StatusOr<KernelProfile> missing = ProfileKernels(*d.cg, in, {{"P", 3}}, 2);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "x")) << missing.status();
}

}  // namespace
}  // namespace graphjit::compiler
