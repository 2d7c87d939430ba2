// How far a compiled decode step is from this machine's streaming floor.
//
// BM_ReadBandwidth: one core reading a buffer that lives in L1, L2, L3 or DRAM (sizes
// from the CPU's cache sizes), with the widest vectors the host has (AVX-512, AVX2 or
// SSE2, detected at run time), summed into 8 independent accumulators so that only the
// loads limit it.
// BM_DecodeStep: one compiled decode step (f32 / f64, KV length S = 64 / 512), with the
// matmul register tiling on and off, through CompiledGraph::Run (outputs and workspace
// allocated per call) or a CompiledCall (a kept frame: no allocation), on 1 or 2 threads.
// Every iteration also reads a buffer as large as what the step must read (every weight
// once, the caches once), timed apart: that read is the step's floor (on 2 threads, two
// cores each reading half of it through the same thread pool). Counters (medians over the
// iterations; the reported time is the steps' mean):
//   bytes     what the step must read (from the compiled graph's params and inputs)
//   step_us   one step
//   floor_us  reading those bytes at this working-set size, between the steps
//   x_floor   step_us / floor_us (1.0 is the floor)
// BM_FmaPeak: the core's f32 FMA peak (GFLOP/s); BM_Product: f32 products through
// graphjit's tiles, its OpenBLAS call and OpenBLAS directly, read against that peak;
// BM_ProductEpilogue: a 1x1 convolution's bias and relu6 in the tiles' stores or after.
// Run: build/bin/bench_roofline --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "benchmark/benchmark.h"
#include "compiler/compiled/compiled_call.h"
#include "compiler/compiled/compiled_graph.h"
#include "ir/check.h"
#include "ir/clock.h"
#include "ir/parser.h"
#include "models/model.h"
#include "runtime/jit_helpers.h"
#include "runtime/thread_pool.h"

namespace graphjit {
namespace {

template <int kBytes>
struct Vec {
  typedef double Type __attribute__((vector_size(kBytes)));
};

// Sums `n` doubles (n a multiple of 8 vectors) with 8 vector accumulators. Always
// inlined: compiled on its own it gets the default target (SSE2), and GCC 12 did not
// inline the 64-byte instance into Sum512 by itself, so AVX-512 hosts read their "floor"
// through split SSE2 vectors spilled to the stack at ~27 GB/s from L1.
template <int kBytes>
__attribute__((always_inline)) inline double SumWith(const double* data, int64_t n) {
  using V = typename Vec<kBytes>::Type;
  constexpr int kLanes = kBytes / 8;
  V acc[8] = {};
  for (int64_t i = 0; i < n; i += 8 * kLanes) {
    for (int j = 0; j < 8; ++j) {
      V v;
      std::memcpy(&v, data + i + j * kLanes, sizeof(V));
      acc[j] += v;
    }
  }
  double total = 0;
  for (const V& a : acc) {
    for (int l = 0; l < kLanes; ++l) total += a[l];
  }
  return total;
}

__attribute__((target("avx512f"))) double Sum512(const double* d, int64_t n) {
  return SumWith<64>(d, n);
}
__attribute__((target("avx2"))) double Sum256(const double* d, int64_t n) {
  return SumWith<32>(d, n);
}
double Sum128(const double* d, int64_t n) { return SumWith<16>(d, n); }

// The widest reader of this host, and its name.
double ReadAll(const double* d, int64_t n) {
  static const auto fn = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return &Sum512;
    if (__builtin_cpu_supports("avx2")) return &Sum256;
    return &Sum128;
  }();
  return fn(d, n);
}
const char* ReaderName() {
  if (__builtin_cpu_supports("avx512f")) return "avx512";
  if (__builtin_cpu_supports("avx2")) return "avx2";
  return "sse2";
}

// A 64-byte aligned buffer of at least `bytes`, rounded up to whole 512-byte blocks.
struct ReadBuffer {
  explicit ReadBuffer(int64_t bytes) : n(std::max<int64_t>(64, (bytes + 511) / 512 * 64)) {
    data.reset(static_cast<double*>(std::aligned_alloc(64, n * sizeof(double))));
    for (int64_t i = 0; i < n; ++i) data.get()[i] = 1.0 / static_cast<double>(i + 1);
  }
  struct Free {
    void operator()(double* p) const { std::free(p); }
  };
  int64_t n;
  std::unique_ptr<double, Free> data;
};

// Working sets: half of each cache level (so it stays there), and 8x the last level.
std::vector<std::pair<const char*, int64_t>> Levels() {
  int64_t l1 = 32 << 10, l2 = 512 << 10, l3 = 16 << 20;
  for (const auto& c : benchmark::CPUInfo::Get().caches) {
    if (c.level == 1 && c.type != "Instruction") l1 = c.size;
    if (c.level == 2) l2 = c.size;
    if (c.level == 3) l3 = c.size;
  }
  return {{"L1", l1 / 2}, {"L2", l2 / 2}, {"L3", l3 / 2}, {"DRAM", l3 * 8}};
}

void BM_ReadBandwidth(benchmark::State& state) {
  const auto level = Levels()[state.range(0)];
  ReadBuffer buffer(level.second);
  for (auto _ : state) benchmark::DoNotOptimize(ReadAll(buffer.data.get(), buffer.n));
  const double bytes = static_cast<double>(buffer.n) * sizeof(double);
  state.counters["GB/s"] =
      benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["KiB"] = bytes / 1024;
  state.SetLabel(absl::StrCat(level.first, " ", ReaderName()));
}
BENCHMARK(BM_ReadBandwidth)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);

void BM_DecodeStep(benchmark::State& state) {
  const int64_t S = state.range(0);
  const bool f32 = state.range(1) == 1;
  // 2: as compiled by default; 1: attention as five kernels (no fuse_attention); 0: that
  // and matmuls untiled; 3: the default compiled at the baseline code tier; 4: 1 at the
  // baseline tier.
  const int variant = static_cast<int>(state.range(2));
  const bool kept_frame = state.range(3) == 1;
  const int threads = static_cast<int>(state.range(4));
  auto model = *models::CreateModel(f32 ? "decode:dtype=f32" : "decode");
  runtime::TensorMap in = *model->ExampleInputs({{"S", S}}, 0);
  ir::Bindings bind = {{"P", S - 1}};
  models::TraceOptions trace;
  trace.fixed_dims = {{"S", S}};
  ir::Graph traced = *models::TraceModel(*model, trace);
  compiler::CompileGraphOptions options;
  options.codegen.tile_matmuls = variant >= 1;
  options.fuse_attention = variant == 2 || variant == 3;
  if (variant >= 3) options.codegen.tier = compiler::CodeTier::kBaseline;
  options.threads = threads;
  auto cg = *compiler::CompiledGraph::Compile(traced, model->params(), options);
  compiler::CompiledCall call(*cg);
  std::vector<runtime::Tensor> positional;
  for (const std::string& name : call.input_names()) positional.push_back(in.at(name));
  // What the step must read at least: every param and input buffer of the program once.
  int64_t bytes = 0;
  for (const compiler::Buffer& b : cg->program().buffers) {
    if (b.kind != compiler::BufferKind::kInput && b.kind != compiler::BufferKind::kParam) continue;
    bytes += *ir::NumElements(b.shape).Evaluate({}) * ir::DTypeSize(b.dtype);
  }
  ReadBuffer floor_buffer(bytes);
  // The floor on `threads` cores: each reads its part of the buffer (whole 64-double
  // blocks), as the step's kernels read theirs.
  auto read_floor = [&] {
    const int64_t blocks = floor_buffer.n / 64;
    runtime::ThreadPool::Shared().Run(threads, [&](int p) {
      const int64_t begin = blocks * p / threads * 64, end = blocks * (p + 1) / threads * 64;
      benchmark::DoNotOptimize(ReadAll(floor_buffer.data.get() + begin, end - begin));
    });
  };
  auto step = [&] {
    if (kept_frame) {
      absl::Status s = call.Run(positional, bind);  // KV in place
      GJ_CHECK(s.ok()) << s.message();
      benchmark::DoNotOptimize(call.outputs());
    } else {
      absl::StatusOr<std::vector<runtime::Tensor>> out = cg->Run(in, bind);  // KV in place
      GJ_CHECK(out.ok()) << out.status().message();
      benchmark::DoNotOptimize(out);
    }
  };
  for (int warm = 0; warm < 3; ++warm) step();
  // Each iteration times one step, then one read of the floor buffer: load from other
  // tenants of this shared machine then hits both alike, and the ratio of the medians
  // compares them under the same conditions. (Both then come from the same cache level:
  // each evicts the other.)
  std::vector<double> steps, floors;
  for (auto _ : state) {
    ir::Clock::time_point start = ir::Clock::now();
    step();
    const double seconds = ir::SecondsSince(start);
    state.SetIterationTime(seconds);
    steps.push_back(seconds);
    start = ir::Clock::now();
    read_floor();
    floors.push_back(ir::SecondsSince(start));
  }
  const double step_median = ir::Median(steps), floor_median = ir::Median(floors);
  state.counters["step_us"] = step_median * 1e6;
  state.counters["floor_us"] = floor_median * 1e6;
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["x_floor"] = step_median / floor_median;
  static const char* const kVariant[] = {" untiled", " unfused", " default", " baseline tier",
                                         " baseline tier unfused"};
  state.SetLabel(absl::StrCat(f32 ? "f32" : "f64", " S=", S, kVariant[variant],
                              kept_frame ? " CompiledCall" : " Run", " threads=", threads));
}
// Args: S, f32, variant (2 default, 1 attention unfused, 0 also untiled, 3 default at the
// baseline code tier, 4 unfused at the baseline), kept frame
// (CompiledCall::Run instead of CompiledGraph::Run), threads (the default variant also
// on 2: compiler/compiled/kernel_set.h splits its large kernels).
BENCHMARK(BM_DecodeStep)
    ->ArgsProduct({{64, 512}, {0, 1}, {2, 1, 0}, {0, 1}, {1}})
    ->ArgsProduct({{64, 512}, {0, 1}, {2}, {0, 1}, {2}})
    ->ArgsProduct({{64, 512}, {0, 1}, {3, 4}, {1}, {1}})
    ->Unit(benchmark::kMicrosecond)
    ->UseManualTime();

// A matrix-vector product [1, K] @ [K, N] three ways: the generated loops tiled (arg 0)
// and untiled (arg 1) through CompiledGraph::Run, and OpenBLAS through the helper the
// compiled code calls for larger products (arg 2): the choice lowering makes for M = 1.
void BM_Matvec(benchmark::State& state) {
  const int64_t K = state.range(0), N = state.range(1);
  const bool f32 = state.range(2) == 1;
  const int impl = static_cast<int>(state.range(3));
  const ir::DType dtype = f32 ? ir::DType::kF32 : ir::DType::kF64;
  const char* dt = f32 ? "f32" : "f64";
  std::vector<double> xs(K), ws(K * N);
  for (int64_t i = 0; i < K; ++i) xs[i] = 1.0 / static_cast<double>(i + 1);
  for (int64_t i = 0; i < K * N; ++i) ws[i] = static_cast<double>(i % 7) - 3;
  runtime::Tensor x = *runtime::Tensor::FromDoubles(dtype, {1, K}, xs);
  runtime::Tensor w = *runtime::Tensor::FromDoubles(dtype, {K, N}, ws);
  runtime::Tensor out = *runtime::Tensor::Zeros(dtype, {1, N});
  std::unique_ptr<compiler::CompiledGraph> cg;
  if (impl < 2) {
    ir::Graph g = *ir::ParseGraph(absl::StrCat("graph mv {\n  %0 = input {name=\"x\"} : ", dt,
                                               "[1, ", K, "]\n  %1 = input {name=\"w\"} : ", dt,
                                               "[", K, ", ", N, "]\n  %2 = matmul(%0, %1) : ", dt,
                                               "[1, ", N, "]\n  return %2\n}\n"));
    compiler::CompileGraphOptions options;
    options.codegen.tile_matmuls = impl == 0;
    cg = *compiler::CompiledGraph::Compile(g, {}, options);
  }
  const runtime::TensorMap in = {{"x", x}, {"w", w}};
  for (auto _ : state) {
    if (impl == 2) {
      if (f32) {
        graphjit_rt_matmul_f32(x.data<float>(), w.data<float>(), out.data<float>(), 1, N, K, N, N,
                               0);
      } else {
        graphjit_rt_matmul_f64(x.data<double>(), w.data<double>(), out.data<double>(), 1, N, K, N,
                               N, 0);
      }
      benchmark::DoNotOptimize(out.raw_data());
    } else {
      auto y = cg->Run(in);
      GJ_CHECK(y.ok()) << y.status().message();
      benchmark::DoNotOptimize(y);
    }
  }
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(w.nbytes()) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate);
  static const char* const kImpl[] = {"loops tiled", "loops untiled", "OpenBLAS"};
  state.SetLabel(absl::StrCat(dt, " 1x", K, " @ ", K, "x", N, " ", kImpl[impl]));
}
BENCHMARK(BM_Matvec)
    ->ArgsProduct({{128}, {344}, {0, 1}, {0, 1, 2}})
    ->ArgsProduct({{344}, {128}, {0, 1}, {0, 1, 2}})
    ->ArgsProduct({{512}, {512}, {0, 1}, {0, 1, 2}})
    ->ArgsProduct({{1024}, {1024}, {0, 1}, {0, 1, 2}})
    ->Unit(benchmark::kMicrosecond);

// The machine's f32 FMA peak on one core: 12 independent chains of vector FMAs (enough to
// cover a 4-cycle latency on two pipes) at the widest vectors the host has. The product
// benchmarks below are read against it (`peak` is GFLOP/s: 2 per FMA lane).
// With intrinsics: the build compiles with -ffp-contract=off, so `a * b + c` would stay
// two instructions.
__attribute__((target("avx512f"))) float Fma512(int64_t iters) {
  __m512 acc[12];
  const __m512 b = _mm512_set1_ps(1.0000001f), c = _mm512_set1_ps(1e-7f);
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  for (int64_t it = 0; it < iters; ++it) {
    for (int i = 0; i < 12; ++i) {
      acc[i] = _mm512_fmadd_ps(acc[i], b, c);
    }
  }
  float total = 0;
  for (const __m512& a : acc) total += _mm512_cvtss_f32(a);
  return total;
}
__attribute__((target("avx2,fma"))) float Fma256(int64_t iters) {
  __m256 acc[12];
  const __m256 b = _mm256_set1_ps(1.0000001f), c = _mm256_set1_ps(1e-7f);
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i));
  for (int64_t it = 0; it < iters; ++it) {
    for (int i = 0; i < 12; ++i) {
      acc[i] = _mm256_fmadd_ps(acc[i], b, c);
    }
  }
  float total = 0;
  for (const __m256& a : acc) total += _mm256_cvtss_f32(a);
  return total;
}

void BM_FmaPeak(benchmark::State& state) {
  const bool wide = __builtin_cpu_supports("avx512f");
  const int lanes = wide ? 16 : 8;
  constexpr int64_t kIters = 1 << 20;
  int64_t iters = kIters;
  for (auto _ : state) {
    benchmark::DoNotOptimize(iters);  // a new argument each time: the call is not hoisted
    benchmark::DoNotOptimize(wide ? Fma512(iters) : Fma256(iters));
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * 12 * lanes * kIters * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(wide ? "f32 avx512" : "f32 avx2");
}
BENCHMARK(BM_FmaPeak)->Unit(benchmark::kMicrosecond);

// An f32 product [M, K] @ [K, N] (a constant rhs, as weights are) three ways: graphjit's
// generated tiles (arg 0) and its OpenBLAS call (arg 1) through a CompiledCall, and
// OpenBLAS called directly (arg 2). GFLOP/s = 2 M N K per second; read it against
// BM_FmaPeak. The shapes: squares, and resnet50's convolutions as products (M = output
// channels, N = output positions, K = input channels x window).
void BM_Product(benchmark::State& state) {
  runtime::UseSingleThreadedBlas();  // OpenBLAS on the calling thread alone, as the tiles
  const int64_t M = state.range(0), N = state.range(1), K = state.range(2);
  const int impl = static_cast<int>(state.range(3));
  std::vector<double> as(M * K), bs(K * N);
  for (int64_t i = 0; i < M * K; ++i) as[i] = static_cast<double>(i % 13) / 13 - 0.5;
  for (int64_t i = 0; i < K * N; ++i) bs[i] = static_cast<double>(i % 7) / 7 - 0.5;
  runtime::Tensor a = *runtime::Tensor::FromDoubles(ir::DType::kF32, {M, K}, as);
  runtime::Tensor b = *runtime::Tensor::FromDoubles(ir::DType::kF32, {K, N}, bs);
  runtime::Tensor out = *runtime::Tensor::Zeros(ir::DType::kF32, {M, N});
  std::unique_ptr<compiler::CompiledGraph> cg;
  std::unique_ptr<compiler::CompiledCall> call;
  std::vector<runtime::Tensor> positional = {a};
  if (impl < 2) {
    ir::Graph g = *ir::ParseGraph(absl::StrCat("graph mm {\n  %0 = input {name=\"a\"} : f32[", M,
                                               ", ", K, "]\n  %1 = param {name=\"b\"} : f32[", K,
                                               ", ", N, "]\n  %2 = matmul(%0, %1) : f32[", M, ", ",
                                               N, "]\n  return %2\n}\n"));
    compiler::CompileGraphOptions options;
    options.products =
        impl == 0 ? compiler::ProductKernels::kTiles : compiler::ProductKernels::kBlas;
    // One core, as BM_FmaPeak: otherwise a call splits over every core (GRAPHJIT_NUM_THREADS
    // unset) and reads above the one-core peak.
    options.threads = 1;
    auto compiled = compiler::CompiledGraph::Compile(g, {{"b", b}}, options);
    GJ_CHECK(compiled.ok()) << compiled.status().message();
    cg = *std::move(compiled);
    call = std::make_unique<compiler::CompiledCall>(*cg);
  }
  for (auto _ : state) {
    if (impl == 2) {
      graphjit_rt_matmul_f32(a.data<float>(), b.data<float>(), out.data<float>(), M, N, K, N, N, 0);
      benchmark::DoNotOptimize(out.raw_data());
    } else {
      absl::Status s = call->Run(positional, {});
      GJ_CHECK(s.ok()) << s.message();
      benchmark::DoNotOptimize(call->outputs());
    }
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * M * N * K * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  static const char* const kImpl[] = {"graphjit tiles", "graphjit OpenBLAS", "OpenBLAS"};
  state.SetLabel(absl::StrCat(M, "x", K, " @ ", K, "x", N, " ", kImpl[impl]));
}
BENCHMARK(BM_Product)
    ->ArgsProduct({{256}, {256}, {256}, {0, 1, 2}})
    ->ArgsProduct({{512}, {512}, {512}, {0, 1, 2}})
    ->ArgsProduct({{1024}, {1024}, {1024}, {0, 1, 2}})
    ->ArgsProduct({{64}, {3136}, {576}, {0, 1, 2}})   // resnet50 layer1 3x3
    ->ArgsProduct({{256}, {3136}, {64}, {0, 1, 2}})   // layer1 1x1 expand
    ->ArgsProduct({{128}, {784}, {1152}, {0, 1, 2}})  // layer2 3x3
    ->ArgsProduct({{256}, {196}, {2304}, {0, 1, 2}})  // layer3 3x3
    ->ArgsProduct({{1024}, {196}, {256}, {0, 1, 2}})  // layer3 1x1 expand
    ->ArgsProduct({{512}, {49}, {4608}, {0, 1, 2}})   // layer4 3x3
    ->ArgsProduct({{2048}, {49}, {512}, {0, 1, 2}})   // layer4 1x1 expand
    ->Unit(benchmark::kMicrosecond);

// A 1x1 convolution as the CNNs have it, x [1, Cin, H*W] times weights [Cout, Cin], its
// bias and relu6 (clip 0..6) written into the zero-padded [1, Cout, H+2, W+2] input of the
// next (depthwise) convolution: the pointwise ops in the product's stores (arg 3 = 1,
// compiler/lower/fuse_epilogues.h) or in a kernel of their own (0), as generated tiles on
// one core. Shapes: mobilenet_v2's expansions at each resolution.
void BM_ProductEpilogue(benchmark::State& state) {
  const int64_t cout = state.range(0), cin = state.range(1), side = state.range(2);
  const bool fuse = state.range(3) != 0;
  const int64_t hw = side * side, padded = side + 2;
  ir::Graph g = *ir::ParseGraph(absl::StrReplaceAll(
      R"(graph conv1x1 {
  %0 = input {name="x"} : f32[1, CIN, HW]
  %1 = param {name="w"} : f32[COUT, CIN]
  %2 = param {name="bias"} : f32[COUT, 1, 1]
  %3 = matmul(%1, %0) : f32[1, COUT, HW]
  %4 = reshape(%3) {shape=[1, COUT, S, S]} : f32[1, COUT, S, S]
  %5 = add(%4, %2) : f32[1, COUT, S, S]
  %6 = full {value=0} : f32[]
  %7 = full {value=6} : f32[]
  %8 = maximum(%5, %6) : f32[1, COUT, S, S]
  %9 = minimum(%8, %7) : f32[1, COUT, S, S]
  %10 = full {value=0} : f32[1, COUT, S, 1]
  %11 = concat(%10, %9, %10) {axis=3} : f32[1, COUT, S, P]
  %12 = full {value=0} : f32[1, COUT, 1, P]
  %13 = concat(%12, %11, %12) {axis=2} : f32[1, COUT, P, P]
  return %13
})",
      {{"CIN", absl::StrCat(cin)},
       {"COUT", absl::StrCat(cout)},
       {"HW", absl::StrCat(hw)},
       {"S", absl::StrCat(side)},
       {"P", absl::StrCat(padded)}}));
  std::vector<double> xs(cin * hw), ws(cout * cin), bs(cout);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<double>(i % 11) / 11 - 0.5;
  for (size_t i = 0; i < ws.size(); ++i) ws[i] = static_cast<double>(i % 7) / 7 - 0.5;
  for (size_t i = 0; i < bs.size(); ++i) bs[i] = static_cast<double>(i % 5) / 5;
  runtime::TensorMap params = {
      {"w", *runtime::Tensor::FromDoubles(ir::DType::kF32, {cout, cin}, ws)},
      {"bias", *runtime::Tensor::FromDoubles(ir::DType::kF32, {cout, 1, 1}, bs)}};
  compiler::CompileGraphOptions options;
  options.products = compiler::ProductKernels::kTiles;
  options.fuse_epilogues = fuse;
  options.threads = 1;
  auto compiled = compiler::CompiledGraph::Compile(g, params, options);
  GJ_CHECK(compiled.ok()) << compiled.status().message();
  compiler::CompiledCall call(**compiled);
  std::vector<runtime::Tensor> positional = {
      *runtime::Tensor::FromDoubles(ir::DType::kF32, {1, cin, hw}, xs)};
  for (auto _ : state) {
    absl::Status s = call.Run(positional, {});
    GJ_CHECK(s.ok()) << s.message();
    benchmark::DoNotOptimize(call.outputs());
  }
  state.counters["kernels"] = static_cast<double>((*compiled)->program().kernels.size());
  state.SetLabel(
      absl::StrCat(cout, "x", cin, " @ ", cin, "x", side, "^2", fuse ? " fused" : " separate"));
}
BENCHMARK(BM_ProductEpilogue)
    ->ArgsProduct({{96}, {16}, {112}, {0, 1}})
    ->ArgsProduct({{144}, {24}, {56}, {0, 1}})
    ->ArgsProduct({{192}, {32}, {28}, {0, 1}})
    ->ArgsProduct({{384}, {64}, {14}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace graphjit

BENCHMARK_MAIN();
