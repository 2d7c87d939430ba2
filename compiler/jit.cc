#include "compiler/jit.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/entries/call_signature.h"
#include "compiler/entries/entry_call.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {

absl::StatusOr<std::unique_ptr<JitFunction>> Jit(std::string name, TraceFn fn,
                                                 runtime::TensorMap weights, JitOptions options) {
  if (!fn) return absl::InvalidArgumentError(absl::StrCat("jit '", name, "': empty function"));
  if (absl::Status s = CheckJitOptions(options); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("jit '", name, "': ", s.message()));
  }
  if (options.store == nullptr) options.store = GraphStore::Default();
  // The environment is read here, once, at the top: everything below gets the env.
  if (options.compile.env == nullptr) options.compile.env = &CompileEnv::FromEnvironment();
  entries::TracedFunction function{std::move(name), std::move(fn), std::move(weights)};
  return std::unique_ptr<JitFunction>(new JitFunction(std::move(function), std::move(options)));
}

absl::StatusOr<entries::CompileCache*> JitFunction::CacheFor(const runtime::TensorMap& inputs,
                                                             entries::CompileCache::Args* args) {
  // The hit path takes no lock here: a function usually sees one signature, then sticks
  // to it, and caches are never destroyed before the function.
  if (entries::CompileCache* last = last_.load(std::memory_order_acquire); last != nullptr) {
    if (last->signature().Matches(inputs, args)) return last;
    if (options_.input_types) {
      // Declared types: one signature, whose guards reject (and explain) what differs.
      last->signature().Resolve(inputs, args);
      return last;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = caches_.rbegin(); it != caches_.rend(); ++it) {
    if ((*it)->signature().Matches(inputs, args)) {
      last_.store(it->get(), std::memory_order_release);
      return it->get();
    }
  }
  if (options_.input_types && !caches_.empty()) {
    caches_.front()->signature().Resolve(inputs, args);
    return caches_.front().get();
  }
  GJ_ASSIGN_OR_RETURN(entries::InputSignature sig,
                      entries::CallSignature(options_, inputs, Prefix()));
  if (options_.log.guards && !options_.input_types) {
    LogLine("guards",
            absl::StrCat(function_.name, "/", entries::PolicyName(options_.policy),
                         ": new input signature #", caches_.size() + 1, ": ", sig.ToString()));
  }
  caches_.push_back(std::make_unique<entries::CompileCache>(function_, options_, std::move(sig)));
  if (!caches_.back()->signature().Matches(inputs, args))
    caches_.back()->signature().Resolve(inputs, args);
  last_.store(caches_.back().get(), std::memory_order_release);
  return caches_.back().get();
}

absl::StatusOr<std::vector<runtime::Tensor>> JitFunction::Run(const runtime::TensorMap& inputs,
                                                              const ir::Bindings& bindings) {
  entries::CompileCache::Args args;
  GJ_ASSIGN_OR_RETURN(entries::CompileCache * cache, CacheFor(inputs, &args));
  // The one call path, by position: an idle call of the cache (its frame kept from an
  // earlier call when the entry is the same), handed back when done.
  std::unique_ptr<entries::EntryCall> call = cache->calls().Borrow();
  absl::Status status = call->Run(args, bindings);
  absl::StatusOr<std::vector<runtime::Tensor>> outputs =
      status.ok() ? absl::StatusOr<std::vector<runtime::Tensor>>(call->TakeOutputs()) : status;
  cache->calls().Return(std::move(call));
  return outputs;
}

absl::StatusOr<std::shared_ptr<const entries::CacheEntry>> JitFunction::Acquire(
    const runtime::TensorMap& inputs) {
  entries::CompileCache::Args args;
  GJ_ASSIGN_OR_RETURN(entries::CompileCache * cache, CacheFor(inputs, &args));
  return cache->Acquire(args);
}

std::string JitFunction::ExplainMiss(const runtime::TensorMap& inputs) const {
  std::lock_guard<std::mutex> lock(mu_);
  entries::CompileCache::Args args;
  for (auto it = caches_.rbegin(); it != caches_.rend(); ++it) {
    if ((*it)->signature().Matches(inputs, &args)) return (*it)->ExplainMiss(args);
  }
  if (caches_.empty()) return "no live entries";
  if (options_.input_types) {
    caches_.front()->signature().Resolve(inputs, &args);
    return caches_.front()->ExplainMiss(args);
  }
  // Explain against the newest signature: its first failing guard names the difference.
  const entries::InputSignature& sig = caches_.back()->signature();
  caches_.back()->signature().Resolve(inputs, &args);
  std::string why = sig.ExplainFailure(args);
  if (why.empty()) {
    std::vector<std::string> names;
    for (const auto& [n, t] : inputs) names.push_back(n);
    std::sort(names.begin(), names.end());
    why = absl::StrCat("inputs {", absl::StrJoin(names, ", "), "} differ from ", sig.ToString());
  }
  return absl::StrCat(why, " (a new input signature)");
}

entries::CacheStats JitFunction::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  entries::CacheStats sum;
  for (const auto& c : caches_) sum += c->stats();
  return sum;
}

int64_t JitFunction::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t n = 0;
  for (const auto& c : caches_) n += c->size();
  return n;
}

int64_t JitFunction::num_signatures() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(caches_.size());
}

std::string JitFunction::SignatureText() const {
  std::lock_guard<std::mutex> lock(mu_);
  return caches_.empty() ? "" : caches_.back()->signature().ToString();
}

}  // namespace graphjit::compiler
