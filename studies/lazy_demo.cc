#include "studies/lazy_demo.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

#include "frontend/control_flow.h"
#include "frontend/eager_context.h"
#include "frontend/ops.h"
#include "frontend/trace_context.h"
#include "ir/clock.h"
#include "ir/status_macros.h"

namespace graphjit::studies {
namespace {

using compiler::LazyContext;
using frontend::EagerContext;
using frontend::TraceContext;
using frontend::Value;

using ir::Clock;
using ir::SecondsSince;

runtime::Tensor Normal(std::vector<int64_t> shape, std::mt19937_64& rng, double scale) {
  std::normal_distribution<double> normal;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(n);
  for (double& e : v) e = scale * normal(rng);
  return ir::ValueOrDie(runtime::Tensor::FromDoubles(ir::DType::kF64, std::move(shape), v));
}

}  // namespace

absl::StatusOr<LazyDemoResult> RunLazyDemo(int max_iterations, double tolerance,
                                           const compiler::CompileEnv* env) {
  std::mt19937_64 rng(2);
  runtime::Tensor W = Normal({32, 32}, rng, 0.5 / std::sqrt(32.0));
  runtime::Tensor y0 = Normal({4, 32}, rng, 1.0);
  LazyDemoResult r;

  auto start = Clock::now();
  LazyContext lazy({}, {}, nullptr, env);
  Value y = lazy.Tensor(y0), w = lazy.Tensor(W), y_new;
  while (true) {
    y_new = Tanh(Matmul(y, w));
    Value diff = (y_new - y) * (y_new - y);
    ++r.iterations;
    // The stopping test needs a concrete number: a graph break every iteration.
    GJ_ASSIGN_OR_RETURN(double worst, lazy.Item(ReduceMax(ReduceMax(diff, -1), -1)));
    if (worst < tolerance || r.iterations >= max_iterations) break;
    y = y_new;
  }
  GJ_ASSIGN_OR_RETURN(runtime::Tensor out, lazy.Materialize(y_new));
  r.lazy_seconds = SecondsSince(start);
  r.graphs = lazy.graphs();
  r.compiles = lazy.compiles();

  // Reference: the same iterations op by op.
  runtime::TensorMap in = {{"y", y0}, {"W", W}};
  EagerContext eager(in, {});
  Value ye = eager.Input("y"), we = eager.Input("W");
  for (int i = 0; i < r.iterations; ++i) ye = Tanh(Matmul(ye, we));
  GJ_ASSIGN_OR_RETURN(std::vector<runtime::Tensor> ref, eager.Results({ye}));
  r.max_abs_diff = runtime::MaxAbsDiff(out, ref[0]);

  // A structured loop: the same count traced into one graph, compiled once.
  TraceContext trace("unrolled",
                     {{"y", {ir::DType::kF64, {4, 32}}}, {"W", {ir::DType::kF64, {32, 32}}}}, {});
  Value yt = trace.Input("y"), wt = trace.Input("W");
  for (int i = 0; i < r.iterations; ++i) yt = Tanh(Matmul(yt, wt));
  GJ_ASSIGN_OR_RETURN(ir::Graph g, std::move(trace).Finish({yt}));
  r.unrolled_ops = g.NumComputeNodes();
  start = Clock::now();
  compiler::CompileGraphOptions options;
  options.env = env;
  GJ_ASSIGN_OR_RETURN(std::unique_ptr<compiler::CompiledGraph> cg,
                      compiler::CompiledGraph::Compile(g, {}, options));
  r.unrolled_compile_seconds = SecondsSince(start);
  r.unrolled_compiles = 1;
  start = Clock::now();
  GJ_ASSIGN_OR_RETURN(std::vector<runtime::Tensor> unrolled, cg->Run(in));
  r.unrolled_run_seconds = SecondsSince(start);
  r.unrolled_max_abs_diff = runtime::MaxAbsDiff(unrolled[0], ref[0]);

  // The loop as the lecture's way out names it (lax.while_loop): carried (y, the last
  // change, the trip count), the stopping test in the cond region.
  TraceContext traced("structured",
                      {{"y", {ir::DType::kF64, {4, 32}}}, {"W", {ir::DType::kF64, {32, 32}}}}, {});
  Value y_in = traced.Input("y");
  std::vector<Value> loop = frontend::While(
      [tolerance](absl::Span<const Value> c, absl::Span<const Value>) {
        return Compare(ir::OpCode::kGe, c[1], Scalar(c[1], tolerance));
      },
      [](absl::Span<const Value> c, absl::Span<const Value> inv) {
        Value next = Tanh(Matmul(c[0], inv[0]));
        Value diff = (next - c[0]) * (next - c[0]);
        return std::vector<Value>{next, ReduceMax(ReduceMax(diff, -1), -1), c[2] + 1.0};
      },
      {y_in, Scalar(y_in, INFINITY), Cast(Scalar(y_in, 0), ir::DType::kI64)}, {traced.Input("W")},
      max_iterations);
  if (loop.size() != 3) return traced.status();
  GJ_ASSIGN_OR_RETURN(ir::Graph structured, std::move(traced).Finish({loop[0], loop[2]}));
  r.while_ops = structured.NumComputeNodes();
  start = Clock::now();
  GJ_ASSIGN_OR_RETURN(std::unique_ptr<compiler::CompiledGraph> looped,
                      compiler::CompiledGraph::Compile(structured, {}, options));
  r.while_compile_seconds = SecondsSince(start);
  r.while_compiled = looped->control_flow()->num_compiled();
  start = Clock::now();
  GJ_ASSIGN_OR_RETURN(std::vector<runtime::Tensor> ran, looped->Run(in));
  r.while_run_seconds = SecondsSince(start);
  r.while_iterations = static_cast<int>(ran[1].data<int64_t>()[0]);
  r.while_max_abs_diff = runtime::MaxAbsDiff(ran[0], ref[0]);
  r.while_same_bits_as_lazy = ran[0].nbytes() == out.nbytes() &&
                              std::memcmp(ran[0].raw_data(), out.raw_data(), out.nbytes()) == 0;
  return r;
}

}  // namespace graphjit::studies
