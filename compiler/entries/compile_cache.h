// CompileCache: compiled code for one traced function and one input signature (names,
// dtypes, ranks), one entry per key of the shape policy, guarded by the input dims (the
// compile-cache lecture's demos 1 and 2; policies in compiler/entries/policy.h).
// compiler::JitFunction keeps one per signature it has seen; use that (compiler/jit.h)
// rather than this directly.
//
// Every miss traces the function (dims fixed per the key), takes the content key of the
// traced graph and its weights, and gets code from the GraphStore: code another entry or
// function compiled and still holds, or a real compile through CompiledGraph::Compile.
// A hit costs a guard check and one hash lookup, no allocation. Entries beyond
// `capacity` are evicted least recently used first; an evicted entry's code is freed
// once no entry and no running caller holds it.
//
// The parts: EntryKeys (the policy's keys), EntryTable (entries by key, LRU,
// ExplainMiss), EntryBuilder (trace -> content key -> store), EntryTiers (the
// background thread: tiered compiles, reoptimization), EntryExecutor (padding, then code or the
// interpreter), CacheLedger (the statistics and log lines). This class holds the lock and decides
// hit, wait or miss.
//
// Thread-safe: callers with the same new key wait for one compile, different keys compile
// in parallel. The lock is a std::mutex rather than absl::Mutex: Debian's abseil is built
// with absl::Mutex deadlock detection on (about 43 ns per lock and unlock here, against
// 3 ns, measured with Google Benchmark), which alone would blow the hit path's budget,
// and ThreadSanitizer sees pthread mutexes but not an uninstrumented abseil's.
#ifndef GRAPHJIT_COMPILER_ENTRIES_COMPILE_CACHE_H_
#define GRAPHJIT_COMPILER_ENTRIES_COMPILE_CACHE_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/entries/cache_entry.h"
#include "compiler/entries/cache_ledger.h"
#include "compiler/entries/cache_stats.h"
#include "compiler/entries/entry_builder.h"
#include "compiler/entries/entry_executor.h"
#include "compiler/entries/entry_keys.h"
#include "compiler/entries/entry_table.h"
#include "compiler/entries/entry_tiers.h"
#include "compiler/entries/guards.h"
#include "compiler/entries/jit_options.h"

namespace graphjit::compiler::entries {

class EntryCall;
class EntryCallPool;

class CompileCache {
 public:
  // `function` and `options` must outlive the cache (the JitFunction owns all three).
  CompileCache(const TracedFunction& function, const JitOptions& options, InputSignature signature);
  ~CompileCache();  // stops the background compile thread (tiered)

  using Args = InputSignature::Args;

  // Calls run through EntryCall (compiler/entries/entry_call.h), the cache's one call
  // path. A caller without a call of its own (JitFunction::Run) borrows an idle one
  // from calls() and returns it there.
  EntryCallPool& calls() { return *calls_; }
  // Whether `entry` is in the table still (not evicted, dropped or failed).
  bool Live(const CacheEntry& entry) const { return entry.live_.load(std::memory_order_acquire); }

  // The lookup alone: the entry serving `args`, compiled first on a miss. The entry
  // stays valid while held, even if evicted.
  // `bound_values`, if given, are the dims of `args` the caller bound by
  // signature().Bind(args, bound_values), which returned true (read, not bound twice).
  absl::StatusOr<std::shared_ptr<const CacheEntry>> Acquire(const Args& args,
                                                            DimValues* bound_values = nullptr);

  // Why `args` would miss: the first failed guard of the nearest entry (the one with the
  // fewest failed guards, most recently used on a tie), e.g.
  // `k_cache.shape[1] == 128 failed: got 129 (entry #3, nearest of 4)`. "" on a hit,
  // "no live entries" on an empty cache.
  std::string ExplainMiss(const Args& args) const;

  CacheStats stats() const;
  int64_t size() const;  // live entries (compiling ones included)
  const InputSignature& signature() const { return signature_; }

 private:
  friend class EntryCall;
  // The call path's halves (EntryCall). Serve finds the entry for `args` (compiling on a
  // miss), counted as a call, and sets `values` to the call's dynamic dims and `code` to
  // the entry's code (null while a tiered entry is interpreted). With `values_bound`, the
  // caller has just bound `values` by signature().Bind(args, values), which returned
  // true (it is not bound twice). `code_version`, if given, gets the entry's
  // code_version() of `code`.
  absl::StatusOr<std::shared_ptr<const CacheEntry>> Serve(
      const Args& args, DimValues* values, std::shared_ptr<const CompiledGraph>* code,
      bool values_bound = false, uint32_t* code_version = nullptr);
  // A plain hit on `entry` by a call whose dynamic dims are `values`, when the caller's
  // last Serve of the same `values` returned `entry` with its code installed: counted as
  // Serve counts a hit (calls, hits, element counts, the entry's LRU use), but without
  // the lock or the lookup. It is the entry Serve would return while the entry is still
  // in the cache: the keys of `values` change only when an auto dim turns dynamic, which
  // drops the entries of the old keys, and a ready entry stays ready. False (nothing
  // counted) once the entry was evicted or dropped: then Serve must look again.
  // Unpadded signatures only.
  bool ServeRepeat(const CacheEntry& entry, const DimValues& values);
  // Runs a served entry without a frame: padding, then its code or the interpreter.
  const EntryExecutor& executor() const { return executor_; }

  // What AcquireImpl reports besides the entry.
  struct Served {
    bool values_bound = false;  // in: the caller bound `values` by signature().Bind(args)
    bool want_code = true;      // in: copy the entry's code into `code`
    // out: the entry's code (if wanted), null while a tiered entry is interpreted.
    std::shared_ptr<const CompiledGraph> code;
    bool interpreted = false;   // out: no code installed yet
    uint32_t code_version = 0;  // out: the entry's code_version() with that code
    // out: the seconds spent compiling or waiting for another call's compile (0 on a
    // plain hit; see CacheStats::max_stall_seconds).
    double stall = 0;
  };
  // The entry for `args`, whose dynamic dims land in `values`.
  absl::StatusOr<std::shared_ptr<const CacheEntry>> AcquireImpl(const Args& args, DimValues* values,
                                                                Served* served);
  // The plain hit, kept short: keys that are the values (exact) and a ready entry. Sets
  // `entry` and `served` and counts the hit; false, with nothing counted, for anything
  // else (AcquireImpl's general path).
  bool FindReady(const DimValues& values, std::shared_ptr<const CacheEntry>* entry, Served* served);
  absl::Status Reject(const Args& args);
  // The *Locked functions are called with mu_ held.
  // Keys for `values`; updates the auto policy's state (and drops the entries a dim
  // turning dynamic makes unreachable into `dropped`).
  DimKeys KeysLocked(const DimValues& values, EntryTable::Entries* dropped);
  // The miss path: returns with `lock` held, but releases it while compiling.
  absl::StatusOr<std::shared_ptr<const CacheEntry>> CompileLocked(
      std::unique_lock<std::mutex>& lock, const DimKeys& keys, const DimValues& values,
      EntryTable::Entries* released);

  const JitOptions& options_;
  const InputSignature signature_;
  const EntryBuilder builder_;
  const EntryExecutor executor_;

  mutable std::mutex mu_;
  std::condition_variable compiled_;  // notified when any entry leaves kCompiling
  // Guarded by mu_ (but for EntryTable::Touch and CacheLedger::Repeat):
  EntryTable table_;
  EntryKeys keys_;
  CacheLedger ledger_;
  int64_t next_id_ = 1;
  // Idle calls for JitFunction::Run.
  std::unique_ptr<EntryCallPool> calls_;
  // Tiered compilation and reoptimization; declared last, so their thread stops before
  // the rest goes.
  EntryTiers tiers_;
};

}  // namespace graphjit::compiler::entries

#endif  // GRAPHJIT_COMPILER_ENTRIES_COMPILE_CACHE_H_
