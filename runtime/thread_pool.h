// ThreadPool: the process's worker threads that compiled kernels split their parallel
// loops over (compiler/compiled/kernel_set.h). One pool serves every compiled graph of the
// process; a call asks for as many parts as its thread count and the pool grows to match.
//
// Why a pool of our own rather than libgomp's or a task queue: a decode step is 16 kernels
// of 0.1-10 us, so a fork-join must cost well under a microsecond. Each worker spins on its
// own cache line for a while after a job (the next kernel's job arrives within
// microseconds) before it sleeps on a condition variable, and part p of a job is offered to worker
// p - 1, so a worker keeps reading the same slice of the weights step after step (it stays
// in that core's L2). A task queue hands parts to whichever thread is free, which moves
// the slices between cores; libgomp would bring -fopenmp into every target and its own
// spin policy (GOMP_SPINCOUNT) that competes with OpenBLAS's threads.
// On a loaded machine a worker may not get a core for milliseconds: the caller, done with
// part 0, takes back every part no worker has claimed yet and runs it itself, so a call
// waits only for parts that are running (measured here with three users on two cores: a
// decode step went from 2.8 ms waiting for a descheduled worker to ~30 us).
#ifndef GRAPHJIT_RUNTIME_THREAD_POOL_H_
#define GRAPHJIT_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "runtime/phased_job.h"

namespace graphjit::runtime {

// The most threads a pool runs a job on: more is a configuration error, not a machine.
inline constexpr int kMaxThreads = 1024;

// The CPUs this process may run on (its affinity mask, sched_getaffinity), at least 1:
// what a container or `taskset` gives it, not the machine's count.
int AvailableCpus();

class ThreadPool {
 public:
  // The process's pool (never destroyed: compiled code may run from static destructors).
  static ThreadPool& Shared();

  ThreadPool();
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Runs part(0) .. part(parts - 1) and returns when all have returned: part 0 on the
  // calling thread, part p on worker p - 1 (started on first need) unless the caller gets
  // to it first. One job runs at a
  // time: a call made while another thread's job runs, or from inside a part, runs all of
  // its parts on the calling thread in order. Either way each part runs exactly once, so
  // parts that write disjoint outputs give the same results however they are run.
  // 1 <= parts <= kMaxThreads.
  void Run(int parts, absl::FunctionRef<void(int)> part);

  // Runs a whole step (runtime/phased_job.h): thread t's tasks of each phase on worker
  // t - 1 (thread 0's on the caller), a phase opening when every task before it has
  // returned. One wake per step rather than one fork-join per kernel: a worker walks its
  // own slots, reading them by value from the pool's board, while the caller opens the
  // phases. As with Run, the caller takes back a slot no worker has claimed by the time
  // its own tasks of that phase are done, so it never waits for a worker without a core;
  // and a busy pool or a call from inside a part runs the whole job on the caller.
  void RunPhased(const PhasedJob& job);

  // Sends spinning workers to sleep now: the caller is about to run something that uses
  // the cores by other means (OpenBLAS's own threads).
  void Park();

  // Workers started so far.
  int workers() const;

 private:
  // One worker's mailbox, on its own cache line so spinning readers do not share it.
  struct alignas(64) Worker {
    // RunPhased: (step << kPhaseBits) | the slots of that step claimed so far, by the
    // worker or by the caller taking them back; the slot the worker runs or has finished
    // (thread_pool.cc). Each on its own line: the worker keeps `ticket` in its cache from
    // one claim to the next, and the caller reads `done` first.
    alignas(64) std::atomic<uint64_t> ticket{0};
    alignas(64) std::atomic<uint64_t> done{0};
    int index = 0;            // the thread number of a phased job this worker runs (>= 1)
    uint64_t first_step = 0;  // the steps before it started are not its own
    // 2 * job for a part offered to this worker, 2 * job + 1 once claimed (by the worker,
    // or by the caller taking it back).
    std::atomic<uint64_t> offer{0};
    std::atomic<bool> sleeping{false};
    std::condition_variable wake;                 // with sleep_mu_
    absl::FunctionRef<void(int)>* job = nullptr;  // valid for the one who claims the offer
    int part = 0;
    std::thread thread;
  };

  // The board RunPhased copies the workers' slots to: never freed while the pool lives,
  // since a worker that fell behind may still read a retired one (it then finds its step
  // over: every read is an atomic, every claim checks the step).
  struct Board {
    explicit Board(int64_t n) : capacity(n), words(new std::atomic<int64_t>[n]) {}
    int64_t capacity;
    std::unique_ptr<std::atomic<int64_t>[]> words;
  };
  static constexpr int kPhaseBits = 24;

  void Loop(Worker* w);
  // Worker w's part of phased step `step`: claim, copy and run its slots in order.
  void Walk(Worker* w, uint64_t step);
  // Whether a slot of `step` before index `i` is claimed, else claims slot i (ticket CAS).
  static bool Claim(Worker* w, uint64_t step, int64_t i, int64_t* claimed);
  void Wake(Worker* w);
  void Offer(Worker* w, uint64_t offer);
  void Grow(int workers);  // with run_mu_ held

  // std::mutex, not absl::Mutex: Debian's abseil is built without ThreadSanitizer, which
  // then cannot see what an absl::Mutex orders (scripts/sanitize.sh thread).
  std::mutex run_mu_;  // held by the job running now (try_lock: never waited on)
  std::vector<std::unique_ptr<Worker>> workers_;  // with run_mu_ held
  std::atomic<int> num_workers_{0};
  uint64_t jobs_ = 0;         // with run_mu_ held
  std::atomic<int> done_{0};  // parts of the running job finished by workers
  std::atomic<uint64_t> park_{0};
  std::atomic<bool> stop_{false};
  std::mutex sleep_mu_;
  // RunPhased: (step << kPhaseBits) | the phase open now; the board of that step.
  alignas(64) std::atomic<uint64_t> open_{0};
  std::atomic<Board*> board_{nullptr};
  std::vector<std::unique_ptr<Board>> boards_;  // with run_mu_ held
  uint64_t steps_ = 0;                          // with run_mu_ held
};

}  // namespace graphjit::runtime

#endif  // GRAPHJIT_RUNTIME_THREAD_POOL_H_
