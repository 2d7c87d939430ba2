// A graph with while loops compiled (compiler/compiled/control_flow.h) against the
// interpreter: loops that run 0, 1 and many trips, the trip limit, invariants and weights
// read in the regions, a loop nested in a loop's body, a carried value the body returns
// unchanged, symbolic carried shapes, 1 and 3 threads, and a CompiledCall; the
// frontend's While traced and compiled against the same loop run eagerly.
#include "frontend/control_flow.h"

#include <string>
#include <utility>
#include <vector>

#include "compiler/compiled/compiled_call.h"
#include "compiler/compiled/compiled_graph.h"
#include "frontend/eager_context.h"
#include "frontend/ops.h"
#include "frontend/trace_context.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "runtime/interpreter.h"
#include "tests/compiler/compiled/test_tensors.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using runtime::TensorMap;
using ::testing::HasSubstr;

// x [S] and a count n: while n < limit: x = tanh(x @ w + b), n += 1; also a carried
// `keep` the body returns unchanged. Outputs: x, n, keep, and x + 1 after the loop.
constexpr const char* kLoop = R"(graph loop {
  %0 = input {name="x"} : f32[S, 8]
  %1 = input {name="limit"} : i64[]
  %2 = param {name="w"} : f32[8, 8]
  %3 = full {value=0.0} : i64[]
  %4 = full {value=3.0} : f32[S, 8]
  %5 = mul(%0, %4) : f32[S, 8]
  %6 = while(%5, %3, %0, %1, %2) {carried=3, max_trips=50} : f32[S, 8]
    region graph cond {
      %0 = input {name="x"} : f32[S, 8]
      %1 = input {name="n"} : i64[]
      %2 = input {name="keep"} : f32[S, 8]
      %3 = input {name="limit"} : i64[]
      %4 = input {name="w"} : f32[8, 8]
      %5 = lt(%1, %3) : bool[]
      return %5
    }
    region graph body {
      %0 = input {name="x"} : f32[S, 8]
      %1 = input {name="n"} : i64[]
      %2 = input {name="keep"} : f32[S, 8]
      %3 = input {name="limit"} : i64[]
      %4 = input {name="w"} : f32[8, 8]
      %5 = matmul(%0, %4) : f32[S, 8]
      %6 = param {name="b"} : f32[8]
      %7 = add(%5, %6) : f32[S, 8]
      %8 = tanh(%7) : f32[S, 8]
      %9 = constant {value=[1.0]} : i64[]
      %10 = add(%1, %9) : i64[]
      return %8, %10, %2
    }
  %7 = loop_result(%6, %3) {index=1} : i64[]
  %8 = loop_result(%6, %0) {index=2} : f32[S, 8]
  %9 = full {value=1.0} : f32[]
  %10 = add(%6, %9) : f32[S, 8]
  return %6, %7, %8, %10
})";

TensorMap Weights() {
  return {{"w", Wave(ir::DType::kF32, {8, 8}, 0.3)}, {"b", Wave(ir::DType::kF32, {8}, 1.1)}};
}

Tensor Count(int64_t v) { return *Tensor::FromDoubles(ir::DType::kI64, {}, {double(v)}); }

TEST(ControlFlowCompiled, LoopsMatchTheInterpreter) {
  const ir::Graph g = *ir::ParseGraph(kLoop);
  const TensorMap params = Weights();
  std::unique_ptr<CompiledGraph> cg = CompileOnThreads(g, params);
  ASSERT_NE(cg, nullptr);
  ASSERT_NE(cg->control_flow(), nullptr);
  EXPECT_EQ(cg->control_flow()->num_loops(), 1);
  EXPECT_TRUE(cg->program().kernels.empty());
  for (int64_t limit : {0, 1, 7, 80}) {
    for (int64_t s : {1, 5}) {
      const TensorMap in = {{"x", Wave(ir::DType::kF32, {s, 8}, 0.1 * limit)},
                            {"limit", Count(limit)}};
      SCOPED_TRACE(absl::StrCat("limit=", limit, " S=", s));
      ExpectSameAsInterpreter(*cg, g, in, params);
      absl::StatusOr<std::vector<Tensor>> out = cg->Run(in);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[1].data<int64_t>()[0], std::min<int64_t>(limit, 50));  // max_trips
      EXPECT_TRUE(SameBits((*out)[2], in.at("x")));  // carried through unchanged
    }
  }
}

TEST(ControlFlowCompiled, TheCallersInputsAreNotWritten) {
  const ir::Graph g = *ir::ParseGraph(kLoop);
  std::unique_ptr<CompiledGraph> cg = CompileOnThreads(g, Weights());
  ASSERT_NE(cg, nullptr);
  const Tensor x = Wave(ir::DType::kF32, {3, 8}, 0.5);
  const Tensor before = x.Clone();
  ASSERT_TRUE(cg->Run({{"x", x}, {"limit", Count(4)}}).ok());
  EXPECT_TRUE(SameBits(x, before));
}

TEST(ControlFlowCompiled, ThreadsAndCallsGiveTheSameBits) {
  const ir::Graph g = *ir::ParseGraph(kLoop);
  const TensorMap params = Weights();
  std::unique_ptr<CompiledGraph> one = CompileOnThreads(g, params, 1),
                                 three = CompileOnThreads(g, params, 3);
  ASSERT_NE(one, nullptr);
  ASSERT_NE(three, nullptr);
  CompiledCall call(*one);
  for (int64_t limit : {2, 9}) {
    const Tensor x = Wave(ir::DType::kF32, {6, 8}, 0.2);
    const Tensor n = Count(limit);
    absl::StatusOr<std::vector<Tensor>> a = one->Run({{"x", x}, {"limit", n}});
    absl::StatusOr<std::vector<Tensor>> b = three->Run({{"x", x}, {"limit", n}});
    ASSERT_TRUE(a.ok() && b.ok());
    // CompiledCall takes the inputs in the order of input_names().
    std::vector<Tensor> args;
    for (const std::string& name : call.input_names()) args.push_back(name == "x" ? x : n);
    ASSERT_TRUE(call.Run(args).ok());
    for (size_t k = 0; k < a->size(); ++k) {
      EXPECT_TRUE(SameBits((*a)[k], (*b)[k])) << "output " << k;
      EXPECT_TRUE(SameBits((*a)[k], call.outputs()[k])) << "output " << k;
    }
  }
}

// A while in a while's body: for each of `outer` trips, x doubles `inner` times.
constexpr const char* kNested = R"(graph nested {
  %0 = input {name="x"} : f64[4]
  %1 = input {name="outer"} : i64[]
  %2 = full {value=0.0} : i64[]
  %3 = while(%0, %2, %1) {carried=2} : f64[4]
    region graph cond {
      %0 = input {name="x"} : f64[4]
      %1 = input {name="i"} : i64[]
      %2 = input {name="outer"} : i64[]
      %3 = lt(%1, %2) : bool[]
      return %3
    }
    region graph body {
      %0 = input {name="x"} : f64[4]
      %1 = input {name="i"} : i64[]
      %2 = input {name="outer"} : i64[]
      %3 = full {value=0.0} : i64[]
      %4 = while(%0, %3) {carried=2} : f64[4]
        region graph cond {
          %0 = input {name="y"} : f64[4]
          %1 = input {name="j"} : i64[]
          %2 = constant {value=[3.0]} : i64[]
          %3 = lt(%1, %2) : bool[]
          return %3
        }
        region graph body {
          %0 = input {name="y"} : f64[4]
          %1 = input {name="j"} : i64[]
          %2 = add(%0, %0) : f64[4]
          %3 = constant {value=[1.0]} : i64[]
          %4 = add(%1, %3) : i64[]
          return %2, %4
        }
      %5 = constant {value=[1.0]} : i64[]
      %6 = add(%1, %5) : i64[]
      return %4, %6
    }
  return %3
})";

TEST(ControlFlowCompiled, ALoopInALoopsBody) {
  const ir::Graph g = *ir::ParseGraph(kNested);
  std::unique_ptr<CompiledGraph> cg = CompileOnThreads(g, {});
  ASSERT_NE(cg, nullptr);
  EXPECT_EQ(cg->control_flow()->num_compiled(), 4);  // cond, body's piece, inner cond + body
  for (int64_t outer : {0, 1, 2}) {
    const TensorMap in = {{"x", *Tensor::FromDoubles(ir::DType::kF64, {4}, {1, -2, 0.5, 3})},
                          {"outer", Count(outer)}};
    ExpectSameAsInterpreter(*cg, g, in, {});
    absl::StatusOr<std::vector<Tensor>> out = cg->Run(in);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].data<double>()[1], -2.0 * (1 << (3 * outer)));
  }
}

// x <- x * tanh(w) + 1 while n < 4: tanh(w) depends on the invariant w alone, so the
// passes compute it once before the loop (hoist_loop_invariants).
constexpr const char* kInvariantBody = R"(graph invariant {
  %0 = input {name="x"} : f64[S]
  %1 = input {name="w"} : f64[S]
  %2 = full {value=0.0} : i64[]
  %3 = while(%0, %2, %1) {carried=2} : f64[S]
    region graph cond {
      %0 = input {name="x"} : f64[S]
      %1 = input {name="n"} : i64[]
      %2 = input {name="w"} : f64[S]
      %3 = constant {value=[4.0]} : i64[]
      %4 = lt(%1, %3) : bool[]
      return %4
    }
    region graph body {
      %0 = input {name="x"} : f64[S]
      %1 = input {name="n"} : i64[]
      %2 = input {name="w"} : f64[S]
      %3 = tanh(%2) : f64[S]
      %4 = mul(%0, %3) : f64[S]
      %5 = constant {value=[1.0]} : f64[]
      %6 = add(%4, %5) : f64[S]
      %7 = constant {value=[1.0]} : i64[]
      %8 = add(%1, %7) : i64[]
      return %6, %8
    }
  return %3
})";

TEST(ControlFlowCompiled, HoistedInvariantsGiveTheSameResults) {
  const ir::Graph g = *ir::ParseGraph(kInvariantBody);
  std::unique_ptr<CompiledGraph> cg = CompileOnThreads(g, {});
  ASSERT_NE(cg, nullptr);
  int tanh_outside = 0;
  for (const ir::Node& n : cg->graph().nodes()) tanh_outside += n.op == ir::OpCode::kTanh;
  EXPECT_EQ(tanh_outside, 1) << ir::PrintGraph(cg->graph());
  for (int64_t s : {1, 6}) {
    ExpectSameAsInterpreter(
        *cg, g, {{"x", Wave(ir::DType::kF64, {s}, 0.4)}, {"w", Wave(ir::DType::kF64, {s}, 1.3)}},
        {});
  }
}

// A branch on data: y = x * 2 if sum(x) > 0 else exp(-x), then y + 1.
constexpr const char* kBranch = R"(graph branch {
  %0 = input {name="x"} : f32[S, 3]
  %1 = reduce_sum(%0) {axis=1, keepdim=false} : f32[S]
  %2 = reduce_sum(%1) {axis=0, keepdim=false} : f32[]
  %3 = full {value=0.0} : f32[]
  %4 = gt(%2, %3) : bool[]
  %5 = if(%4, %0) {dtype=f32, shape=[S, 3]} : f32[S, 3]
    region graph then {
      %0 = input {name="x"} : f32[S, 3]
      %1 = add(%0, %0) : f32[S, 3]
      return %1
    }
    region graph else {
      %0 = input {name="x"} : f32[S, 3]
      %1 = neg(%0) : f32[S, 3]
      %2 = exp(%1) : f32[S, 3]
      return %2
    }
  %6 = full {value=1.0} : f32[]
  %7 = add(%5, %6) : f32[S, 3]
  return %7
})";

TEST(ControlFlowCompiled, AnIfRunsTheTakenBranchsCode) {
  const ir::Graph g = *ir::ParseGraph(kBranch);
  std::unique_ptr<CompiledGraph> cg = CompileOnThreads(g, {});
  ASSERT_NE(cg, nullptr);
  EXPECT_EQ(cg->control_flow()->num_compiled(), 4);  // before, then, else, after
  for (double phase : {0.3, 3.5}) {
    for (int64_t s : {1, 4}) {
      const TensorMap in = {{"x", Wave(ir::DType::kF32, {s, 3}, phase)}};
      ExpectSameAsInterpreter(*cg, g, in, {});
    }
  }
}

// frontend::Cond, eager and traced: x @ w if its sum is positive, else tanh(x) and x.
std::vector<frontend::Value> Branchy(frontend::Context& ctx) {
  frontend::Value x = ctx.Input("x");
  frontend::Value w = ctx.Param("w");
  frontend::Value total = frontend::ReduceSum(frontend::ReduceSum(x, -1), -1);
  return frontend::Cond(
      frontend::Compare(ir::OpCode::kGt, total, frontend::Scalar(total, 0)),
      [](const std::vector<frontend::Value>& in) {
        return std::vector<frontend::Value>{frontend::Matmul(in[0], in[1]), in[0] * 2.0};
      },
      [](const std::vector<frontend::Value>& in) {
        return std::vector<frontend::Value>{frontend::Tanh(in[0]), in[0]};
      },
      {x, w});
}

TEST(ControlFlowCompiled, TheFrontendsCondTracedAndEager) {
  const TensorMap params = {{"w", Wave(ir::DType::kF64, {4, 4}, 0.9)}};
  for (double phase : {0.0, 2.0}) {
    const TensorMap in = {{"x", Wave(ir::DType::kF64, {3, 4}, phase)}};
    frontend::EagerContext eager(in, params);
    absl::StatusOr<std::vector<Tensor>> want = eager.Results(Branchy(eager));
    ASSERT_TRUE(want.ok()) << want.status();
    frontend::TraceContext trace("branchy", {{"x", {ir::DType::kF64, {3, 4}}}}, params);
    std::vector<frontend::Value> t = Branchy(trace);
    absl::StatusOr<ir::Graph> g = std::move(trace).Finish(t);
    ASSERT_TRUE(g.ok()) << g.status();
    std::unique_ptr<CompiledGraph> cg = CompileOnThreads(*g, params);
    ASSERT_NE(cg, nullptr);
    absl::StatusOr<std::vector<Tensor>> got = cg->Run(in);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), 2u);
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_LE(runtime::MaxAbsDiff((*got)[k], (*want)[k]), 1e-12) << "output " << k;
    }
  }
  // Branches that give different shapes are an error naming the branch.
  frontend::TraceContext bad("bad", {{"x", {ir::DType::kF64, {3, 4}}}}, {});
  frontend::Value x = bad.Input("x");
  std::vector<frontend::Value> out = frontend::Cond(
      frontend::Compare(ir::OpCode::kGt, frontend::ReduceSum(frontend::ReduceSum(x, -1), -1),
                        frontend::Scalar(x, 0)),
      [](const std::vector<frontend::Value>& in) { return std::vector<frontend::Value>{in[0]}; },
      [](const std::vector<frontend::Value>& in) {
        return std::vector<frontend::Value>{frontend::ReduceSum(in[0], -1)};
      },
      {x});
  EXPECT_TRUE(out.empty());
  EXPECT_THAT(bad.status().message(), HasSubstr("if: region else must return one f64[3, 4]"));
}

// h_t = tanh(h_{t-1} @ w + x_t) over the rows of xs [T, 1, 4] (an RNN cell), every
// 2 h_t stacked, with T symbolic: one compile for every length.
std::vector<frontend::Value> Rnn(frontend::Context& ctx) {
  frontend::Value xs = ctx.Input("xs");
  frontend::Value h0 = ctx.Input("h0");
  return frontend::Scan(
      [](absl::Span<const frontend::Value> c, absl::Span<const frontend::Value> rows,
         absl::Span<const frontend::Value> inv) {
        frontend::Value h = frontend::Tanh(frontend::Matmul(c[0], inv[0]) + rows[0]);
        return std::vector<frontend::Value>{h, h * 2.0};
      },
      {h0}, {xs}, {ctx.Param("w")});
}

TEST(ControlFlowCompiled, TheFrontendsScanTracedEagerAndCompiledOnceForEveryLength) {
  const TensorMap params = {{"w", Wave(ir::DType::kF64, {4, 4}, 0.1)}};
  frontend::TraceContext trace("rnn",
                               {{"xs", {ir::DType::kF64, {ir::SymExpr::Symbol("T"), 1, 4}}},
                                {"h0", {ir::DType::kF64, {1, 4}}}},
                               params);
  std::vector<frontend::Value> t = Rnn(trace);
  absl::StatusOr<ir::Graph> g = std::move(trace).Finish(t);
  ASSERT_TRUE(g.ok()) << g.status();
  std::unique_ptr<CompiledGraph> cg = CompileOnThreads(*g, params);
  ASSERT_NE(cg, nullptr);
  for (int64_t length : {0, 1, 5}) {
    SCOPED_TRACE(length);
    const TensorMap in = {{"xs", Wave(ir::DType::kF64, {length, 1, 4}, 0.6)},
                          {"h0", Wave(ir::DType::kF64, {1, 4}, 2.0)}};
    frontend::EagerContext eager(in, params);
    absl::StatusOr<std::vector<Tensor>> want = eager.Results(Rnn(eager));
    ASSERT_TRUE(want.ok()) << want.status();
    absl::StatusOr<std::vector<Tensor>> got = cg->Run(in);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), 2u);
    EXPECT_EQ((*got)[1].shape(), (std::vector<int64_t>{length, 1, 4}));
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_LE(runtime::MaxAbsDiff((*got)[k], (*want)[k]), 1e-12) << "output " << k;
    }
    ExpectSameAsInterpreter(*cg, *g, in, params);
  }
}

TEST(ControlFlowCompiled, BadInputsAreNamed) {
  std::unique_ptr<CompiledGraph> cg = CompileOnThreads(*ir::ParseGraph(kLoop), Weights());
  ASSERT_NE(cg, nullptr);
  absl::StatusOr<std::vector<Tensor>> out =
      cg->Run({{"x", Wave(ir::DType::kF32, {3, 7}, 0)}, {"limit", Count(1)}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("'x'"));
}

// The frontend's While: y = tanh(y @ w) until the largest change is below 1e-12 (the
// lecture's demo 3), traced and compiled, against the same function run eagerly.
std::vector<frontend::Value> Converge(frontend::Context& ctx) {
  frontend::Value y = ctx.Input("y");
  frontend::Value w = ctx.Param("w");
  frontend::Value change = frontend::Scalar(y, 1.0);
  std::vector<frontend::Value> out = frontend::While(
      [](absl::Span<const frontend::Value> c, absl::Span<const frontend::Value>) {
        return frontend::Compare(ir::OpCode::kGe, c[1], frontend::Scalar(c[1], 1e-12));
      },
      [](absl::Span<const frontend::Value> c, absl::Span<const frontend::Value> inv) {
        frontend::Value next = frontend::Tanh(frontend::Matmul(c[0], inv[0]));
        frontend::Value d = (next - c[0]) * (next - c[0]);
        frontend::Value m = frontend::ReduceMax(frontend::ReduceMax(d, -1), -1);
        return std::vector<frontend::Value>{next, m};
      },
      {y, change}, {w}, 200);
  return out;
}

TEST(ControlFlowCompiled, TheFrontendsWhileTracedAndEager) {
  const TensorMap params = {{"w", Wave(ir::DType::kF64, {32, 32}, 0.7)}};
  const TensorMap in = {{"y", Wave(ir::DType::kF64, {4, 32}, 0.2)}};
  // Scale the weights so that the map contracts.
  Tensor w = params.at("w").Clone();
  for (int64_t i = 0; i < 32 * 32; ++i) w.data<double>()[i] *= 0.5 / std::sqrt(32.0);
  const TensorMap scaled = {{"w", w}};

  frontend::EagerContext eager(in, scaled);
  std::vector<frontend::Value> e = Converge(eager);
  absl::StatusOr<std::vector<Tensor>> want = eager.Results(e);
  ASSERT_TRUE(want.ok()) << want.status();

  frontend::TraceContext trace("converge", {{"y", {ir::DType::kF64, {4, 32}}}}, scaled);
  std::vector<frontend::Value> t = Converge(trace);
  absl::StatusOr<ir::Graph> g = std::move(trace).Finish(t);
  ASSERT_TRUE(g.ok()) << g.status();
  // y, w, the first change, the while and its second result: the trips are not unrolled.
  EXPECT_EQ(g->num_nodes(), 5);
  std::unique_ptr<CompiledGraph> cg = CompileOnThreads(*g, scaled);
  ASSERT_NE(cg, nullptr);
  absl::StatusOr<std::vector<Tensor>> got = cg->Run(in);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_LT((*want)[1].data<double>()[0], 1e-12);  // it converged
  EXPECT_LE(runtime::MaxAbsDiff((*got)[0], (*want)[0]), 1e-12);
}

TEST(ControlFlowCompiled, ABodyThatChangesACarriedShapeIsRecorded) {
  frontend::TraceContext trace("bad", {{"y", {ir::DType::kF32, {4, 8}}}}, {});
  frontend::Value y = trace.Input("y");
  std::vector<frontend::Value> out = frontend::While(
      [](absl::Span<const frontend::Value> c, absl::Span<const frontend::Value>) {
        return frontend::Compare(ir::OpCode::kLt,
                                 frontend::ReduceSum(frontend::ReduceSum(c[0], -1), -1),
                                 frontend::Scalar(c[0], 1.0));
      },
      [](absl::Span<const frontend::Value> c, absl::Span<const frontend::Value>) {
        return std::vector<frontend::Value>{frontend::ReduceSum(c[0], -1, true)};
      },
      {y});
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(trace.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(trace.status().message(),
              HasSubstr("region body returns f32[4, 1] for carried value 0"));
}

}  // namespace
}  // namespace graphjit::compiler
