// Tests of runtime::ThreadPool: every part runs once, on the thread it is meant for;
// callers that find the pool busy (another thread's job, a part calling in) run their
// parts themselves; a pool joins its workers when destroyed.
#include "runtime/thread_pool.h"

#include <sched.h>

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace graphjit::runtime {
namespace {

TEST(ThreadPoolTest, AvailableCpusIsTheAffinityMask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_EQ(AvailableCpus(), CPU_COUNT(&set));
  EXPECT_GE(AvailableCpus(), 1);
}

TEST(ThreadPoolTest, EveryPartRunsOnceAndPartZeroOnTheCaller) {
  ThreadPool pool;
  for (int parts : {1, 2, 3, 7}) {
    std::vector<std::atomic<int>> runs(parts);
    std::vector<std::thread::id> where(parts);
    pool.Run(parts, [&](int p) {
      runs[p].fetch_add(1);
      where[p] = std::this_thread::get_id();
    });
    for (int p = 0; p < parts; ++p) EXPECT_EQ(runs[p].load(), 1) << "part " << p << " of " << parts;
    EXPECT_EQ(where[0], std::this_thread::get_id());
    EXPECT_GE(pool.workers(), parts - 1);
  }
  EXPECT_EQ(pool.workers(), 6);
}

// Part p runs on worker p - 1 or, where that worker had not claimed it yet, on the caller:
// never on another worker, so each worker keeps its slice of the data.
TEST(ThreadPoolTest, PartPRunsOnItsWorkerOrTheCaller) {
  ThreadPool pool;
  constexpr int kParts = 3, kJobs = 200;
  std::vector<std::vector<std::thread::id>> where(kParts);
  for (int j = 0; j < kJobs; ++j) {
    if (j == kJobs / 2) {
      pool.Park();  // sleeping workers must wake for the next job
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::vector<std::thread::id> ids(kParts);
    pool.Run(kParts, [&](int p) { ids[p] = std::this_thread::get_id(); });
    for (int p = 0; p < kParts; ++p) where[p].push_back(ids[p]);
  }
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<std::thread::id> worker_of(kParts);
  for (int p = 1; p < kParts; ++p) {
    for (const std::thread::id& id : where[p]) {
      if (id == caller) continue;
      if (worker_of[p] == std::thread::id()) worker_of[p] = id;
      EXPECT_EQ(id, worker_of[p]) << "part " << p;
    }
  }
  if (worker_of[1] != std::thread::id() && worker_of[2] != std::thread::id()) {
    EXPECT_NE(worker_of[1], worker_of[2]);
  }
}

TEST(ThreadPoolTest, APartCallingInRunsItsPartsInline) {
  ThreadPool pool;
  std::atomic<int> inner{0};
  pool.Run(2, [&](int) {
    const std::thread::id self = std::this_thread::get_id();
    pool.Run(3, [&](int) {
      EXPECT_EQ(std::this_thread::get_id(), self);
      inner.fetch_add(1);
    });
  });
  EXPECT_EQ(inner.load(), 6);
}

TEST(ThreadPoolTest, ConcurrentCallersEachGetAllTheirParts) {
  ThreadPool pool;
  constexpr int kCallers = 4, kJobs = 200, kParts = 3;
  std::vector<std::atomic<int64_t>> sums(kCallers);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int j = 0; j < kJobs; ++j) {
        pool.Run(kParts, [&](int p) { sums[c].fetch_add(p + 1); });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) EXPECT_EQ(sums[c].load(), kJobs * (1 + 2 + 3));
}

TEST(ThreadPoolTest, SleepingWorkersWakeForTheNextJob) {
  ThreadPool pool;
  std::atomic<int> runs{0};
  for (int j = 0; j < 3; ++j) {
    pool.Run(2, [&](int) { runs.fetch_add(1); });
    pool.Park();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // past the spin time
  }
  EXPECT_EQ(runs.load(), 6);
}

}  // namespace
}  // namespace graphjit::runtime
