// CacheLedger: what one compile cache records about itself. One method per event (a hit,
// a miss, an install, an eviction, a background compile ...) updates the counters
// (CacheStats) and, when GRAPHJIT_LOG asks for the channel, writes the event's log line,
// so CompileCache's control flow reads without its bookkeeping.
//
// Not thread-safe by itself: the owning cache calls it with its lock held (the *Locked
// convention there), except Repeat, which counts lock-free hits in atomics.
#ifndef GRAPHJIT_COMPILER_ENTRIES_CACHE_LEDGER_H_
#define GRAPHJIT_COMPILER_ENTRIES_CACHE_LEDGER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/entries/cache_entry.h"
#include "compiler/entries/cache_stats.h"
#include "compiler/entries/entry_keys.h"
#include "compiler/entries/guards.h"
#include "compiler/entries/jit_options.h"

namespace graphjit::compiler::entries {

class CacheLedger {
 public:
  // `signature` and `keys` must outlive the ledger. `prefix` names the cache in
  // messages (`name/policy`).
  CacheLedger(std::string prefix, const JitOptions& options, const InputSignature& signature,
              const EntryKeys& keys);

  const std::string& prefix() const { return prefix_; }

  // A call served by an entry that existed, with its call's keys and dims.
  void Hit(const DimKeys& keys, const DimValues& values);
  // A hit that waited for another call compiling the same key.
  void Waited() { ++stats_.waits; }
  // A hit of CompileCache::ServeRepeat, without the lock (unpadded signatures).
  void Repeat(const DimValues& values);
  // A call that waited `stall` seconds for its code (or is served by the interpreter).
  void Served(double stall, bool interpreted);
  // A call no entry can serve; returns the InvalidArgument error the call fails with.
  absl::Status Rejected(const std::string& why);

  // A miss inserted `entry` for `values`, found missing because of `reason`.
  void Missed(const CacheEntry& entry, const DimValues& values, const std::string& reason);
  // The table holds `live` entries (after a miss and its evictions).
  void Live(int64_t live);
  // Dim `k` saw a second value, `value`, and turned symbolic; `dropped` exact entries
  // went with it.
  void TurnedDynamic(int k, int64_t value, int64_t dropped);
  // `victim` was evicted, least recently used.
  void Evicted(const CacheEntry& victim);
  // The miss of `entry` traced in `trace_seconds`; tiered, it is interpreted from now.
  void Traced(const CacheEntry& entry, double trace_seconds, bool tiered,
              const std::string& reason);
  // Code for an entry: compiled (`compiled`) or shared from the store, in `seconds`.
  void Installed(const CompiledGraph& code, bool compiled, double seconds);
  // The untiered miss of `entry` got its code in `seconds` (trace included).
  void Built(const CacheEntry& entry, bool compiled, double seconds, const std::string& reason);
  // The miss of `entry` failed after `seconds` (not cached); returns the call's error.
  absl::Status Failed(const CacheEntry& entry, const absl::Status& status, double seconds);

  // Tiered: the background compile of `entry` ran (ok or not) and took `seconds`.
  void BackgroundCompiled(const CacheEntry& entry, const absl::Status& status, double seconds);
  // Tiered: `entry`'s background compile was dropped from the full queue.
  void Dropped(const CacheEntry& entry);
  // Reoptimization: `entry`'s O2 compile ran (ok or not) and took `seconds`; its code
  // was `swapped` in or not, as `measured` says (compiler/entries/tier_trial.h).
  void Reoptimized(const CacheEntry& entry, const absl::Status& status, double seconds,
                   int64_t baseline_calls, bool swapped, const std::string& measured);

  CacheStats stats() const;

 private:
  // Adds a call's named and padded dims to the real and padded element counts.
  void CountElements(const DimKeys& keys, const DimValues& values);

  const std::string prefix_;
  const LogFlags log_;
  const int64_t capacity_;
  const InputSignature& signature_;
  const EntryKeys& keys_;
  // The dynamic dims whose real and padded element counts the statistics sum (the named
  // and the padded ones).
  std::vector<int> counted_dims_;
  CacheStats stats_;
  // Repeat's hits and element counts (lock-free), which stats() adds.
  std::atomic<int64_t> repeat_hits_ = 0;
  std::atomic<int64_t> repeat_elements_ = 0;
};

}  // namespace graphjit::compiler::entries

#endif  // GRAPHJIT_COMPILER_ENTRIES_CACHE_LEDGER_H_
