// Content-addressed stores of compiled code in memory: ContentStore<T> holds code by
// content key (compiler/store/content_key.h); KernelStore holds the machine code of single
// kernels by the key of their canonical form (compiler/lower/kernel_unit.h), shared by
// every graph that lowers to an equal kernel; ModuleStore the modules they live in. Whole
// compiled graphs are kept by GraphStore (compiler/compiled/graph_store.h), one layer up.
//
// A store holds code weakly: whoever uses code (a cache entry, a lazy context, a compiled
// graph) holds it, and code no holder uses any more is freed at once (its
// ResourceTracker), so evicting an entry frees its code exactly when nothing else shares
// it. Concurrent requests for one key compile it once; the others wait for that compile
// (GetOrCompile), or the first of concurrent compiles is kept (Insert).
#ifndef GRAPHJIT_COMPILER_STORE_CONTENT_STORE_H_
#define GRAPHJIT_COMPILER_STORE_CONTENT_STORE_H_

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "compiler/codegen/native_code.h"
#include "compiler/store/content_key.h"
#include "ir/clock.h"

namespace graphjit::compiler {

struct StoreStats {
  int64_t lookups = 0;   // GetOrCompile calls
  int64_t hits = 0;      // served by live code (waits for a concurrent compile included)
  int64_t compiles = 0;  // real compiles (failed ones included)
  int64_t failed_compiles = 0;
  double compile_seconds = 0;  // wall seconds of the compiles, summed
  int64_t live = 0;            // keys whose code someone still holds
  // `lookups=30 hits=6 compiles=24 failed=0 live=3 compile=0.512s`.
  std::string ToString() const;
};

template <typename T>
class ContentStore {
 public:
  ContentStore() = default;
  ContentStore(const ContentStore&) = delete;
  ContentStore& operator=(const ContentStore&) = delete;

  using CompileFn = absl::FunctionRef<absl::StatusOr<std::unique_ptr<T>>()>;
  // The live code for `key`, or the result of `compile` (run without the store's lock,
  // once per key however many callers ask at the same time). `*compiled` tells which.
  // A failed compile is returned to every caller waiting for it and not kept.
  absl::StatusOr<std::shared_ptr<const T>> GetOrCompile(const ContentKey& key, CompileFn compile,
                                                        bool* compiled = nullptr);
  // Offers `code` for `key`: returns the live code already there (a concurrent compile
  // won), else keeps a weak reference to `code` and returns it.
  std::shared_ptr<const T> Insert(const ContentKey& key, std::shared_ptr<const T> code) {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.lookups;
    Slot& slot = slots_[key];
    if (std::shared_ptr<const T> live = slot.code.lock()) {
      ++stats_.hits;
      return live;
    }
    ++stats_.compiles;
    slot.code = code;
    SweepLocked();
    return code;
  }
  // The live code for `key`, or null.
  std::shared_ptr<const T> Find(const ContentKey& key) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = slots_.find(key);
    return it == slots_.end() ? nullptr : it->second.code.lock();
  }
  StoreStats stats() const;

 private:
  struct Slot {
    std::weak_ptr<const T> code;
    bool compiling = false;
  };
  // Drops slots whose code died, when they outnumber the live ones (amortized O(1)).
  void SweepLocked();

  mutable std::mutex mu_;
  std::condition_variable compiled_;  // notified when a compile finishes
  absl::flat_hash_map<ContentKey, Slot> slots_;
  size_t sweep_at_ = 64;
  StoreStats stats_;
};

// One kernel's machine code: function `index` of a module compiled with others (the module
// lives while any of its kernels is used).
struct KernelCode {
  std::shared_ptr<const NativeModule> module;
  int index = 0;
  NativeCode::KernelFn function() const { return module->function(index); }
};

// Modules of kernels by the key of their member list: one live module per key, so the
// function names derived from the key are unique among live code.
class ModuleStore : public ContentStore<NativeModule> {
 public:
  static ModuleStore& Default();
};

// Machine code of single kernels by kernel content key.
class KernelStore : public ContentStore<KernelCode> {
 public:
  // The process-wide store every CompiledGraph compiles its kernels through.
  static KernelStore& Default();
};

template <typename T>
void ContentStore<T>::SweepLocked() {
  if (slots_.size() < sweep_at_) return;
  absl::erase_if(slots_,
                 [](const auto& kv) { return !kv.second.compiling && kv.second.code.expired(); });
  sweep_at_ = std::max<size_t>(64, 2 * slots_.size());
}

template <typename T>
absl::StatusOr<std::shared_ptr<const T>> ContentStore<T>::GetOrCompile(const ContentKey& key,
                                                                       CompileFn compile,
                                                                       bool* compiled) {
  if (compiled != nullptr) *compiled = false;
  std::unique_lock<std::mutex> lock(mu_);
  ++stats_.lookups;
  while (true) {
    Slot& slot = slots_[key];
    if (std::shared_ptr<const T> code = slot.code.lock()) {
      ++stats_.hits;
      return code;
    }
    if (!slot.compiling) break;
    compiled_.wait(lock);  // the slot may be gone (a failed compile): look it up again
  }
  slots_[key].compiling = true;
  ++stats_.compiles;
  lock.unlock();
  const ir::Clock::time_point start = ir::Clock::now();
  absl::StatusOr<std::unique_ptr<T>> result = compile();
  const double seconds = ir::SecondsSince(start);
  std::shared_ptr<const T> code;
  if (result.ok()) code = std::shared_ptr<const T>(*std::move(result));
  // Destroying the last holder frees code under the JIT's locks, never under ours:
  // `code` outlives the lock below.
  lock.lock();
  stats_.compile_seconds += seconds;
  if (code == nullptr) {
    ++stats_.failed_compiles;
    slots_.erase(key);
  } else {
    Slot& slot = slots_[key];
    slot.code = code;
    slot.compiling = false;
    SweepLocked();
  }
  compiled_.notify_all();
  if (code == nullptr) return result.status();
  if (compiled != nullptr) *compiled = true;
  return code;
}

template <typename T>
StoreStats ContentStore<T>::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  StoreStats s = stats_;
  s.live = 0;
  for (const auto& [key, slot] : slots_) s.live += slot.code.expired() ? 0 : 1;
  return s;
}

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_STORE_CONTENT_STORE_H_
