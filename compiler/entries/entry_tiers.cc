#include "compiler/entries/entry_tiers.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/entries/tier_trial.h"
#include "ir/check.h"
#include "ir/clock.h"

namespace graphjit::compiler::entries {

using ir::SecondsSince;

EntryTiers::EntryTiers(const JitOptions& options, const EntryBuilder& builder,
                       const EntryExecutor& executor, std::mutex& mu, CacheLedger& ledger,
                       std::function<void()> code_swapped)
    : options_(options),
      builder_(builder),
      executor_(executor),
      mu_(mu),
      ledger_(ledger),
      code_swapped_(std::move(code_swapped)) {
  if (options_.tiered || Reoptimizes()) {
    background_ = std::make_unique<BackgroundCompiler>(
        options_.tier_queue,
        [this](std::shared_ptr<CacheEntry> entry) { Compile(std::move(entry)); },
        [this](const CacheEntry& entry) { DroppedLocked(entry); });
  }
}

EntryTiers::~EntryTiers() = default;

void EntryTiers::InstallLocked(CacheEntry* entry, std::shared_ptr<const CompiledGraph> code,
                               bool compiled, double seconds) {
  if (entry->compiled_ != nullptr) return;
  ledger_.Installed(*code, compiled, seconds);
  entry->compiled_ = std::move(code);
  if (entry->state_ == CacheEntry::State::kInterpreted) entry->state_ = CacheEntry::State::kReady;
}

void EntryTiers::EnqueueLocked(const std::shared_ptr<CacheEntry>& entry) {
  GJ_CHECK(background_ != nullptr) << "a background compile without tiering or reoptimization";
  background_->Enqueue(entry);
}

void EntryTiers::ReoptimizeLocked(const std::shared_ptr<CacheEntry>& entry,
                                  const DimValues& values) {
  entry->trigger_values_ = values;
  EnqueueLocked(entry);
}

bool EntryTiers::Reoptimizes() const {
  return options_.reoptimize_after > 0 && options_.compile.codegen.tier == CodeTier::kBaseline;
}

bool EntryTiers::CountCall(const CacheEntry& entry) {
  if (!Reoptimizes() || entry.reoptimizing_.load(std::memory_order_relaxed)) return false;
  if (entry.baseline_calls_.fetch_add(1, std::memory_order_relaxed) + 1 <
      options_.reoptimize_after) {
    return false;
  }
  // Once per entry: the first caller to flip the flag queues it.
  return !entry.reoptimizing_.exchange(true, std::memory_order_relaxed);
}

void EntryTiers::DroppedLocked(const CacheEntry& entry) {
  if (entry.compiled_ != nullptr) {
    // A reoptimization dropped from the full queue: the entry may ask again.
    entry.baseline_calls_.store(0, std::memory_order_relaxed);
    entry.reoptimizing_.store(false, std::memory_order_relaxed);
  }
  ledger_.Dropped(entry);
}

void EntryTiers::Compile(std::shared_ptr<CacheEntry> entry) {
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
  std::lock_guard<std::mutex> lock(mu_);
  if (code.ok()) InstallLocked(entry.get(), *std::move(code), compiled, seconds);
  // On failure the interpreter goes on serving it (and the ledger logs why).
  ledger_.BackgroundCompiled(*entry, code.status(), seconds);
}

void EntryTiers::Reoptimize(std::shared_ptr<CacheEntry> entry) {
  const auto start = ir::Clock::now();
  bool compiled = false;
  absl::StatusOr<std::shared_ptr<const CompiledGraph>> code =
      builder_.BuildAt(*entry, CodeTier::kOptimized, &compiled);
  const double seconds = SecondsSince(start);
  std::shared_ptr<const CompiledGraph> baseline;
  DimValues values;
  {
    std::lock_guard<std::mutex> lock(mu_);
    baseline = entry->compiled_;
    values = entry->trigger_values_;
  }
  std::string measured;
  // Timed outside the lock: calls go on meanwhile (on the baseline code).
  const bool swap = code.ok() && MeasuredFaster(*entry, values, *baseline, **code, &measured);
  std::shared_ptr<const CompiledGraph> replaced;  // freed outside the lock
  {
    std::lock_guard<std::mutex> lock(mu_);
    ledger_.Reoptimized(*entry, code.status(), seconds, entry->baseline_calls_.load(), swap,
                        measured);
    if (!swap) return;  // the baseline code goes on serving it
    replaced = std::exchange(entry->compiled_, *std::move(code));
    entry->code_version_.fetch_add(1, std::memory_order_release);
  }
  code_swapped_();
}

bool EntryTiers::MeasuredFaster(const CacheEntry& entry, const DimValues& values,
                                const CompiledGraph& baseline, const CompiledGraph& o2,
                                std::string* why) {
  ir::Bindings dims = executor_.DimBindings(values);
  const ir::Bindings bindings = executor_.CallBindings(values, {});
  for (const auto& [name, value] : bindings) dims.emplace(name, value);
  absl::StatusOr<TierTimes> times = TimeTiers(baseline, o2, entry.traced_, dims, bindings);
  if (!times.ok()) {
    // Nothing to compare with: O2 code is the better bet.
    *why = absl::StrCat("not timed (", times.status().message(), ")");
    return true;
  }
  if (options_.measured_tiers) {
    options_.measured_tiers(&times->baseline_seconds, &times->o2_seconds);
  }
  *why = absl::StrFormat("o2 %.1f us vs baseline %.1f us per call", times->o2_seconds * 1e6,
                         times->baseline_seconds * 1e6);
  return times->o2_seconds < times->baseline_seconds;
}

}  // namespace graphjit::compiler::entries
