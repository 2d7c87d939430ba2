// Bounded resources (issue 16): 10,000 distinct exact shapes through a Jit function with
// a small capacity. Tiered, so that each call is a miss served by the interpreter while
// the background thread compiles what it can (an untiered compile per shape would take
// far longer than a test may; the untiered path is checked on 2,000 compiles by
// CompiledGraphMemory and OrcEngineTest.DroppedCodeIsFreed). Every evicted entry's code
// must go: live entries and live compiled graphs stay at the capacity, kernels and
// modules at a few per entry, and the process's code mappings and resident memory stop
// growing after a warm-up. Facts read from the stores and /proc/self, not timings.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "compiler/jit.h"
#include "compiler/store/content_store.h"
#include "frontend/ops.h"
#include "gtest/gtest.h"
#include "runtime/tensor.h"
#include "tests/proc_self.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;

using proc_self::CodeMappings;
using proc_self::ResidentBytes;

// Polls until the background thread has finished or dropped `expected` compiles.
void WaitForBackground(const JitFunction& fn, int64_t expected) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
  while (fn.stats().background_compiles + fn.stats().dropped_compiles < expected &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

Tensor Ramp(int64_t n) {
  std::vector<double> values(n, 0.5);
  values.back() = 2.0;
  return *Tensor::FromDoubles(ir::DType::kF64, {n}, values);
}

TEST(BoundedResources, TenThousandExactShapesThroughASmallCache) {
  constexpr int kShapes = 10000, kWarmup = 500;
  constexpr int64_t kCapacity = 8;
  JitOptions options;
  options.policy = entries::ShapePolicy::kExact;
  options.capacity = kCapacity;
  options.tiered = true;
  options.tier_queue = 4;
  options.log = {};
  options.store = std::make_shared<GraphStore>();
  // Every compile is a real one, in this process.
  options.compile.env = &CompileEnv::MemoryOnly();
  absl::StatusOr<std::unique_ptr<JitFunction>> fn = Jit(
      "tanh_square_plus",
      [](frontend::Context& ctx) {
        frontend::Value x = ctx.Input("x");
        return std::vector<frontend::Value>{frontend::Tanh(x * x) + x};
      },
      {}, options);
  ASSERT_TRUE(fn.ok()) << fn.status();
  const StoreStats kernels_before = KernelStore::Default().stats();
  const StoreStats modules_before = ModuleStore::Default().stats();
  const double want = std::tanh(4.0) + 2.0;  // the last element, 2

  int64_t rss_warm = 0;
  int maps_warm = 0, maps_peak = 0;
  for (int i = 0; i < kShapes; ++i) {
    if (i == kWarmup) {
      rss_warm = ResidentBytes();
      maps_warm = CodeMappings();
    }
    const int64_t n = i + 1;  // a new exact shape every call
    absl::StatusOr<std::vector<Tensor>> out = (*fn)->Run({{"x", Ramp(n)}});
    ASSERT_TRUE(out.ok()) << "n=" << n << ": " << out.status();
    ASSERT_EQ((*out)[0].numel(), n);
    ASSERT_DOUBLE_EQ((*out)[0].ValueAt(n - 1), want) << "n=" << n;
    ASSERT_LE((*fn)->size(), kCapacity) << "n=" << n;
    // Plus the one graph the background thread may be compiling for an evicted entry.
    ASSERT_LE(options.store->stats().live, kCapacity + 1) << "n=" << n;
    if (i >= kWarmup && i % 50 == 0) maps_peak = std::max(maps_peak, CodeMappings());
  }
  WaitForBackground(**fn, kShapes);
  const entries::CacheStats stats = (*fn)->stats();
  EXPECT_EQ(stats.interpreted, kShapes);  // every call a miss, answered at once
  EXPECT_EQ(stats.background_compiles + stats.dropped_compiles, kShapes);
  EXPECT_GT(stats.background_compiles, 0);  // code did come and go
  EXPECT_EQ(stats.evictions, kShapes - kCapacity);
  EXPECT_LE(stats.peak_entries, kCapacity);

  // The last shapes' entries are live and compiled: asked again, compiled code answers.
  absl::StatusOr<std::vector<Tensor>> again = (*fn)->Run({{"x", Ramp(kShapes)}});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_DOUBLE_EQ((*again)[0].ValueAt(kShapes - 1), want);
  EXPECT_EQ((*fn)->stats().interpreted, kShapes);

  const int64_t rss_end = ResidentBytes();
  const int maps_end = CodeMappings();
  const StoreStats kernels = KernelStore::Default().stats();
  const StoreStats modules = ModuleStore::Default().stats();
  std::printf(
      "[ info     ] %d shapes: %lld compiled in the background, %lld dropped, %lld "
      "evictions; RSS %.1f MiB after %d, %.1f MiB at the end; code mappings %d -> %d (peak "
      "%d); live graphs %lld, kernels %lld, modules %lld\n",
      kShapes, static_cast<long long>(stats.background_compiles),
      static_cast<long long>(stats.dropped_compiles), static_cast<long long>(stats.evictions),
      rss_warm / 1048576.0, kWarmup, rss_end / 1048576.0, maps_warm, maps_end, maps_peak,
      static_cast<long long>(options.store->stats().live),
      static_cast<long long>(kernels.live - kernels_before.live),
      static_cast<long long>(modules.live - modules_before.live));
  EXPECT_LE(options.store->stats().live, kCapacity);
  // The kernels and modules still alive are those of the live entries (a few per graph),
  // not one per shape ever compiled.
  EXPECT_LE(kernels.live - kernels_before.live, 4 * kCapacity);
  EXPECT_LE(modules.live - modules_before.live, 4 * kCapacity);
  // Code memory is unmapped with its entry: the count of code mappings stays flat.
  EXPECT_LT(maps_peak - maps_warm, 4 * kCapacity);
  EXPECT_LT(maps_end - maps_warm, 4 * kCapacity);
  // Resident memory is bounded too, except under ASan, whose quarantine and allocator
  // keep freed memory resident (there LSan checks the leaks at exit instead).
  if (!proc_self::kAddressSanitizer) {
    EXPECT_LT(rss_end - rss_warm, int64_t{128} << 20);
  }
}

}  // namespace
}  // namespace graphjit::compiler
