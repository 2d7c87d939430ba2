// EntryCall: the one way a call runs on a compile cache. compiler::JitCall (inputs by
// position) keeps one; compiler::JitFunction::Run (inputs by name) borrows one from the
// cache's pool of idle calls. Both hand it the call's inputs in the cache's signature
// order, and it does the rest, downward:
//
//   the entry serving the inputs (CompileCache::Serve; no lookup at all when the dims
//   repeat the last call's, CompileCache::ServeRepeat)
//   -> the entry's code on a kept frame (CompiledCall: no name lookups, outputs and
//      workspace reused while shapes repeat)
//   -> or, for entries without a frame (padding policies, a tiered entry still
//      interpreted), the EntryExecutor.
//
// One EntryCall per thread at a time: Run is not reentrant.
#ifndef GRAPHJIT_COMPILER_ENTRIES_ENTRY_CALL_H_
#define GRAPHJIT_COMPILER_ENTRIES_ENTRY_CALL_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "compiler/compiled/compiled_call.h"
#include "compiler/entries/compile_cache.h"

namespace graphjit::compiler::entries {

class EntryCall {
 public:
  explicit EntryCall(CompileCache* cache) : cache_(cache) {}  // `cache` must outlive it

  // The dims of the next call's inputs, for a caller that binds them itself
  // (cache()->signature().Bind(args, &values())) before Run(..., values_bound = true).
  DimValues& values() { return values_; }

  // Runs the cache's function on `args` (one per cache()->signature().inputs(), in that
  // order, each non-null), compiling on a miss; `bindings` gives the call symbols. Errors
  // (guards no entry passes, compile failures, a kernel's bounds check) are the cache's.
  absl::Status Run(const CompileCache::Args& args, const ir::Bindings& bindings,
                   bool values_bound = false);
  // The results of the last successful Run, until the next Run (which may write into the
  // same tensors), or moved out.
  const std::vector<runtime::Tensor>& outputs() const;
  std::vector<runtime::Tensor> TakeOutputs();

  // Whether the last Run ran the kept frame (else the executor).
  bool last_fast() const { return last_fast_; }
  // Drops the kept frame and with it the entry and code it holds.
  void Release();
  // The entry the kept frame runs; null when there is none.
  const CacheEntry* kept_entry() const {
    return compiled_call_ != nullptr ? entry_.get() : nullptr;
  }
  // The kept entry's code_version() its frame was built for.
  uint32_t kept_code_version() const { return served_code_version_; }
  CompileCache* cache() const { return cache_; }

  // Calls served by the kept frame, and by the executor.
  int64_t fast_calls() const { return fast_calls_; }
  int64_t slow_calls() const { return slow_calls_; }

 private:
  // A frame for `entry` running `code`, with where each of its inputs sits in the
  // signature; none (compiled_call_ null) when the code takes an input the signature lacks.
  void KeepFrame(std::shared_ptr<const CacheEntry> entry, std::shared_ptr<const CompiledGraph> code,
                 uint32_t code_version);
  absl::Status RunKept(const CompileCache::Args& args, const ir::Bindings& bindings);
  absl::Status RunExecutor(const CacheEntry& entry, const CompiledGraph* code,
                           const CompileCache::Args& args, const ir::Bindings& bindings);
  // The call bindings for `bindings` and values_, recomputed only when either changed.
  const ir::Bindings& CompletedBindings(const ir::Bindings& bindings);

  CompileCache* cache_;
  DimValues values_;
  std::shared_ptr<const CacheEntry> entry_;  // the entry compiled_call_ runs
  // The code compiled_call_ runs, kept alive here: reoptimization may replace the entry's code.
  std::shared_ptr<const CompiledGraph> code_;
  std::unique_ptr<CompiledCall> compiled_call_;
  uint32_t served_code_version_ = 0;  // entry_'s code_version() when compiled_call_ was built
  DimValues served_values_;           // the dims of the last call Serve gave entry_
  std::vector<int> call_position_;    // per compiled_call_ input: its signature position
  absl::InlinedVector<const runtime::Tensor*, 8> call_inputs_;
  ir::Bindings last_bindings_, completed_;
  DimValues completed_values_;
  bool completed_valid_ = false;
  bool last_fast_ = false;
  std::vector<runtime::Tensor> outputs_;  // of the executor
  int64_t fast_calls_ = 0, slow_calls_ = 0;
};

// The idle calls of one cache, for callers without a call of their own
// (JitFunction::Run): Borrow one (or a new one), Return it when done. Idle calls keep
// their frames for the next caller, at most kMaxIdle of them.
class EntryCallPool {
 public:
  static constexpr int kMaxIdle = 4;
  explicit EntryCallPool(CompileCache* cache) : cache_(cache) {}
  std::unique_ptr<EntryCall> Borrow();
  void Return(std::unique_ptr<EntryCall> call);
  // Lets idle calls go of entries no longer in the cache's table (evicted, dropped,
  // failed) and of code an entry no longer runs (reoptimized), so the pool never keeps
  // code alive that the cache has let go.
  void ReleaseStale();

 private:
  CompileCache* cache_;
  std::mutex mu_;
  std::vector<std::unique_ptr<EntryCall>> idle_;  // guarded by mu_
};

}  // namespace graphjit::compiler::entries

#endif  // GRAPHJIT_COMPILER_ENTRIES_ENTRY_CALL_H_
