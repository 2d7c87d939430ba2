// Gathers from a table whose row count is symbolic: compiled code clamps indices into the
// table, so a call must be refused before the kernels run when no row exists (S = 0) or
// when an input index is outside the rows of this call. Found by the differential fuzzer:
// gathers from f32[S, S, S] tables at S = 0 read through a null buffer and crashed;
// the interpreter refuses the same call.
#include <memory>
#include <string>
#include <vector>

#include "compiler/compiled/compiled_call.h"
#include "compiler/compiled/compiled_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using ::testing::HasSubstr;

// `idx` comes from an input (checked by value); `row` is computed (an argmax), so only
// the table's row count can be checked.
constexpr char kGraph[] = R"(graph g {
  %t = input {name="t"} : f32[S, 2]
  %idx = input {name="idx"} : i64[3]
  %a = gather(%t, %idx) : f32[3, 2]
  %s = input {name="s"} : f32[4]
  %row = argmax(%s) {axis=0, keepdim=true} : i64[1]
  %b = gather(%t, %row) : f32[1, 2]
  return %a, %b
}
)";

runtime::TensorMap Inputs(int64_t S, std::vector<int64_t> idx) {
  std::vector<double> t(2 * S);
  for (int64_t i = 0; i < 2 * S; ++i) t[i] = static_cast<double>(i);
  return {{"t", *Tensor::FromDoubles(ir::DType::kF32, {S, 2}, t)},
          {"idx", *Tensor::FromVector<int64_t>({3}, idx)},
          {"s", *Tensor::FromDoubles(ir::DType::kF32, {4}, {0, 3, 1, 2})}};
}

TEST(GatherBounds, SymbolicTableRowsAreCheckedForEveryCall) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(kGraph);
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<std::unique_ptr<CompiledGraph>> cg = CompiledGraph::Compile(*g, {});
  ASSERT_TRUE(cg.ok()) << cg.status();

  // In range: compiled equals interpreted.
  runtime::TensorMap ok = Inputs(4, {0, 3, 2});
  absl::StatusOr<std::vector<Tensor>> want = runtime::Interpret(*g, ok, {});
  absl::StatusOr<std::vector<Tensor>> got = (*cg)->Run(ok);
  ASSERT_TRUE(want.ok() && got.ok()) << want.status() << got.status();
  EXPECT_EQ((*got)[0].ToDoubles(), (*want)[0].ToDoubles());
  EXPECT_EQ((*got)[1].ToDoubles(), (*want)[1].ToDoubles());

  // An input index past this call's rows (S = 2): refused, as the interpreter refuses it.
  absl::StatusOr<std::vector<Tensor>> past = (*cg)->Run(Inputs(2, {0, 3, 1}));
  ASSERT_FALSE(past.ok());
  EXPECT_THAT(past.status().message(), HasSubstr("gather index 3 at element 1 is outside [0, 2)"));
  EXPECT_FALSE(runtime::Interpret(*g, Inputs(2, {0, 3, 1}), {}).ok());

  // S = 0: no index is in range, computed or not; refused before the kernels run.
  for (std::vector<int64_t> idx : {std::vector<int64_t>{0, 0, 0}, {-1, 5, 0}}) {
    absl::StatusOr<std::vector<Tensor>> empty = (*cg)->Run(Inputs(0, idx));
    ASSERT_FALSE(empty.ok());
    EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_FALSE(runtime::Interpret(*g, Inputs(0, idx), {}).ok());
  }
}

// A computed index alone (no input index to check by value) at S = 0, through Run and
// through a CompiledCall's fast path.
TEST(GatherBounds, ComputedIndexIntoAnEmptyTableIsRefused) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(R"(graph g {
  %t = input {name="t"} : f32[S, 2]
  %s = input {name="s"} : f32[4]
  %row = argmax(%s) {axis=0, keepdim=true} : i64[1]
  %b = gather(%t, %row) : f32[1, 2]
  return %b
}
)");
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<std::unique_ptr<CompiledGraph>> cg = CompiledGraph::Compile(*g, {});
  ASSERT_TRUE(cg.ok()) << cg.status();
  runtime::TensorMap in = Inputs(0, {0, 0, 0});
  in.erase("idx");
  absl::StatusOr<std::vector<Tensor>> r = (*cg)->Run(in);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("(gather): the table has no rows"));

  CompiledCall call(**cg);
  std::vector<Tensor> positional;
  for (const std::string& name : call.input_names()) positional.push_back(in.at(name));
  absl::Status s = call.Run(positional);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("(gather): the table has no rows"));
  // With a row, both run.
  runtime::TensorMap one = Inputs(1, {0, 0, 0});
  one.erase("idx");
  EXPECT_TRUE((*cg)->Run(one).ok());
  positional.clear();
  for (const std::string& name : call.input_names()) positional.push_back(one.at(name));
  EXPECT_TRUE(call.Run(positional).ok());
}

}  // namespace
}  // namespace graphjit::compiler
