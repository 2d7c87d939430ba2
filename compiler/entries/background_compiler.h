// BackgroundCompiler: the tiered policy's compile thread. Entries served by the
// interpreter queue here; one thread builds their code in the order they were last asked
// for. The queue is bounded: when full it drops the entry asked for least recently, so an
// exact policy does not build a backlog of lengths nobody asks for again.
#ifndef GRAPHJIT_COMPILER_ENTRIES_BACKGROUND_COMPILER_H_
#define GRAPHJIT_COMPILER_ENTRIES_BACKGROUND_COMPILER_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "compiler/entries/cache_entry.h"

namespace graphjit::compiler::entries {

class BackgroundCompiler {
 public:
  // Runs on the compile thread, without the queue's lock.
  using CompileFn = std::function<void(std::shared_ptr<CacheEntry> entry)>;
  // Called by Enqueue (so under its caller's locks) for an entry dropped from a full queue.
  using DropFn = std::function<void(const CacheEntry& entry)>;

  BackgroundCompiler(int capacity, CompileFn compile, DropFn on_drop);
  // Stops the thread: a compile in progress finishes first, queued entries are dropped.
  ~BackgroundCompiler();

  // Queues `entry` (or moves it to the back: it was asked for again). Starts the thread
  // on first use.
  void Enqueue(const std::shared_ptr<CacheEntry>& entry);

 private:
  void Loop();

  const int capacity_;
  const CompileFn compile_;
  const DropFn on_drop_;
  std::mutex mu_;
  std::condition_variable queued_;
  std::deque<std::weak_ptr<CacheEntry>> queue_;  // guarded by mu_
  bool stop_ = false;                            // guarded by mu_
  std::thread worker_;
};

}  // namespace graphjit::compiler::entries

#endif  // GRAPHJIT_COMPILER_ENTRIES_BACKGROUND_COMPILER_H_
