// CodeStore: compiled graphs by content key (compiler/cache/content_key.h), shared by
// every cache entry, Jit function and lazy context that compiles the same thing.
//
// The store holds code weakly: whoever uses code (a cache entry, a lazy context) holds
// it, and code no holder uses any more is freed at once (its ResourceTracker), so
// evicting an entry frees its code exactly when no other entry shares it. Concurrent
// requests for one key compile it once; the others wait for that compile.
#ifndef GRAPHJIT_COMPILER_CACHE_CODE_STORE_H_
#define GRAPHJIT_COMPILER_CACHE_CODE_STORE_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "compiler/cache/content_key.h"
#include "compiler/compiled_graph.h"

namespace graphjit::compiler {

struct CodeStoreStats {
  int64_t lookups = 0;   // GetOrCompile calls
  int64_t hits = 0;      // served by live code (waits for a concurrent compile included)
  int64_t compiles = 0;  // real compiles (failed ones included)
  int64_t failed_compiles = 0;
  double compile_seconds = 0;  // wall seconds of the compiles, summed
  int64_t live = 0;            // keys whose code someone still holds
  // `lookups=30 hits=6 compiles=24 live=3`.
  std::string ToString() const;
};

class CodeStore {
 public:
  CodeStore() = default;
  CodeStore(const CodeStore&) = delete;
  CodeStore& operator=(const CodeStore&) = delete;

  // The process-wide store that Jit functions and lazy contexts use by default.
  static std::shared_ptr<CodeStore> Default();

  using CompileFn = absl::FunctionRef<absl::StatusOr<std::unique_ptr<CompiledGraph>>()>;
  // The live code for `key`, or the result of `compile` (run without the store's lock,
  // once per key however many callers ask at the same time). `*compiled` tells which.
  // A failed compile is returned to every caller waiting for it and not kept.
  absl::StatusOr<std::shared_ptr<const CompiledGraph>> GetOrCompile(const ContentKey& key,
                                                                   CompileFn compile,
                                                                   bool* compiled = nullptr);
  // The live code for `key`, or null.
  std::shared_ptr<const CompiledGraph> Find(const ContentKey& key) const;

  CodeStoreStats stats() const;

 private:
  struct Slot {
    std::weak_ptr<const CompiledGraph> code;
    bool compiling = false;
  };
  // Drops slots whose code died, when they outnumber the live ones (amortized O(1)).
  void SweepLocked();

  mutable std::mutex mu_;
  std::condition_variable compiled_;  // notified when a compile finishes
  absl::flat_hash_map<ContentKey, Slot> slots_;
  size_t sweep_at_ = 64;
  CodeStoreStats stats_;
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_CACHE_CODE_STORE_H_
