// The policy study's decode loop (prompt 100; 128 steps by default here, --benchmark_filter and
// the Arg pick others) under each shape policy: wall time per loop with compiles, and the
// compiles and padding each policy needed as counters.
// Run: build/bin/bench_policies --benchmark_repetitions=3 --benchmark_report_aggregates_only
#include "benchmark/benchmark.h"
#include "ir/check.h"
#include "models/model.h"
#include "studies/decode_loop.h"

namespace graphjit {
namespace {

namespace entries = compiler::entries;

void BM_DecodeLoop(benchmark::State& state) {
  entries::ShapePolicy policy = entries::AllPolicies()[state.range(0)];
  auto model = *models::CreateModel("decode");
  studies::DecodeLoopOptions loop;
  loop.steps = state.range(1);
  entries::CacheStats stats;
  double run_seconds = 0;
  for (auto _ : state) {
    compiler::JitOptions options;
    options.policy = policy;
    auto r = studies::RunDecodeLoop(*model, options, loop);
    GJ_CHECK(r.ok()) << r.status().message();
    stats = r->stats;
    double total = 0;
    for (double s : r->step_seconds) total += s;
    run_seconds = total - stats.compile_seconds;
  }
  state.counters["compiles"] = static_cast<double>(stats.compiles);
  state.counters["padding_pct"] = 100 * stats.padding_overhead();
  state.counters["compile_s"] = stats.compile_seconds;
  state.counters["run_ms"] = run_seconds * 1e3;
  state.SetLabel(std::string(entries::PolicyName(policy)));
}
BENCHMARK(BM_DecodeLoop)
    ->ArgsProduct({{0, 1, 2, 3, 4}, {128}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace graphjit

BENCHMARK_MAIN();
