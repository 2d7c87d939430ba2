// What one decode step costs compiled vs interpreted vs eager (op by op), f32 and f64, at
// KV length 64 and 512, with achieved GFLOP/s and GB/s (matmul FLOPs; weights + caches);
// and what a tiny graph's call costs on 1 and 2 threads (its kernels are too small to
// split: the thread count must cost it nothing).
// Run: build/bin/bench_overhead --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <memory>
#include <thread>

#include "benchmark/benchmark.h"
#include "compiler/compiled/compiled_call.h"
#include "compiler/compiled/compiled_graph.h"
#include "ir/builder.h"
#include "ir/check.h"
#include "models/model.h"
#include "runtime/interpreter.h"
#include "runtime/thread_pool.h"

namespace graphjit {
namespace {

std::unique_ptr<models::Model> Decode(bool f32) {
  return *models::CreateModel(f32 ? "decode:dtype=f32" : "decode");
}

// Matmul FLOPs of one decode step at cache length S (projections, scores, weighted sum).
double DecodeFlops(int64_t S) {
  const double d = 128, H = 8, G = 2, dh = 16, f = 344;
  return 2 * (d * (H + 2 * G) * dh + H * dh * d + 3 * d * f) + 2 * 2 * H * dh * S;
}

// Bytes a step must touch at least: every weight once, the caches read once.
double DecodeBytes(int64_t S, bool f32) {
  const double d = 128, H = 8, G = 2, dh = 16, f = 344;
  double elems = d * (H + 2 * G) * dh + H * dh * d + 3 * d * f + 2 * G * S * dh;
  return elems * (f32 ? 4 : 8);
}

enum Mode { kCompiled, kInterpreter, kEager };

void BM_DecodeStep(benchmark::State& state) {
  const int64_t S = state.range(0);
  const bool f32 = state.range(1) == 1;
  const Mode mode = static_cast<Mode>(state.range(2));
  auto model = Decode(f32);
  runtime::TensorMap in = *model->ExampleInputs({{"S", S}}, 0);
  ir::Bindings bind = {{"P", S - 1}};
  models::TraceOptions options;
  options.fixed_dims = {{"S", S}};
  ir::Graph traced = *models::TraceModel(*model, options);
  std::unique_ptr<compiler::CompiledGraph> cg;
  if (mode != kEager) {
    cg = *compiler::CompiledGraph::Compile(traced, model->params());
  }
  for (auto _ : state) {
    absl::StatusOr<std::vector<runtime::Tensor>> out;
    switch (mode) {
      case kCompiled:
        out = cg->Run(in, bind);
        break;  // caches updated in place
      case kInterpreter:
        out = runtime::Interpret(cg->graph(), in, cg->params(), bind);
        break;
      case kEager:
        out = models::RunEager(*model, in, bind);
        break;
    }
    GJ_CHECK(out.ok()) << out.status().message();
    benchmark::DoNotOptimize(out);
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(DecodeFlops(S) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GB/s"] =
      benchmark::Counter(DecodeBytes(S, f32) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  static const char* const kModes[] = {"compiled", "interpreter", "eager"};
  state.SetLabel(absl::StrCat(kModes[mode], f32 ? " f32" : " f64", " S=", S));
}
// tanh(x * w + 1) on 4 f64 elements through a CompiledCall (kept frame), on
// state.range(0) threads.
void BM_TinyCall(benchmark::State& state) {
  ir::GraphBuilder b("tiny");
  ir::ValueId x = b.Input("x", ir::DType::kF64, {4});
  ir::ValueId w = b.Input("w", ir::DType::kF64, {4});
  ir::ValueId y = b.Add(ir::OpCode::kMul, {x, w});
  y = b.Add(ir::OpCode::kAdd, {y, b.Scalar(1.0, ir::DType::kF64)});
  b.Output(b.Add(ir::OpCode::kTanh, {y}));
  ir::Graph g = *std::move(b).Build();
  compiler::CompileGraphOptions options;
  options.threads = static_cast<int>(state.range(0));
  auto cg = *compiler::CompiledGraph::Compile(g, {}, options);
  compiler::CompiledCall call(*cg);
  std::vector<runtime::Tensor> in;
  for (const std::string& name : call.input_names()) {
    in.push_back(*runtime::Tensor::FromDoubles(ir::DType::kF64, {4}, {0.1, 0.2, 0.3, 0.4}));
    (void)name;
  }
  for (auto _ : state) {
    absl::Status s = call.Run(in);
    GJ_CHECK(s.ok()) << s.message();
    benchmark::DoNotOptimize(call.outputs());
  }
  state.SetLabel(absl::StrCat("threads=", state.range(0)));
}
BENCHMARK(BM_TinyCall)->Arg(1)->Arg(2);

// One fork-join of the runtime's pool with state.range(0) empty parts (1: no fork): what
// splitting a kernel costs at least (KernelSetOptions::min_parallel_work is set from it).
void BM_PoolRun(benchmark::State& state) {
  const int parts = static_cast<int>(state.range(0));
  std::atomic<int64_t> sink{0};
  for (auto _ : state) {
    runtime::ThreadPool::Shared().Run(parts,
                                      [&](int p) { sink.fetch_add(p, std::memory_order_relaxed); });
  }
  benchmark::DoNotOptimize(sink.load());
}
BENCHMARK(BM_PoolRun)->Arg(1)->Arg(2)->Arg(3);

// A cache line's round trip between two cores: two threads, each on one of the first two
// CPUs this process may use, hand a counter back and forth. Every fork, join and phase
// of the pool costs some of these, and on a VM it varies with where the host puts the
// vCPUs (156-617 ns on one 2-vCPU Zen 5 guest in one afternoon): quote it beside
// multi-thread timings.
void PinToCpu(int nth) {
  cpu_set_t mask, one;
  CPU_ZERO(&one);
  if (sched_getaffinity(0, sizeof(mask), &mask) != 0) return;
  for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &mask) && seen++ == nth) {
      CPU_SET(cpu, &one);
      pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
      return;
    }
  }
}

void BM_CoreRoundTrip(benchmark::State& state) {
  if (runtime::AvailableCpus() < 2) {
    state.SkipWithError("needs two CPUs");
    return;
  }
  struct alignas(64) Line {
    std::atomic<int64_t> v{0};
  };
  Line ping, pong;
  std::atomic<bool> stop{false};
  std::thread echo([&] {
    PinToCpu(1);
    for (int64_t seen = 0; !stop.load(std::memory_order_relaxed);) {
      const int64_t v = ping.v.load(std::memory_order_acquire);
      if (v != seen) pong.v.store(seen = v, std::memory_order_release);
    }
  });
  std::thread caller([&] {
    PinToCpu(0);
    int64_t i = 0;
    for (auto _ : state) {
      ping.v.store(++i, std::memory_order_release);
      while (pong.v.load(std::memory_order_acquire) != i) {
      }
    }
  });
  caller.join();
  stop.store(true);
  echo.join();
}
BENCHMARK(BM_CoreRoundTrip)->UseRealTime();

void BM_TraceDecode(benchmark::State& state) {
  auto model = Decode(false);
  for (auto _ : state) {
    auto g = models::TraceModel(*model);
    GJ_CHECK(g.ok()) << g.status().message();
    benchmark::DoNotOptimize(g);
  }
}
BENCHMARK(BM_TraceDecode)->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_DecodeStep)
    ->ArgsProduct({{64, 512}, {0, 1}, {kCompiled, kInterpreter, kEager}})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace graphjit

BENCHMARK_MAIN();
