// Jit functions (compile caches) from several threads: one compile per new key however
// many callers ask for it at once, compiles of different keys overlapping, and a mixed
// load with eviction giving the single-threaded results.
//
// ThreadSanitizer: `scripts/sanitize.sh thread` builds build-tsan/ and runs these tests
// (and the Jit, JIT engine, driver and lazy tests) under TSan. Debian's abseil is not
// built for TSan, which therefore cannot see absl::Mutex: the cache, the code stores, the
// JIT's TargetMachinePool and this test synchronize with the standard library only
// (std::mutex, std::barrier), so no project code needs a suppression.
#include <atomic>
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "cache_test_util.h"
#include "compiler/jit.h"
#include "gtest/gtest.h"
#include "models/jit_model.h"

namespace graphjit::compiler::entries {
namespace {

using runtime::Tensor;
using testutil::DecodeInputs;

// Generous: only reached if the behaviour under test is broken (the wait would never end).
constexpr std::chrono::seconds kDeadline{120};

TEST(CompileCacheConcurrency, CallersOfTheSameNewKeyWaitForOneCompile) {
  constexpr int kThreads = 8;
  auto model = testutil::SmallDecode();
  JitOptions options;
  options.policy = ShapePolicy::kExact;
  options.log = {};
  JitFunction* cache_ptr = nullptr;
  std::atomic<bool> all_waited{false};
  // Holds the one compile until every other caller is waiting for it, so the wait path
  // is exercised for sure.
  options.before_compile = [&](const DimKeys&) {
    auto deadline = std::chrono::steady_clock::now() + kDeadline;
    while (cache_ptr->stats().waits < kThreads - 1 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    all_waited = cache_ptr->stats().waits == kThreads - 1;
  };
  auto cache = *models::JitModel(*model, options);
  cache_ptr = cache.get();

  std::barrier start(kThreads);
  std::vector<absl::StatusOr<std::vector<Tensor>>> results(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      runtime::TensorMap in = DecodeInputs(*model, 9);
      start.arrive_and_wait();
      results[i] = cache->Run(in, {{"P", 8}});
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_TRUE(all_waited);
  CacheStats s = cache->stats();
  EXPECT_EQ(s.compiles, 1);
  EXPECT_EQ(s.hits, kThreads - 1);
  EXPECT_EQ(s.waits, kThreads - 1);
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].status();
    EXPECT_EQ(runtime::MaxAbsDiff((*results[i])[0], (*results[0])[0]), 0) << i;
  }
}

TEST(CompileCacheConcurrency, DifferentKeysCompileInParallel) {
  constexpr int kThreads = 3;
  auto model = testutil::SmallDecode();
  JitOptions options;
  options.policy = ShapePolicy::kExact;
  options.log = {};
  std::mutex mu;
  std::condition_variable cv;
  int inside = 0;
  bool overlapped = true;
  // Each compile starts only once all of them have started: if the cache compiled one
  // key at a time, the first would wait here until the deadline.
  options.before_compile = [&](const DimKeys&) {
    std::unique_lock<std::mutex> lock(mu);
    ++inside;
    cv.notify_all();
    if (!cv.wait_for(lock, kDeadline, [&] { return inside == kThreads; })) overlapped = false;
  };
  auto cache = *models::JitModel(*model, options);
  std::vector<absl::StatusOr<std::vector<Tensor>>> results(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] { results[i] = cache->Run(DecodeInputs(*model, 4 + i)); });
  }
  for (std::thread& t : threads) t.join();
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_TRUE(overlapped);
  }
  EXPECT_EQ(cache->stats().compiles, kThreads);
  for (auto& r : results) EXPECT_TRUE(r.ok()) << r.status();
}

// Four threads calling with lengths 2..7 under a cache that holds only three entries:
// hits, waits, compiles and evictions interleave; every result is the single-threaded one.
TEST(CompileCacheConcurrency, MixedLoadWithEvictionGivesTheSingleThreadedResults) {
  constexpr int kThreads = 4, kCalls = 12;
  auto model = testutil::SmallDecode();
  JitOptions reference_options;
  reference_options.policy = ShapePolicy::kSymbolic;
  reference_options.log = {};
  auto reference = *models::JitModel(*model, reference_options);
  std::vector<std::vector<Tensor>> want;
  for (int64_t S = 2; S <= 7; ++S) want.push_back(*reference->Run(DecodeInputs(*model, S)));

  for (ShapePolicy policy : {ShapePolicy::kExact, ShapePolicy::kPow2, ShapePolicy::kAuto}) {
    SCOPED_TRACE(PolicyName(policy));
    JitOptions options;
    options.policy = policy;
    options.capacity = 3;
    options.log = {};
    auto cache = *models::JitModel(*model, options);
    std::atomic<int> mismatches{0}, failures{0};
    std::barrier start(kThreads);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        for (int c = 0; c < kCalls; ++c) {
          int64_t S = 2 + (i * 5 + c * 7) % 6;
          absl::StatusOr<std::vector<Tensor>> got = cache->Run(DecodeInputs(*model, S));
          if (!got.ok()) {
            ++failures;
            continue;
          }
          for (int o = 0; o < 3; ++o) {
            if (runtime::MaxAbsDiff((*got)[o], want[S - 2][o]) > 1e-12) ++mismatches;
          }
        }
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(failures, 0);
    EXPECT_EQ(mismatches, 0);
    CacheStats s = cache->stats();
    EXPECT_EQ(s.calls, kThreads * kCalls);
    EXPECT_EQ(s.hits + s.compiles + s.shared, s.calls);
    EXPECT_LE(cache->size(), 3);
  }
}

}  // namespace
}  // namespace graphjit::compiler::entries
