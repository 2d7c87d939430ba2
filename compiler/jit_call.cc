#include "compiler/jit_call.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {

JitCall::JitCall(JitFunction* fn, std::vector<std::string> input_names)
    : fn_(fn), names_(std::move(input_names)) {}

const std::vector<runtime::Tensor>& JitCall::outputs() const {
  return last_fast_ ? call_->outputs() : outputs_;
}

absl::Status JitCall::Run(absl::Span<const runtime::Tensor> inputs, const ir::Bindings& bindings) {
  if (inputs.size() != names_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("jit '", fn_->name(), "': expected ", names_.size(), " inputs (",
                     absl::StrJoin(names_, ", "), "), got ", inputs.size()));
  }
  absl::Status status;
  if (RunFast(inputs, bindings, &status)) return status;
  return RunSlow(inputs, bindings);
}

bool JitCall::RunFast(absl::Span<const runtime::Tensor> inputs, const ir::Bindings& bindings,
                      absl::Status* status) {
  if (cache_ == nullptr || cache_->signature().pads()) return false;
  for (size_t i = 0; i < signature_position_.size(); ++i) {
    const int p = signature_position_[i];
    args_[i] = p < 0 ? nullptr : &inputs[p];
  }
  // Another signature (dtype, rank, names): JitFunction::Run finds its cache.
  if (!cache_->signature().Bind(args_, &values_)) return false;

  // From here on the call is this cache's, counted once, served as Run would serve it.
  // The same dims as the last call served by the kept frame: the same entry, counted
  // without the cache's lock and lookup while the entry is live.
  if (call_ != nullptr && values_ == served_values_ &&
      entry_->code_version() == served_code_version_ && cache_->ServeRepeat(*entry_, values_)) {
    RunKept(inputs, bindings, status);
    return true;
  }
  std::shared_ptr<const CompiledGraph> code;
  uint32_t code_version = 0;
  absl::StatusOr<std::shared_ptr<const cache::CacheEntry>> entry =
      cache_->Serve(args_, &values_, &code, /*values_bound=*/true, &code_version);
  if (!entry.ok()) {
    *status = entry.status();
    return true;
  }
  if (*entry != entry_ || code != call_code_) {
    // Another entry, or the entry's code was replaced (reoptimized).
    entry_ = nullptr;
    call_ = nullptr;
    call_code_ = nullptr;
    if (code != nullptr) {
      // A new entry (or the first): its frame, and where each of its inputs comes from.
      auto call = std::make_unique<CompiledCall>(*code);
      std::vector<int> position;
      for (const std::string& name : call->input_names()) {
        const int p = PositionOf(name);
        if (p < 0) break;  // an input this call does not name: Run's checks report it
        position.push_back(p);
      }
      if (position.size() == call->input_names().size()) {
        entry_ = *entry;
        call_ = std::move(call);
        call_code_ = code;
        served_code_version_ = code_version;
        call_position_ = std::move(position);
        call_inputs_.resize(call_position_.size());
        // The same inputs in the same order (the usual case): no copies per call.
        call_takes_inputs_as_given_ = call_position_.size() == inputs.size();
        for (size_t j = 0; j < call_position_.size(); ++j) {
          call_takes_inputs_as_given_ &= call_position_[j] == static_cast<int>(j);
        }
      }
    }
  }
  if (call_ == nullptr) {
    // Interpreted (tiered, code not installed yet) or an input not named: as Run does.
    absl::StatusOr<runtime::TensorMap> named = Named(inputs);
    absl::StatusOr<std::vector<runtime::Tensor>> out =
        named.ok() ? cache_->RunServed(**entry, code.get(), *named, values_, bindings)
                   : named.status();
    last_fast_ = false;
    ++slow_calls_;
    if (out.ok()) outputs_ = *std::move(out);
    *status = out.status();
    return true;
  }
  served_values_ = values_;
  RunKept(inputs, bindings, status);
  return true;
}

void JitCall::RunKept(absl::Span<const runtime::Tensor> inputs, const ir::Bindings& bindings,
                      absl::Status* status) {
  if (call_takes_inputs_as_given_) {
    *status = call_->Run(inputs, CompletedBindings(bindings));
  } else {
    for (size_t j = 0; j < call_position_.size(); ++j) call_inputs_[j] = inputs[call_position_[j]];
    *status = call_->Run(call_inputs_, CompletedBindings(bindings));
  }
  last_fast_ = true;
  ++fast_calls_;
}

absl::Status JitCall::RunSlow(absl::Span<const runtime::Tensor> inputs,
                              const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(const runtime::TensorMap named, Named(inputs));
  cache::CompileCache::Args args;
  absl::Status error;
  cache::CompileCache* cache = fn_->CacheFor(named, &args, &error);
  if (cache == nullptr) return error;
  if (cache != cache_) {
    // The next call tries this signature's cache by position first.
    cache_ = cache;
    signature_position_.clear();
    for (const cache::InputGuard& g : cache->signature().inputs()) {
      signature_position_.push_back(PositionOf(g.name));
    }
    args_.assign(signature_position_.size(), nullptr);
    completes_ = cache->CompletesBindings();
    completed_valid_ = false;
    entry_ = nullptr;
    call_ = nullptr;
    call_code_ = nullptr;
  }
  absl::StatusOr<std::vector<runtime::Tensor>> out = cache->Run(named, args, bindings);
  last_fast_ = false;
  ++slow_calls_;
  if (!out.ok()) return out.status();
  outputs_ = *std::move(out);
  return absl::OkStatus();
}

int JitCall::PositionOf(const std::string& name) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return static_cast<int>(i);
  }
  return -1;
}

absl::StatusOr<runtime::TensorMap> JitCall::Named(absl::Span<const runtime::Tensor> inputs) const {
  runtime::TensorMap named;
  for (size_t i = 0; i < names_.size(); ++i) {
    if (!named.emplace(names_[i], inputs[i]).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("jit '", fn_->name(), "': input '", names_[i], "' is named twice"));
    }
  }
  return named;
}

const ir::Bindings& JitCall::CompletedBindings(const ir::Bindings& bindings) {
  if (!completes_) return bindings;
  if (!completed_valid_ || values_ != completed_values_ || bindings != last_bindings_) {
    completed_ = cache_->CallBindings(values_, bindings);
    completed_values_ = values_;
    last_bindings_ = bindings;
    completed_valid_ = true;
  }
  return completed_;
}

}  // namespace graphjit::compiler
