#include "compiler/cache/guards.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace graphjit::compiler::cache {
namespace {

absl::StatusOr<InputGuard> GuardFor(const std::string& name, const ir::ValueType& type,
                                    const std::vector<std::string>& dynamic_dims) {
  InputGuard guard{name, type.dtype, {}};
  for (size_t axis = 0; axis < type.shape.size(); ++axis) {
    const ir::SymExpr& dim = type.shape[axis];
    DimGuard d;
    std::string symbol;
    if (std::optional<int64_t> c = dim.AsConstant()) {
      d.constant = *c;
    } else if (dim.IsSymbol(&symbol)) {
      for (size_t k = 0; k < dynamic_dims.size(); ++k) {
        if (dynamic_dims[k] == symbol) d.dynamic = static_cast<int>(k);
      }
    }
    if (!dim.IsConstant() && d.dynamic < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", name, "' dim ", axis, " is `", dim.ToString(),
                       "`: the compile cache guards constant dims and bare dynamic dims (",
                       absl::StrJoin(dynamic_dims, ", "), ") only"));
    }
    guard.dims.push_back(d);
  }
  return guard;
}

std::string DimText(const InputGuard& g, const std::vector<std::string>& dynamic_dims) {
  std::vector<std::string> dims;
  for (const DimGuard& d : g.dims) {
    dims.push_back(d.dynamic >= 0 ? dynamic_dims[d.dynamic] : absl::StrCat(d.constant));
  }
  return absl::StrCat(g.name, ": ", ir::DTypeName(g.dtype), "[", absl::StrJoin(dims, ", "), "]");
}

}  // namespace

absl::StatusOr<InputSignature> InputSignature::Create(
    const frontend::InputTypes& inputs, const frontend::InputTypes& padded_inputs,
    const std::vector<std::string>& dynamic_dims) {
  if (dynamic_dims.size() > kMaxDynamicDims) {
    return absl::InvalidArgumentError(absl::StrCat("the compile cache handles at most ",
                                                   kMaxDynamicDims, " dynamic dims, the model has ",
                                                   dynamic_dims.size()));
  }
  InputSignature sig;
  sig.dynamic_dims_ = dynamic_dims;
  sig.dim_sources_.resize(dynamic_dims.size());
  for (const auto& [name, type] : inputs) {
    absl::StatusOr<InputGuard> g = GuardFor(name, type, dynamic_dims);
    if (!g.ok()) return g.status();
    for (size_t axis = 0; axis < g->dims.size(); ++axis) {
      int k = g->dims[axis].dynamic;
      if (k >= 0 && sig.dim_sources_[k].empty()) {
        sig.dim_sources_[k] = absl::StrCat(name, ".shape[", axis, "]");
      }
    }
    sig.inputs_.push_back(*std::move(g));
  }
  for (size_t k = 0; k < dynamic_dims.size(); ++k) {
    if (sig.dim_sources_[k].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dynamic dim '", dynamic_dims[k], "' is not a dim of any input, so no call binds it"));
    }
  }
  for (const auto& [name, type] : padded_inputs) {
    auto same = [&](const std::pair<std::string, ir::ValueType>& in) { return in.first == name; };
    auto it = std::find_if(inputs.begin(), inputs.end(), same);
    if (it != inputs.end()) {
      if (!(it->second == type)) {
        return absl::InvalidArgumentError(
            absl::StrCat("input '", name, "' is ", ir::TypeToString(it->second), " unpadded but ",
                         ir::TypeToString(type), " when traced for padding"));
      }
      continue;
    }
    absl::StatusOr<InputGuard> g = GuardFor(name, type, dynamic_dims);
    if (!g.ok()) return g.status();
    sig.masks_.push_back(*std::move(g));
  }
  return sig;
}

bool InputSignature::Bind(absl::Span<const runtime::Tensor* const> args, DimValues* values) const {
  uint32_t bound = 0;  // bit k: dynamic dim k has a value
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const runtime::Tensor* t = args[i];
    const InputGuard& g = inputs_[i];
    if (t == nullptr || t->dtype() != g.dtype || t->shape().size() != g.dims.size()) return false;
    const int64_t* dims = t->shape().data();
    for (size_t a = 0; a < g.dims.size(); ++a) {
      const DimGuard& d = g.dims[a];
      if (d.dynamic < 0) {
        if (dims[a] != d.constant) return false;
      } else if (bound & (1u << d.dynamic)) {
        if ((*values)[d.dynamic] != dims[a]) return false;
      } else {
        (*values)[d.dynamic] = dims[a];
        bound |= 1u << d.dynamic;
      }
    }
  }
  return true;
}

std::string InputSignature::ExplainFailure(absl::Span<const runtime::Tensor* const> args) const {
  DimValues values{};
  uint32_t bound = 0;
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
      } else if (bound & (1u << d.dynamic)) {
        if (values[d.dynamic] != got) {
          return absl::StrCat(g.name, ".shape[", a, "] == ", DimSource(d.dynamic), " (",
                              dynamic_dims_[d.dynamic], ") failed: got ", got, " vs ",
                              values[d.dynamic]);
        }
      } else {
        values[d.dynamic] = got;
        bound |= 1u << d.dynamic;
      }
    }
  }
  return "";
}

std::string InputSignature::ToString() const {
  std::vector<std::string> parts;
  for (const InputGuard& g : inputs_) parts.push_back(DimText(g, dynamic_dims_));
  return absl::StrJoin(parts, ", ");
}

int EntryGuards::CountFailures(const DimValues& values) const {
  int n = 0;
  for (int k = 0; k < num_dynamic_; ++k) n += ranges_[k].Contains(values[k]) ? 0 : 1;
  return n;
}

namespace {

std::string RangeText(const std::string& source, const DimRange& r) {
  if (r.lo == r.hi) return absl::StrCat(source, " == ", r.lo);
  if (r.unbounded()) return absl::StrCat(source, " >= ", r.lo);
  return absl::StrCat(source, " in [", r.lo, ", ", r.hi, "]");
}

}  // namespace

std::string EntryGuards::ExplainFailure(const InputSignature& signature,
                                        const DimValues& values) const {
  for (int k = 0; k < num_dynamic_; ++k) {
    if (!ranges_[k].Contains(values[k])) {
      return absl::StrCat(RangeText(signature.DimSource(k), ranges_[k]), " failed: got ",
                          values[k]);
    }
  }
  return "";
}

std::string EntryGuards::ToString(const InputSignature& signature) const {
  std::vector<std::string> parts;
  for (int k = 0; k < num_dynamic_; ++k) {
    parts.push_back(RangeText(signature.DimSource(k), ranges_[k]));
  }
  return parts.empty() ? "(no dynamic dims)" : absl::StrJoin(parts, ", ");
}

}  // namespace graphjit::compiler::cache
