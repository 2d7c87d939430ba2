#include "compiler/entries/entry_call.h"

#include <utility>

#include "ir/status_macros.h"

namespace graphjit::compiler::entries {

const std::vector<runtime::Tensor>& EntryCall::outputs() const {
  return last_fast_ ? compiled_call_->outputs() : outputs_;
}

std::vector<runtime::Tensor> EntryCall::TakeOutputs() {
  return last_fast_ ? compiled_call_->TakeOutputs() : std::move(outputs_);
}

void EntryCall::Release() {
  compiled_call_ = nullptr;
  code_ = nullptr;
  entry_ = nullptr;
  last_fast_ = false;
}

absl::Status EntryCall::Run(const CompileCache::Args& args, const ir::Bindings& bindings,
                            bool values_bound) {
  const bool pads = cache_->signature().pads();
  // The same dims as the last call the kept frame served: the same entry, counted
  // without the cache's lock and lookup while the entry is live.
  if (values_bound && !pads && compiled_call_ != nullptr && values_ == served_values_ &&
      entry_->code_version() == served_code_version_ && cache_->ServeRepeat(*entry_, values_)) {
    return RunKept(args, bindings);
  }
  std::shared_ptr<const CompiledGraph> code;
  uint32_t code_version = 0;
  GJ_ASSIGN_OR_RETURN(std::shared_ptr<const CacheEntry> entry,
                      cache_->Serve(args, &values_, &code, values_bound, &code_version));
  if (entry != entry_ || code != code_) {
    // Another entry, or the entry's code was replaced (reoptimized).
    Release();
    if (code != nullptr && !pads) KeepFrame(entry, code, code_version);
  }
  if (compiled_call_ == nullptr) return RunExecutor(*entry, code.get(), args, bindings);
  served_values_ = values_;
  return RunKept(args, bindings);
}

void EntryCall::KeepFrame(std::shared_ptr<const CacheEntry> entry,
                          std::shared_ptr<const CompiledGraph> code, uint32_t code_version) {
  auto compiled_call = std::make_unique<CompiledCall>(*code);
  const std::vector<InputGuard>& inputs = cache_->signature().inputs();
  std::vector<int> position;
  for (const std::string& name : compiled_call->input_names()) {
    int p = -1;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].name == name) p = static_cast<int>(i);
    }
    if (p < 0) return;  // an input the signature lacks: the executor's checks report it
    position.push_back(p);
  }
  entry_ = std::move(entry);
  code_ = std::move(code);
  compiled_call_ = std::move(compiled_call);
  served_code_version_ = code_version;
  call_position_ = std::move(position);
  call_inputs_.resize(call_position_.size());
  completed_valid_ = false;
}

absl::Status EntryCall::RunKept(const CompileCache::Args& args, const ir::Bindings& bindings) {
  for (size_t j = 0; j < call_position_.size(); ++j) call_inputs_[j] = args[call_position_[j]];
  last_fast_ = true;
  ++fast_calls_;
  return compiled_call_->Run(absl::MakeConstSpan(call_inputs_), CompletedBindings(bindings));
}

absl::Status EntryCall::RunExecutor(const CacheEntry& entry, const CompiledGraph* code,
                                    const CompileCache::Args& args, const ir::Bindings& bindings) {
  // Padding and the interpreter take inputs by name.
  runtime::TensorMap named;
  const std::vector<InputGuard>& inputs = cache_->signature().inputs();
  for (size_t i = 0; i < inputs.size(); ++i) named.emplace(inputs[i].name, *args[i]);
  last_fast_ = false;
  ++slow_calls_;
  GJ_ASSIGN_OR_RETURN(outputs_, cache_->executor().Run(entry, code, named, values_, bindings));
  return absl::OkStatus();
}

const ir::Bindings& EntryCall::CompletedBindings(const ir::Bindings& bindings) {
  if (!cache_->executor().completes_bindings()) return bindings;
  if (!completed_valid_ || values_ != completed_values_ || bindings != last_bindings_) {
    completed_ = cache_->executor().CallBindings(values_, bindings);
    completed_values_ = values_;
    last_bindings_ = bindings;
    completed_valid_ = true;
  }
  return completed_;
}

namespace {

// Whether `call` keeps a frame the cache no longer serves.
bool Stale(const EntryCall& call) {
  const CacheEntry* kept = call.kept_entry();
  return kept != nullptr &&
         (!call.cache()->Live(*kept) || kept->code_version() != call.kept_code_version());
}

}  // namespace

std::unique_ptr<EntryCall> EntryCallPool::Borrow() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<EntryCall> call = std::move(idle_.back());
      idle_.pop_back();
      return call;
    }
  }
  return std::make_unique<EntryCall>(cache_);
}

void EntryCallPool::Return(std::unique_ptr<EntryCall> call) {
  // An entry that left the table meanwhile would have its code kept alive: let go first.
  if (Stale(*call)) call->Release();
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<int>(idle_.size()) < kMaxIdle) idle_.push_back(std::move(call));
}

void EntryCallPool::ReleaseStale() {
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::unique_ptr<EntryCall>& call : idle_) {
    if (Stale(*call)) call->Release();
  }
}

}  // namespace graphjit::compiler::entries
