#include "compiler/entries/compile_cache.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/compiled/graph_key.h"
#include "compiler/entries/padding.h"
#include "frontend/trace_context.h"
#include "ir/clock.h"
#include "ir/status_macros.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler::cache {
namespace {

using runtime::Tensor;
using runtime::TensorMap;

using ir::SecondsSince;

bool HasDynamicDim(const std::vector<DimGuard>& dims) {
  return std::any_of(dims.begin(), dims.end(), [](const DimGuard& d) { return d.dynamic >= 0; });
}

absl::StatusOr<ir::Graph> Trace(const TracedFunction& fn, const frontend::InputTypes& types) {
  frontend::TraceContext ctx(fn.name, types, fn.weights);
  std::vector<frontend::Value> outputs = fn.body(ctx);
  return std::move(ctx).Finish(outputs);
}

// Each output's dims as constants or padded dynamic dims, from a trace with the padded
// dims symbolic, so padded outputs can be cut back.
absl::StatusOr<std::vector<std::vector<DimGuard>>> OutputDims(const ir::Graph& graph,
                                                              const InputSignature& sig) {
  std::vector<std::vector<DimGuard>> outputs;
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const ir::Shape& shape = graph.type(graph.outputs()[i]).shape;
    std::vector<DimGuard> dims;
    for (size_t a = 0; a < shape.size(); ++a) {
      DimGuard d;
      std::string symbol;
      if (std::optional<int64_t> c = shape[a].AsConstant()) {
        d.constant = *c;
      } else if (shape[a].IsSymbol(&symbol)) {
        for (int k = 0; k < sig.num_dynamic(); ++k) {
          if (sig.dynamic_dims()[k].padded() && sig.dynamic_dims()[k].symbol == symbol) {
            d.dynamic = k;
          }
        }
      }
      if (!shape[a].IsConstant() && d.dynamic < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("output ", i, " dim ", a, " is `", shape[a].ToString(),
                         "`: a padded output can only be cut back along a bare padded dim"));
      }
      dims.push_back(d);
    }
    outputs.push_back(std::move(dims));
  }
  return outputs;
}

}  // namespace

CompileCache::CompileCache(const TracedFunction& function, const JitOptions& options,
                           InputSignature signature)
    : function_(function),
      options_(options),
      signature_(std::move(signature)),
      prefix_(absl::StrCat(function.name, "/", PolicyName(options.policy))),
      store_(*options.store),
      auto_state_(signature_.num_dynamic()) {
  for (const InputGuard& g : signature_.inputs()) {
    name_hashes_.push_back(TensorMap::hasher{}(g.name));
  }
}

CompileCache::~CompileCache() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  queued_.notify_all();
  if (worker_.joinable()) worker_.join();
}

std::string CompileCache::KeysText(const DimKeys& keys) const {
  // Dims that are named, symbolic or padded are the interesting ones; when there are
  // none (exact keys of unnamed dims) every dim shows.
  std::vector<std::string> shown, all;
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    const DynamicDim& d = signature_.dynamic_dims()[k];
    std::string text = KeyToString(d.symbol, keys[k]);
    if (d.named || d.padded() || IsSymbolicKey(keys[k])) shown.push_back(text);
    all.push_back(std::move(text));
  }
  if (shown.empty()) shown = std::move(all);
  return shown.empty() ? "(no dims)" : absl::StrJoin(shown, ",");
}

bool CompileCache::Matches(const TensorMap& inputs, Args* args) const {
  if (inputs.size() != name_hashes_.size()) return false;
  Resolve(inputs, args);
  for (size_t i = 0; i < name_hashes_.size(); ++i) {
    const InputGuard& g = signature_.inputs()[i];
    const runtime::Tensor* t = (*args)[i];
    if (t == nullptr || t->dtype() != g.dtype || t->shape().size() != g.dims.size()) return false;
  }
  return true;
}

void CompileCache::Resolve(const TensorMap& inputs, Args* args) const {
  args->clear();
  for (size_t i = 0; i < name_hashes_.size(); ++i) {
    // raw_hash_set's find(key, hash): the lookup with a precomputed hash.
    auto it = inputs.find(signature_.inputs()[i].name, name_hashes_[i]);
    args->push_back(it == inputs.end() ? nullptr : &it->second);
  }
}

absl::StatusOr<std::shared_ptr<const CacheEntry>> CompileCache::Acquire(const Args& args) {
  DimValues values;
  std::shared_ptr<const CompiledGraph> code;
  absl::StatusOr<std::shared_ptr<const CacheEntry>> entry = AcquireImpl(args, &values, &code);
  if (!entry.ok() || code != nullptr) return entry;
  // A tiered entry still interpreted: callers of Acquire want its code, so compile it
  // here (the code store makes a concurrent background compile of it the same compile).
  auto* mutable_entry = const_cast<CacheEntry*>(entry->get());
  const auto start = ir::Clock::now();
  bool compiled = false;
  GJ_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledGraph> built,
                      CompileTraced(mutable_entry, &compiled));
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

absl::StatusOr<std::shared_ptr<const CacheEntry>> CompileCache::AcquireImpl(
    const Args& args, DimValues* values, std::shared_ptr<const CompiledGraph>* code, double* stall,
    bool values_bound) {
  if (!values_bound && !signature_.Bind(args, values)) return Reject(args);
  // Entries dropped or evicted here are destroyed after the lock is released (freeing
  // code takes the JIT's own locks).
  std::vector<std::shared_ptr<CacheEntry>> released;
  absl::StatusOr<std::shared_ptr<const CacheEntry>> result;
  {
    std::unique_lock<std::mutex> lock(mu_);
    const DimKeys keys = KeysLocked(*values, &released);
    auto it = entries_.find(keys);
    if (it == entries_.end()) {
      const auto start = ir::Clock::now();
      result = CompileLocked(lock, keys, *values, &released);
      if (stall != nullptr) *stall = SecondsSince(start);
    } else {
      CacheEntry* entry = it->second.get();
      ++stats_.calls;
      ++stats_.hits;
      CountElementsLocked(keys, *values);
      entry->last_use_ = ++tick_;
      if (entry->state_ == CacheEntry::State::kReady) {
        result = it->second;
      } else if (entry->state_ == CacheEntry::State::kInterpreted) {
        // Asked for again: its background compile moves to the back of the queue.
        EnqueueLocked(it->second);
        result = it->second;
      } else {
        // Another caller is compiling this key: wait for it rather than compile twice.
        std::shared_ptr<CacheEntry> held = it->second;
        ++stats_.waits;
        const auto start = ir::Clock::now();
        compiled_.wait(lock, [&] { return held->state_ != CacheEntry::State::kCompiling; });
        if (stall != nullptr) *stall = SecondsSince(start);
        if (held->state_ == CacheEntry::State::kFailed) {
          result = held->error_;
        } else {
          result = std::move(held);
        }
      }
      GJ_CHECK(!result.ok() || entry->guards_.Check(*values))
          << "key " << KeysText(keys) << " maps to an entry whose guards fail";
    }
    if (result.ok()) *code = (*result)->compiled_;
  }
  return result;
}

DimKeys CompileCache::PeekKeysLocked(const DimValues& values) const {
  DimKeys keys(signature_.num_dynamic());
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    const DynamicDim& d = signature_.dynamic_dims()[k];
    if (d.policy == ShapePolicy::kAuto) {
      AutoDimState state = auto_state_[k];  // a copy: peeking must not change history
      keys[k] = state.Observe(values[k]);
    } else {
      keys[k] = KeyFor(d.policy, values[k]);
    }
  }
  DuckSize(values, &keys);
  return keys;
}

void CompileCache::DuckSize(const DimValues& values, DimKeys* keys) const {
  // An unnamed symbolic dim shares the symbol of the first unnamed symbolic dim of equal
  // value (so `x + y` over two growing dims traces), named dims keep their own; the entry
  // then guards the equality.
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    if ((*keys)[k] != kSymbolicDim) continue;
    int rep = k;
    if (!signature_.dynamic_dims()[k].named) {
      for (int j = 0; j < k; ++j) {
        if (IsSymbolicKey((*keys)[j]) && !signature_.dynamic_dims()[j].named &&
            values[j] == values[k]) {
          rep = SymbolicRep((*keys)[j]);
          break;
        }
      }
    }
    (*keys)[k] = SymbolicKey(rep);
  }
}

DimKeys CompileCache::KeysLocked(const DimValues& values,
                                 std::vector<std::shared_ptr<CacheEntry>>* dropped) {
  DimKeys keys(signature_.num_dynamic());
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    const DynamicDim& d = signature_.dynamic_dims()[k];
    if (d.policy != ShapePolicy::kAuto) {
      keys[k] = KeyFor(d.policy, values[k]);
      continue;
    }
    const bool was_dynamic = auto_state_[k].dynamic();
    keys[k] = auto_state_[k].Observe(values[k]);
    if (was_dynamic || !auto_state_[k].dynamic()) continue;
    // The dim just turned dynamic: entries specialized to its first value (other than
    // the 0/1 specializations) can no longer be reached.
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
    if (options_.log.recompiles) {
      LogLine("recompiles", absl::StrCat(Prefix(), ": dim ", signature_.DimSource(k), " (",
                                         d.symbol, ") saw a second value (", values[k],
                                         "): now symbolic; dropped ", count, " exact entries"));
    }
  }
  DuckSize(values, &keys);
  return keys;
}

std::string CompileCache::ExplainMissLocked(const DimValues& values) const {
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
  return absl::StrCat(nearest->guards_.ExplainFailure(signature_, values), " (entry #",
                      nearest->id_, ", nearest of ", entries_.size(), ")");
}

std::string CompileCache::ExplainMiss(const Args& args) const {
  DimValues values;
  if (!signature_.Bind(args, &values)) return signature_.ExplainFailure(args);
  std::lock_guard<std::mutex> lock(mu_);
  if (entries_.contains(PeekKeysLocked(values))) return "";
  return ExplainMissLocked(values);
}

void CompileCache::EvictLocked(const CacheEntry* keep,
                               std::vector<std::shared_ptr<CacheEntry>>* evicted) {
  if (options_.capacity <= 0) return;
  while (static_cast<int64_t>(entries_.size()) > options_.capacity) {
    // Entries still compiling are not candidates: their callers are waiting for them.
    const CacheEntry* victim = nullptr;
    for (const auto& [keys, entry] : entries_) {
      if (entry.get() == keep || entry->state_ == CacheEntry::State::kCompiling) continue;
      if (victim == nullptr || entry->last_use_ < victim->last_use_) victim = entry.get();
    }
    if (victim == nullptr) return;  // all compiling: over the bound until they finish
    if (options_.log.recompiles) {
      LogLine("recompiles", absl::StrCat(Prefix(), ": evicted entry #", victim->id_, " (",
                                         KeysText(victim->keys_),
                                         "), least recently used; capacity ", options_.capacity));
    }
    auto it = entries_.find(victim->keys_);
    it->second->live_ = false;
    evicted->push_back(std::move(it->second));
    entries_.erase(it);
    ++stats_.evictions;
  }
}

absl::StatusOr<std::shared_ptr<const CacheEntry>> CompileCache::CompileLocked(
    std::unique_lock<std::mutex>& lock, const DimKeys& keys, const DimValues& values,
    std::vector<std::shared_ptr<CacheEntry>>* released) {
  const std::string reason = ExplainMissLocked(values);
  auto entry = std::make_shared<CacheEntry>();
  entry->id_ = next_id_++;
  entry->keys_ = keys;
  entry->guards_ = EntryGuards(signature_, keys);
  entry->padded_ = signature_.pads();
  entry->last_use_ = ++tick_;
  entries_[keys] = entry;
  ++stats_.calls;
  CountElementsLocked(keys, values);
  EvictLocked(entry.get(), released);
  stats_.peak_entries = std::max<int64_t>(stats_.peak_entries, entries_.size());
  if (options_.log.guards) {
    LogLine("guards", absl::StrCat(Prefix(), ": miss ", KeysText(keys), ": ", reason));
    LogLine("guards",
            absl::StrCat(Prefix(), ": entry #", entry->id_, " guards: ", signature_.ToString(),
                         "; ", entry->guards_.ToString(signature_)));
  }

  // Compile without the lock: hits and other keys' compiles go on meanwhile.
  lock.unlock();
  if (options_.before_compile) options_.before_compile(keys);
  const auto start = ir::Clock::now();
  absl::Status status = TraceEntry(entry.get());
  const double trace_s = SecondsSince(start);
  bool compiled = false;
  std::shared_ptr<const CompiledGraph> code;
  if (status.ok() && !options_.tiered) {
    absl::StatusOr<std::shared_ptr<const CompiledGraph>> built =
        CompileTraced(entry.get(), &compiled);
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
    EnqueueLocked(entry);
    if (options_.log.recompiles) {
      LogLine("recompiles",
              absl::StrFormat("%s: traced entry #%d for %s in %.3f s (miss: %s); interpreted "
                              "until its background compile is done",
                              Prefix(), entry->id_, KeysText(keys), trace_s, reason));
    }
    result = entry;
  } else if (status.ok()) {
    InstallLocked(entry.get(), std::move(code), compiled, total_s);
    entry->state_ = CacheEntry::State::kReady;
    if (options_.log.recompiles) {
      LogLine("recompiles",
              absl::StrFormat("%s: %s entry #%d for %s in %.3f s (miss: %s; code %s)", Prefix(),
                              compiled ? "compiled" : "shared code for", entry->id_, KeysText(keys),
                              total_s, reason, entry->content_key_.ToHex().substr(0, 12)));
    }
    result = entry;
  } else {
    ++stats_.compiles;
    stats_.compile_seconds += total_s;
    // Not cached: a later call with this key tries again (and fails the same way).
    entry->state_ = CacheEntry::State::kFailed;
    entry->error_ = absl::Status(
        status.code(),
        absl::StrCat(Prefix(), ": compiling ", KeysText(keys), ": ", status.message()));
    ++stats_.failed_compiles;
    auto it = entries_.find(keys);
    if (it != entries_.end() && it->second == entry) {
      entry->live_ = false;
      released->push_back(std::move(it->second));
      entries_.erase(it);
    }
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

void CompileCache::EnqueueLocked(const std::shared_ptr<CacheEntry>& entry) {
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->lock() == entry) {
      queue_.erase(it);
      break;
    }
  }
  while (static_cast<int>(queue_.size()) >= std::max(1, options_.tier_queue)) {
    std::shared_ptr<CacheEntry> dropped = queue_.front().lock();
    queue_.pop_front();
    if (dropped == nullptr) continue;
    ++stats_.dropped_compiles;
    if (options_.log.recompiles) {
      LogLine("recompiles", absl::StrCat(Prefix(), ": dropped the background compile of entry #",
                                         dropped->id_, " (", KeysText(dropped->keys_),
                                         "): asked for least recently, queue full"));
    }
  }
  queue_.push_back(entry);
  if (!worker_.joinable()) worker_ = std::thread([this] { BackgroundLoop(); });
  queued_.notify_one();
}

void CompileCache::BackgroundLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    queued_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    std::shared_ptr<CacheEntry> entry = queue_.front().lock();
    queue_.pop_front();
    if (entry == nullptr || entry->compiled_ != nullptr) continue;
    lock.unlock();
    const auto start = ir::Clock::now();
    bool compiled = false;
    absl::StatusOr<std::shared_ptr<const CompiledGraph>> code =
        CompileTraced(entry.get(), &compiled);
    const double seconds = SecondsSince(start);
    lock.lock();
    ++stats_.background_compiles;
    if (!code.ok()) {
      // The interpreter goes on serving it; a traced graph that does not compile is a bug.
      ++stats_.failed_compiles;
      LogLine("recompiles", absl::StrCat(Prefix(), ": background compile of entry #", entry->id_,
                                         " failed: ", code.status().message()));
      continue;
    }
    InstallLocked(entry.get(), *std::move(code), compiled, seconds);
    if (options_.log.recompiles) {
      LogLine("recompiles", absl::StrFormat("%s: installed compiled code for entry #%d (%s) "
                                            "after %.3f s in the background",
                                            Prefix(), entry->id_, KeysText(entry->keys_), seconds));
    }
    // Release the entry (and maybe its code) outside the lock.
    lock.unlock();
    entry.reset();
    lock.lock();
  }
}

absl::Status CompileCache::TraceEntry(CacheEntry* entry) const {
  const bool padded = signature_.pads();
  GJ_ASSIGN_OR_RETURN(ir::Graph graph,
                      Trace(function_, signature_.TraceTypes(entry->keys_, padded)));
  if (padded) {
    // Which output dims follow the padded dims: a trace with those left symbolic.
    GJ_ASSIGN_OR_RETURN(
        ir::Graph symbolic,
        Trace(function_, signature_.TraceTypes(entry->keys_, true, /*symbolic_padded=*/true)));
    GJ_ASSIGN_OR_RETURN(entry->output_dims_, OutputDims(symbolic, signature_));
  }
  entry->content_key_ = GraphContentKey(graph, function_.weights, options_.compile);
  entry->traced_ = std::move(graph);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const CompiledGraph>> CompileCache::CompileTraced(
    CacheEntry* entry, bool* compiled) const {
  return store_.GetOrCompile(
      entry->content_key_,
      [&] { return CompiledGraph::Compile(entry->traced_, function_.weights, options_.compile); },
      compiled);
}

void CompileCache::CountElementsLocked(const DimKeys& keys, const DimValues& values) {
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    const DynamicDim& d = signature_.dynamic_dims()[k];
    if (!d.named && !d.padded()) continue;
    stats_.real_elements += values[k];
    stats_.padded_elements += RunLength(keys[k], values[k]);
  }
}

ir::Bindings CompileCache::CallBindings(const DimValues& values,
                                        const ir::Bindings& bindings) const {
  ir::Bindings b = bindings;
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    const DynamicDim& d = signature_.dynamic_dims()[k];
    if (d.named) b[d.symbol] = values[k];
  }
  return options_.complete_bindings ? options_.complete_bindings(std::move(b)) : b;
}

bool CompileCache::CompletesBindings() const {
  if (options_.complete_bindings) return true;
  for (const DynamicDim& d : signature_.dynamic_dims()) {
    if (d.named) return true;
  }
  return false;
}

absl::StatusOr<std::shared_ptr<const CacheEntry>> CompileCache::Serve(
    const Args& args, DimValues* values, std::shared_ptr<const CompiledGraph>* code,
    bool values_bound) {
  double stall = 0;
  GJ_ASSIGN_OR_RETURN(std::shared_ptr<const CacheEntry> entry,
                      AcquireImpl(args, values, code, &stall, values_bound));
  if (stall == 0 && *code != nullptr) return entry;  // a plain hit: nothing to count
  std::lock_guard<std::mutex> lock(mu_);
  stats_.max_stall_seconds = std::max(stats_.max_stall_seconds, stall);
  if (*code == nullptr) ++stats_.interpreted;
  return entry;
}

absl::StatusOr<std::vector<Tensor>> CompileCache::RunServed(const CacheEntry& entry,
                                                            const CompiledGraph* code,
                                                            const TensorMap& inputs,
                                                            const DimValues& values,
                                                            const ir::Bindings& bindings) const {
  ir::Bindings b = CallBindings(values, bindings);
  if (entry.padded()) return RunPadded(entry, code, inputs, values, std::move(b));
  return RunTier(entry, code, inputs, b);
}

absl::StatusOr<std::vector<Tensor>> CompileCache::Run(const TensorMap& inputs, const Args& args,
                                                      const ir::Bindings& bindings) {
  DimValues values;
  std::shared_ptr<const CompiledGraph> code;
  GJ_ASSIGN_OR_RETURN(std::shared_ptr<const CacheEntry> entry, Serve(args, &values, &code));
  return RunServed(*entry, code.get(), inputs, values, bindings);
}

absl::StatusOr<std::vector<Tensor>> CompileCache::RunTier(const CacheEntry& entry,
                                                          const CompiledGraph* code,
                                                          const TensorMap& inputs,
                                                          const ir::Bindings& bindings) const {
  if (code != nullptr) return code->Run(inputs, bindings);
  return runtime::Interpret(entry.traced(), inputs, function_.weights, bindings);
}

absl::StatusOr<std::vector<Tensor>> CompileCache::RunPadded(const CacheEntry& entry,
                                                            const CompiledGraph* code,
                                                            const TensorMap& inputs,
                                                            const DimValues& real,
                                                            ir::Bindings bindings) const {
  DimValues lengths(signature_.num_dynamic());
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    lengths[k] = RunLength(entry.keys()[k], real[k]);
    // Call symbols (P) were completed from the real length; the graph's dims are padded.
    if (signature_.dynamic_dims()[k].named)
      bindings[signature_.dynamic_dims()[k].symbol] = lengths[k];
  }
  // Copies even when no padding is needed, so the caller's tensors are never written.
  TensorMap padded = inputs;
  for (const InputGuard& g : signature_.inputs()) {
    if (!HasDynamicDim(g.dims)) continue;
    GJ_ASSIGN_OR_RETURN(padded[g.name], Resize(inputs.at(g.name), ShapeAt(g.dims, lengths)));
  }
  for (const InputGuard& m : signature_.masks()) {
    GJ_ASSIGN_OR_RETURN(padded[m.name], MakeMask(m, real, lengths));
  }
  GJ_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, RunTier(entry, code, padded, bindings));
  for (size_t i = 0; i < outputs.size() && i < entry.output_dims_.size(); ++i) {
    if (!HasDynamicDim(entry.output_dims_[i])) continue;
    std::vector<int64_t> shape = ShapeAt(entry.output_dims_[i], real);
    if (outputs[i].shape() == shape) continue;
    GJ_ASSIGN_OR_RETURN(outputs[i], Resize(outputs[i], shape));
  }
  return outputs;
}

bool CompileCache::ServeRepeat(const CacheEntry& entry, const DimValues& values) {
  GJ_CHECK(!signature_.pads()) << Prefix() << ": ServeRepeat on a padding policy";
  if (!entry.live_.load(std::memory_order_acquire)) return false;
  const_cast<CacheEntry&>(entry).last_use_.store(tick_.fetch_add(1) + 1, std::memory_order_relaxed);
  repeat_hits_.fetch_add(1, std::memory_order_relaxed);
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
  return static_cast<int64_t>(entries_.size());
}

}  // namespace graphjit::compiler::cache
