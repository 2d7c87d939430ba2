// CompileCache: compiled code for one traced function and one input signature (names,
// dtypes, ranks), one entry per key of the shape policy, guarded by the input dims (the
// compile-cache lecture's demos 1 and 2; policies in compiler/entries/policy.h).
// compiler::JitFunction keeps one per signature it has seen; use that (compiler/jit.h)
// rather than this directly.
//
// Every miss traces the function (dims fixed per the key), takes the content key of the
// traced graph and its weights, and gets code from the CodeStore: code another entry or
// function compiled and still holds, or a real compile through CompiledGraph::Compile.
// A hit costs a guard check and one hash lookup, no allocation. Entries beyond
// `capacity` are evicted least recently used first; an evicted entry's code is freed
// once no entry and no running caller holds it.
//
// Tensors: unpadded entries get the caller's inputs as they are, so inputs the code
// updates in place (CompiledGraph::donated_inputs, the decode layer's caches) are
// updated and returned as outputs. Padded entries pad copies of the inputs and cut the
// outputs back, so the caller's tensors are never written.
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
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/compiled/graph_store.h"
#include "compiler/entries/cache_stats.h"
#include "compiler/entries/guards.h"
#include "compiler/entries/jit_options.h"
#include "frontend/value.h"

namespace graphjit::compiler::cache {

// What a cache compiles: a function over frontend Values and the weights it reads.
struct TracedFunction {
  std::string name;
  std::function<std::vector<frontend::Value>(frontend::Context&)> body;
  runtime::TensorMap weights;
};

// One compiled entry. Acquire hands out only entries whose compile succeeded.
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

 private:
  friend class CompileCache;
  // kTracing: the miss is being traced (and, untiered, compiled); kInterpreted: tiered,
  // traced and served by the interpreter until the background compile installs code.
  enum class State { kCompiling, kInterpreted, kReady, kFailed };

  int64_t id_ = 0;
  DimKeys keys_;
  EntryGuards guards_;
  bool padded_ = false;
  // Padded entries: each output's dims (a constant or a padded dynamic dim), to cut back.
  std::vector<std::vector<DimGuard>> output_dims_;
  ContentKey content_key_;
  ir::Graph traced_;  // set once, before state_ leaves kCompiling
  // Untiered: set before state_ is kReady. Tiered: installed by the background compile
  // (guarded by the cache's mu_ until then).
  std::shared_ptr<const CompiledGraph> compiled_;
  // Guarded by the owning cache's mu_.
  State state_ = State::kCompiling;
  absl::Status error_;
  // The LRU tick of the last use. Atomic because ServeRepeat stamps it without mu_.
  std::atomic<uint64_t> last_use_ = 0;
  // In the cache's map (false once evicted, dropped or failed): ServeRepeat serves only
  // live entries. Written under mu_, read without it.
  std::atomic<bool> live_ = true;
};

class CompileCache {
 public:
  // `function` and `options` must outlive the cache (the JitFunction owns all three).
  CompileCache(const TracedFunction& function, const JitOptions& options, InputSignature signature);
  ~CompileCache();  // stops the background compile thread (tiered)

  using Args = absl::InlinedVector<const runtime::Tensor*, 8>;
  // The call's inputs in signature().inputs() order, or false when `inputs` has other
  // names, dtypes or ranks than this cache's signature (so another cache serves it).
  bool Matches(const runtime::TensorMap& inputs, Args* args) const;
  // The call's inputs in signature order by name alone (null where missing, extra
  // inputs ignored), for signatures whose guards must explain what differs.
  void Resolve(const runtime::TensorMap& inputs, Args* args) const;

  // Runs the function on `args` (from Matches), compiling on a miss. `bindings` gives
  // the call symbols, completed by JitOptions::complete_bindings from the named dims.
  absl::StatusOr<std::vector<runtime::Tensor>> Run(const runtime::TensorMap& inputs,
                                                   const Args& args, const ir::Bindings& bindings);
  // Run in two halves, for a caller that keeps a call frame per entry (compiler/
  // jit_call.h). Serve finds the entry for `args` (compiling on a miss), counted as Run
  // counts a call, and sets `values` to the call's dynamic dims and `code` to the entry's
  // code (null while a tiered entry is interpreted). With `values_bound`, the caller has
  // just bound `values` by signature().Bind(args, values), which returned true (it is
  // not bound twice). RunServed runs it as Run does.
  absl::StatusOr<std::shared_ptr<const CacheEntry>> Serve(
      const Args& args, DimValues* values, std::shared_ptr<const CompiledGraph>* code,
      bool values_bound = false);
  // A plain hit on `entry` by a call whose dynamic dims are `values`, when the caller's
  // last Serve of the same `values` returned `entry` with its code installed: counted as
  // Serve counts a hit (calls, hits, element counts, the entry's LRU use), but without
  // the lock or the lookup. It is the entry Serve would return while the entry is still
  // in the cache: the keys of `values` change only when an auto dim turns dynamic, which
  // drops the entries of the old keys, and a ready entry stays ready. False (nothing
  // counted) once the entry was evicted or dropped: then Serve must look again.
  // Unpadded signatures only.
  bool ServeRepeat(const CacheEntry& entry, const DimValues& values);
  absl::StatusOr<std::vector<runtime::Tensor>> RunServed(const CacheEntry& entry,
                                                         const CompiledGraph* code,
                                                         const runtime::TensorMap& inputs,
                                                         const DimValues& values,
                                                         const ir::Bindings& bindings) const;
  // The call symbols of a call whose dynamic dims have `values`: `bindings` with the
  // named dims added, completed by JitOptions::complete_bindings.
  ir::Bindings CallBindings(const DimValues& values, const ir::Bindings& bindings) const;
  // Whether CallBindings can add to the caller's bindings (named dims or a completion).
  bool CompletesBindings() const;

  // The lookup alone: the entry serving `args`, compiled first on a miss. The entry
  // stays valid while held, even if evicted.
  absl::StatusOr<std::shared_ptr<const CacheEntry>> Acquire(const Args& args);

  // Why `args` would miss: the first failed guard of the nearest entry (the one with the
  // fewest failed guards, most recently used on a tie), e.g.
  // `k_cache.shape[1] == 128 failed: got 129 (entry #3, nearest of 4)`. "" on a hit,
  // "no live entries" on an empty cache.
  std::string ExplainMiss(const Args& args) const;

  CacheStats stats() const;
  int64_t size() const;  // live entries (compiling ones included)
  const InputSignature& signature() const { return signature_; }

 private:
  // The entry for `args`; `*code` receives its code, null while a tiered entry is served
  // by the interpreter. `*stall`, if given: the seconds spent compiling or waiting for
  // another call's compile (0 on a plain hit; see CacheStats::max_stall_seconds).
  absl::StatusOr<std::shared_ptr<const CacheEntry>> AcquireImpl(
      const Args& args, DimValues* values, std::shared_ptr<const CompiledGraph>* code,
      double* stall = nullptr, bool values_bound = false);
  absl::Status Reject(const Args& args);
  // The *Locked functions are called with mu_ held.
  // Keys for `values`; updates the auto policy's state (and drops the entries a dim
  // turning dynamic makes unreachable into `dropped`).
  DimKeys KeysLocked(const DimValues& values, std::vector<std::shared_ptr<CacheEntry>>* dropped);
  // Keys without touching the auto state (for ExplainMiss).
  DimKeys PeekKeysLocked(const DimValues& values) const;
  // Refines the symbolic keys to their class representative (duck sizing).
  void DuckSize(const DimValues& values, DimKeys* keys) const;
  std::string ExplainMissLocked(const DimValues& values) const;
  // Adds a call's named and padded dims to the real / padded element counts.
  void CountElementsLocked(const DimKeys& keys, const DimValues& values);
  void EvictLocked(const CacheEntry* keep, std::vector<std::shared_ptr<CacheEntry>>* evicted);
  // The miss path: returns with `lock` held, but releases it while compiling.
  absl::StatusOr<std::shared_ptr<const CacheEntry>> CompileLocked(
      std::unique_lock<std::mutex>& lock, const DimKeys& keys, const DimValues& values,
      std::vector<std::shared_ptr<CacheEntry>>* released);
  // Traces `entry` (its graph, and under padding the output dims to cut back).
  absl::Status TraceEntry(CacheEntry* entry) const;
  // The code of a traced entry: live code of its content key, or a real compile.
  absl::StatusOr<std::shared_ptr<const CompiledGraph>> CompileTraced(CacheEntry* entry,
                                                                     bool* compiled) const;
  // Installs `code` in `entry` and counts the compile (mu_ held).
  void InstallLocked(CacheEntry* entry, std::shared_ptr<const CompiledGraph> code, bool compiled,
                     double seconds);
  // Tiered: queues `entry` for the background compile (or moves it to the back: it was
  // asked for again); the queue is bounded and drops its oldest entry when full.
  void EnqueueLocked(const std::shared_ptr<CacheEntry>& entry);
  void BackgroundLoop();
  absl::StatusOr<std::vector<runtime::Tensor>> RunPadded(const CacheEntry& entry,
                                                         const CompiledGraph* code,
                                                         const runtime::TensorMap& inputs,
                                                         const DimValues& real,
                                                         ir::Bindings bindings) const;
  // Runs the entry's code, or the interpreter on its traced graph when `code` is null.
  absl::StatusOr<std::vector<runtime::Tensor>> RunTier(const CacheEntry& entry,
                                                       const CompiledGraph* code,
                                                       const runtime::TensorMap& inputs,
                                                       const ir::Bindings& bindings) const;
  std::string KeysText(const DimKeys& keys) const;
  const std::string& Prefix() const { return prefix_; }

  const TracedFunction& function_;
  const JitOptions& options_;
  const InputSignature signature_;
  const std::string prefix_;  // `name/policy`, for messages
  CodeStore& store_;
  // Hashes of the input names, so finding them in a TensorMap hashes no strings.
  std::vector<size_t> name_hashes_;

  mutable std::mutex mu_;
  std::condition_variable compiled_;  // notified when any entry leaves kCompiling
  // Guarded by mu_:
  absl::flat_hash_map<DimKeys, std::shared_ptr<CacheEntry>, DimKeysHash> entries_;
  std::vector<AutoDimState> auto_state_;
  int64_t next_id_ = 1;
  CacheStats stats_;
  // Not guarded (ServeRepeat runs without mu_): the LRU clock, whose ticks entries keep
  // as their last use, and ServeRepeat's hits and element counts, which stats() adds.
  std::atomic<uint64_t> tick_ = 0;
  std::atomic<int64_t> repeat_hits_ = 0;
  std::atomic<int64_t> repeat_elements_ = 0;
  // Tiered compilation (guarded by mu_): the bounded queue and its thread.
  std::deque<std::weak_ptr<CacheEntry>> queue_;
  std::condition_variable queued_;
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace graphjit::compiler::cache

#endif  // GRAPHJIT_COMPILER_ENTRIES_COMPILE_CACHE_H_
