#include "compiler/jit_call.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {

JitCall::JitCall(JitFunction* fn, std::vector<std::string> input_names)
    : fn_(fn), names_(std::move(input_names)) {}

const std::vector<runtime::Tensor>& JitCall::outputs() const {
  static const std::vector<runtime::Tensor> kNone;
  return call_ != nullptr ? call_->outputs() : kNone;
}

absl::Status JitCall::CheckCount(absl::Span<const runtime::Tensor> inputs) const {
  if (inputs.size() == names_.size()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("jit '", fn_->name(), "': expected ", names_.size(), " inputs (",
                   absl::StrJoin(names_, ", "), "), got ", inputs.size()));
}

absl::Status JitCall::Run(absl::Span<const runtime::Tensor> inputs, const ir::Bindings& bindings) {
  GJ_RETURN_IF_ERROR(CheckCount(inputs));
  if (BindArgs(inputs)) {
    absl::Status status = call_->Run(args_, bindings, /*values_bound=*/true);
    ++(call_->last_fast() ? fast_calls_ : slow_calls_);
    return status;
  }
  // By name, as JitFunction::Run: the signature's cache, then its call path.
  GJ_ASSIGN_OR_RETURN(const runtime::TensorMap named, Named(inputs));
  entries::CompileCache::Args args;
  GJ_RETURN_IF_ERROR(SelectCache(named, &args).status());
  ++slow_calls_;
  return call_->Run(args, bindings);
}

absl::StatusOr<std::shared_ptr<const entries::CacheEntry>> JitCall::Acquire(
    absl::Span<const runtime::Tensor> inputs) {
  GJ_RETURN_IF_ERROR(CheckCount(inputs));
  if (BindArgs(inputs)) return call_->cache()->Acquire(args_, &call_->values());
  GJ_ASSIGN_OR_RETURN(const runtime::TensorMap named, Named(inputs));
  entries::CompileCache::Args args;
  GJ_ASSIGN_OR_RETURN(entries::CompileCache * cache, SelectCache(named, &args));
  return cache->Acquire(args);
}

bool JitCall::BindArgs(absl::Span<const runtime::Tensor> inputs) {
  if (call_ == nullptr || call_->cache()->signature().pads()) return false;
  const runtime::Tensor** args = args_.data();
  const int* position = signature_position_.data();
  for (size_t i = 0, n = signature_position_.size(); i < n; ++i) {
    args[i] = position[i] < 0 ? nullptr : &inputs[position[i]];
  }
  // Another signature (dtype, rank, names): its cache is found by name.
  return call_->cache()->signature().Bind(args_, &call_->values());
}

absl::StatusOr<entries::CompileCache*> JitCall::SelectCache(const runtime::TensorMap& named,
                                                            entries::CompileCache::Args* args) {
  GJ_ASSIGN_OR_RETURN(entries::CompileCache * cache, fn_->CacheFor(named, args));
  if (call_ == nullptr || call_->cache() != cache) {
    // The next call tries this signature's cache by position first.
    call_ = std::make_unique<entries::EntryCall>(cache);
    signature_position_.clear();
    for (const entries::InputGuard& g : cache->signature().inputs()) {
      signature_position_.push_back(PositionOf(g.name));
    }
    args_.assign(signature_position_.size(), nullptr);
  }
  return cache;
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

}  // namespace graphjit::compiler
