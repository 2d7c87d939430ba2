#include "compiler/entries/call_signature.h"

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status_macros.h"
#include "ir/sym_expr.h"

namespace graphjit::compiler::entries {
namespace {

// The index of the dynamic dim named `symbol`, or -1.
int DimIndex(const std::vector<DynamicDim>& dims, const std::string& symbol) {
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k].symbol == symbol) return static_cast<int>(k);
  }
  return -1;
}

// How one dim is keyed: exact and auto apply to every dim; symbolic to the declared
// ones; pow2 and mult128 to the padded ones; every other dim is exact.
ShapePolicy DimPolicy(ShapePolicy policy, bool declared, bool padded) {
  switch (policy) {
    case ShapePolicy::kExact:
    case ShapePolicy::kAuto:
      return policy;
    case ShapePolicy::kSymbolic:
      return declared ? ShapePolicy::kSymbolic : ShapePolicy::kExact;
    case ShapePolicy::kPow2:
    case ShapePolicy::kMult128:
      return padded ? policy : ShapePolicy::kExact;
  }
  return ShapePolicy::kExact;
}

// The types and dynamic dims of declared JitOptions::input_types.
absl::Status DeclaredTypes(const JitOptions& options, const std::string& prefix,
                           frontend::InputTypes* types, std::vector<DynamicDim>* dims) {
  *types = *options.input_types;
  // The dynamic dims are the declared types' symbols; a padding dim names one by its
  // symbol or by where it appears.
  std::set<std::string> padded;
  if (options.padding) {
    for (const DimSpec& d : options.padding->dims) {
      std::string symbol = d.symbol;
      for (const auto& [n, type] : *types) {
        if (symbol.empty() && n == d.input && d.axis < type.rank()) {
          type.shape[d.axis].IsSymbol(&symbol);
        }
      }
      if (symbol.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(prefix, ": padding dim ", d.ToString(),
                         " is not a symbolic dim of the declared input types"));
      }
      padded.insert(symbol);
    }
  }
  std::set<std::string> seen;
  for (const auto& [n, type] : *types) {
    for (const ir::SymExpr& e : type.shape) {
      std::string symbol;
      if (!e.IsSymbol(&symbol) || !seen.insert(symbol).second) continue;
      dims->push_back({symbol, DimPolicy(options.policy, true, padded.contains(symbol)), true});
    }
  }
  return absl::OkStatus();
}

// The types and dynamic dims of a call's tensors: every dim a dynamic dim, keyed per the
// policy.
absl::Status CallTypes(const JitOptions& options, const std::string& prefix,
                       const runtime::TensorMap& inputs, frontend::InputTypes* types,
                       std::vector<DynamicDim>* dims) {
  std::vector<std::string> names;
  for (const auto& [n, t] : inputs) names.push_back(n);
  std::sort(names.begin(), names.end());
  struct Declared {
    const DimSpec* spec;
    bool padded;
  };
  std::vector<Declared> declared;
  for (const DimSpec& d : options.dynamic_dims) declared.push_back({&d, false});
  if (options.padding && PadsInputs(options.policy)) {
    for (const DimSpec& d : options.padding->dims) declared.push_back({&d, true});
  }
  std::set<std::string> named;
  for (const Declared& d : declared) {
    auto it = inputs.find(d.spec->input);
    if (it == inputs.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          prefix, ": dynamic dim ", d.spec->ToString(), " names input '", d.spec->input,
          "', which this call does not pass (inputs: ", absl::StrJoin(names, ", "), ")"));
    }
    if (d.spec->axis >= it->second.rank()) {
      return absl::InvalidArgumentError(absl::StrCat(prefix, ": dynamic dim ", d.spec->ToString(),
                                                     ": input '", d.spec->input, "' is ",
                                                     it->second.TypeString()));
    }
    if (!d.spec->symbol.empty()) named.insert(d.spec->symbol);
  }
  for (const std::string& n : names) {
    const runtime::Tensor& t = inputs.at(n);
    ir::ValueType type{t.dtype(), {}};
    for (int axis = 0; axis < t.rank(); ++axis) {
      const Declared* decl = nullptr;
      for (const Declared& d : declared) {
        if (d.spec->input == n && d.spec->axis == axis && (decl == nullptr || d.padded)) decl = &d;
      }
      DynamicDim dim;
      dim.named = decl != nullptr && !decl->spec->symbol.empty();
      dim.symbol = dim.named ? decl->spec->symbol : ir::ToSymbolName(absl::StrCat(n, "_", axis));
      // Unnamed dims never share a symbol by accident (`a.b` and `a_b` both sanitize to
      // `a_b_0`): only names the caller chose are shared.
      while (!dim.named && (named.contains(dim.symbol) || DimIndex(*dims, dim.symbol) >= 0)) {
        dim.symbol += "_";
      }
      dim.policy = DimPolicy(options.policy, decl != nullptr, decl != nullptr && decl->padded);
      int k = DimIndex(*dims, dim.symbol);
      if (k < 0) {
        dims->push_back(dim);
      } else if (dim.padded()) {
        (*dims)[k].policy = dim.policy;  // a named dim padded anywhere is padded everywhere
      }
      type.shape.push_back(ir::SymExpr::Symbol(dim.symbol));
    }
    types->emplace_back(n, std::move(type));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<InputSignature> CallSignature(const JitOptions& options,
                                             const runtime::TensorMap& inputs,
                                             const std::string& prefix) {
  const ShapePolicy policy = options.policy;
  std::vector<DynamicDim> dims;
  frontend::InputTypes types;
  if (options.input_types) {
    GJ_RETURN_IF_ERROR(DeclaredTypes(options, prefix, &types, &dims));
  } else {
    GJ_RETURN_IF_ERROR(CallTypes(options, prefix, inputs, &types, &dims));
  }

  frontend::InputTypes masks;
  if (options.padding && PadsInputs(policy)) {
    std::optional<ir::DType> first;
    for (const auto& [n, type] : types) {
      if (!options.padding->dims.empty() && n == options.padding->dims.front().input) {
        first = type.dtype;
      }
    }
    for (const MaskSpec& m : options.padding->masks) {
      ir::DType dtype = m.dtype.value_or(first.value_or(ir::DType::kF64));
      if (!ir::IsFloat(dtype)) {
        return absl::InvalidArgumentError(absl::StrCat(prefix, ": mask '", m.input,
                                                       "' must be a float tensor (an additive 0 / "
                                                       "-inf mask), got ",
                                                       ir::DTypeName(dtype)));
      }
      for (const ir::SymExpr& e : m.shape) {
        std::string symbol;
        if (e.IsConstant()) continue;
        int k = e.IsSymbol(&symbol) ? DimIndex(dims, symbol) : -1;
        if (k < 0 || !dims[k].padded()) {
          return absl::InvalidArgumentError(
              absl::StrCat(prefix, ": mask '", m.input, "' dim `", e.ToString(),
                           "` must be a constant or the symbol of a padded dim"));
        }
      }
      masks.emplace_back(m.input, ir::ValueType{dtype, m.shape});
    }
  }
  absl::StatusOr<InputSignature> sig = InputSignature::Create(types, masks, std::move(dims));
  if (!sig.ok()) {
    return absl::Status(sig.status().code(), absl::StrCat(prefix, ": ", sig.status().message()));
  }
  return sig;
}

}  // namespace graphjit::compiler::entries
