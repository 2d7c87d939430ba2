#include "models/onnx_function.h"

#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/store/cache_log.h"
#include "ir/status_macros.h"
#include "models/onnx_model.h"
#include "onnx/specialize.h"

namespace graphjit::models {
namespace {

// `t`'s values as "[1, 2, 3]" (at most 8, then "..").
std::string Values(const runtime::Tensor& t) {
  const std::vector<double> v = t.ToDoubles();
  std::vector<std::string> parts;
  for (size_t i = 0; i < v.size() && i < 8; ++i) parts.push_back(absl::StrCat(v[i]));
  if (v.size() > 8) parts.push_back("..");
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

runtime::TensorMap Without(const runtime::TensorMap& inputs,
                           const std::vector<std::string>& names) {
  runtime::TensorMap rest = inputs;
  for (const std::string& name : names) rest.erase(name);
  return rest;
}

}  // namespace

absl::StatusOr<std::unique_ptr<OnnxFunction>> OnnxFunction::Open(std::string path,
                                                                 compiler::JitOptions options,
                                                                 int max_specializations) {
  if (max_specializations < 1) {
    return absl::InvalidArgumentError(absl::StrCat("max_specializations ", max_specializations,
                                                   ": expected at least 1 compiled entry"));
  }
  // A file that cannot be read or parsed is an error now, not at the first call.
  GJ_ASSIGN_OR_RETURN(std::vector<std::string> inputs, onnx::ModelInputNames(path));
  std::unique_ptr<OnnxFunction> fn(
      new OnnxFunction(std::move(path), std::move(options), max_specializations));
  fn->input_names_ = std::move(inputs);
  absl::StatusOr<onnx::ImportedModel> model = onnx::Import(fn->path_);
  if (model.ok()) {
    GJ_ASSIGN_OR_RETURN(fn->unspecialized_, JitOnnxModel(*model, fn->options_));
  }
  // Else it needs an input's values or its inputs' shapes: imported at each new call.
  return fn;
}

std::string OnnxFunction::Key(const runtime::TensorMap& inputs) const {
  std::string key;
  for (const std::string& name : specialized_) {
    auto it = inputs.find(name);
    absl::StrAppend(&key, name, "=");
    if (it == inputs.end()) {
      absl::StrAppend(&key, "missing;");
      continue;
    }
    const auto* bytes = static_cast<const char*>(it->second.raw_data());
    absl::StrAppend(&key, it->second.TypeString(), ":", it->second.nbytes(), ":",
                    absl::string_view(bytes, it->second.nbytes()), ";");
  }
  if (shapes_fixed_) {
    for (const auto& [name, t] : inputs) {
      absl::StrAppend(&key, name, ":", ir::DTypeName(t.dtype()), "[");
      for (int axis = 0; axis < t.rank(); ++axis) {
        const bool multiple = dim_factor_ > 0 && t.dim(axis) % dim_factor_ == 0 &&
                              absl::c_linear_search(factored_, std::make_pair(name, axis));
        absl::StrAppend(&key, multiple ? absl::StrCat("*", dim_factor_) : absl::StrCat(t.dim(axis)),
                        ",");
      }
      absl::StrAppend(&key, "];");
    }
  }
  return key;
}

std::string OnnxFunction::Describe(const runtime::TensorMap& inputs) const {
  std::vector<std::string> parts;
  for (const std::string& name : specialized_) {
    auto it = inputs.find(name);
    parts.push_back(it == inputs.end() ? absl::StrCat(name, " missing")
                                       : absl::StrCat(name, " = ", Values(it->second)));
  }
  if (shapes_fixed_) {
    for (const auto& [name, t] : inputs) parts.push_back(absl::StrCat(name, ": ", t.TypeString()));
  }
  return absl::StrJoin(parts, ", ");
}

absl::StatusOr<std::vector<runtime::Tensor>> OnnxFunction::Run(const runtime::TensorMap& inputs) {
  if (unspecialized_ != nullptr) return unspecialized_->Run(inputs);
  {
    std::unique_lock<std::mutex> lock(mu_);
    auto it = entries_.find(Key(inputs));
    if (it != entries_.end()) {
      compiler::JitFunction* fn = it->second.fn.get();
      const std::vector<std::string> drop = it->second.specialized;
      lock.unlock();
      return fn->Run(Without(inputs, drop));
    }
  }
  // A miss: import (and compile) outside the lock, so calls that hit run meanwhile.
  GJ_ASSIGN_OR_RETURN(onnx::SpecializedImport imported, onnx::ImportSpecialized(path_, inputs));
  std::unique_lock<std::mutex> lock(mu_);
  const bool shapes_read = imported.shapes_fixed || imported.dim_factor > 0;
  bool rekeyed = shapes_read && !shapes_fixed_;
  if (imported.dim_factor > 0 && dim_factor_ == 0) {
    // Calls whose dims are multiples now share one key; the fixed-shape entries made
    // before keep theirs (their dims were not multiples, or the import would have factored).
    dim_factor_ = imported.dim_factor;
    factored_ = imported.factored;
  }
  for (const std::string& name : imported.specialized) {
    if (absl::c_find(specialized_, name) == specialized_.end()) {
      specialized_.push_back(name);
      rekeyed = true;
    }
  }
  shapes_fixed_ = shapes_fixed_ || shapes_read;
  if (rekeyed && !entries_.empty()) {
    // The guard now reads more inputs: no earlier entry's key can match again. Their code
    // stays alive (a call may be running it) but no longer counts toward the limit.
    for (auto& [key, entry] : entries_) retired_.push_back(std::move(entry.fn));
    entries_.clear();
  }
  const std::string key = Key(inputs), now = Describe(inputs);
  if (auto it = entries_.find(key); it != entries_.end()) {  // another thread compiled it
    compiler::JitFunction* fn = it->second.fn.get();
    lock.unlock();
    return fn->Run(Without(inputs, imported.specialized));
  }
  if (static_cast<int>(entries_.size()) >= max_specializations_) {
    if (interpreted_++ == 0 && options_.log.recompiles) {
      compiler::LogLine("recompiles", absl::StrCat(path_, ": ", max_specializations_,
                                                   " specializations compiled; calls with other "
                                                   "values (",
                                                   now, ") run in the interpreter"));
    }
    lock.unlock();
    return runtime::Interpret(imported.model.graph, Without(inputs, imported.specialized),
                              imported.model.params);
  }
  const std::string last = last_;
  const size_t number = entries_.size() + 1;
  lock.unlock();
  GJ_ASSIGN_OR_RETURN(std::unique_ptr<compiler::JitFunction> jit,
                      JitOnnxModel(imported.model, options_));
  lock.lock();
  auto [it, inserted] = entries_.emplace(key, Entry{std::move(jit), imported.specialized});
  if (inserted) {
    if (options_.log.recompiles) {
      compiler::LogLine("recompiles", number == 1 ? absl::StrCat(path_, ": specialized on ", now)
                                                  : absl::StrCat(path_, ": guard miss: ", now,
                                                                 " (the last entry's: ", last,
                                                                 "); specialization #", number));
    }
    last_ = now;
  }
  compiler::JitFunction* fn = it->second.fn.get();
  lock.unlock();
  return fn->Run(Without(inputs, imported.specialized));
}

std::vector<std::string> OnnxFunction::specialized_inputs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return specialized_;
}

int OnnxFunction::specializations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(entries_.size());
}

compiler::entries::CacheStats OnnxFunction::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  compiler::entries::CacheStats sum;
  if (unspecialized_ != nullptr) sum += unspecialized_->stats();
  for (const auto& [key, entry] : entries_) sum += entry.fn->stats();
  for (const auto& fn : retired_) sum += fn->stats();
  return sum;
}

int64_t OnnxFunction::interpreted_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return interpreted_;
}

}  // namespace graphjit::models
