// Tests of ThreadPool::RunPhased (runtime/phased_job.h): every task runs once, a phase
// starts only after every task of the phases before it returned, thread t's tasks run on
// worker t - 1 or on the caller (which takes back slots no worker claimed), tasks get
// their arguments by value, and busy pools or calls from inside a task run inline.
#include "runtime/phased_job.h"

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/thread_pool.h"

namespace graphjit::runtime {
namespace {

// What the tasks of one job record: each task's runs and thread, and the tasks finished
// per phase when each task started.
struct Record {
  explicit Record(int phases, int threads)
      : runs(phases * threads), where(phases * threads), finished(phases) {}
  std::vector<std::atomic<int>> runs;
  std::vector<std::thread::id> where;
  std::vector<std::atomic<int>> finished;  // tasks of each phase that returned
  std::atomic<int> out_of_order{0};        // tasks that started before an earlier phase ended
  int threads_in[64] = {};                 // tasks per phase
};

// ints: phase, thread, threads; args: the Record.
void RecordTask(void** args, const int64_t* ints, char*) {
  Record& r = *static_cast<Record*>(args[0]);
  const int phase = static_cast<int>(ints[0]), thread = static_cast<int>(ints[1]);
  for (int p = 0; p < phase; ++p) {
    if (r.finished[p].load() != r.threads_in[p]) r.out_of_order.fetch_add(1);
  }
  r.runs[phase * ints[2] + thread].fetch_add(1);
  r.where[phase * ints[2] + thread] = std::this_thread::get_id();
  r.finished[phase].fetch_add(1);
}

// A job of `phases` phases where thread t has a task in phase p when (p + t) % 3 != 1
// (so some phases leave some threads out), and thread 0 in every phase.
void BuildJob(PhasedJob* job, Record* r, int phases, int threads) {
  job->Reset(threads);
  void* args[] = {r};
  for (int p = 0; p < phases; ++p) {
    job->BeginPhase();
    for (int t = 0; t < threads; ++t) {
      if (t > 0 && (p + t) % 3 == 1) continue;
      const int64_t ints[] = {p, t, threads};
      job->AddTask(t, &RecordTask, args, ints);
      ++r->threads_in[p];
    }
  }
}

TEST(PhasedJobTest, EveryTaskRunsOnceAfterThePhasesBeforeIt) {
  ThreadPool pool;
  constexpr int kPhases = 12;
  for (int threads : {1, 2, 3, 5}) {
    for (int step = 0; step < 300; ++step) {
      Record r(kPhases, threads);
      PhasedJob job;
      BuildJob(&job, &r, kPhases, threads);
      EXPECT_EQ(job.forks(), threads > 1);
      pool.RunPhased(job);
      EXPECT_EQ(r.out_of_order.load(), 0) << threads << " threads, step " << step;
      for (int p = 0; p < kPhases; ++p) {
        for (int t = 0; t < threads; ++t) {
          const int want = t > 0 && (p + t) % 3 == 1 ? 0 : 1;
          ASSERT_EQ(r.runs[p * threads + t].load(), want) << "phase " << p << " thread " << t;
        }
      }
    }
  }
}

// Thread t's tasks run on one worker (the same every step: it keeps its slice of the
// data in its cache) or, when taken back, on the caller; thread 0's always on the caller.
TEST(PhasedJobTest, ThreadTRunsOnItsWorkerOrTheCaller) {
  ThreadPool pool;
  constexpr int kPhases = 6, kThreads = 3;
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<std::thread::id> worker_of(kThreads);
  for (int step = 0; step < 300; ++step) {
    if (step == 150) {
      pool.Park();  // sleeping workers must wake for the next step
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    Record r(kPhases, kThreads);
    PhasedJob job;
    BuildJob(&job, &r, kPhases, kThreads);
    pool.RunPhased(job);
    for (int p = 0; p < kPhases; ++p) {
      for (int t = 0; t < kThreads; ++t) {
        if (r.runs[p * kThreads + t].load() == 0) continue;
        const std::thread::id id = r.where[p * kThreads + t];
        if (t == 0) {
          EXPECT_EQ(id, caller);
          continue;
        }
        if (id == caller) continue;
        if (worker_of[t] == std::thread::id()) worker_of[t] = id;
        EXPECT_EQ(id, worker_of[t]) << "thread " << t;
      }
    }
  }
  if (worker_of[1] != std::thread::id() && worker_of[2] != std::thread::id()) {
    EXPECT_NE(worker_of[1], worker_of[2]);
  }
}

// Arguments are copied into the job: the caller's arrays may change after AddTask.
void SumTask(void** args, const int64_t* ints, char*) {
  static_cast<std::atomic<int64_t>*>(args[0])->fetch_add(ints[0] * ints[1]);
}

TEST(PhasedJobTest, TasksHoldTheirArgumentsByValue) {
  ThreadPool pool;
  std::atomic<int64_t> a{0}, b{0};
  PhasedJob job;
  job.Reset(2);
  void* args[1] = {&a};
  int64_t ints[2] = {3, 5};
  job.BeginPhase();
  job.AddTask(0, &SumTask, args, ints);
  args[0] = &b;
  ints[0] = 7;
  job.AddTask(1, &SumTask, args, ints);
  job.BeginPhase();
  ints[1] = 11;
  job.AddTask(1, &SumTask, args, ints);
  for (int i = 0; i < 100; ++i) pool.RunPhased(job);
  EXPECT_EQ(a.load(), 100 * 15);
  EXPECT_EQ(b.load(), 100 * (35 + 77));
}

TEST(PhasedJobTest, ConcurrentCallersEachRunAllTheirTasks) {
  ThreadPool pool;
  constexpr int kCallers = 4, kSteps = 200, kPhases = 5, kThreads = 3;
  std::vector<std::atomic<int>> bad(kCallers);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int s = 0; s < kSteps; ++s) {
        Record r(kPhases, kThreads);
        PhasedJob job;
        BuildJob(&job, &r, kPhases, kThreads);
        pool.RunPhased(job);
        int runs = 0, want = 0;
        for (int p = 0; p < kPhases; ++p) {
          want += r.threads_in[p];
          for (int t = 0; t < kThreads; ++t) runs += r.runs[p * kThreads + t].load();
        }
        if (runs != want || r.out_of_order.load() != 0) bad[c].fetch_add(1);
      }
    });
  }
  for (std::thread& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) EXPECT_EQ(bad[c].load(), 0) << "caller " << c;
}

// A task that runs a job of its own (or a Run) runs it on its own thread, inline.
void NestedTask(void** args, const int64_t*, char*) {
  auto* pool = static_cast<ThreadPool*>(args[0]);
  auto* count = static_cast<std::atomic<int>*>(args[1]);
  const std::thread::id self = std::this_thread::get_id();
  pool->Run(3, [&](int) {
    EXPECT_EQ(std::this_thread::get_id(), self);
    count->fetch_add(1);
  });
}

TEST(PhasedJobTest, ATaskCallingInRunsInline) {
  ThreadPool pool;
  std::atomic<int> count{0};
  PhasedJob job;
  job.Reset(2);
  void* args[] = {&pool, &count};
  job.BeginPhase();
  job.AddTask(0, &NestedTask, args, {});
  job.AddTask(1, &NestedTask, args, {});
  pool.RunPhased(job);
  EXPECT_EQ(count.load(), 6);
}

TEST(PhasedJobTest, AJobOnOneThreadRunsInlineInPhaseOrder) {
  Record r(4, 1);
  PhasedJob job;
  BuildJob(&job, &r, 4, 1);
  EXPECT_FALSE(job.forks());
  job.RunInline();
  EXPECT_EQ(r.out_of_order.load(), 0);
  for (int p = 0; p < 4; ++p) EXPECT_EQ(r.where[p], std::this_thread::get_id());
}

}  // namespace
}  // namespace graphjit::runtime
