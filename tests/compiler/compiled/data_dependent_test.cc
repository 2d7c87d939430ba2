// Data-dependent sizes (ir/ops.def: nonzero, compress, non_max_suppression, unique) compiled as
// steps between compiled pieces (compiler/compiled/control_flow.h) against the interpreter:
// counts of 0, 1 and many, the pieces after each op sized by its unbacked symbol, two such
// symbols in one graph, a CompiledCall and 1 and 3 threads; and the errors: a symbol used
// before the node that defines it, a bad symbol name, a condition longer than its axis.
#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/compiled/compiled_call.h"
#include "compiler/compiled/compiled_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "runtime/interpreter.h"
#include "tests/compiler/compiled/test_tensors.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using runtime::TensorMap;
using ::testing::HasSubstr;

// The rows of table w at the columns where x > 0 (k of them), scaled and summed; and the
// rows of x that `keep` selects (m of them), doubled: compiled code after each op is sized
// by k or m at run time.
constexpr const char* kGraph = R"(graph picks {
  %0 = input {name="x"} : f32[N, 6]
  %1 = input {name="keep"} : bool[N]
  %2 = param {name="w"} : f32[6, 4]
  %3 = full {value=0.0} : f32[]
  %4 = gt(%0, %3) : bool[N, 6]
  %5 = nonzero(%4) {symbol="k"} : i64[2, k]
  %6 = slice(%5) {axis=0, start=1, end=2} : i64[1, k]
  %7 = reshape(%6) {shape=[k]} : i64[k]
  %8 = gather(%2, %7) : f32[k, 4]
  %9 = tanh(%8) : f32[k, 4]
  %10 = reduce_sum(%9) {axis=0, keepdim=false} : f32[4]
  %11 = compress(%0, %1) {axis=0, symbol="m"} : f32[m, 6]
  %12 = add(%11, %11) : f32[m, 6]
  return %5, %10, %12
})";

TensorMap Weights() { return {{"w", Wave(ir::DType::kF32, {6, 4}, 0.7)}}; }

// x [n, 6] with `positive` elements > 0 (the first ones in row-major order), keep with
// `kept` true entries (every other one from the start).
TensorMap Inputs(int64_t n, int64_t positive, int64_t kept) {
  std::vector<double> x(n * 6), keep(n);
  for (int64_t i = 0; i < n * 6; ++i) x[i] = i < positive ? 0.25 * (i + 1) : -0.5 * i;
  for (int64_t i = 0, left = kept; i < n && left > 0; i += 2, --left) keep[i] = 1;
  return {{"x", *Tensor::FromDoubles(ir::DType::kF32, {n, 6}, x)},
          {"keep", *Tensor::FromDoubles(ir::DType::kBool, {n}, keep)}};
}

TEST(DataDependentCompiled, CountsOfZeroOneAndManyMatchTheInterpreter) {
  const ir::Graph g = *ir::ParseGraph(kGraph);
  for (int threads : {1, 3}) {
    std::unique_ptr<CompiledGraph> cg = CompileOnThreads(g, Weights(), threads);
    ASSERT_NE(cg, nullptr);
    ASSERT_NE(cg->control_flow(), nullptr);
    // Two steps and the pieces around them, each piece compiled code.
    EXPECT_GE(cg->control_flow()->num_compiled(), 2);
    for (auto [n, positive, kept] : std::vector<std::tuple<int, int, int>>{
             {1, 0, 0}, {1, 1, 1}, {3, 7, 1}, {5, 30, 3}, {4, 13, 2}}) {
      SCOPED_TRACE(absl::StrCat("threads=", threads, " N=", n, " positive=", positive));
      const TensorMap in = Inputs(n, positive, kept);
      ExpectSameAsInterpreter(*cg, g, in, Weights(), 1e-6);
      absl::StatusOr<std::vector<Tensor>> out = cg->Run(in);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{2, positive}));
      EXPECT_EQ((*out)[2].shape(), (std::vector<int64_t>{kept, 6}));
      if (positive > 0) {  // the first hit is x[0, 0]: row 0, column 0
        EXPECT_EQ((*out)[0].data<int64_t>()[0], 0);
        EXPECT_EQ((*out)[0].data<int64_t>()[positive], 0);
      }
    }
  }
}

TEST(DataDependentCompiled, ThePiecesAfterAreCompiledCodeSizedByTheSymbol) {
  const ir::Graph g = *ir::ParseGraph(kGraph);
  std::unique_ptr<CompiledGraph> cg = CompileOnThreads(g, Weights(), 1);
  ASSERT_NE(cg, nullptr);
  bool sized_by_k = false;
  for (const auto& [label, piece] : cg->control_flow()->Compiled()) {
    const std::vector<std::string>& symbols = piece->program().symbols;
    if (std::find(symbols.begin(), symbols.end(), "k") != symbols.end()) {
      sized_by_k = !piece->program().kernels.empty();
    }
  }
  EXPECT_TRUE(sized_by_k) << "no compiled piece reads k";
}

TEST(DataDependentCompiled, ACompiledCallGivesTheSameAsRun) {
  const ir::Graph g = *ir::ParseGraph(kGraph);
  std::unique_ptr<CompiledGraph> cg = CompileOnThreads(g, Weights(), 1);
  ASSERT_NE(cg, nullptr);
  CompiledCall call(*cg);
  for (int positive : {3, 0, 11}) {
    const TensorMap in = Inputs(2, positive, 2);
    const std::vector<const Tensor*> args = {&in.at("x"), &in.at("keep")};
    ASSERT_TRUE(call.Run(args, {}).ok());
    absl::StatusOr<std::vector<Tensor>> want = cg->Run(in);
    ASSERT_TRUE(want.ok()) << want.status();
    for (size_t k = 0; k < want->size(); ++k) {
      EXPECT_TRUE(SameBits(call.outputs()[k], (*want)[k])) << "positive=" << positive;
    }
  }
}

TEST(DataDependentCompiled, AConditionLongerThanItsAxisIsAnError) {
  const ir::Graph g = *ir::ParseGraph(kGraph);
  std::unique_ptr<CompiledGraph> cg = CompileOnThreads(g, Weights(), 1);
  ASSERT_NE(cg, nullptr);
  // keep is declared bool[N]: a longer one is refused at the inputs; the op's own check
  // is for graphs where the lengths are separate symbols.
  constexpr const char* kLonger = R"(graph longer {
  %0 = input {name="x"} : f32[N, 2]
  %1 = input {name="keep"} : bool[M]
  %2 = compress(%0, %1) {axis=0, symbol="m"} : f32[m, 2]
  return %2
})";
  const ir::Graph longer = *ir::ParseGraph(kLonger);
  std::unique_ptr<CompiledGraph> lc = CompileOnThreads(longer, {}, 1);
  ASSERT_NE(lc, nullptr);
  const TensorMap in = {{"x", Wave(ir::DType::kF32, {2, 2}, 0.1)},
                        {"keep", *Tensor::FromDoubles(ir::DType::kBool, {3}, {1, 0, 1})}};
  for (const absl::Status& s :
       {runtime::Interpret(longer, in, {}).status(), lc->Run(in).status()}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("compress: condition bool[3] is longer than axis 0"));
  }
}

TEST(DataDependentIr, PrintsParsesAndVerifies) {
  const ir::Graph g = *ir::ParseGraph(kGraph);
  EXPECT_TRUE(ir::VerifyGraph(g).ok());
  EXPECT_EQ(g.DefinedSymbols(), (std::set<std::string>{"k", "m"}));
  EXPECT_TRUE(g.HasRuntimeOps());
  absl::StatusOr<ir::Graph> again = ir::ParseGraph(ir::PrintGraph(g));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(ir::PrintGraph(*again), ir::PrintGraph(g));
}

TEST(DataDependentIr, ASymbolMustBeNewWhereItIsDefined) {
  // k is an input's dim: the nonzero cannot define it too.
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(R"(graph reused {
  %0 = input {name="x"} : f32[k]
  %1 = nonzero(%0) {symbol="k"} : i64[1, k]
  return %1
})");
  absl::Status s = g.ok() ? ir::VerifyGraph(*g) : g.status();
  EXPECT_THAT(s.message(), HasSubstr("symbol 'k' is used before this node, which defines it"));
  // Two nodes defining one symbol.
  g = ir::ParseGraph(R"(graph twice {
  %0 = input {name="x"} : f32[4]
  %1 = nonzero(%0) {symbol="k"} : i64[1, k]
  %2 = nonzero(%0) {symbol="k"} : i64[1, k]
  return %1, %2
})");
  s = g.ok() ? ir::VerifyGraph(*g) : g.status();
  EXPECT_THAT(s.message(), HasSubstr("symbol 'k' is used before this node"));
  g = ir::ParseGraph(R"(graph badname {
  %0 = input {name="x"} : f32[4]
  %1 = nonzero(%0) {symbol="1k"} : i64[1, 1k]
  return %1
})");
  EXPECT_FALSE(g.ok());
}

TEST(DataDependentRuntime, NonMaxSuppressionKeepsTheBestOfEachOverlap) {
  // Three boxes: 0 and 1 overlap (IoU 0.9), 2 apart; box 1 scores best.
  constexpr const char* kNms = R"(graph nms {
  %0 = input {name="boxes"} : f32[1, 3, 4]
  %1 = input {name="scores"} : f32[1, 1, 3]
  %2 = non_max_suppression(%0, %1) {max_per_class=3, iou_threshold=0.5, score_threshold=0.1, center_point_box=0, symbol="n"} : i64[n, 3]
  return %2
})";
  const ir::Graph g = *ir::ParseGraph(kNms);
  const TensorMap in = {
      {"boxes",
       *Tensor::FromDoubles(ir::DType::kF32, {1, 3, 4}, {0, 0, 1, 1, 0, 0.1, 1, 1.0, 5, 5, 6, 6})},
      {"scores", *Tensor::FromDoubles(ir::DType::kF32, {1, 1, 3}, {0.8, 0.9, 0.05})}};
  std::unique_ptr<CompiledGraph> cg = CompileOnThreads(g, {}, 1);
  ASSERT_NE(cg, nullptr);
  for (absl::StatusOr<std::vector<Tensor>> out : {runtime::Interpret(g, in, {}), cg->Run(in)}) {
    ASSERT_TRUE(out.ok()) << out.status();
    // Box 1 kept, box 0 suppressed by it, box 2 under the score threshold.
    ASSERT_EQ((*out)[0].shape(), (std::vector<int64_t>{1, 3}));
    EXPECT_EQ((*out)[0].data<int64_t>()[2], 1);
  }
}

TEST(DataDependentCompiled, UniqueIdsLookedUpOnceAndScatteredBackByTheInverse) {
  // The distinct ids' rows of w, transformed once each (compiled code sized by u), sent
  // back to every id by the inverse, and the counts.
  constexpr const char* kDedupe = R"(graph dedupe {
  %0 = input {name="ids"} : i64[N]
  %1 = param {name="w"} : f32[6, 4]
  %2 = unique(%0) {axis=0, sorted=true, symbol="u"} : i64[u]
  %3 = gather(%1, %2) : f32[u, 4]
  %4 = tanh(%3) : f32[u, 4]
  %5 = unique_inverse(%0, %2) {axis=0, sorted=true} : i64[N]
  %6 = gather(%4, %5) : f32[N, 4]
  %7 = unique_counts(%0, %2) {axis=0, sorted=true} : i64[u]
  %8 = unique_indices(%0, %2) {axis=0, sorted=true} : i64[u]
  return %6, %7, %8
})";
  const ir::Graph g = *ir::ParseGraph(kDedupe);
  for (int threads : {1, 3}) {
    std::unique_ptr<CompiledGraph> cg = CompileOnThreads(g, Weights(), threads);
    ASSERT_NE(cg, nullptr);
    ASSERT_NE(cg->control_flow(), nullptr);
    for (const std::vector<double>& ids :
         std::vector<std::vector<double>>{{3}, {5, 5, 5}, {4, 0, 4, 2, 0, 5, 1}}) {
      const TensorMap in = {
          {"ids", *Tensor::FromDoubles(ir::DType::kI64, {static_cast<int64_t>(ids.size())}, ids)}};
      ExpectSameAsInterpreter(*cg, g, in, Weights(), 1e-6);
      absl::StatusOr<std::vector<Tensor>> out = cg->Run(in);
      ASSERT_TRUE(out.ok()) << out.status();
      const std::set<double> distinct(ids.begin(), ids.end());
      EXPECT_EQ((*out)[1].shape(), (std::vector<int64_t>{static_cast<int64_t>(distinct.size())}));
    }
  }
}

}  // namespace
}  // namespace graphjit::compiler
