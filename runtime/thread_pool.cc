#include "runtime/thread_pool.h"

#include <sched.h>

#include <chrono>

#include "ir/check.h"

namespace graphjit::runtime {
namespace {

// How long an idle worker spins before it sleeps. A decode step's kernels follow each other
// within microseconds and the steps of a loop within tens of them; waking a sleeping
// worker costs 5-20 us (a futex wake and a reschedule), longer than most kernels.
constexpr auto kSpinTime = std::chrono::microseconds(200);
// Spins of the caller waiting for its workers before it starts yielding its core (on a
// loaded machine a worker may have been descheduled: spinning would only delay it).
constexpr int kWaitSpins = 1 << 14;

// Set while this thread runs a part of a job: a part that calls Run again runs its parts
// inline (the caller's thread owns run_mu_, which it must not try to lock again).
thread_local bool t_in_part = false;

// Sets t_in_part for a scope.
class InPart {
 public:
  InPart() : was_(t_in_part) { t_in_part = true; }
  ~InPart() { t_in_part = was_; }

 private:
  bool was_;
};

inline void Pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

int AvailableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

ThreadPool& ThreadPool::Shared() {
  static ThreadPool* pool = new ThreadPool();
  return *pool;
}

ThreadPool::ThreadPool() = default;

ThreadPool::~ThreadPool() {
  std::lock_guard<std::mutex> run(run_mu_);
  stop_.store(true);
  for (auto& w : workers_) Offer(w.get(), w->offer.load() + 2);
  for (auto& w : workers_) w->thread.join();
}

int ThreadPool::workers() const { return num_workers_.load(std::memory_order_relaxed); }

void ThreadPool::Grow(int workers) {
  while (static_cast<int>(workers_.size()) < workers) {
    workers_.push_back(std::make_unique<Worker>());
    Worker* w = workers_.back().get();
    w->thread = std::thread([this, w] { Loop(w); });
  }
  num_workers_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
}

void ThreadPool::Park() { park_.fetch_add(1, std::memory_order_relaxed); }

void ThreadPool::Offer(Worker* w, uint64_t offer) {
  // Sequentially consistent with the worker's `sleeping` store and offer load (Loop):
  // either it sees the new offer before it waits, or we see it sleeping and signal it
  // under the mutex it waits with.
  w->offer.store(offer);
  if (w->sleeping.load()) {
    std::lock_guard<std::mutex> lock(sleep_mu_);
    w->wake.notify_one();
  }
}

void ThreadPool::Loop(Worker* w) {
  uint64_t seen = 0;  // the last offer handled (odd: claimed by someone)
  while (true) {
    uint64_t offer = w->offer.load(std::memory_order_acquire);
    if (offer == seen) {
      const uint64_t park = park_.load(std::memory_order_relaxed);
      const auto start = std::chrono::steady_clock::now();
      for (int i = 1; (offer = w->offer.load(std::memory_order_acquire)) == seen; ++i) {
        Pause();
        if (i % 64 == 0 && (park_.load(std::memory_order_relaxed) != park || stop_.load() ||
                            std::chrono::steady_clock::now() - start > kSpinTime)) {
          break;
        }
      }
    }
    if (offer == seen) {
      std::unique_lock<std::mutex> lock(sleep_mu_);
      w->sleeping.store(true);
      while ((offer = w->offer.load()) == seen && !stop_.load()) w->wake.wait(lock);
      w->sleeping.store(false);
    }
    if (stop_.load()) return;
    seen = offer | 1;
    // Claim the part unless the caller took it back (or this is an old offer).
    if ((offer & 1) == 0 &&
        w->offer.compare_exchange_strong(offer, offer | 1, std::memory_order_acq_rel)) {
      {
        InPart in_part;
        (*w->job)(w->part);
      }
      done_.fetch_add(1, std::memory_order_release);
    }
  }
}

void ThreadPool::Run(int parts, absl::FunctionRef<void(int)> part) {
  GJ_CHECK(parts >= 1 && parts <= kMaxThreads) << "ThreadPool::Run with " << parts << " parts";
  // A second caller (another thread's graph, or a part that calls in again) does not wait
  // for the pool: it runs its parts itself, which is what it would have to wait for.
  if (parts == 1 || t_in_part || !run_mu_.try_lock()) {
    for (int p = 0; p < parts; ++p) part(p);
    return;
  }
  InPart in_part;
  Grow(parts - 1);
  const uint64_t offer = 2 * ++jobs_;
  done_.store(0, std::memory_order_relaxed);
  for (int p = 1; p < parts; ++p) {
    Worker* w = workers_[p - 1].get();
    w->job = &part;
    w->part = p;
    Offer(w, offer);  // publishes job and part to whoever claims the offer
  }
  part(0);
  // Parts whose worker has not claimed them yet (descheduled, or still waking) run here.
  int claimed_by_workers = 0;
  for (int p = 1; p < parts; ++p) {
    uint64_t expected = offer;
    if (workers_[p - 1]->offer.compare_exchange_strong(expected, offer | 1,
                                                       std::memory_order_acq_rel)) {
      part(p);
    } else {
      ++claimed_by_workers;
    }
  }
  for (int i = 0; done_.load(std::memory_order_acquire) != claimed_by_workers; ++i) {
    if (i < kWaitSpins) {
      Pause();
    } else {
      std::this_thread::yield();
    }
  }
  run_mu_.unlock();
}

}  // namespace graphjit::runtime
