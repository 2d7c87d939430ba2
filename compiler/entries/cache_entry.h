// CacheEntry: one guarded entry of a compile cache (compiler/entries/compile_cache.h):
// the keys it was traced for, its guards, its traced graph and, once built, its code.
// The entry table holds entries, the entry builder fills them, the executor runs them.
#ifndef GRAPHJIT_COMPILER_ENTRIES_CACHE_ENTRY_H_
#define GRAPHJIT_COMPILER_ENTRIES_CACHE_ENTRY_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/entries/guards.h"
#include "compiler/store/content_key.h"
#include "ir/graph.h"

namespace graphjit::compiler::entries {

// Acquire hands out only entries whose compile succeeded.
class CacheEntry {
 public:
  int64_t id() const { return id_; }  // creation order, from 1
  const DimKeys& keys() const { return keys_; }
  const EntryGuards& guards() const { return guards_; }
  bool padded() const { return padded_; }
  // The code (Acquire returns entries whose code is installed, tiered ones included).
  const CompiledGraph& compiled() const { return *compiled_; }
  // The code, shared with every entry whose graph has the same content key.
  const std::shared_ptr<const CompiledGraph>& code() const { return compiled_; }
  // The traced graph (the interpreter tier runs it while the code compiles).
  const ir::Graph& traced() const { return traced_; }
  const ContentKey& content_key() const { return content_key_; }
  // Bumped whenever other code replaces the entry's code (reoptimization): a caller
  // keeping a frame built for the code it saw rebuilds it when this changes.
  uint32_t code_version() const { return code_version_.load(std::memory_order_acquire); }
  // Padded entries: each output's dims (a constant or a padded dynamic dim), to cut back.
  const std::vector<std::vector<DimGuard>>& output_dims() const { return output_dims_; }

 private:
  friend class CompileCache;
  friend class EntryTable;
  friend class EntryBuilder;
  friend class EntryTiers;
  // kCompiling: the miss is being traced (and, untiered, compiled); kInterpreted: tiered,
  // traced and served by the interpreter until the background compile installs code.
  enum class State { kCompiling, kInterpreted, kReady, kFailed };

  // The fields a hit reads and writes come first, so they share the cache line of the
  // shared_ptr's control block that make_shared puts in front of them.
  // Guarded by the owning cache's mu_.
  State state_ = State::kCompiling;
  // In the cache's table (false once evicted, dropped or failed): ServeRepeat serves only
  // live entries. Written under mu_, read without it.
  std::atomic<bool> live_ = true;
  // Reoptimization: whether its O2 compile has been asked for (reset if the queue drops
  // it), and calls served by the baseline code so far. Atomic: ServeRepeat counts too.
  mutable std::atomic<bool> reoptimizing_ = false;
  std::atomic<uint32_t> code_version_ = 0;
  // The LRU tick of the last use. Atomic because ServeRepeat stamps it without mu_.
  std::atomic<uint64_t> last_use_ = 0;
  mutable std::atomic<int64_t> baseline_calls_ = 0;
  // Untiered: set before state_ is kReady. Tiered: installed by the background compile
  // (guarded by the cache's mu_ until then).
  std::shared_ptr<const CompiledGraph> compiled_;

  // The dims of the call that asked for its O2 compile: the inputs the two tiers are
  // timed on are shaped by them (EntryTiers). Guarded by the cache's mu_.
  DimValues trigger_values_;
  int64_t id_ = 0;
  DimKeys keys_;
  EntryGuards guards_;
  bool padded_ = false;
  std::vector<std::vector<DimGuard>> output_dims_;
  ContentKey content_key_;
  ir::Graph traced_;    // set once, before state_ leaves kCompiling
  absl::Status error_;  // kFailed: why
};

}  // namespace graphjit::compiler::entries

#endif  // GRAPHJIT_COMPILER_ENTRIES_CACHE_ENTRY_H_
