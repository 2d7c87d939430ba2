// What running the decode layer costs without a compiler: eager (op by op, one
// allocation per op) vs the interpreter on the traced graph, and what tracing costs.
// Run: build/bin/eager_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <memory>

#include "benchmark/benchmark.h"
#include "ir/check.h"
#include "models/model.h"
#include "runtime/interpreter.h"

namespace graphjit {
namespace {

struct DecodeSetup {
  std::unique_ptr<models::Model> model;
  runtime::TensorMap inputs;
  ir::Graph graph;
  ir::Bindings bindings;

  explicit DecodeSetup(int64_t S) {
    model = *models::CreateModel("decode");
    inputs = *model->ExampleInputs({{"S", S}}, 0);
    graph = *models::TraceModel(*model);
    bindings = {{"P", S - 1}};
  }
};

void BM_DecodeEager(benchmark::State& state) {
  DecodeSetup s(state.range(0));
  for (auto _ : state) {
    auto out = models::RunEager(*s.model, s.inputs, s.bindings);
    GJ_CHECK(out.ok()) << out.status().message();
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_DecodeEager)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);

void BM_DecodeInterpreter(benchmark::State& state) {
  DecodeSetup s(state.range(0));
  for (auto _ : state) {
    auto out = runtime::Interpret(s.graph, s.inputs, s.model->params(), s.bindings);
    GJ_CHECK(out.ok()) << out.status().message();
    benchmark::DoNotOptimize(out);
  }
  state.counters["ops"] = s.graph.NumComputeNodes();
}
BENCHMARK(BM_DecodeInterpreter)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);

void BM_TraceDecode(benchmark::State& state) {
  auto model = *models::CreateModel("decode");
  for (auto _ : state) {
    auto g = models::TraceModel(*model);
    GJ_CHECK(g.ok()) << g.status().message();
    benchmark::DoNotOptimize(g);
  }
}
BENCHMARK(BM_TraceDecode)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace graphjit

BENCHMARK_MAIN();
