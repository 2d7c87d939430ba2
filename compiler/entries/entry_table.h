// EntryTable: the live entries of one compile cache by their keys, with least recently
// used eviction and the explanation of a miss. It holds entries and their code, never a
// caller's tensors. Not thread-safe by itself: the owning cache's lock guards every call
// but Touch, which is lock-free so a repeated hit can stamp its entry without the lock.
#ifndef GRAPHJIT_COMPILER_ENTRIES_ENTRY_TABLE_H_
#define GRAPHJIT_COMPILER_ENTRIES_ENTRY_TABLE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "compiler/entries/cache_entry.h"
#include "compiler/entries/guards.h"

namespace graphjit::compiler::entries {

class EntryTable {
 public:
  using Entries = std::vector<std::shared_ptr<CacheEntry>>;

  // The entry for `keys`, or null.
  CacheEntry* Find(const DimKeys& keys) const;
  std::shared_ptr<CacheEntry> FindShared(const DimKeys& keys) const;
  // The table's own pointer to the entry for `keys` (copy it to share), or null.
  const std::shared_ptr<CacheEntry>* FindSlot(const DimKeys& keys) const {
    auto it = entries_.find(keys);
    return it == entries_.end() ? nullptr : &it->second;
  }
  bool Contains(const DimKeys& keys) const { return entries_.contains(keys); }
  // Adds `entry` under its keys (used now).
  void Insert(std::shared_ptr<CacheEntry> entry);
  // Takes `entry` out if it is still the one under its keys; it lands in `released`.
  void Remove(const CacheEntry* entry, Entries* released);
  // Takes out the entries specialized to a value >= 2 of dynamic dim `k` (the ones a dim
  // turning symbolic makes unreachable) into `dropped`; returns how many.
  int64_t DropSpecialized(int k, Entries* dropped);
  // While more than `capacity` entries live (0: no bound), takes out the least recently
  // used one that is not `keep` and not compiling into `evicted`, calling `on_evict` on
  // it first. Returns how many.
  int64_t Evict(int64_t capacity, const CacheEntry* keep, Entries* evicted,
                const std::function<void(const CacheEntry&)>& on_evict);
  // The first failed guard of the nearest entry (fewest failures, most recently used on
  // a tie), e.g. `k_cache.shape[1] == 128 failed: got 129 (entry #3, nearest of 4)`;
  // "no live entries" when empty.
  std::string ExplainMiss(const InputSignature& signature, const DimValues& values) const;

  // Stamps `entry` as used now (lock-free). A load and a store rather than a fetch_add:
  // the hit path saves an atomic read-modify-write, and two calls racing here at worst
  // stamp the same tick, which only makes them equally recent.
  void Touch(const CacheEntry& entry) {
    const uint64_t now = tick_.load(std::memory_order_relaxed) + 1;
    tick_.store(now, std::memory_order_relaxed);
    const_cast<CacheEntry&>(entry).last_use_.store(now, std::memory_order_relaxed);
  }
  int64_t size() const { return static_cast<int64_t>(entries_.size()); }

 private:
  absl::flat_hash_map<DimKeys, std::shared_ptr<CacheEntry>, DimKeysHash> entries_;
  // The LRU clock, whose ticks entries keep as their last use.
  std::atomic<uint64_t> tick_ = 0;
};

}  // namespace graphjit::compiler::entries

#endif  // GRAPHJIT_COMPILER_ENTRIES_ENTRY_TABLE_H_
