#include "compiler/cache/compile_cache.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/cache/padding.h"

namespace graphjit::compiler::cache {
namespace {

using runtime::Tensor;
using runtime::TensorMap;

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void AddTimings(const PhaseTimings& t, PhaseTimings* sum) {
  sum->passes += t.passes;
  sum->lower += t.lower;
  sum->ir_build += t.ir_build;
  sum->optimize += t.optimize;
  sum->codegen += t.codegen;
}

bool HasDynamicDim(const std::vector<DimGuard>& dims) {
  return std::any_of(dims.begin(), dims.end(), [](const DimGuard& d) { return d.dynamic >= 0; });
}

// Each output's dims as constants or dynamic dims, so padded outputs can be cut back.
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
          if (sig.dynamic_dims()[k] == symbol) d.dynamic = k;
        }
      }
      if (!shape[a].IsConstant() && d.dynamic < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("output ", i, " dim ", a, " is `", shape[a].ToString(),
                         "`: a padded output can only be cut back along a bare dynamic dim"));
      }
      dims.push_back(d);
    }
    outputs.push_back(std::move(dims));
  }
  return outputs;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CompileCache>> CompileCache::Create(const models::Model& model,
                                                                   CompileCacheOptions options) {
  if (options.capacity < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("compile cache capacity must be >= 0 (0: no bound), got ", options.capacity));
  }
  models::TraceOptions padded;
  padded.padded = true;
  absl::StatusOr<InputSignature> sig =
      InputSignature::Create(model.InputTypes({}), model.InputTypes(padded), model.DynamicDims());
  if (!sig.ok()) return sig.status();
  std::vector<std::vector<DimGuard>> output_dims;
  if (PadsInputs(options.policy) && sig->num_dynamic() > 0) {
    // Padding is sound only if the model masks the padded positions out itself.
    if (sig->masks().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          model.Spec(), ": policy ", PolicyName(options.policy),
          " pads the dynamic dims, but the model declares no mask input for padded traces; "
          "use exact, symbolic or auto"));
    }
    for (const InputGuard& m : sig->masks()) {
      if (!ir::IsFloat(m.dtype) || !HasDynamicDim(m.dims)) {
        return absl::InvalidArgumentError(absl::StrCat(
            model.Spec(), ": mask input '", m.name,
            "' must be a float tensor over a dynamic dim (an additive 0 / -inf mask)"));
      }
    }
    // A symbolic trace (no compile) tells which output dims to cut back.
    absl::StatusOr<ir::Graph> graph = models::TraceModel(model, padded);
    if (!graph.ok()) return graph.status();
    absl::StatusOr<std::vector<std::vector<DimGuard>>> dims = OutputDims(*graph, *sig);
    if (!dims.ok()) return dims.status();
    output_dims = *std::move(dims);
  }
  return std::unique_ptr<CompileCache>(
      new CompileCache(model, std::move(options), *std::move(sig), std::move(output_dims)));
}

CompileCache::CompileCache(const models::Model& model, CompileCacheOptions options,
                           InputSignature signature, std::vector<std::vector<DimGuard>> output_dims)
    : model_(model),
      options_(std::move(options)),
      signature_(std::move(signature)),
      output_dims_(std::move(output_dims)),
      name_(model.Spec().substr(0, model.Spec().find(':'))) {
  for (const InputGuard& g : signature_.inputs()) {
    name_hashes_.push_back(TensorMap::hasher{}(g.name));
  }
}

std::string CompileCache::Prefix() const {
  return absl::StrCat(name_, "/", PolicyName(options_.policy));
}

std::string CompileCache::KeysText(const DimKeys& keys) const {
  std::vector<std::string> parts;
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    parts.push_back(KeyToString(signature_.dynamic_dims()[k], keys[k]));
  }
  return parts.empty() ? "(no dynamic dims)" : absl::StrJoin(parts, ",");
}

CompileCache::Args CompileCache::ResolveArgs(const TensorMap& inputs) const {
  Args args;
  for (size_t i = 0; i < name_hashes_.size(); ++i) {
    // raw_hash_set's find(key, hash): the lookup with a precomputed hash.
    auto it = inputs.find(signature_.inputs()[i].name, name_hashes_[i]);
    args.push_back(it == inputs.end() ? nullptr : &it->second);
  }
  return args;
}

absl::StatusOr<std::shared_ptr<const CacheEntry>> CompileCache::Acquire(const TensorMap& inputs) {
  Args args = ResolveArgs(inputs);
  DimValues values{};
  return AcquireImpl(args, &values);
}

absl::StatusOr<std::shared_ptr<const CacheEntry>> CompileCache::Acquire(
    absl::Span<const Tensor* const> args) {
  if (args.size() != signature_.inputs().size()) {
    return absl::InvalidArgumentError(absl::StrCat(Prefix(), ": expected ",
                                                   signature_.inputs().size(), " inputs (",
                                                   signature_.ToString(), "), got ", args.size()));
  }
  DimValues values{};
  return AcquireImpl(args, &values);
}

absl::Status CompileCache::Reject(absl::Span<const Tensor* const> args) {
  std::string why = signature_.ExplainFailure(args);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.rejected;
  }
  if (options_.log.guards) LogLine("guards", absl::StrCat(Prefix(), ": rejected: ", why));
  return absl::InvalidArgumentError(absl::StrCat(Prefix(), ": ", why,
                                                 "; no entry can serve this call (the model "
                                                 "is traced for ",
                                                 signature_.ToString(), ")"));
}

absl::StatusOr<std::shared_ptr<const CacheEntry>> CompileCache::AcquireImpl(
    absl::Span<const Tensor* const> args, DimValues* values) {
  if (!signature_.Bind(args, values)) return Reject(args);
  // Entries dropped or evicted here are destroyed after the lock is released (freeing
  // code takes the JIT's own locks).
  std::vector<std::shared_ptr<CacheEntry>> released;
  absl::StatusOr<std::shared_ptr<const CacheEntry>> result;
  {
    std::unique_lock<std::mutex> lock(mu_);
    const DimKeys keys = KeysLocked(*values, &released);
    auto it = entries_.find(keys);
    if (it == entries_.end()) {
      result = CompileLocked(lock, keys, *values, &released);
    } else {
      CacheEntry* entry = it->second.get();
      ++stats_.calls;
      ++stats_.hits;
      for (int k = 0; k < signature_.num_dynamic(); ++k) {
        stats_.real_elements += (*values)[k];
        stats_.padded_elements += RunLength(keys[k], (*values)[k]);
      }
      entry->last_use_ = ++tick_;
      if (entry->state_ == CacheEntry::State::kReady) {
        result = it->second;
      } else {
        // Another caller is compiling this key: wait for it rather than compile twice.
        std::shared_ptr<CacheEntry> held = it->second;
        ++stats_.waits;
        compiled_.wait(lock, [&] { return held->state_ != CacheEntry::State::kCompiling; });
        if (held->state_ == CacheEntry::State::kFailed) {
          result = held->error_;
        } else {
          result = std::move(held);
        }
      }
      GJ_CHECK(!result.ok() || entry->guards_.Check(*values))
          << "key " << KeysText(keys) << " maps to an entry whose guards fail";
    }
  }
  return result;
}

DimKeys CompileCache::KeysLocked(const DimValues& values,
                                 std::vector<std::shared_ptr<CacheEntry>>* dropped) {
  DimKeys keys{};
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    if (options_.policy != ShapePolicy::kAuto) {
      keys[k] = KeyFor(options_.policy, values[k]);
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
        dropped->push_back(std::move(it->second));
        entries_.erase(it++);
        ++count;
      } else {
        ++it;
      }
    }
    if (options_.log.recompiles) {
      LogLine("recompiles", absl::StrCat(Prefix(), ": dim ", signature_.dynamic_dims()[k],
                                         " saw a second value (", values[k],
                                         "): now symbolic; dropped ", count, " exact entries"));
    }
  }
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

std::string CompileCache::ExplainMiss(const TensorMap& inputs) const {
  Args args = ResolveArgs(inputs);
  DimValues values{};
  if (!signature_.Bind(args, &values)) return signature_.ExplainFailure(args);
  std::lock_guard<std::mutex> lock(mu_);
  DimKeys keys{};
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    if (options_.policy == ShapePolicy::kAuto) {
      AutoDimState state = auto_state_[k];  // a copy: explaining must not change history
      keys[k] = state.Observe(values[k]);
    } else {
      keys[k] = KeyFor(options_.policy, values[k]);
    }
  }
  if (entries_.contains(keys)) return "";
  return ExplainMissLocked(values);
}

void CompileCache::EvictLocked(const CacheEntry* keep,
                               std::vector<std::shared_ptr<CacheEntry>>* evicted) {
  if (options_.capacity <= 0) return;
  while (static_cast<int64_t>(entries_.size()) > options_.capacity) {
    // Entries still compiling are not candidates: their callers are waiting for them.
    const CacheEntry* victim = nullptr;
    for (const auto& [keys, entry] : entries_) {
      if (entry.get() == keep || entry->state_ != CacheEntry::State::kReady) continue;
      if (victim == nullptr || entry->last_use_ < victim->last_use_) victim = entry.get();
    }
    if (victim == nullptr) return;  // all compiling: over the bound until they finish
    if (options_.log.recompiles) {
      LogLine("recompiles", absl::StrCat(Prefix(), ": evicted entry #", victim->id_, " (",
                                         KeysText(victim->keys_),
                                         "), least recently used; capacity ", options_.capacity));
    }
    auto it = entries_.find(victim->keys_);
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
  std::array<DimRange, kMaxDynamicDims> ranges{};
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    ranges[k] = RangeForKey(options_.policy, keys[k]);
  }
  entry->guards_ = EntryGuards(signature_.num_dynamic(), ranges);
  entry->padded_ = PadsInputs(options_.policy) && signature_.num_dynamic() > 0;
  entry->last_use_ = ++tick_;
  entries_[keys] = entry;
  ++stats_.calls;
  ++stats_.compiles;
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    stats_.real_elements += values[k];
    stats_.padded_elements += RunLength(keys[k], values[k]);
  }
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
  double trace_s = 0, total_s = 0;
  absl::StatusOr<std::unique_ptr<CompiledGraph>> compiled = Compile(keys, &trace_s, &total_s);
  lock.lock();

  stats_.compile_seconds += total_s;
  stats_.trace_seconds += trace_s;
  absl::StatusOr<std::shared_ptr<const CacheEntry>> result;
  if (compiled.ok()) {
    AddTimings((*compiled)->timings(), &stats_.phases);
    entry->compiled_ = *std::move(compiled);
    entry->state_ = CacheEntry::State::kReady;
    if (options_.log.recompiles) {
      LogLine("recompiles", absl::StrFormat("%s: compiled entry #%d for %s in %.3f s (miss: %s)",
                                            Prefix(), entry->id_, KeysText(keys), total_s, reason));
    }
    result = entry;
  } else {
    // Not cached: a later call with this key tries again (and fails the same way).
    entry->state_ = CacheEntry::State::kFailed;
    entry->error_ = absl::Status(
        compiled.status().code(),
        absl::StrCat(Prefix(), ": compiling ", KeysText(keys), ": ", compiled.status().message()));
    ++stats_.failed_compiles;
    auto it = entries_.find(keys);
    if (it != entries_.end() && it->second == entry) {
      released->push_back(std::move(it->second));
      entries_.erase(it);
    }
    if (options_.log.recompiles) LogLine("recompiles", entry->error_.message());
    result = entry->error_;
  }
  compiled_.notify_all();
  return result;
}

absl::StatusOr<std::unique_ptr<CompiledGraph>> CompileCache::Compile(const DimKeys& keys,
                                                                     double* trace_s,
                                                                     double* total_s) const {
  auto start = std::chrono::steady_clock::now();
  models::TraceOptions trace;
  trace.padded = PadsInputs(options_.policy) && signature_.num_dynamic() > 0;
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    if (keys[k] != kSymbolicDim) trace.fixed_dims[signature_.dynamic_dims()[k]] = keys[k];
  }
  absl::StatusOr<ir::Graph> graph = models::TraceModel(model_, trace);
  *trace_s = SecondsSince(start);
  if (!graph.ok()) {
    *total_s = SecondsSince(start);
    return graph.status();
  }
  absl::StatusOr<std::unique_ptr<CompiledGraph>> compiled =
      CompiledGraph::Compile(*graph, model_.params(), options_.compile);
  *total_s = SecondsSince(start);
  return compiled;
}

absl::StatusOr<std::vector<Tensor>> CompileCache::Run(const TensorMap& inputs,
                                                      const ir::Bindings& bindings) {
  Args args = ResolveArgs(inputs);
  DimValues real{};
  absl::StatusOr<std::shared_ptr<const CacheEntry>> entry = AcquireImpl(args, &real);
  if (!entry.ok()) return entry.status();
  ir::Bindings b = bindings;
  for (int k = 0; k < signature_.num_dynamic(); ++k) b[signature_.dynamic_dims()[k]] = real[k];
  b = model_.CompleteBindings(std::move(b));
  if ((*entry)->padded()) return RunPadded(**entry, inputs, real, std::move(b));
  return (*entry)->compiled().Run(inputs, b);
}

absl::StatusOr<std::vector<Tensor>> CompileCache::RunPadded(const CacheEntry& entry,
                                                            const TensorMap& inputs,
                                                            const DimValues& real,
                                                            ir::Bindings bindings) const {
  DimValues lengths{};
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    lengths[k] = RunLength(entry.keys()[k], real[k]);
    // Call symbols (P) were completed from the real length; the graph's dims are padded.
    bindings[signature_.dynamic_dims()[k]] = lengths[k];
  }
  // Copies even when no padding is needed, so the caller's tensors are never written.
  TensorMap padded = inputs;
  for (const InputGuard& g : signature_.inputs()) {
    if (!HasDynamicDim(g.dims)) continue;
    absl::StatusOr<Tensor> t = Resize(inputs.at(g.name), ShapeAt(g.dims, lengths));
    if (!t.ok()) return t.status();
    padded[g.name] = *std::move(t);
  }
  for (const InputGuard& m : signature_.masks()) {
    absl::StatusOr<Tensor> mask = MakeMask(m, real, lengths);
    if (!mask.ok()) return mask.status();
    padded[m.name] = *std::move(mask);
  }
  absl::StatusOr<std::vector<Tensor>> outputs = entry.compiled().Run(padded, bindings);
  if (!outputs.ok()) return outputs.status();
  for (size_t i = 0; i < outputs->size() && i < output_dims_.size(); ++i) {
    if (!HasDynamicDim(output_dims_[i])) continue;
    std::vector<int64_t> shape = ShapeAt(output_dims_[i], real);
    if ((*outputs)[i].shape() == shape) continue;
    absl::StatusOr<Tensor> cut = Resize((*outputs)[i], shape);
    if (!cut.ok()) return cut.status();
    (*outputs)[i] = *std::move(cut);
  }
  return outputs;
}

CacheStats CompileCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

int64_t CompileCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(entries_.size());
}

}  // namespace graphjit::compiler::cache
