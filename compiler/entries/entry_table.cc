#include "compiler/entries/entry_table.h"

#include <climits>
#include <utility>

#include "absl/strings/str_cat.h"

namespace graphjit::compiler::entries {

CacheEntry* EntryTable::Find(const DimKeys& keys) const {
  auto it = entries_.find(keys);
  return it == entries_.end() ? nullptr : it->second.get();
}

std::shared_ptr<CacheEntry> EntryTable::FindShared(const DimKeys& keys) const {
  auto it = entries_.find(keys);
  return it == entries_.end() ? nullptr : it->second;
}

void EntryTable::Insert(std::shared_ptr<CacheEntry> entry) {
  Touch(*entry);
  DimKeys keys = entry->keys_;
  entries_[std::move(keys)] = std::move(entry);
}

void EntryTable::Remove(const CacheEntry* entry, Entries* released) {
  auto it = entries_.find(entry->keys_);
  if (it == entries_.end() || it->second.get() != entry) return;
  it->second->live_ = false;
  released->push_back(std::move(it->second));
  entries_.erase(it);
}

int64_t EntryTable::DropSpecialized(int k, Entries* dropped) {
  int64_t count = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->first[k] >= 2) {
      it->second->live_ = false;
      dropped->push_back(std::move(it->second));
      entries_.erase(it++);
      ++count;
    } else {
      ++it;
    }
  }
  return count;
}

int64_t EntryTable::Evict(int64_t capacity, const CacheEntry* keep, Entries* evicted,
                          const std::function<void(const CacheEntry&)>& on_evict) {
  if (capacity <= 0) return 0;
  int64_t count = 0;
  while (static_cast<int64_t>(entries_.size()) > capacity) {
    // Entries still compiling are not candidates: their callers are waiting for them.
    const CacheEntry* victim = nullptr;
    for (const auto& [keys, entry] : entries_) {
      if (entry.get() == keep || entry->state_ == CacheEntry::State::kCompiling) continue;
      if (victim == nullptr || entry->last_use_ < victim->last_use_) victim = entry.get();
    }
    if (victim == nullptr) break;  // all compiling: over the bound until they finish
    if (on_evict) on_evict(*victim);
    Remove(victim, evicted);
    ++count;
  }
  return count;
}

std::string EntryTable::ExplainMiss(const InputSignature& signature,
                                    const DimValues& values) const {
  const CacheEntry* nearest = nullptr;
  int fewest = INT_MAX;
  for (const auto& [keys, entry] : entries_) {
    int failures = entry->guards_.CountFailures(values);
    if (failures < fewest || (failures == fewest && entry->last_use_ > nearest->last_use_)) {
      nearest = entry.get();
      fewest = failures;
    }
  }
  if (nearest == nullptr) return "no live entries";
  return absl::StrCat(nearest->guards_.ExplainFailure(signature, values), " (entry #", nearest->id_,
                      ", nearest of ", entries_.size(), ")");
}

}  // namespace graphjit::compiler::entries
