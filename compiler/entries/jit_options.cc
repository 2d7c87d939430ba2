#include "compiler/entries/jit_options.h"

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "ir/sym_expr.h"

namespace graphjit::compiler {
std::string DimSpec::ToString() const { return absl::StrCat(input, ".shape[", axis, "]"); }

absl::Status CheckJitOptions(const JitOptions& options) {
  GJ_RETURN_IF_ERROR(CheckThreads(options.compile.threads, "JitOptions::compile.threads"));
  GJ_RETURN_IF_ERROR(CheckVectorBytes(options.compile.codegen.max_vector_bytes,
                                      "JitOptions::compile.codegen.max_vector_bytes"));
  if (options.capacity < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("capacity must be >= 0 (0: no bound), got ", options.capacity));
  }
  // Declared types without symbols have nothing to pad: every policy is exact there.
  bool static_types = false;
  if (options.input_types) {
    static_types = true;
    for (const auto& [n, type] : *options.input_types) {
      for (const ir::SymExpr& e : type.shape) static_types = static_types && e.IsConstant();
    }
  }
  if (entries::PadsInputs(options.policy) && !static_types &&
      (!options.padding || options.padding->dims.empty())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "policy ", entries::PolicyName(options.policy),
        " pads inputs to buckets, so it needs JitOptions::padding: the dims to pad (e.g. "
        "{\"k_cache\", 1, \"S\"}) and the mask inputs that hide the padding; or use exact, "
        "symbolic or auto"));
  }
  if (options.policy == entries::ShapePolicy::kSymbolic && options.dynamic_dims.empty() &&
      !options.input_types && !(options.padding && !options.padding->dims.empty())) {
    return absl::InvalidArgumentError(
        "policy symbolic needs JitOptions::dynamic_dims, the dims to leave symbolic (e.g. "
        "{\"x\", 0} for dim 0 of input x)");
  }
  std::vector<DimSpec> declared = options.dynamic_dims;
  if (options.padding) {
    declared.insert(declared.end(), options.padding->dims.begin(), options.padding->dims.end());
  }
  for (const DimSpec& d : declared) {
    if (d.axis < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("dynamic dim ", d.ToString(), ": axis must be >= 0"));
    }
    if (!d.symbol.empty() && !ir::IsSymbolName(d.symbol)) {
      return absl::InvalidArgumentError(
          absl::StrCat("dynamic dim ", d.ToString(), ": symbol '", d.symbol,
                       "' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace graphjit::compiler
