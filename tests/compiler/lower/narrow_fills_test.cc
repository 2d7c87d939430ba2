// narrow_fills (compiler/lower/narrow_fills.h): a padded buffer's border widened for
// alignment is filled only where its readers read; fills of outputs, fills whose every
// element is read and fills of an OpenBLAS product's operand are left as they are.
#include "compiler/lower/narrow_fills.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/lower/lower.h"
#include "compiler/lower/matmul_strategy.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/interpreter.h"
#include "tests/compiler/compiled/test_tensors.h"

namespace graphjit::compiler {
namespace {

// x [1, 2, 6, 6] padded to 8 x 8 for a 3 x 3 window, its rows widened on the left by 3
// more columns (as align_padded_rows widens them: 4 of border where the window reads 1),
// read through a slice that starts at the window's first column.
constexpr const char* kWidened = R"(graph pad {
  %0 = input {name="x"} : f32[1, 2, 6, 6]
  %1 = full {value=0} : f32[1, 2, 1, 6]
  %2 = concat(%1, %0, %1) {axis=2} : f32[1, 2, 8, 6]
  %3 = full {value=0} : f32[1, 2, 8, 4]
  %4 = full {value=0} : f32[1, 2, 8, 1]
  %5 = concat(%3, %2, %4) {axis=3} : f32[1, 2, 8, 11]
  %6 = slice(%5) {axis=3, end=11, start=3} : f32[1, 2, 8, 8]
  %7 = window(%6) {dilations=[1, 1], kernel=[3, 3], strides=[1, 1]} : f32[1, 2, 3, 3, 6, 6]
  %8 = reduce_sum(%7) {axis=3, keepdim=false} : f32[1, 2, 3, 6, 6]
  %9 = reduce_sum(%8) {axis=2, keepdim=false} : f32[1, 2, 6, 6]
  return %9
})";

// The program after lowering step `step` (the steps before it run as Lower() runs them).
Program LoweredUpTo(const char* text, const std::string& step,
                    ProductKernels products = ProductKernels::kAuto) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  LowerPipeline lowering = LowerPipeline::FromOptions({.products = products});
  Program after;
  EXPECT_TRUE(
      lowering.SetPrintAfter({step}, [&](const std::string&, const Program& p) { after = p; })
          .ok());
  absl::StatusOr<LoweredGraph> lowered = lowering.Run(*g);
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  return after;
}

// The fill kernels of `p`, as their loops' extents (e.g. "1 2 8 1").
std::vector<std::string> FillExtents(const Program& p) {
  std::vector<std::string> fills;
  for (const Kernel& k : p.kernels) {
    if (!absl::StrContains(k.name, "_full")) continue;
    std::string extents;
    for (const ExprPtr& e : k.loops) extents += (extents.empty() ? "" : " ") + ExprToString(e);
    fills.push_back(extents);
  }
  return fills;
}

TEST(NarrowFills, AWidenedBorderIsFilledWhereTheWindowsRead) {
  const Program before = LoweredUpTo(kWidened, "fuse_epilogues");
  const Program after = LoweredUpTo(kWidened, "narrow_fills");
  // The 4-column left border (column 3 read), top and bottom rows (all read), the right
  // column (read).
  EXPECT_EQ(FillExtents(before),
            (std::vector<std::string>{"1 2 8 4", "1 2 1 6", "1 2 1 6", "1 2 8 1"}))
      << ProgramToString(before);
  EXPECT_EQ(FillExtents(after),
            (std::vector<std::string>{"1 2 8 1", "1 2 1 6", "1 2 1 6", "1 2 8 1"}))
      << ProgramToString(after);
  EXPECT_TRUE(absl::StrContains(ProgramToString(after), ", (i3 + 3)] = 0"))
      << ProgramToString(after);
  // Compiled, on any thread count, it computes what the graph does.
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(kWidened);
  ASSERT_TRUE(g.ok());
  runtime::TensorMap in = {{"x", Wave(ir::DType::kF32, {1, 2, 6, 6}, 0.4)}};
  auto want = runtime::Interpret(*g, in, {});
  ASSERT_TRUE(want.ok()) << want.status();
  for (int threads : {1, 2, 3}) {
    CompileGraphOptions options;
    options.threads = threads;
    options.min_parallel_work = 0;
    options.env = &CompileEnv::MemoryOnly();
    auto cg = CompiledGraph::Compile(*g, {}, options);
    ASSERT_TRUE(cg.ok()) << cg.status();
    for (int call = 0; call < 2; ++call) {
      auto got = (*cg)->Run(in);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_LT(runtime::MaxAbsDiff((*want)[0], (*got)[0]), 1e-5);
    }
  }
}

TEST(NarrowFills, DoesNotFire) {
  struct Case {
    const char* why;
    const char* text;
  };
  const Case cases[] = {
      {"a fill of an output", R"(graph g {
  %0 = full {value=0} : f32[4, 16]
  return %0
})"},
      {"every element read (a pad of 1 under a 3 x 3 window)", R"(graph g {
  %0 = input {name="x"} : f32[1, 2, 6, 6]
  %1 = full {value=0} : f32[1, 2, 1, 6]
  %2 = concat(%1, %0, %1) {axis=2} : f32[1, 2, 8, 6]
  %3 = full {value=0} : f32[1, 2, 8, 1]
  %4 = concat(%3, %2, %3) {axis=3} : f32[1, 2, 8, 8]
  %5 = window(%4) {dilations=[1, 1], kernel=[3, 3], strides=[1, 1]} : f32[1, 2, 3, 3, 6, 6]
  %6 = reduce_sum(%5) {axis=3, keepdim=false} : f32[1, 2, 3, 6, 6]
  %7 = reduce_sum(%6) {axis=2, keepdim=false} : f32[1, 2, 6, 6]
  return %7
})"},
  };
  for (const Case& c : cases) {
    const Program before = LoweredUpTo(c.text, "fuse_epilogues");
    const Program after = LoweredUpTo(c.text, "narrow_fills");
    EXPECT_FALSE(FillExtents(before).empty()) << c.why << "\n" << ProgramToString(before);
    EXPECT_EQ(FillExtents(before), FillExtents(after)) << c.why << "\n" << ProgramToString(after);
    EXPECT_EQ(before.kernels.size(), after.kernels.size()) << c.why;
  }
  // OpenBLAS is given an operand's origin (its loads name one element) and reads the whole
  // matrix: a padded operand's fill stays whole.
  constexpr const char* kBlasOperand = R"(graph g {
  %0 = input {name="x"} : f32[6, 32]
  %1 = full {value=0} : f32[2, 32]
  %2 = concat(%1, %0) {axis=0} : f32[8, 32]
  %3 = input {name="w"} : f32[32, 16]
  %4 = matmul(%2, %3) : f32[8, 16]
  return %4
})";
  const Program before = LoweredUpTo(kBlasOperand, "fuse_epilogues", ProductKernels::kBlas);
  const Program after = LoweredUpTo(kBlasOperand, "narrow_fills", ProductKernels::kBlas);
  ASSERT_TRUE(absl::StrContains(ProgramToString(after), "_blas")) << ProgramToString(after);
  EXPECT_EQ(FillExtents(before), (std::vector<std::string>{"2 32"})) << ProgramToString(before);
  EXPECT_EQ(FillExtents(after), FillExtents(before)) << ProgramToString(after);
}

}  // namespace
}  // namespace graphjit::compiler
