// What a cache miss costs: the decode layer's compile per phase (exact and symbolic S, at
// each code tier), single small kernels at each tier (LLVM's fixed cost per module, and
// the IR instructions emitted and left after the passes), TinyGPT's against depth (layers share
// kernels), a warm start from the disk cache (and what checking a record's tag costs per byte), and
// compile time against graph size (chains of 1..64 fused elementwise ops) with the fitted log-log
// exponent. Every cold compile frees the last one's code first and skips the disk cache, so each
// iteration compiles every kernel for real. Run: build/bin/bench_compile --benchmark_repetitions=5
// --benchmark_report_aggregates_only
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "compiler/analysis/fit.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/store/cache_secret.h"
#include "compiler/store/disk_cache.h"
#include "ir/builder.h"
#include "ir/check.h"
#include "ir/parser.h"
#include "models/model.h"

namespace graphjit {
namespace {

compiler::CompileGraphOptions Cold() {
  compiler::CompileGraphOptions o;
  o.env = &compiler::CompileEnv::MemoryOnly();
  return o;
}

void ReportPhases(benchmark::State& state, const compiler::PhaseTimings& sum) {
  double n = static_cast<double>(state.iterations());
  state.counters["passes_ms"] = sum.passes / n * 1e3;
  state.counters["lower_ms"] = sum.lower / n * 1e3;
  state.counters["record_ms"] = sum.record / n * 1e3;
  state.counters["ir_build_ms"] = sum.ir_build / n * 1e3;
  state.counters["llvm_passes_ms"] = sum.optimize / n * 1e3;
  state.counters["codegen_ms"] = sum.codegen / n * 1e3;
  state.counters["ir_insts"] = static_cast<double>(sum.ir_instructions) / n;
  state.counters["opt_insts"] = static_cast<double>(sum.optimized_instructions) / n;
}

// Args: symbolic S (else exact S = 64), code tier (0 O2, 1 baseline).
void BM_CompileDecode(benchmark::State& state) {
  bool symbolic = state.range(0) == 1;
  const compiler::CodeTier tier =
      state.range(1) == 1 ? compiler::CodeTier::kBaseline : compiler::CodeTier::kOptimized;
  auto model = *models::CreateModel("decode");
  models::TraceOptions options;
  if (!symbolic) options.fixed_dims = {{"S", 64}};
  ir::Graph g = *models::TraceModel(*model, options);
  compiler::PhaseTimings sum;
  compiler::CompileGraphOptions compile = Cold();
  compile.codegen.tier = tier;
  for (auto _ : state) {
    auto cg = compiler::CompiledGraph::Compile(g, model->params(), compile);
    GJ_CHECK(cg.ok()) << cg.status().message();
    sum += (*cg)->timings();
  }
  ReportPhases(state, sum);
  state.SetLabel(
      absl::StrCat(symbolic ? "symbolic S" : "exact S=64", ", ", compiler::CodeTierName(tier)));
}
BENCHMARK(BM_CompileDecode)
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// TinyGPT (d=64) with L layers: the layers lower to equal kernels, compiled once.
void BM_CompileTinyGPT(benchmark::State& state) {
  auto model = *models::CreateModel(absl::StrCat("tinygpt:L=", state.range(0)));
  ir::Graph g = *models::TraceModel(*model);
  compiler::KernelSetStats kernels;
  for (auto _ : state) {
    auto cg = compiler::CompiledGraph::Compile(g, model->params(), Cold());
    GJ_CHECK(cg.ok()) << cg.status().message();
    kernels = (*cg)->kernels().stats();
  }
  state.counters["kernels"] = kernels.kernels;
  state.counters["distinct"] = kernels.distinct;
  state.counters["modules"] = kernels.modules;
}
BENCHMARK(BM_CompileTinyGPT)
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->Arg(8)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// A new process's first compile of the decode layer when an earlier one left its code in
// the disk cache: passes, lowering, and loading the modules' objects (no LLVM). `check_ms`
// is the part spent reading and checking the records (checksum and tag), per start.
void BM_WarmStartDecodeFromDisk(benchmark::State& state) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / absl::StrCat("gj_bench_disk_", ::getpid()))
          .string();
  std::filesystem::remove_all(dir);
  auto disk = *compiler::DiskCache::Open(
      dir, int64_t{1} << 30, *compiler::CacheSecret::FromBytes("bench_compile's cache secret"));
  auto model = *models::CreateModel("decode");
  ir::Graph g = *models::TraceModel(*model);
  compiler::CompileEnv env = compiler::CompileEnv::MemoryOnly();
  env.disk = disk.get();
  compiler::CompileGraphOptions warm;
  warm.env = &env;
  GJ_CHECK(compiler::CompiledGraph::Compile(g, model->params(), warm).ok());  // fills the disk
  compiler::KernelSetStats kernels;
  compiler::PhaseTimings sum;
  const double checked_before = disk->stats().check_seconds;
  for (auto _ : state) {
    auto cg = compiler::CompiledGraph::Compile(g, model->params(), warm);
    GJ_CHECK(cg.ok()) << cg.status().message();
    kernels = (*cg)->kernels().stats();
    GJ_CHECK(kernels.compiled == 0) << "the warm start compiled";
    sum += (*cg)->timings();
  }
  ReportPhases(state, sum);
  state.counters["loaded"] = kernels.loaded;
  state.counters["check_ms"] = benchmark::Counter(
      (disk->stats().check_seconds - checked_before) * 1e3, benchmark::Counter::kAvgIterations);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_WarmStartDecodeFromDisk)->Unit(benchmark::kMillisecond)->UseRealTime();

// What checking a record's tag costs per byte (CacheSecret::Verify: ChaCha20-Poly1305 over
// the record), over the sizes of a small module object and of the decode layer's folded
// weights: the floor under BM_WarmStartDecodeFromDisk's check_ms, which reads a megabyte.
void BM_VerifyRecord(benchmark::State& state) {
  const std::string record(static_cast<size_t>(state.range(0)), 'r');
  auto secret = *compiler::CacheSecret::FromBytes("bench_compile's cache secret");
  const compiler::CacheSecret::Tag tag = secret->Sign(record);
  const absl::string_view tag_bytes(reinterpret_cast<const char*>(tag.data()), tag.size());
  for (auto _ : state) GJ_CHECK(secret->Verify(record, tag_bytes));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_VerifyRecord)->Arg(16 << 10)->Arg(1 << 20)->Unit(benchmark::kMicrosecond);

// y = f_n(...f_1(x)) over [S, 64], alternating tanh, exp, mul and add: one fused kernel.
ir::Graph Chain(int length) {
  ir::GraphBuilder b("chain");
  ir::ValueId v = b.Input("x", ir::DType::kF64, {ir::SymExpr::Symbol("S"), 64});
  for (int i = 0; i < length; ++i) {
    switch (i % 4) {
      case 0:
        v = b.Add(ir::OpCode::kTanh, {v});
        break;
      case 1:
        v = b.Add(ir::OpCode::kMul, {v, b.Scalar(0.5, ir::DType::kF64)});
        break;
      case 2:
        v = b.Add(ir::OpCode::kExp, {v});
        break;
      default:
        v = b.Add(ir::OpCode::kAdd, {v, b.Scalar(-1.0, ir::DType::kF64)});
        break;
    }
  }
  b.Output(v);
  return *std::move(b).Build();
}

// One small program per tier, to see LLVM's fixed cost per module against the work:
// arg 0 a copy (y = x + 0 folds to one trivial kernel), 1 a chain of 4 fused pointwise
// ops over [S, 64], 2 a matvec [1, 128] @ [128, 344] (tiled); arg 1 the tier (0 O2, 1
// baseline). Each iteration compiles cold.
void BM_CompileKernel(benchmark::State& state) {
  const int kind = static_cast<int>(state.range(0));
  ir::Graph g;
  const char* label = "";
  if (kind == 0) {
    g = *ir::ParseGraph(
        "graph copy {\n  %0 = input {name=\"x\"} : f64[S, 64]\n  %1 = neg(%0) : f64[S, 64]\n"
        "  return %1\n}\n");
    label = "one trivial kernel";
  } else if (kind == 1) {
    g = Chain(4);
    label = "4 fused pointwise ops";
  } else {
    g = *ir::ParseGraph(
        "graph mv {\n  %0 = input {name=\"x\"} : f64[1, 128]\n"
        "  %1 = input {name=\"w\"} : f64[128, 344]\n  %2 = matmul(%0, %1) : f64[1, 344]\n"
        "  return %2\n}\n");
    label = "matvec 128 x 344";
  }
  compiler::CompileGraphOptions options = Cold();
  options.codegen.tier =
      state.range(1) == 1 ? compiler::CodeTier::kBaseline : compiler::CodeTier::kOptimized;
  compiler::PhaseTimings sum;
  for (auto _ : state) {
    auto cg = compiler::CompiledGraph::Compile(g, {}, options);
    GJ_CHECK(cg.ok()) << cg.status().message();
    sum += (*cg)->timings();
  }
  ReportPhases(state, sum);
  state.SetLabel(absl::StrCat(label, ", ", compiler::CodeTierName(options.codegen.tier)));
}
BENCHMARK(BM_CompileKernel)
    ->ArgsProduct({{0, 1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

std::map<int64_t, double>& ChainSeconds() {
  static auto* seconds = new std::map<int64_t, double>();
  return *seconds;
}

void BM_CompileChain(benchmark::State& state) {
  ir::Graph g = Chain(static_cast<int>(state.range(0)));
  compiler::PhaseTimings sum;
  for (auto _ : state) {
    auto cg = compiler::CompiledGraph::Compile(g, {}, Cold());
    GJ_CHECK(cg.ok()) << cg.status().message();
    sum += (*cg)->timings();
  }
  ReportPhases(state, sum);
  ChainSeconds()[state.range(0)] = sum.total() / static_cast<double>(state.iterations());
  // After the longest chain: the exponent of compile time vs ops over all lengths so far.
  if (state.range(0) == 64 && ChainSeconds().size() >= 2) {
    std::vector<double> xs, ys;
    for (const auto& [n, s] : ChainSeconds()) {
      xs.push_back(static_cast<double>(n));
      ys.push_back(s);
    }
    absl::StatusOr<compiler::LogLogFit> fit = compiler::FitLogLog(xs, ys);
    if (fit.ok()) {
      state.counters["fit_slope"] = fit->slope;
      state.counters["fit_r2"] = fit->r_squared;
    }
  }
}
BENCHMARK(BM_CompileChain)
    ->RangeMultiplier(2)
    ->Range(1, 64)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace graphjit

BENCHMARK_MAIN();
