#include "compiler/entries/compile_cache.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/entries/entry_call.h"
#include "ir/clock.h"
#include "ir/status_macros.h"

namespace graphjit::compiler::cache {

using ir::SecondsSince;
using runtime::Tensor;
using runtime::TensorMap;

CompileCache::CompileCache(const TracedFunction& function, const JitOptions& options,
                           InputSignature signature)
    : function_(function),
      options_(options),
      signature_(std::move(signature)),
      prefix_(absl::StrCat(function.name, "/", PolicyName(options.policy))),
      builder_(function, options, signature_),
      executor_(function.weights, options, signature_),
      keys_(signature_),
      completes_bindings_(executor_.CompletesBindings()),
      calls_(std::make_unique<EntryCallPool>(this)) {
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    const DynamicDim& d = signature_.dynamic_dims()[k];
    if (d.named || d.padded()) counted_dims_.push_back(k);
  }
  if (options_.tiered || Reoptimizes()) {
    background_ = std::make_unique<BackgroundCompiler>(
        options_.tier_queue,
        [this](std::shared_ptr<CacheEntry> entry) { CompileInBackground(std::move(entry)); },
        [this](const CacheEntry& entry) { DroppedLocked(entry); });
  }
}

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
  InstallLocked(mutable_entry, std::move(built), compiled, SecondsSince(start));
  return entry;
}

absl::Status CompileCache::Reject(const Args& args) {
  std::string why = signature_.ExplainFailure(args);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.rejected;
  }
  if (options_.log.guards) LogLine("guards", absl::StrCat(Prefix(), ": rejected: ", why));
  return absl::InvalidArgumentError(absl::StrCat(Prefix(), ": ", why,
                                                 "; no entry can serve this call (traced for ",
                                                 signature_.ToString(), ")"));
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
  CountHitLocked(found, values, values);
  if (CountBaselineCall(found)) background_->Enqueue(*slot);
  *entry = *slot;
  if (served->want_code) served->code = found.compiled_;
  served->code_version = found.code_version();
  return true;
}

void CompileCache::CountHitLocked(const CacheEntry& entry, const DimKeys& keys,
                                  const DimValues& values) {
  ++stats_.calls;
  ++stats_.hits;
  CountElementsLocked(keys, values);
  table_.Touch(entry);
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
      CountHitLocked(*entry, keys, *values);
      if (entry->state_ == CacheEntry::State::kReady) {
        if (CountBaselineCall(*entry)) background_->Enqueue(found);
        result = std::move(found);
      } else if (entry->state_ == CacheEntry::State::kInterpreted) {
        // Asked for again: its background compile moves to the back of the queue.
        background_->Enqueue(found);
        result = std::move(found);
      } else {
        // Another caller is compiling this key: wait for it rather than compile twice.
        ++stats_.waits;
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
    const int64_t count = table_.DropSpecialized(k, dropped);
    if (options_.log.recompiles) {
      LogLine("recompiles",
              absl::StrCat(Prefix(), ": dim ", signature_.DimSource(k), " (",
                           signature_.dynamic_dims()[k].symbol, ") saw a second value (", values[k],
                           "): now symbolic; dropped ", count, " exact entries"));
    }
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

void CompileCache::EvictLocked(const CacheEntry* keep, EntryTable::Entries* evicted) {
  stats_.evictions += table_.Evict(options_.capacity, keep, evicted, [&](const CacheEntry& victim) {
    if (!options_.log.recompiles) return;
    LogLine("recompiles", absl::StrCat(Prefix(), ": evicted entry #", victim.id(), " (",
                                       keys_.ToText(victim.keys()),
                                       "), least recently used; capacity ", options_.capacity));
  });
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
  ++stats_.calls;
  CountElementsLocked(keys, values);
  EvictLocked(entry.get(), released);
  stats_.peak_entries = std::max<int64_t>(stats_.peak_entries, table_.size());
  if (options_.log.guards) {
    LogLine("guards", absl::StrCat(Prefix(), ": miss ", keys_.ToText(keys), ": ", reason));
    LogLine("guards",
            absl::StrCat(Prefix(), ": entry #", entry->id_, " guards: ", signature_.ToString(),
                         "; ", entry->guards_.ToString(signature_)));
  }

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

  stats_.trace_seconds += trace_s;
  absl::StatusOr<std::shared_ptr<const CacheEntry>> result;
  if (status.ok() && options_.tiered) {
    stats_.compile_seconds += trace_s;
    entry->state_ = CacheEntry::State::kInterpreted;
    background_->Enqueue(entry);
    if (options_.log.recompiles) {
      LogLine("recompiles",
              absl::StrFormat("%s: traced entry #%d for %s in %.3f s (miss: %s); interpreted "
                              "until its background compile is done",
                              Prefix(), entry->id_, keys_.ToText(keys), trace_s, reason));
    }
    result = entry;
  } else if (status.ok()) {
    InstallLocked(entry.get(), std::move(code), compiled, total_s);
    entry->state_ = CacheEntry::State::kReady;
    if (options_.log.recompiles) {
      LogLine("recompiles", absl::StrFormat("%s: %s entry #%d for %s in %.3f s (miss: %s; code %s)",
                                            Prefix(), compiled ? "compiled" : "shared code for",
                                            entry->id_, keys_.ToText(keys), total_s, reason,
                                            entry->content_key_.ToHex().substr(0, 12)));
    }
    result = entry;
  } else {
    ++stats_.compiles;
    stats_.compile_seconds += total_s;
    // Not cached: a later call with this key tries again (and fails the same way).
    entry->state_ = CacheEntry::State::kFailed;
    entry->error_ = absl::Status(
        status.code(),
        absl::StrCat(Prefix(), ": compiling ", keys_.ToText(keys), ": ", status.message()));
    ++stats_.failed_compiles;
    table_.Remove(entry.get(), released);
    if (options_.log.recompiles) LogLine("recompiles", entry->error_.message());
    result = entry->error_;
  }
  compiled_.notify_all();
  return result;
}

void CompileCache::InstallLocked(CacheEntry* entry, std::shared_ptr<const CompiledGraph> code,
                                 bool compiled, double seconds) {
  if (entry->compiled_ != nullptr) return;  // Acquire and the background both compiled it
  ++(compiled ? stats_.compiles : stats_.shared);
  stats_.compile_seconds += seconds;
  if (compiled) {
    stats_.phases += code->timings();
    const KernelSetStats& k = code->kernels().stats();
    stats_.kernels_compiled += k.compiled;
    stats_.kernels_reused += k.reused;
    stats_.kernels_loaded += k.loaded;
  }
  entry->compiled_ = std::move(code);
  if (entry->state_ == CacheEntry::State::kInterpreted) entry->state_ = CacheEntry::State::kReady;
}

bool CompileCache::Reoptimizes() const {
  return options_.reoptimize_after > 0 && options_.compile.codegen.tier == CodeTier::kBaseline;
}

bool CompileCache::CountBaselineCall(const CacheEntry& entry) {
  if (!Reoptimizes() || entry.reoptimizing_.load(std::memory_order_relaxed)) return false;
  if (entry.baseline_calls_.fetch_add(1, std::memory_order_relaxed) + 1 <
      options_.reoptimize_after) {
    return false;
  }
  // Once per entry: the first caller to flip the flag queues it.
  return !entry.reoptimizing_.exchange(true, std::memory_order_relaxed);
}

void CompileCache::DroppedLocked(const CacheEntry& entry) {
  if (entry.compiled_ != nullptr) {
    // A reoptimization dropped from the full queue: the entry may ask again.
    entry.baseline_calls_.store(0, std::memory_order_relaxed);
    entry.reoptimizing_.store(false, std::memory_order_relaxed);
  }
  ++stats_.dropped_compiles;
  if (options_.log.recompiles) {
    LogLine("recompiles",
            absl::StrCat(Prefix(), ": dropped the background compile of entry #", entry.id(), " (",
                         keys_.ToText(entry.keys()), "): asked for least recently, queue full"));
  }
}

void CompileCache::CompileInBackground(std::shared_ptr<CacheEntry> entry) {
  bool reoptimize = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (entry->compiled_ != nullptr) {
      // Code installed: queued again for its O2 compile, or nothing left to do.
      reoptimize = entry->reoptimizing_.load(std::memory_order_relaxed);
      if (!reoptimize) return;
    }
  }
  if (reoptimize) return Reoptimize(std::move(entry));
  const auto start = ir::Clock::now();
  bool compiled = false;
  absl::StatusOr<std::shared_ptr<const CompiledGraph>> code = builder_.Build(*entry, &compiled);
  const double seconds = SecondsSince(start);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.background_compiles;
    if (!code.ok()) {
      // The interpreter goes on serving it; a traced graph that does not compile is a bug.
      ++stats_.failed_compiles;
      LogLine("recompiles", absl::StrCat(Prefix(), ": background compile of entry #", entry->id_,
                                         " failed: ", code.status().message()));
      return;
    }
    InstallLocked(entry.get(), *std::move(code), compiled, seconds);
    if (options_.log.recompiles) {
      LogLine("recompiles",
              absl::StrFormat("%s: installed compiled code for entry #%d (%s) after %.3f s in "
                              "the background",
                              Prefix(), entry->id_, keys_.ToText(entry->keys_), seconds));
    }
  }
  // `entry` (and maybe its code) is released here, outside the lock.
}

void CompileCache::Reoptimize(std::shared_ptr<CacheEntry> entry) {
  const auto start = ir::Clock::now();
  bool compiled = false;
  absl::StatusOr<std::shared_ptr<const CompiledGraph>> code =
      builder_.BuildAt(*entry, CodeTier::kOptimized, &compiled);
  const double seconds = SecondsSince(start);
  std::shared_ptr<const CompiledGraph> replaced;  // freed outside the lock
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!code.ok()) {
      // The baseline code goes on serving it.
      ++stats_.failed_compiles;
      LogLine("recompiles", absl::StrCat(Prefix(), ": reoptimizing entry #", entry->id_,
                                         " failed: ", code.status().message()));
      return;
    }
    ++stats_.reoptimized;
    stats_.reoptimize_seconds += seconds;
    replaced = std::exchange(entry->compiled_, *std::move(code));
    entry->code_version_.fetch_add(1, std::memory_order_release);
    if (options_.log.recompiles) {
      LogLine("recompiles",
              absl::StrFormat("%s: entry #%d (%s) reoptimized: O2 code installed after %lld "
                              "baseline calls and %.3f s in the background",
                              Prefix(), entry->id_, keys_.ToText(entry->keys_),
                              static_cast<long long>(entry->baseline_calls_.load()), seconds));
    }
  }
  calls_->ReleaseStale();  // idle frames of the baseline code let it go
}

void CompileCache::CountElementsLocked(const DimKeys& keys, const DimValues& values) {
  for (int k : counted_dims_) {
    stats_.real_elements += values[k];
    stats_.padded_elements += RunLength(keys[k], values[k]);
  }
}

ir::Bindings CompileCache::CallBindings(const DimValues& values,
                                        const ir::Bindings& bindings) const {
  return executor_.CallBindings(values, bindings);
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
  stats_.max_stall_seconds = std::max(stats_.max_stall_seconds, served.stall);
  if (served.interpreted) ++stats_.interpreted;
  return entry;
}

absl::StatusOr<std::vector<Tensor>> CompileCache::RunServed(const CacheEntry& entry,
                                                            const CompiledGraph* code,
                                                            const TensorMap& inputs,
                                                            const DimValues& values,
                                                            const ir::Bindings& bindings) const {
  return executor_.Run(entry, code, inputs, values, bindings);
}

bool CompileCache::ServeRepeat(const CacheEntry& entry, const DimValues& values) {
  GJ_CHECK(!signature_.pads()) << Prefix() << ": ServeRepeat on a padding policy";
  if (!entry.live_.load(std::memory_order_acquire)) return false;
  table_.Touch(entry);
  repeat_hits_.fetch_add(1, std::memory_order_relaxed);
  if (CountBaselineCall(entry)) {
    // The queue wants the shared entry, which the table holds while the entry is live.
    std::lock_guard<std::mutex> lock(mu_);
    std::shared_ptr<CacheEntry> shared = table_.FindShared(entry.keys_);
    if (shared.get() == &entry) background_->Enqueue(shared);
  }
  // CountElementsLocked's sums: unpadded, a named dim runs at its real length.
  int64_t elements = 0;
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    if (signature_.dynamic_dims()[k].named) elements += values[k];
  }
  if (elements != 0) repeat_elements_.fetch_add(elements, std::memory_order_relaxed);
  return true;
}

CacheStats CompileCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  CacheStats stats = stats_;
  const int64_t repeats = repeat_hits_.load(std::memory_order_relaxed);
  const int64_t elements = repeat_elements_.load(std::memory_order_relaxed);
  stats.calls += repeats;
  stats.hits += repeats;
  stats.real_elements += elements;
  stats.padded_elements += elements;
  return stats;
}

int64_t CompileCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return table_.size();
}

}  // namespace graphjit::compiler::cache
