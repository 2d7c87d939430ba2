// The compile cache's hit path: nanoseconds from a call's inputs (by name, and by
// position) to the entry that serves it, with 1, 8 and 64 live entries (flat in the entry
// count), what the cache adds to a
// whole call of the decode layer, and a Jit hit + run of a tiny user function.
// Run: build/bin/bench_dispatch --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <new>
#include <vector>

#include "benchmark/benchmark.h"
#include "compiler/compiled/compiled_call.h"
#include "compiler/jit.h"
#include "compiler/jit_call.h"
#include "frontend/ops.h"
#include "ir/check.h"
#include "models/jit_model.h"
#include "models/model.h"

// Counts every operator new of the process, so the hit benchmarks can report how many
// allocations a hit makes (none).
std::atomic<int64_t> g_allocations{0};

// None of the three is inlined: GCC would otherwise see malloc() and free() meet the
// operator new/delete pairs and warn (-Wmismatched-new-delete).
[[gnu::noinline]] void* operator new(size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace graphjit::compiler::entries {
namespace {

// A small decode layer: its compiles are quick, and lookups do not depend on its size.
const models::Model& SmallDecode() {
  static const models::Model* model =
      models::CreateModel("decode:d=32,H=4,G=2,dh=8,f=64")->release();
  return *model;
}

// A cache with `entries` live exact entries (S = 2 .. entries + 1) and inputs for each.
struct Warm {
  std::unique_ptr<JitFunction> cache;
  std::vector<runtime::TensorMap> inputs;
};

Warm& WarmCache(ShapePolicy policy, int entries) {
  static auto* warm = new std::map<std::pair<ShapePolicy, int>, Warm>();
  Warm& w = (*warm)[{policy, entries}];
  if (w.cache != nullptr) return w;
  JitOptions options;
  options.policy = policy;
  options.log = {};
  w.cache = *models::JitModel(SmallDecode(), options);
  for (int i = 0; i < entries; ++i) {
    w.inputs.push_back(*SmallDecode().ExampleInputs({{"S", 2 + i}}, i));
  }
  for (const runtime::TensorMap& in : w.inputs) GJ_CHECK(w.cache->Acquire(in).ok());
  return w;
}

void ReportHits(benchmark::State& state, const JitFunction& cache, int64_t compiles_before,
                int64_t allocations_before) {
  const int64_t allocations = g_allocations.load() - allocations_before;
  GJ_CHECK(cache.stats().compiles == compiles_before) << "the benchmark loop missed";
  state.counters["entries"] = static_cast<double>(cache.size());
  state.counters["allocs_per_hit"] =
      static_cast<double>(allocations) / static_cast<double>(state.iterations());
}

// Inputs by name (a TensorMap), as Run receives them: name lookups + guards + the key's
// hash lookup + LRU and statistics updates under the lock. Calls cycle through the
// entries, so each lookup is for another key than the last.
void BM_HitFromTensorMap(benchmark::State& state) {
  Warm& w = WarmCache(ShapePolicy::kExact, static_cast<int>(state.range(0)));
  const int64_t compiles = w.cache->stats().compiles;
  const int64_t allocations = g_allocations.load();
  size_t i = 0;
  for (auto _ : state) {
    auto entry = w.cache->Acquire(w.inputs[i]);
    benchmark::DoNotOptimize(entry);
    if (++i == w.inputs.size()) i = 0;
  }
  ReportHits(state, *w.cache, compiles, allocations);
}
BENCHMARK(BM_HitFromTensorMap)->Arg(1)->Arg(8)->Arg(64);

// The same calls by position (a JitCall's lookup): the guards and the entry lookup
// alone, no names. Calls cycle through the entries as above.
void BM_HitPositional(benchmark::State& state) {
  Warm& w = WarmCache(ShapePolicy::kExact, static_cast<int>(state.range(0)));
  std::vector<std::string> names;
  for (const auto& [name, t] : w.inputs.front()) names.push_back(name);
  std::vector<std::vector<runtime::Tensor>> positional;
  for (const runtime::TensorMap& in : w.inputs) {
    positional.emplace_back();
    for (const std::string& name : names) positional.back().push_back(in.at(name));
  }
  JitCall call(w.cache.get(), names);
  GJ_CHECK(call.Acquire(positional.front()).ok());  // finds the signature by name once
  const int64_t compiles = w.cache->stats().compiles;
  const int64_t allocations = g_allocations.load();
  size_t i = 0;
  for (auto _ : state) {
    auto entry = call.Acquire(positional[i]);
    benchmark::DoNotOptimize(entry);
    if (++i == positional.size()) i = 0;
  }
  ReportHits(state, *w.cache, compiles, allocations);
}
BENCHMARK(BM_HitPositional)->Arg(1)->Arg(8)->Arg(64);

// Symbolic: one entry serving 64 different lengths.
void BM_HitSymbolic(benchmark::State& state) {
  Warm& w = WarmCache(ShapePolicy::kSymbolic, 64);
  const int64_t compiles = w.cache->stats().compiles;
  const int64_t allocations = g_allocations.load();
  size_t i = 0;
  for (auto _ : state) {
    auto entry = w.cache->Acquire(w.inputs[i]);
    benchmark::DoNotOptimize(entry);
    if (++i == w.inputs.size()) i = 0;
  }
  ReportHits(state, *w.cache, compiles, allocations);
}
BENCHMARK(BM_HitSymbolic);

// One call of `fn` on `in` per iteration, five ways by state.range(0): straight on the
// entry's compiled graph (0: checks by name, outputs and workspace allocated), through
// the JitFunction (1: guards, lookup, run), through a reusable CompiledCall (2:
// positional checks, outputs and workspace kept), the kernels alone on the
// CompiledCall's frame (3: no checks at all), and through a JitCall (4: guards and lookup
// by position, then the kept CompiledCall). A way's overhead is its time minus way 3's,
// measured in the same run. Reports the allocations per call.
void RunFiveWays(benchmark::State& state, JitFunction& fn, const runtime::TensorMap& in,
                 const ir::Bindings& bindings) {
  std::shared_ptr<const CacheEntry> entry = *fn.Acquire(in);
  const int64_t compiles = fn.stats().compiles;
  CompiledCall call(entry->compiled());
  std::vector<runtime::Tensor> positional;
  for (const std::string& name : call.input_names()) positional.push_back(in.at(name));
  GJ_CHECK(call.Run(positional, bindings).ok());  // fills the frame way 3 reuses
  JitCall jit_call(&fn, call.input_names());
  GJ_CHECK(jit_call.Run(positional, bindings).ok());
  const KernelSet& kernels = entry->compiled().kernels();
  const int64_t allocations = g_allocations.load();
  for (auto _ : state) {
    if (state.range(0) == 3) {
      kernels.Run(call.frame_args(), call.frame_symbols(), call.frame_workspace());
      benchmark::ClobberMemory();
      continue;
    }
    if (state.range(0) == 4) {
      absl::Status s = jit_call.Run(positional, bindings);
      GJ_CHECK(s.ok()) << s.message();
      benchmark::DoNotOptimize(jit_call.outputs());
      continue;
    }
    if (state.range(0) == 2) {
      absl::Status s = call.Run(positional, bindings);
      GJ_CHECK(s.ok()) << s.message();
      benchmark::DoNotOptimize(call.outputs());
      continue;
    }
    auto out = state.range(0) == 1 ? fn.Run(in, bindings) : entry->compiled().Run(in, bindings);
    GJ_CHECK(out.ok()) << out.status().message();
    benchmark::DoNotOptimize(out);
  }
  GJ_CHECK(fn.stats().compiles == compiles) << "the benchmark loop missed";
  state.counters["allocs_per_call"] = static_cast<double>(g_allocations.load() - allocations) /
                                      static_cast<double>(state.iterations());
  static const char* const kLabels[] = {"CompiledGraph::Run", "JitFunction::Run",
                                        "CompiledCall::Run", "kernels alone", "JitCall::Run"};
  state.SetLabel(kLabels[state.range(0)]);
}

// A whole decode call at S = 64: the differences are what the cache and what Run's
// per-call setup add. Under exact the caches are donated, so the same inputs are reused
// (the contents do not matter for timing).
void BM_DecodeCall(benchmark::State& state) {
  Warm& w = WarmCache(ShapePolicy::kExact, 63);
  RunFiveWays(state, *w.cache, w.inputs.back(), {{"P", 63}});  // S = 64
}
BENCHMARK(BM_DecodeCall)->DenseRange(0, 4);

// A tiny user function (3 ops on 4 elements): the whole cost of a call that hits.
void BM_JitTinyFunction(benchmark::State& state) {
  static JitFunction* fn = [] {
    JitOptions options;
    options.policy = ShapePolicy::kAuto;
    options.log = {};
    auto body = [](frontend::Context& ctx) -> std::vector<frontend::Value> {
      return {frontend::Tanh(ctx.Input("x") * ctx.Param("w") + 1.0)};
    };
    runtime::TensorMap weights = {
        {"w", *runtime::Tensor::FromDoubles(ir::DType::kF64, {4}, {1, 2, 3, 4})}};
    return Jit("tiny", body, weights, options)->release();
  }();
  runtime::TensorMap in = {
      {"x", *runtime::Tensor::FromDoubles(ir::DType::kF64, {4}, {0.1, 0.2, 0.3, 0.4})}};
  RunFiveWays(state, *fn, in, {});
}
BENCHMARK(BM_JitTinyFunction)->DenseRange(0, 4);

}  // namespace
}  // namespace graphjit::compiler::entries

BENCHMARK_MAIN();
