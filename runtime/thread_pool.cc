#include "runtime/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <chrono>

#include "absl/container/inlined_vector.h"
#include "ir/check.h"

namespace graphjit::runtime {
namespace {

// How long an idle worker spins before it sleeps. A decode step's kernels follow each other
// within microseconds and the steps of a loop within tens of them; waking a sleeping
// worker costs 5-20 us (a futex wake and a reschedule), longer than most kernels.
constexpr auto kSpinTime = std::chrono::microseconds(200);
// Spins of a thread waiting for another (the caller for its workers, a worker for its
// phase) before it starts yielding its core (on a loaded machine the other may have been
// descheduled: spinning would only delay it).
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

// One round of waiting for another thread: spin for kWaitSpins rounds, then yield the core
// (on a loaded machine the one waited for may have been descheduled).
inline void Backoff(int spins) {
  if (spins < kWaitSpins) {
    Pause();
  } else {
    std::this_thread::yield();
  }
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
    w->index = static_cast<int>(workers_.size());
    w->first_step = steps_;
    w->thread = std::thread([this, w] { Loop(w); });
  }
  num_workers_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
}

void ThreadPool::Park() { park_.fetch_add(1, std::memory_order_relaxed); }

void ThreadPool::Offer(Worker* w, uint64_t offer) {
  w->offer.store(offer);
  Wake(w);
}

void ThreadPool::Wake(Worker* w) {
  // Sequentially consistent with the worker's `sleeping` store and its loads of `offer`
  // and `open_` (Loop), after our store of one of them: either it sees the store before
  // it waits, or we see it sleeping and signal it under the mutex it waits with.
  if (w->sleeping.load()) {
    std::lock_guard<std::mutex> lock(sleep_mu_);
    w->wake.notify_one();
  }
}

void ThreadPool::Loop(Worker* w) {
  uint64_t seen = 0;                   // the last offer handled (odd: claimed by someone)
  uint64_t seen_step = w->first_step;  // the last phased step walked
  auto step_now = [this] { return open_.load() >> kPhaseBits; };
  while (true) {
    uint64_t offer = w->offer.load(std::memory_order_acquire);
    if (offer == seen && step_now() == seen_step) {
      const uint64_t park = park_.load(std::memory_order_relaxed);
      const auto start = std::chrono::steady_clock::now();
      for (int i = 1;
           (offer = w->offer.load(std::memory_order_acquire)) == seen && step_now() == seen_step;
           ++i) {
        Pause();
        if (i % 64 == 0 && (park_.load(std::memory_order_relaxed) != park || stop_.load() ||
                            std::chrono::steady_clock::now() - start > kSpinTime)) {
          break;
        }
      }
    }
    if (offer == seen && step_now() == seen_step) {
      std::unique_lock<std::mutex> lock(sleep_mu_);
      w->sleeping.store(true);
      while ((offer = w->offer.load()) == seen && step_now() == seen_step && !stop_.load()) {
        w->wake.wait(lock);
      }
      w->sleeping.store(false);
    }
    if (stop_.load()) return;
    if (const uint64_t step = step_now(); step != seen_step) {
      seen_step = step;
      Walk(w, step);
      continue;
    }
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

// Worker::done: 2 * (step base + i) + 1 while the worker runs slot i, 2 * (base + i + 1)
// once it has finished slots 0..i; increasing across steps.
constexpr uint64_t Running(uint64_t slot) { return 2 * slot + 1; }
constexpr uint64_t Finished(uint64_t slot) { return 2 * (slot + 1); }

bool ThreadPool::Claim(Worker* w, uint64_t step, int64_t i, int64_t* claimed) {
  const uint64_t base = step << kPhaseBits;
  uint64_t v = w->ticket.load(std::memory_order_relaxed);
  while (true) {
    // The ticket still holds an earlier step's count until this step's first claim.
    *claimed = v < base ? 0
               : v - base < (uint64_t{1} << kPhaseBits)
                   ? static_cast<int64_t>(v - base)
                   : INT64_MAX;  // a later step: this one is over
    if (*claimed != i) return false;
    if (w->ticket.compare_exchange_weak(v, base + i + 1, std::memory_order_acq_rel)) return true;
  }
}

void ThreadPool::Walk(Worker* w, uint64_t step) {
  const Board* board = board_.load(std::memory_order_acquire);
  if (board == nullptr) return;
  // Until a claim succeeds, what we read may be a later step's words (we fell behind):
  // reads stay in the board, and the claim tells.
  auto load = [board](int64_t i, int64_t* v) {
    if (i < 0 || i >= board->capacity) return false;
    *v = board->words[i].load(std::memory_order_relaxed);
    return true;
  };
  int64_t threads = 0, begin = 0, num_slots = 0;
  if (!load(0, &threads) || w->index >= threads || !load(2 * w->index - 1, &begin) ||
      !load(2 * w->index, &num_slots)) {
    return;
  }
  // This worker's slots, copied at once: the caller's first phases run meanwhile.
  thread_local std::vector<int64_t> words;
  words.clear();
  for (int64_t pos = begin, i = 0; i < num_slots; ++i) {
    int64_t phase, length;
    if (!load(pos, &phase) || !load(pos + 1, &length) || length < 1 || length > board->capacity) {
      return;
    }
    for (int64_t k = 0; k < 2 + length; ++k) {
      if (!load(pos + k, &words.emplace_back())) return;
    }
    pos += 2 + length;
  }
  const uint64_t base = step << kPhaseBits;
  const uint64_t mask = (uint64_t{1} << kPhaseBits) - 1;
  size_t pos = 0;
  for (int64_t i = 0; i < num_slots; pos += 2 + words[pos + 1], ++i) {
    const uint64_t phase = static_cast<uint64_t>(words[pos]);
    int64_t claimed = 0;
    // Wait for the phase to open, or for the caller to take the slot back.
    for (int spins = 1;; ++spins) {
      const uint64_t open = open_.load(std::memory_order_acquire);
      if (open >> kPhaseBits != step || stop_.load(std::memory_order_relaxed)) return;
      if ((open & mask) >= phase) break;
      if (w->ticket.load(std::memory_order_relaxed) > base + i) break;
      Backoff(spins);
    }
    if (!Claim(w, step, i, &claimed)) {
      if (claimed >= num_slots) return;  // all taken back, or the step is over
      continue;                          // taken back: on to the next slot
    }
    // Tells the caller the slot is ours without it touching the ticket's line (which it
    // would then take from this core's cache until the next claim).
    w->done.store(Running(base + i), std::memory_order_relaxed);
    {
      InPart in_part;
      RunPhasedSlot(words.data() + pos + 2);
    }
    w->done.store(Finished(base + i), std::memory_order_release);
  }
}

void ThreadPool::RunPhased(const PhasedJob& job) {
  const int threads = job.threads();
  if (threads == 1 || !job.forks() || t_in_part || !run_mu_.try_lock()) {
    job.RunInline();
    return;
  }
  InPart in_part;
  Grow(threads - 1);
  const uint64_t step = ++steps_;
  const uint64_t base = step << kPhaseBits;
  GJ_CHECK(job.phases() < (1 << kPhaseBits)) << "a phased job of " << job.phases() << " phases";
  // The board: {threads, then per worker its slots' offset and count, then the slots}.
  int64_t size = 1 + 2 * (threads - 1);
  for (int t = 1; t < threads; ++t) size += static_cast<int64_t>(job.words_[t].size());
  Board* board = board_.load(std::memory_order_relaxed);
  if (board == nullptr || board->capacity < size) {
    boards_.push_back(
        std::make_unique<Board>(std::max(size, board == nullptr ? 0 : 2 * board->capacity)));
    board = boards_.back().get();
  }
  auto store = [board](int64_t i, int64_t v) {
    board->words[i].store(v, std::memory_order_relaxed);
  };
  store(0, threads);
  for (int t = 1, pos = 1 + 2 * (threads - 1); t < threads; ++t) {
    const std::vector<int64_t>& words = job.words_[t];
    store(2 * t - 1, pos);
    store(2 * t, static_cast<int64_t>(job.slots_[t].size()));
    for (int64_t word : words) store(pos++, word);
  }
  board_.store(board, std::memory_order_release);
  // Publishes the board: a worker that reads this step from open_ sees its words.
  open_.store(base);
  for (int t = 1; t < threads; ++t) {
    if (!job.slots_[t].empty()) Wake(workers_[t - 1].get());
  }
  absl::InlinedVector<size_t, 8> next(threads, 0);  // each thread's next slot
  auto slot_in = [&](int t, int64_t phase) {
    return next[t] < job.slots_[t].size() && job.words_[t][job.slots_[t][next[t]]] == phase;
  };
  for (int64_t phase = 0; phase < job.phases(); ++phase) {
    bool workers_in_phase = false;
    for (int t = 1; t < threads; ++t) workers_in_phase |= slot_in(t, phase);
    if (phase > 0 && workers_in_phase) open_.store(base | phase, std::memory_order_release);
    if (slot_in(0, phase)) RunPhasedSlot(job.words_[0].data() + job.slots_[0][next[0]++] + 2);
    if (!workers_in_phase) continue;
    for (int t = 1; t < threads; ++t) {
      if (!slot_in(t, phase)) continue;
      const int64_t i = static_cast<int64_t>(next[t]);
      Worker* w = workers_[t - 1].get();
      int64_t claimed;
      const uint64_t done = w->done.load(std::memory_order_acquire);
      if (done < Running(base + i) && Claim(w, step, i, &claimed)) {
        RunPhasedSlot(job.words_[t].data() + job.slots_[t][i] + 2);
      } else {
        for (int spins = 0; w->done.load(std::memory_order_acquire) < Finished(base + i); ++spins) {
          Backoff(spins);
        }
      }
      ++next[t];
    }
  }
  run_mu_.unlock();
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
  for (int i = 0; done_.load(std::memory_order_acquire) != claimed_by_workers; ++i) Backoff(i);
  run_mu_.unlock();
}

}  // namespace graphjit::runtime
