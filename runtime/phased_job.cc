#include "runtime/phased_job.h"

#include <cstring>

#include "absl/container/inlined_vector.h"
#include "ir/check.h"
#include "runtime/thread_pool.h"

namespace graphjit::runtime {

static_assert(sizeof(void*) == sizeof(int64_t), "tasks hold pointers in int64 words");

void PhasedJob::Reset(int threads) {
  GJ_CHECK(threads >= 1 && threads <= kMaxThreads) << "PhasedJob with " << threads << " threads";
  words_.resize(threads);
  slots_.resize(threads);
  for (auto& w : words_) w.clear();
  for (auto& s : slots_) s.clear();
  phases_ = 0;
}

void PhasedJob::BeginPhase() { ++phases_; }

void PhasedJob::AddTask(int thread, TaskFn fn, absl::Span<void* const> args,
                        absl::Span<const int64_t> ints) {
  GJ_CHECK(phases_ > 0 && thread >= 0 && thread < threads()) << "PhasedJob::AddTask";
  std::vector<int64_t>& w = words_[thread];
  std::vector<int64_t>& slots = slots_[thread];
  const int64_t phase = phases_ - 1;
  if (slots.empty() || w[slots.back()] != phase) {
    slots.push_back(static_cast<int64_t>(w.size()));
    w.insert(w.end(), {phase, 1, 0});  // length so far: the task count
  }
  const int64_t start = static_cast<int64_t>(w.size());
  w.push_back(static_cast<int64_t>(reinterpret_cast<intptr_t>(fn)));
  w.push_back(static_cast<int64_t>(args.size()));
  w.push_back(static_cast<int64_t>(ints.size()));
  for (void* a : args) w.push_back(static_cast<int64_t>(reinterpret_cast<intptr_t>(a)));
  w.insert(w.end(), ints.begin(), ints.end());
  const int64_t slot = slots.back();
  w[slot + 1] += static_cast<int64_t>(w.size()) - start;
  ++w[slot + 2];
}

bool PhasedJob::forks() const {
  for (size_t t = 1; t < words_.size(); ++t) {
    if (!slots_[t].empty()) return true;
  }
  return false;
}

void PhasedJob::RunInline() const {
  absl::InlinedVector<size_t, 8> next(words_.size(), 0);
  for (int p = 0; p < phases_; ++p) {
    for (size_t t = 0; t < words_.size(); ++t) {
      if (next[t] < slots_[t].size() && words_[t][slots_[t][next[t]]] == p) {
        RunPhasedSlot(words_[t].data() + slots_[t][next[t]++] + 2);
      }
    }
  }
}

void RunPhasedSlot(const int64_t* body) {
  const int64_t tasks = body[0];
  const int64_t* t = body + 1;
  for (int64_t i = 0; i < tasks; ++i) {
    auto fn = reinterpret_cast<PhasedJob::TaskFn>(static_cast<intptr_t>(t[0]));
    const int64_t num_args = t[1], num_ints = t[2];
    // The args as pointers: copied out, since int64 words are not void* objects.
    void* args[64];
    std::vector<void*> many;
    void** a = args;
    if (num_args > 64) {
      many.resize(num_args);
      a = many.data();
    }
    std::memcpy(a, t + 3, num_args * sizeof(void*));
    fn(a, t + 3 + num_args, nullptr);
    t += 3 + num_args + num_ints;
  }
}

}  // namespace graphjit::runtime
