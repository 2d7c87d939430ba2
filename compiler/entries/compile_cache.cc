#include "compiler/entries/compile_cache.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/entries/entry_call.h"
#include "ir/clock.h"
#include "ir/status_macros.h"

namespace graphjit::compiler::entries {

using ir::SecondsSince;
using runtime::Tensor;
using runtime::TensorMap;

CompileCache::CompileCache(const TracedFunction& function, const JitOptions& options,
                           InputSignature signature)
    : options_(options),
      signature_(std::move(signature)),
      builder_(function, options, signature_),
      executor_(function.weights, options, signature_),
      keys_(signature_),
      ledger_(absl::StrCat(function.name, "/", PolicyName(options.policy)), options, signature_,
              keys_),
      calls_(std::make_unique<EntryCallPool>(this)),
      tiers_(options, builder_, executor_, mu_, ledger_, [this] { calls_->ReleaseStale(); }) {}

CompileCache::~CompileCache() = default;

absl::StatusOr<std::shared_ptr<const CacheEntry>> CompileCache::Acquire(const Args& args,
                                                                        DimValues* bound_values) {
  DimValues local;
  Served served;
  served.want_code = false;  // the caller reads it from the entry
  served.values_bound = bound_values != nullptr;
  absl::StatusOr<std::shared_ptr<const CacheEntry>> entry =
      AcquireImpl(args, served.values_bound ? bound_values : &local, &served);
  if (!entry.ok() || !served.interpreted) return entry;
  // A tiered entry still interpreted: callers of Acquire want its code, so compile it
  // here (the code store makes a concurrent background compile of it the same compile).
  auto* mutable_entry = const_cast<CacheEntry*>(entry->get());
  const auto start = ir::Clock::now();
  bool compiled = false;
  GJ_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledGraph> built,
                      builder_.Build(*mutable_entry, &compiled));
  std::lock_guard<std::mutex> lock(mu_);
  tiers_.InstallLocked(mutable_entry, std::move(built), compiled, SecondsSince(start));
  return entry;
}

absl::Status CompileCache::Reject(const Args& args) {
  std::string why = signature_.ExplainFailure(args);
  std::lock_guard<std::mutex> lock(mu_);
  return ledger_.Rejected(why);
}

bool CompileCache::FindReady(const DimValues& values, std::shared_ptr<const CacheEntry>* entry,
                             Served* served) {
  if (!keys_.keys_are_values()) return false;
  std::lock_guard<std::mutex> lock(mu_);
  const std::shared_ptr<CacheEntry>* slot = table_.FindSlot(values);
  if (slot == nullptr || (*slot)->state_ != CacheEntry::State::kReady) return false;
  const CacheEntry& found = **slot;
  GJ_DCHECK(found.guards_.Check(values))
      << "key " << keys_.ToText(values) << " maps to an entry whose guards fail";
  ledger_.Hit(values, values);
  table_.Touch(found);
  if (tiers_.CountCall(found)) tiers_.ReoptimizeLocked(*slot, values);
  *entry = *slot;
  if (served->want_code) served->code = found.compiled_;
  served->code_version = found.code_version();
  return true;
}

absl::StatusOr<std::shared_ptr<const CacheEntry>> CompileCache::AcquireImpl(const Args& args,
                                                                            DimValues* values,
                                                                            Served* served) {
  if (!served->values_bound && !signature_.Bind(args, values)) return Reject(args);
  if (std::shared_ptr<const CacheEntry> hit; FindReady(*values, &hit, served)) return hit;
  // Entries dropped or evicted here are destroyed after the lock is released (freeing
  // code takes the JIT's own locks).
  EntryTable::Entries released;
  absl::StatusOr<std::shared_ptr<const CacheEntry>> result;
  {
    std::unique_lock<std::mutex> lock(mu_);
    const DimKeys keys = KeysLocked(*values, &released);
    std::shared_ptr<CacheEntry> found = table_.FindShared(keys);
    if (found == nullptr) {
      const auto start = ir::Clock::now();
      result = CompileLocked(lock, keys, *values, &released);
      served->stall = SecondsSince(start);
    } else {
      CacheEntry* entry = found.get();
      ledger_.Hit(keys, *values);
      table_.Touch(*entry);
      if (entry->state_ == CacheEntry::State::kReady) {
        if (tiers_.CountCall(*entry)) tiers_.ReoptimizeLocked(found, *values);
        result = std::move(found);
      } else if (entry->state_ == CacheEntry::State::kInterpreted) {
        // Asked for again: its background compile moves to the back of the queue.
        tiers_.EnqueueLocked(found);
        result = std::move(found);
      } else {
        // Another caller is compiling this key: wait for it rather than compile twice.
        ledger_.Waited();
        const auto start = ir::Clock::now();
        compiled_.wait(lock, [&] { return found->state_ != CacheEntry::State::kCompiling; });
        served->stall = SecondsSince(start);
        if (found->state_ == CacheEntry::State::kFailed) {
          result = found->error_;
        } else {
          result = std::move(found);
        }
      }
      GJ_DCHECK(!result.ok() || entry->guards_.Check(*values))
          << "key " << keys_.ToText(keys) << " maps to an entry whose guards fail";
    }
    if (result.ok()) {
      const CacheEntry& entry = **result;
      served->interpreted = entry.compiled_ == nullptr;
      if (served->want_code) served->code = entry.compiled_;
      served->code_version = entry.code_version();
    }
  }
  if (!released.empty()) calls_->ReleaseStale();
  return result;
}

DimKeys CompileCache::KeysLocked(const DimValues& values, EntryTable::Entries* dropped) {
  std::vector<int> turned_dynamic;
  DimKeys keys = keys_.Observe(values, &turned_dynamic);
  for (int k : turned_dynamic) {
    // The dim just turned dynamic: entries specialized to its first value (other than
    // the 0/1 specializations) can no longer be reached.
    ledger_.TurnedDynamic(k, values[k], table_.DropSpecialized(k, dropped));
  }
  return keys;
}

std::string CompileCache::ExplainMiss(const Args& args) const {
  DimValues values;
  if (!signature_.Bind(args, &values)) return signature_.ExplainFailure(args);
  std::lock_guard<std::mutex> lock(mu_);
  if (table_.Contains(keys_.Peek(values))) return "";
  return table_.ExplainMiss(signature_, values);
}

absl::StatusOr<std::shared_ptr<const CacheEntry>> CompileCache::CompileLocked(
    std::unique_lock<std::mutex>& lock, const DimKeys& keys, const DimValues& values,
    EntryTable::Entries* released) {
  const std::string reason = table_.ExplainMiss(signature_, values);
  auto entry = std::make_shared<CacheEntry>();
  entry->id_ = next_id_++;
  entry->keys_ = keys;
  entry->guards_ = EntryGuards(signature_, keys);
  entry->padded_ = signature_.pads();
  table_.Insert(entry);
  ledger_.Missed(*entry, values, reason);
  table_.Evict(options_.capacity, entry.get(), released,
               [&](const CacheEntry& victim) { ledger_.Evicted(victim); });
  ledger_.Live(table_.size());

  // Compile without the lock: hits and other keys' compiles go on meanwhile.
  lock.unlock();
  if (options_.before_compile) options_.before_compile(keys);
  const auto start = ir::Clock::now();
  absl::Status status = builder_.Trace(entry.get());
  const double trace_s = SecondsSince(start);
  bool compiled = false;
  std::shared_ptr<const CompiledGraph> code;
  if (status.ok() && !options_.tiered) {
    absl::StatusOr<std::shared_ptr<const CompiledGraph>> built = builder_.Build(*entry, &compiled);
    status = built.status();
    if (built.ok()) code = *std::move(built);
  }
  const double total_s = SecondsSince(start);
  lock.lock();

  absl::StatusOr<std::shared_ptr<const CacheEntry>> result = entry;
  if (status.ok()) {
    ledger_.Traced(*entry, trace_s, options_.tiered, reason);
    if (options_.tiered) {
      entry->state_ = CacheEntry::State::kInterpreted;
      tiers_.EnqueueLocked(entry);
    } else {
      tiers_.InstallLocked(entry.get(), std::move(code), compiled, total_s);
      entry->state_ = CacheEntry::State::kReady;
      ledger_.Built(*entry, compiled, total_s, reason);
    }
  } else {
    ledger_.Traced(*entry, trace_s, /*tiered=*/false, reason);
    // Not cached: a later call with this key tries again (and fails the same way).
    entry->state_ = CacheEntry::State::kFailed;
    entry->error_ = ledger_.Failed(*entry, status, total_s);
    table_.Remove(entry.get(), released);
    result = entry->error_;
  }
  compiled_.notify_all();
  return result;
}

absl::StatusOr<std::shared_ptr<const CacheEntry>> CompileCache::Serve(
    const Args& args, DimValues* values, std::shared_ptr<const CompiledGraph>* code,
    bool values_bound, uint32_t* code_version) {
  Served served;
  served.values_bound = values_bound;
  GJ_ASSIGN_OR_RETURN(std::shared_ptr<const CacheEntry> entry, AcquireImpl(args, values, &served));
  *code = std::move(served.code);
  if (code_version != nullptr) *code_version = served.code_version;
  if (served.stall == 0 && !served.interpreted) return entry;  // a plain hit: nothing to count
  std::lock_guard<std::mutex> lock(mu_);
  ledger_.Served(served.stall, served.interpreted);
  return entry;
}

bool CompileCache::ServeRepeat(const CacheEntry& entry, const DimValues& values) {
  GJ_CHECK(!signature_.pads()) << ledger_.prefix() << ": ServeRepeat on a padding policy";
  if (!entry.live_.load(std::memory_order_acquire)) return false;
  table_.Touch(entry);
  ledger_.Repeat(values);
  if (tiers_.CountCall(entry)) {
    // The queue wants the shared entry, which the table holds while the entry is live.
    std::lock_guard<std::mutex> lock(mu_);
    std::shared_ptr<CacheEntry> shared = table_.FindShared(entry.keys_);
    if (shared.get() == &entry) tiers_.ReoptimizeLocked(shared, values);
  }
  return true;
}

CacheStats CompileCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ledger_.stats();
}

int64_t CompileCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return table_.size();
}

}  // namespace graphjit::compiler::entries
