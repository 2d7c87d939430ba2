// PrepareCall's workspace: each thread keeps one (up to 1 MiB) and reuses it for its next
// call, but never for a frame while another frame still holds it, so two frames alive at
// once (a nested or kept call) never share scratch memory.
#include "compiler/compiled/call_frame.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <vector>

#include "compiler/lower/lower.h"
#include "compiler/lower/program_eval.h"
#include "gtest/gtest.h"
#include "ir/parser.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;

// Softmax rows of x [r, c]: the max and the sums are temps, so the program has a
// workspace of a size that grows with r.
constexpr char kSoftmax[] = R"(graph softmax {
  %0 = input {name="x"} : f64[R, 4]
  %1 = reduce_max(%0) {axis=-1, keepdim=true} : f64[R, 1]
  %2 = sub(%0, %1) : f64[R, 4]
  %3 = exp(%2) : f64[R, 4]
  %4 = reduce_sum(%3) {axis=-1, keepdim=true} : f64[R, 1]
  %5 = div(%3, %4) : f64[R, 4]
  return %5
})";

struct Lowered {
  ir::Graph graph;
  LoweredGraph lowered;
  std::vector<Tensor> constants;
};

Lowered LowerSoftmax() {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(kSoftmax);
  EXPECT_TRUE(g.ok()) << g.status();
  absl::StatusOr<LoweredGraph> lowered = Lower(*g);
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  std::vector<Tensor> constants = ConstantTensors(*g, *lowered);
  return {*std::move(g), *std::move(lowered), std::move(constants)};
}

runtime::TensorMap Input(int64_t rows) {
  std::vector<double> x(rows * 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25 * static_cast<double>(i % 7);
  return {{"x", *Tensor::FromDoubles(ir::DType::kF64, {rows, 4}, x)}};
}

// The frame points into `inputs`, which must outlive it.
absl::StatusOr<CallFrame> Prepare(const Lowered& l, const runtime::TensorMap& inputs) {
  return PrepareCall(l.graph, l.lowered, inputs, {}, l.constants, {});
}

TEST(CallFrameWorkspace, ReusedByTheNextCallButNeverSharedByLiveFrames) {
  const Lowered l = LowerSoftmax();
  ASSERT_GT(*l.lowered.program.workspace_bytes.Evaluate({{"R", 3}}), 0);
  const char* first = nullptr;
  {
    const runtime::TensorMap in = Input(3);
    absl::StatusOr<CallFrame> a = Prepare(l, in);
    ASSERT_TRUE(a.ok()) << a.status();
    first = a->workspace.get();
    // While `a` holds the thread's workspace, another frame gets one of its own.
    absl::StatusOr<CallFrame> b = Prepare(l, in);
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_NE(b->workspace.get(), first);
  }
  // Both gone: the next call reuses the kept workspace (not a chunk malloc happens to
  // hand out again: these take any freed chunks of that size first).
  const int64_t bytes = *l.lowered.program.workspace_bytes.Evaluate({{"R", 3}});
  std::unique_ptr<void, decltype(&std::free)> f1(std::aligned_alloc(64, bytes), std::free),
      f2(std::aligned_alloc(64, bytes), std::free);
  const runtime::TensorMap in = Input(2);
  absl::StatusOr<CallFrame> c = Prepare(l, in);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->workspace.get(), first);
}

TEST(CallFrameWorkspace, GrowsForALargerCallAndStaysCorrect) {
  const Lowered l = LowerSoftmax();
  for (int64_t rows : {2, 3000, 5, 70000, 1}) {  // 70000 rows: a workspace over 1 MiB
    SCOPED_TRACE(rows);
    const runtime::TensorMap in = Input(rows);
    absl::StatusOr<CallFrame> frame = Prepare(l, in);
    ASSERT_TRUE(frame.ok()) << frame.status();
    // Fill the workspace with garbage first: results must not depend on its contents.
    const int64_t bytes = *l.lowered.program.workspace_bytes.Evaluate({{"R", rows}});
    std::fill(frame->workspace.get(), frame->workspace.get() + bytes, static_cast<char>(0x7f));
    absl::Status s = EvaluateProgram(l.lowered.program, frame->args.data(), frame->symbols.data(),
                                     frame->workspace.get());
    ASSERT_TRUE(s.ok()) << s;
    const std::vector<double> out = frame->outputs[0].ToDoubles();
    for (int64_t r = 0; r < rows; ++r) {
      double sum = 0;
      for (int c = 0; c < 4; ++c) sum += out[r * 4 + c];
      ASSERT_NEAR(sum, 1.0, 1e-12) << "row " << r;
    }
  }
}

}  // namespace
}  // namespace graphjit::compiler
