#include "compiler/entries/guards.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status_macros.h"

namespace graphjit::compiler::entries {
namespace {

absl::StatusOr<InputGuard> GuardFor(const std::string& name, const ir::ValueType& type,
                                    const std::vector<DynamicDim>& dynamic_dims) {
  InputGuard guard{name, type.dtype, {}};
  for (size_t axis = 0; axis < type.shape.size(); ++axis) {
    const ir::SymExpr& dim = type.shape[axis];
    DimGuard d;
    std::string symbol;
    if (std::optional<int64_t> c = dim.AsConstant()) {
      d.constant = *c;
    } else if (dim.IsSymbol(&symbol)) {
      for (size_t k = 0; k < dynamic_dims.size(); ++k) {
        if (dynamic_dims[k].symbol == symbol) d.dynamic = static_cast<int>(k);
      }
    }
    if (!dim.IsConstant() && d.dynamic < 0) {
      std::vector<std::string> names;
      for (const DynamicDim& dd : dynamic_dims) names.push_back(dd.symbol);
      return absl::InvalidArgumentError(
          absl::StrCat("input '", name, "' dim ", axis, " is `", dim.ToString(),
                       "`: the compile cache guards constant dims and bare dynamic dims (",
                       absl::StrJoin(names, ", "), ") only"));
    }
    guard.dims.push_back(d);
  }
  return guard;
}

std::string DimText(const InputGuard& g, const std::vector<DynamicDim>& dynamic_dims) {
  std::vector<std::string> dims;
  for (const DimGuard& d : g.dims) {
    dims.push_back(d.dynamic >= 0 ? dynamic_dims[d.dynamic].symbol : absl::StrCat(d.constant));
  }
  return absl::StrCat(g.name, ": ", ir::DTypeName(g.dtype), "[", absl::StrJoin(dims, ", "), "]");
}

std::string RangeText(const std::string& source, const DimRange& r) {
  if (r.lo == r.hi) return absl::StrCat(source, " == ", r.lo);
  if (r.unbounded()) return absl::StrCat(source, " >= ", r.lo);
  return absl::StrCat(source, " in [", r.lo, ", ", r.hi, "]");
}

}  // namespace

absl::StatusOr<InputSignature> InputSignature::Create(const frontend::InputTypes& inputs,
                                                      const frontend::InputTypes& masks,
                                                      std::vector<DynamicDim> dynamic_dims) {
  InputSignature sig;
  sig.dynamic_dims_ = std::move(dynamic_dims);
  sig.pads_ = std::any_of(sig.dynamic_dims_.begin(), sig.dynamic_dims_.end(),
                          [](const DynamicDim& d) { return d.padded(); });
  const size_t n = sig.dynamic_dims_.size();
  sig.dim_sources_.resize(n);
  for (const auto& [name, type] : inputs) {
    GJ_ASSIGN_OR_RETURN(InputGuard g, GuardFor(name, type, sig.dynamic_dims_));
    for (size_t axis = 0; axis < g.dims.size(); ++axis) {
      int k = g.dims[axis].dynamic;
      if (k >= 0 && sig.dim_sources_[k].empty()) {
        sig.dim_sources_[k] = absl::StrCat(name, ".shape[", axis, "]");
        g.dims[axis].binds = true;
      }
    }
    sig.name_hashes_.push_back(runtime::TensorMap::hasher{}(g.name));
    sig.inputs_.push_back(std::move(g));
  }
  for (size_t k = 0; k < n; ++k) {
    if (sig.dim_sources_[k].empty()) {
      return absl::InvalidArgumentError(absl::StrCat("dynamic dim '", sig.dynamic_dims_[k].symbol,
                                                     "' is not a dim of any input, so no call "
                                                     "binds it"));
    }
  }
  for (const auto& [name, type] : masks) {
    for (const InputGuard& in : sig.inputs_) {
      if (in.name == name) {
        return absl::InvalidArgumentError(
            absl::StrCat("mask '", name, "' has the name of an input the caller passes"));
      }
    }
    GJ_ASSIGN_OR_RETURN(InputGuard g, GuardFor(name, type, sig.dynamic_dims_));
    sig.masks_.push_back(std::move(g));
  }
  return sig;
}

bool InputSignature::Matches(const runtime::TensorMap& inputs, Args* args) const {
  if (inputs.size() != inputs_.size()) return false;
  Resolve(inputs, args);
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const InputGuard& g = inputs_[i];
    const runtime::Tensor* t = (*args)[i];
    if (t == nullptr || t->dtype() != g.dtype || t->shape().size() != g.dims.size()) return false;
  }
  return true;
}

void InputSignature::Resolve(const runtime::TensorMap& inputs, Args* args) const {
  args->clear();
  for (size_t i = 0; i < inputs_.size(); ++i) {
    // raw_hash_set's find(key, hash): the lookup with a precomputed hash.
    auto it = inputs.find(inputs_[i].name, name_hashes_[i]);
    args->push_back(it == inputs.end() ? nullptr : &it->second);
  }
}

bool InputSignature::Bind(absl::Span<const runtime::Tensor* const> args, DimValues* values) const {
  // Every dynamic dim has exactly one binding place, which comes before the places that
  // compare with it, so no value needs a "not bound yet" mark.
  if (values->size() != dynamic_dims_.size()) values->resize(dynamic_dims_.size());
  int64_t* v = values->data();
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const runtime::Tensor* t = args[i];
    const InputGuard& g = inputs_[i];
    if (t == nullptr || t->dtype() != g.dtype || t->shape().size() != g.dims.size()) return false;
    const int64_t* dims = t->shape().data();
    for (size_t a = 0; a < g.dims.size(); ++a) {
      const DimGuard& d = g.dims[a];
      if (d.dynamic < 0) {
        if (dims[a] != d.constant) return false;
      } else if (d.binds) {
        v[d.dynamic] = dims[a];
      } else if (v[d.dynamic] != dims[a]) {
        return false;
      }
    }
  }
  return true;
}

std::string InputSignature::ExplainFailure(absl::Span<const runtime::Tensor* const> args) const {
  std::vector<int64_t> values(dynamic_dims_.size(), -1);
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const runtime::Tensor* t = args[i];
    const InputGuard& g = inputs_[i];
    if (t == nullptr) {
      return absl::StrCat("input '", g.name, "' is missing (expected ", DimText(g, dynamic_dims_),
                          ")");
    }
    if (t->dtype() != g.dtype) {
      return absl::StrCat(g.name, ".dtype == ", ir::DTypeName(g.dtype), " failed: got ",
                          ir::DTypeName(t->dtype()));
    }
    if (t->rank() != static_cast<int>(g.dims.size())) {
      return absl::StrCat(g.name, ".rank == ", g.dims.size(), " failed: got ", t->rank(), " (",
                          t->TypeString(), ")");
    }
    for (size_t a = 0; a < g.dims.size(); ++a) {
      const DimGuard& d = g.dims[a];
      int64_t got = t->dim(static_cast<int>(a));
      if (d.dynamic < 0) {
        if (got != d.constant) {
          return absl::StrCat(g.name, ".shape[", a, "] == ", d.constant, " failed: got ", got);
        }
      } else if (values[d.dynamic] < 0) {
        values[d.dynamic] = got;
      } else if (values[d.dynamic] != got) {
        return absl::StrCat(g.name, ".shape[", a, "] == ", DimSource(d.dynamic), " (",
                            dynamic_dims_[d.dynamic].symbol, ") failed: got ", got, " vs ",
                            values[d.dynamic]);
      }
    }
  }
  return "";
}

frontend::InputTypes InputSignature::TraceTypes(const DimKeys& keys, bool with_masks,
                                                bool symbolic_padded) const {
  auto type_of = [&](const InputGuard& g) {
    ir::ValueType type{g.dtype, {}};
    for (const DimGuard& d : g.dims) {
      if (d.dynamic < 0) {
        type.shape.push_back(ir::SymExpr(d.constant));
      } else if (symbolic_padded && dynamic_dims_[d.dynamic].padded()) {
        type.shape.push_back(ir::SymExpr::Symbol(dynamic_dims_[d.dynamic].symbol));
      } else if (IsSymbolicKey(keys[d.dynamic])) {
        type.shape.push_back(
            ir::SymExpr::Symbol(dynamic_dims_[SymbolicRep(keys[d.dynamic])].symbol));
      } else {
        type.shape.push_back(ir::SymExpr(keys[d.dynamic]));
      }
    }
    return type;
  };
  frontend::InputTypes types;
  for (const InputGuard& g : inputs_) types.emplace_back(g.name, type_of(g));
  if (with_masks) {
    for (const InputGuard& g : masks_) types.emplace_back(g.name, type_of(g));
  }
  return types;
}

std::string InputSignature::ToString() const {
  std::vector<std::string> parts;
  for (const InputGuard& g : inputs_) parts.push_back(DimText(g, dynamic_dims_));
  return absl::StrJoin(parts, ", ");
}

EntryGuards::EntryGuards(const InputSignature& signature, const DimKeys& keys) {
  for (int k = 0; k < signature.num_dynamic(); ++k) {
    ranges_.push_back(RangeForKey(signature.dynamic_dims()[k].policy, keys[k]));
    int rep = IsSymbolicKey(keys[k]) ? SymbolicRep(keys[k]) : -1;
    same_as_.push_back(rep == k ? -1 : rep);
  }
}

int EntryGuards::CountFailures(const DimValues& values) const {
  int n = 0;
  for (size_t k = 0; k < ranges_.size(); ++k) {
    n += ranges_[k].Contains(values[k]) ? 0 : 1;
    n += same_as_[k] >= 0 && values[k] != values[same_as_[k]] ? 1 : 0;
  }
  return n;
}

std::string EntryGuards::ExplainFailure(const InputSignature& signature,
                                        const DimValues& values) const {
  for (size_t k = 0; k < ranges_.size(); ++k) {
    const std::string& source = signature.DimSource(static_cast<int>(k));
    if (!ranges_[k].Contains(values[k])) {
      return absl::StrCat(RangeText(source, ranges_[k]), " failed: got ", values[k]);
    }
    if (same_as_[k] >= 0 && values[k] != values[same_as_[k]]) {
      return absl::StrCat(source, " == ", signature.DimSource(same_as_[k]), " failed: got ",
                          values[k], " vs ", values[same_as_[k]]);
    }
  }
  return "";
}

std::string EntryGuards::ToString(const InputSignature& signature) const {
  std::vector<std::string> parts;
  for (size_t k = 0; k < ranges_.size(); ++k) {
    const std::string& source = signature.DimSource(static_cast<int>(k));
    parts.push_back(RangeText(source, ranges_[k]));
    if (same_as_[k] >= 0) {
      parts.push_back(absl::StrCat(source, " == ", signature.DimSource(same_as_[k])));
    }
  }
  return parts.empty() ? "(no dynamic dims)" : absl::StrJoin(parts, ", ");
}

}  // namespace graphjit::compiler::entries
