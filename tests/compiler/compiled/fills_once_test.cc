// Fills run once per workspace (compiler/lower/constant_fills.h, KernelSet's workspace
// header): a padded convolution gives the interpreter's results on every call, also when
// another graph ran on the thread's workspace in between and overwrote its border, when
// the symbols change (another layout), on 1 and 3 threads, and through a
// CompiledCall (a workspace of its own); padded inputs of one shape share their bytes;
// a fresh workspace's header is cleared.
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/compiled/compiled_call.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/lower/buffer_plan.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/interpreter.h"
#include "runtime/jit_helpers.h"
#include "tests/compiler/compiled/test_tensors.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using runtime::TensorMap;

// A 3 x 3 convolution of x [N, 3, H, 9] padded by 1 (a border filled with zeros), plus 1.
constexpr const char* kPaddedConv = R"(graph conv {
  %0 = input {name="x"} : f32[N, 3, H, 9]
  %1 = full {value=0} : f32[N, 3, 1, 9]
  %2 = concat(%1, %0, %1) {axis=2} : f32[N, 3, H+2, 9]
  %3 = full {value=0} : f32[N, 3, H+2, 1]
  %4 = concat(%3, %2, %3) {axis=3} : f32[N, 3, H+2, 11]
  %5 = window(%4) {dilations=[1, 1], kernel=[3, 3], strides=[1, 1]} : f32[N, 3, 3, 3, H, 9]
  %6 = reshape(%5) {shape=[N, 27, H*9]} : f32[N, 27, H*9]
  %7 = param {name="w"} : f32[8, 27]
  %8 = matmul(%7, %6) : f32[N, 8, H*9]
  %9 = full {value=1} : f32[]
  %10 = add(%8, %9) : f32[N, 8, H*9]
  return %10
})";

// Another graph whose temp (the product's operand, 16 KiB of values near 1000) covers the
// same workspace bytes.
constexpr const char* kScribble = R"(graph scribble {
  %0 = input {name="y"} : f32[64, 64]
  %1 = full {value=1000} : f32[]
  %2 = add(%0, %1) : f32[64, 64]
  %3 = matmul(%2, %2) : f32[64, 64]
  return %3
})";

TEST(FillsOnce, PaddedConvolutionMatchesTheInterpreterAcrossCallsAndOtherGraphs) {
  absl::StatusOr<ir::Graph> conv = ir::ParseGraph(kPaddedConv);
  absl::StatusOr<ir::Graph> scribble = ir::ParseGraph(kScribble);
  ASSERT_TRUE(conv.ok()) << conv.status();
  ASSERT_TRUE(scribble.ok()) << scribble.status();
  const TensorMap params = {{"w", Wave(ir::DType::kF32, {8, 27}, 0.4)}};
  const TensorMap noise = {{"y", Wave(ir::DType::kF32, {64, 64}, 0.9)}};
  for (int threads : {1, 3}) {
    SCOPED_TRACE(absl::StrCat(threads, " threads"));
    std::unique_ptr<CompiledGraph> cg = CompileOnThreads(*conv, params, threads);
    std::unique_ptr<CompiledGraph> other = CompileOnThreads(*scribble, {}, threads);
    ASSERT_NE(cg, nullptr);
    ASSERT_NE(other, nullptr);
    EXPECT_TRUE(absl::StrContains(ProgramToString(cg->program()), "(once)"))
        << ProgramToString(cg->program());
    // The scribble's temp starts where the padded buffer may: right after the header.
    EXPECT_FALSE(other->program().workspace_bytes == ir::SymExpr(0));
    // (N, H); {0, 0}: the scribble. (2, 5) then (1, 9) on the same workspace: the same
    // set, other symbols (another layout), so the fills run again.
    for (auto [n, h] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 9}, {1, 9}, {0, 0}, {2, 5}, {1, 9}, {1, 5}, {0, 0}, {1, 9}}) {
      if (n == 0) {
        ASSERT_TRUE(other->Run(noise).ok());
        continue;
      }
      SCOPED_TRACE(absl::StrCat("N = ", n, ", H = ", h));
      const TensorMap in = {{"x", Wave(ir::DType::kF32, {n, 3, h, 9}, 0.3 + n + h)}};
      auto want = runtime::Interpret(*conv, in, params);
      ASSERT_TRUE(want.ok()) << want.status();
      auto got = cg->Run(in);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_LT(runtime::MaxAbsDiff((*want)[0], (*got)[0]), 1e-5);
    }
  }
}

TEST(FillsOnce, ACompiledCallsOwnWorkspaceKeepsItsConstants) {
  absl::StatusOr<ir::Graph> conv = ir::ParseGraph(kPaddedConv);
  ASSERT_TRUE(conv.ok()) << conv.status();
  const TensorMap params = {{"w", Wave(ir::DType::kF32, {8, 27}, 0.4)}};
  std::unique_ptr<CompiledGraph> cg = CompileOnThreads(*conv, params, 1);
  ASSERT_NE(cg, nullptr);
  CompiledCall call(*cg);
  for (int64_t h : {9, 9, 4, 9}) {
    SCOPED_TRACE(absl::StrCat("H = ", h));
    const Tensor x = Wave(ir::DType::kF32, {1, 3, h, 9}, 0.7 * h);
    auto want = runtime::Interpret(*conv, {{"x", x}}, params);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(call.Run({x}, {}).ok());
    EXPECT_LT(runtime::MaxAbsDiff((*want)[0], call.outputs()[0]), 1e-5);
  }
}

// Three such convolutions in a row, 3 channels to 3: their padded inputs have one shape
// and one border, so the first's bytes serve the third (buffer_plan.h).
std::string ThreePaddedConvs() {
  std::string text = "graph convs {\n  %0 = input {name=\"x\"} : f32[N, 3, H, 9]\n";
  int v = 0;
  for (int i = 0; i < 3; ++i) {
    const int x = v;
    absl::StrAppend(
        &text, "  %", v + 1, " = full {value=0} : f32[N, 3, 1, 9]\n", "  %", v + 2, " = concat(%",
        v + 1, ", %", x, ", %", v + 1, ") {axis=2} : f32[N, 3, H+2, 9]\n", "  %", v + 3,
        " = full {value=0} : f32[N, 3, H+2, 1]\n", "  %", v + 4, " = concat(%", v + 3, ", %", v + 2,
        ", %", v + 3, ") {axis=3} : f32[N, 3, H+2, 11]\n", "  %", v + 5, " = window(%", v + 4,
        ") {dilations=[1, 1], kernel=[3, 3], strides=[1, 1]} : f32[N, 3, 3, 3, H, 9]\n", "  %",
        v + 6, " = reshape(%", v + 5, ") {shape=[N, 27, H*9]} : f32[N, 27, H*9]\n", "  %", v + 7,
        " = param {name=\"w", i, "\"} : f32[3, 27]\n", "  %", v + 8, " = matmul(%", v + 7, ", %",
        v + 6, ") : f32[N, 3, H*9]\n", "  %", v + 9, " = reshape(%", v + 8,
        ") {shape=[N, 3, H, 9]} : f32[N, 3, H, 9]\n");
    v += 9;
  }
  return absl::StrCat(text, "  return %", v, "\n}");
}

TEST(FillsOnce, PaddedInputsOfOneShapeShareBytesAndKeepTheirBorders) {
  absl::StatusOr<ir::Graph> convs = ir::ParseGraph(ThreePaddedConvs());
  ASSERT_TRUE(convs.ok()) << convs.status();
  const TensorMap params = {{"w0", Wave(ir::DType::kF32, {3, 27}, 0.4)},
                            {"w1", Wave(ir::DType::kF32, {3, 27}, 0.5)},
                            {"w2", Wave(ir::DType::kF32, {3, 27}, 0.6)}};
  std::unique_ptr<CompiledGraph> cg = CompileOnThreads(*convs, params, 1);
  ASSERT_NE(cg, nullptr);
  // The temps once kernels fill, by offset: three padded inputs in two places.
  const Program& program = cg->program();
  std::set<int> kept;
  for (const Kernel& k : program.kernels) {
    if (k.once) kept.insert(k.out);
  }
  std::set<std::string> offsets;
  for (int b : kept) offsets.insert(ExprToString(program.buffers[b].workspace_offset));
  EXPECT_EQ(kept.size(), 3u) << ProgramToString(program);
  EXPECT_EQ(offsets.size(), 2u) << ProgramToString(program);
  for (int64_t h : {9, 9, 4, 9}) {
    SCOPED_TRACE(absl::StrCat("H = ", h));
    const TensorMap in = {{"x", Wave(ir::DType::kF32, {2, 3, h, 9}, 0.7 * h)}};
    auto want = runtime::Interpret(*convs, in, params);
    ASSERT_TRUE(want.ok()) << want.status();
    auto got = cg->Run(in);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_LT(runtime::MaxAbsDiff((*want)[0], (*got)[0]), 1e-4);
  }
}

TEST(FillsOnce, ClearHeaderForgetsTheLastSet) {
  std::vector<char> workspace(2 * kWorkspaceHeaderBytes, 7);
  KernelSet::ClearHeader(workspace.data(), static_cast<int64_t>(workspace.size()));
  for (int64_t i = 0; i < kWorkspaceHeaderBytes; ++i) EXPECT_EQ(workspace[i], 0);
  EXPECT_EQ(workspace[kWorkspaceHeaderBytes], 7);
  KernelSet::ClearHeader(nullptr, 0);  // no workspace: nothing to clear
}

}  // namespace
}  // namespace graphjit::compiler
