// PhasedJob: a whole step of calls for ThreadPool::RunPhased, built by the host driver
// (compiler/compiled/kernel_set.h) once per call of a compiled graph. A step is a list of
// phases; in each phase every thread has a list of tasks (calls of compiled kernels'
// entry functions) that are independent of every other thread's tasks of that phase. A
// phase starts when all tasks of the phases before it have returned.
//
// Tasks are held by value (function, argument pointers, integers) in one flat array per
// thread, so a worker running one reads nothing on the caller's stack: on a machine
// where a cache line takes ~300 ns to cross cores, the dependent reads of a job held by
// reference cost more than a 2 us kernel's halves save (docs/PERFORMANCE.md).
#ifndef GRAPHJIT_RUNTIME_PHASED_JOB_H_
#define GRAPHJIT_RUNTIME_PHASED_JOB_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace graphjit::runtime {

class PhasedJob {
 public:
  // The compiled kernels' entry signature (compiler/codegen/native_code.h).
  using TaskFn = void (*)(void** args, const int64_t* ints, char* unused);

  // Empties the job for `threads` threads (1..kMaxThreads), keeping its memory.
  void Reset(int threads);
  // Starts the next phase; tasks added from now on belong to it.
  void BeginPhase();
  // Adds a task to `thread`'s list in the current phase.
  void AddTask(int thread, TaskFn fn, absl::Span<void* const> args, absl::Span<const int64_t> ints);

  int threads() const { return static_cast<int>(words_.size()); }
  int phases() const { return phases_; }
  // Whether any thread but the first has a task.
  bool forks() const;
  // Runs the tasks of every phase in order on the calling thread.
  void RunInline() const;

 private:
  friend class ThreadPool;
  // Thread t's slots (its tasks of one phase), in phase order: words_[t] holds for each
  // slot {phase, n, then n words: task count, tasks...}, a task being {fn, #args, #ints,
  // args..., ints...}; slots_[t] the offset of each slot in words_[t].
  std::vector<std::vector<int64_t>> words_;
  std::vector<std::vector<int64_t>> slots_;
  int phases_ = 0;
};

// Runs the tasks of a slot: `body` points at its task count (past phase and length).
void RunPhasedSlot(const int64_t* body);

}  // namespace graphjit::runtime

#endif  // GRAPHJIT_RUNTIME_PHASED_JOB_H_
