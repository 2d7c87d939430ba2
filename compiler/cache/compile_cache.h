// CompileCache: compiled code for a model, one entry per key of a shape policy, guarded
// by the input shapes (seed 000 demos 1 and 2; docs in compiler/cache/policy.h).
//
// Every miss traces the model (fixed dims per the key) and compiles it for real through
// CompiledGraph::Compile. A hit costs a guard check and one hash lookup, no allocation.
// Entries beyond `capacity` are evicted least recently used first; an evicted entry's
// code is freed (its ResourceTracker) once no caller is still running it.
//
// Tensors: under exact, symbolic and auto the caller's inputs go to the code as they
// are, so inputs the code updates in place (the decode layer's k_cache and v_cache, see
// CompiledGraph::donated_inputs) are updated and returned as the outputs. Under the
// padding policies the cache pads copies of the inputs and cuts the outputs back, so the
// caller's tensors are never written.
//
// Thread-safe: callers with the same new key wait for one compile, different keys compile
// in parallel. The lock is a std::mutex rather than absl::Mutex: Debian's abseil is built
// with absl::Mutex deadlock detection on (about 43 ns per lock and unlock here, against
// 3 ns, measured with Google Benchmark), which alone would blow the hit path's budget,
// and ThreadSanitizer sees pthread mutexes but not an uninstrumented abseil's.
#ifndef GRAPHJIT_COMPILER_CACHE_COMPILE_CACHE_H_
#define GRAPHJIT_COMPILER_CACHE_COMPILE_CACHE_H_

#include <array>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/cache/cache_log.h"
#include "compiler/cache/cache_stats.h"
#include "compiler/cache/guards.h"
#include "compiler/cache/policy.h"
#include "compiler/compiled_graph.h"
#include "models/model.h"

namespace graphjit::compiler::cache {

struct CompileCacheOptions {
  ShapePolicy policy = ShapePolicy::kExact;
  int64_t capacity = 0;  // most live entries (least recently used evicted); 0: no bound
  CompileGraphOptions compile;
  LogFlags log = LogFlagsFromEnv();
  // For tests: runs on the compiling thread before each compile, outside the cache lock.
  std::function<void(const DimKeys&)> before_compile;
};

// One compiled entry. Acquire hands out only entries whose compile succeeded.
class CacheEntry {
 public:
  int64_t id() const { return id_; }  // creation order, from 1
  const DimKeys& keys() const { return keys_; }
  const EntryGuards& guards() const { return guards_; }
  bool padded() const { return padded_; }
  const CompiledGraph& compiled() const { return *compiled_; }

 private:
  friend class CompileCache;
  enum class State { kCompiling, kReady, kFailed };

  int64_t id_ = 0;
  DimKeys keys_{};
  EntryGuards guards_;
  bool padded_ = false;
  std::unique_ptr<CompiledGraph> compiled_;  // set once, before state_ becomes kReady
  // Guarded by the owning cache's mu_.
  State state_ = State::kCompiling;
  absl::Status error_;
  uint64_t last_use_ = 0;
};

class CompileCache {
 public:
  // `model` must outlive the cache. InvalidArgument if the model's inputs cannot be
  // guarded (see InputSignature::Create), or if a padding policy is asked of a model that
  // declares no mask for padding or has outputs it could not cut back.
  static absl::StatusOr<std::unique_ptr<CompileCache>> Create(const models::Model& model,
                                                              CompileCacheOptions options = {});

  // Runs the model on `inputs`, compiling on a miss. `bindings` gives the call symbols
  // (the decode layer's P), completed by Model::CompleteBindings from the real dims; the
  // dynamic dims themselves are read from the inputs. Inputs the model cannot accept
  // under any key (dtype, rank, a constant dim) are InvalidArgument naming the guard.
  absl::StatusOr<std::vector<runtime::Tensor>> Run(const runtime::TensorMap& inputs,
                                                   const ir::Bindings& bindings = {});

  // The lookup alone (what Run does before running): the entry serving `inputs`,
  // compiled first on a miss. The entry stays valid while held, even if evicted.
  absl::StatusOr<std::shared_ptr<const CacheEntry>> Acquire(const runtime::TensorMap& inputs);
  // Likewise with the inputs in signature().inputs() order (null for a missing one).
  absl::StatusOr<std::shared_ptr<const CacheEntry>> Acquire(
      absl::Span<const runtime::Tensor* const> args);

  // Why `inputs` would miss: the first failed guard of the nearest entry (the one with
  // the fewest failed guards, most recently used on a tie), e.g.
  // `k_cache.shape[1] == 128 failed: got 129 (entry #3, nearest of 4)`. "" on a hit,
  // "no live entries" on an empty cache.
  std::string ExplainMiss(const runtime::TensorMap& inputs) const;

  CacheStats stats() const;
  int64_t size() const;  // live entries (compiling ones included)
  ShapePolicy policy() const { return options_.policy; }
  const InputSignature& signature() const { return signature_; }
  const models::Model& model() const { return model_; }

 private:
  using Args = absl::InlinedVector<const runtime::Tensor*, 8>;

  CompileCache(const models::Model& model, CompileCacheOptions options, InputSignature signature,
               std::vector<std::vector<DimGuard>> output_dims);

  Args ResolveArgs(const runtime::TensorMap& inputs) const;
  absl::StatusOr<std::shared_ptr<const CacheEntry>> AcquireImpl(
      absl::Span<const runtime::Tensor* const> args, DimValues* values);
  absl::Status Reject(absl::Span<const runtime::Tensor* const> args);
  // The *Locked functions are called with mu_ held.
  // Keys for `values`; updates the auto policy's state (and drops the entries a dim
  // turning dynamic makes unreachable into `dropped`).
  DimKeys KeysLocked(const DimValues& values, std::vector<std::shared_ptr<CacheEntry>>* dropped);
  std::string ExplainMissLocked(const DimValues& values) const;
  void EvictLocked(const CacheEntry* keep, std::vector<std::shared_ptr<CacheEntry>>* evicted);
  // The miss path: returns with `lock` held, but releases it while compiling.
  absl::StatusOr<std::shared_ptr<const CacheEntry>> CompileLocked(
      std::unique_lock<std::mutex>& lock, const DimKeys& keys, const DimValues& values,
      std::vector<std::shared_ptr<CacheEntry>>* released);
  absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(const DimKeys& keys, double* trace_s,
                                                         double* total_s) const;
  absl::StatusOr<std::vector<runtime::Tensor>> RunPadded(const CacheEntry& entry,
                                                         const runtime::TensorMap& inputs,
                                                         const DimValues& real,
                                                         ir::Bindings bindings) const;
  std::string KeysText(const DimKeys& keys) const;
  std::string Prefix() const;

  const models::Model& model_;
  const CompileCacheOptions options_;
  const InputSignature signature_;
  // Under padding policies: each output's dims (a constant or a dynamic dim), to cut back.
  const std::vector<std::vector<DimGuard>> output_dims_;
  const std::string name_;  // the model's name, for messages
  // Hashes of the input names, so finding them in a TensorMap hashes no strings.
  std::vector<size_t> name_hashes_;

  mutable std::mutex mu_;
  std::condition_variable compiled_;  // notified when any entry leaves kCompiling
  // Guarded by mu_:
  absl::flat_hash_map<DimKeys, std::shared_ptr<CacheEntry>, DimKeysHash> entries_;
  std::array<AutoDimState, kMaxDynamicDims> auto_state_;
  uint64_t tick_ = 0;  // the LRU clock: entries keep the tick of their last use
  int64_t next_id_ = 1;
  CacheStats stats_;
};

}  // namespace graphjit::compiler::cache

#endif  // GRAPHJIT_COMPILER_CACHE_COMPILE_CACHE_H_
