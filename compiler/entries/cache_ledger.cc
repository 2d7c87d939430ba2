#include "compiler/entries/cache_ledger.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace graphjit::compiler::entries {

CacheLedger::CacheLedger(std::string prefix, const JitOptions& options,
                         const InputSignature& signature, const EntryKeys& keys)
    : prefix_(std::move(prefix)),
      log_(options.log),
      capacity_(options.capacity),
      signature_(signature),
      keys_(keys) {
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    const DynamicDim& d = signature_.dynamic_dims()[k];
    if (d.named || d.padded()) counted_dims_.push_back(k);
  }
}

void CacheLedger::CountElements(const DimKeys& keys, const DimValues& values) {
  for (int k : counted_dims_) {
    stats_.real_elements += values[k];
    stats_.padded_elements += RunLength(keys[k], values[k]);
  }
}

void CacheLedger::Hit(const DimKeys& keys, const DimValues& values) {
  ++stats_.calls;
  ++stats_.hits;
  CountElements(keys, values);
}

void CacheLedger::Repeat(const DimValues& values) {
  repeat_hits_.fetch_add(1, std::memory_order_relaxed);
  // CountElements's sums: unpadded, a named dim runs at its real length.
  int64_t elements = 0;
  for (int k : counted_dims_) elements += values[k];
  if (elements != 0) repeat_elements_.fetch_add(elements, std::memory_order_relaxed);
}

void CacheLedger::Served(double stall, bool interpreted) {
  stats_.max_stall_seconds = std::max(stats_.max_stall_seconds, stall);
  if (interpreted) ++stats_.interpreted;
}

absl::Status CacheLedger::Rejected(const std::string& why) {
  ++stats_.rejected;
  if (log_.guards) LogLine("guards", absl::StrCat(prefix_, ": rejected: ", why));
  return absl::InvalidArgumentError(absl::StrCat(prefix_, ": ", why,
                                                 "; no entry can serve this call (traced for ",
                                                 signature_.ToString(), ")"));
}

void CacheLedger::Missed(const CacheEntry& entry, const DimValues& values,
                         const std::string& reason) {
  ++stats_.calls;
  CountElements(entry.keys(), values);
  if (!log_.guards) return;
  LogLine("guards", absl::StrCat(prefix_, ": miss ", keys_.ToText(entry.keys()), ": ", reason));
  LogLine("guards", absl::StrCat(prefix_, ": entry #", entry.id(), " guards: ",
                                 signature_.ToString(), "; ", entry.guards().ToString(signature_)));
}

void CacheLedger::Live(int64_t live) { stats_.peak_entries = std::max(stats_.peak_entries, live); }

void CacheLedger::TurnedDynamic(int k, int64_t value, int64_t dropped) {
  if (!log_.recompiles) return;
  LogLine("recompiles",
          absl::StrCat(prefix_, ": dim ", signature_.DimSource(k), " (",
                       signature_.dynamic_dims()[k].symbol, ") saw a second value (", value,
                       "): now symbolic; dropped ", dropped, " exact entries"));
}

void CacheLedger::Evicted(const CacheEntry& victim) {
  ++stats_.evictions;
  if (!log_.recompiles) return;
  LogLine("recompiles",
          absl::StrCat(prefix_, ": evicted entry #", victim.id(), " (", keys_.ToText(victim.keys()),
                       "), least recently used; capacity ", capacity_));
}

void CacheLedger::Traced(const CacheEntry& entry, double trace_seconds, bool tiered,
                         const std::string& reason) {
  stats_.trace_seconds += trace_seconds;
  if (!tiered) return;
  stats_.compile_seconds += trace_seconds;
  if (!log_.recompiles) return;
  LogLine("recompiles",
          absl::StrFormat("%s: traced entry #%d for %s in %.3f s (miss: %s); interpreted "
                          "until its background compile is done",
                          prefix_, entry.id(), keys_.ToText(entry.keys()), trace_seconds, reason));
}

void CacheLedger::Installed(const CompiledGraph& code, bool compiled, double seconds) {
  ++(compiled ? stats_.compiles : stats_.shared);
  stats_.compile_seconds += seconds;
  if (!compiled) return;
  stats_.phases += code.timings();
  const KernelSetStats& k = code.kernels().stats();
  stats_.kernels_compiled += k.compiled;
  stats_.kernels_reused += k.reused;
  stats_.kernels_loaded += k.loaded;
}

void CacheLedger::Built(const CacheEntry& entry, bool compiled, double seconds,
                        const std::string& reason) {
  if (!log_.recompiles) return;
  LogLine("recompiles", absl::StrFormat("%s: %s entry #%d for %s in %.3f s (miss: %s; code %s)",
                                        prefix_, compiled ? "compiled" : "shared code for",
                                        entry.id(), keys_.ToText(entry.keys()), seconds, reason,
                                        entry.content_key().ToHex().substr(0, 12)));
}

absl::Status CacheLedger::Failed(const CacheEntry& entry, const absl::Status& status,
                                 double seconds) {
  ++stats_.compiles;
  ++stats_.failed_compiles;
  stats_.compile_seconds += seconds;
  absl::Status error(
      status.code(),
      absl::StrCat(prefix_, ": compiling ", keys_.ToText(entry.keys()), ": ", status.message()));
  if (log_.recompiles) LogLine("recompiles", error.message());
  return error;
}

void CacheLedger::BackgroundCompiled(const CacheEntry& entry, const absl::Status& status,
                                     double seconds) {
  ++stats_.background_compiles;
  if (!status.ok()) {
    // The interpreter goes on serving it; a traced graph that does not compile is a bug,
    // logged whatever the flags say.
    ++stats_.failed_compiles;
    LogLine("recompiles", absl::StrCat(prefix_, ": background compile of entry #", entry.id(),
                                       " failed: ", status.message()));
    return;
  }
  if (!log_.recompiles) return;
  LogLine("recompiles",
          absl::StrFormat("%s: installed compiled code for entry #%d (%s) after %.3f s in the "
                          "background",
                          prefix_, entry.id(), keys_.ToText(entry.keys()), seconds));
}

void CacheLedger::Dropped(const CacheEntry& entry) {
  ++stats_.dropped_compiles;
  if (!log_.recompiles) return;
  LogLine("recompiles",
          absl::StrCat(prefix_, ": dropped the background compile of entry #", entry.id(), " (",
                       keys_.ToText(entry.keys()), "): asked for least recently, queue full"));
}

void CacheLedger::Reoptimized(const CacheEntry& entry, const absl::Status& status, double seconds,
                              int64_t baseline_calls, bool swapped, const std::string& measured) {
  if (!status.ok()) {
    // The baseline code goes on serving it.
    ++stats_.failed_compiles;
    LogLine("recompiles", absl::StrCat(prefix_, ": reoptimizing entry #", entry.id(),
                                       " failed: ", status.message()));
    return;
  }
  stats_.reoptimize_seconds += seconds;
  ++(swapped ? stats_.reoptimized : stats_.reoptimize_kept);
  if (!log_.recompiles) return;
  LogLine("recompiles",
          absl::StrFormat("%s: entry #%d (%s) reoptimized after %lld baseline calls and %.3f s "
                          "in the background: %s, %s",
                          prefix_, entry.id(), keys_.ToText(entry.keys()),
                          static_cast<long long>(baseline_calls), seconds, measured,
                          swapped ? "O2 code installed" : "baseline code kept"));
}

CacheStats CacheLedger::stats() const {
  CacheStats stats = stats_;
  const int64_t repeats = repeat_hits_.load(std::memory_order_relaxed);
  const int64_t elements = repeat_elements_.load(std::memory_order_relaxed);
  stats.calls += repeats;
  stats.hits += repeats;
  stats.real_elements += elements;
  stats.padded_elements += elements;
  return stats;
}

}  // namespace graphjit::compiler::entries
