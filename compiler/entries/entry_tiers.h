// EntryTiers: how an entry's code changes after its miss, on one background thread.
//   - Tiered (JitOptions::tiered): a miss is only traced, and the interpreter serves the
//     entry until its background compile installs code.
//   - Reoptimization (JitOptions::reoptimize_after, baseline-tier code): once an entry's
//     baseline code has served that many calls, its O2 compile runs in the background,
//     both codes are timed on inputs shaped like that call's (compiler/entries/
//     tier_trial.h), and the entry's code is swapped (its code_version() bumped) only if
//     the O2 code is measured faster.
// Both queue on one BackgroundCompiler (bounded, one thread, started on first use).
//
// Shares the owning cache's lock `mu` and ledger: the *Locked methods are called with
// `mu` held, and the background thread takes it to install code.
#ifndef GRAPHJIT_COMPILER_ENTRIES_ENTRY_TIERS_H_
#define GRAPHJIT_COMPILER_ENTRIES_ENTRY_TIERS_H_

#include <functional>
#include <memory>
#include <mutex>

#include "compiler/compiled/compiled_graph.h"
#include "compiler/entries/background_compiler.h"
#include "compiler/entries/cache_entry.h"
#include "compiler/entries/cache_ledger.h"
#include "compiler/entries/entry_builder.h"
#include "compiler/entries/entry_executor.h"
#include "compiler/entries/jit_options.h"

namespace graphjit::compiler::entries {

class EntryTiers {
 public:
  // All four must outlive the tiers. `code_swapped` runs (without `mu`) after a
  // reoptimization replaced an entry's code, so idle calls can let the old code go.
  EntryTiers(const JitOptions& options, const EntryBuilder& builder, const EntryExecutor& executor,
             std::mutex& mu, CacheLedger& ledger, std::function<void()> code_swapped);
  // Stops the background thread (a compile in progress finishes first).
  ~EntryTiers();

  // Installs `code` in `entry` (an interpreted entry becomes ready) and counts it. A
  // no-op when the entry has code already (a caller and the background both compiled
  // it; the code store made that one compile).
  void InstallLocked(CacheEntry* entry, std::shared_ptr<const CompiledGraph> code, bool compiled,
                     double seconds);
  // Tiered: queues an interpreted entry's compile, or moves it to the back of the queue
  // (it was asked for again).
  void EnqueueLocked(const std::shared_ptr<CacheEntry>& entry);
  // Counts a call `entry`'s code serves (any thread, with or without `mu`). True for the
  // one call that must queue the entry's O2 compile (by ReoptimizeLocked).
  bool CountCall(const CacheEntry& entry);
  // Queues the O2 compile of `entry`, whose code served a call of dims `values` (the O2
  // and baseline codes are timed on inputs of those dims).
  void ReoptimizeLocked(const std::shared_ptr<CacheEntry>& entry, const DimValues& values);

 private:
  bool Reoptimizes() const;
  // The background thread's work on one queued entry.
  void Compile(std::shared_ptr<CacheEntry> entry);
  void Reoptimize(std::shared_ptr<CacheEntry> entry);
  // Whether `o2` should replace `baseline` in `entry`: measured faster on inputs of the
  // entry's trigger dims (`why` says what was measured, or why nothing could be).
  bool MeasuredFaster(const CacheEntry& entry, const DimValues& values,
                      const CompiledGraph& baseline, const CompiledGraph& o2, std::string* why);
  // An entry dropped from the full queue (`mu` held: Enqueue's callers hold it).
  void DroppedLocked(const CacheEntry& entry);

  const JitOptions& options_;
  const EntryBuilder& builder_;
  const EntryExecutor& executor_;
  std::mutex& mu_;
  CacheLedger& ledger_;  // guarded by mu_
  const std::function<void()> code_swapped_;
  // Null unless tiered or reoptimizing; declared last, so its thread stops first.
  std::unique_ptr<BackgroundCompiler> background_;
};

}  // namespace graphjit::compiler::entries

#endif  // GRAPHJIT_COMPILER_ENTRIES_ENTRY_TIERS_H_
