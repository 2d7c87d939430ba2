#include "models/jit_model.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"

namespace graphjit::models {

absl::StatusOr<compiler::JitOptions> ModelJitOptions(const Model& model,
                                                     compiler::JitOptions options) {
  const std::vector<std::string> dynamic = model.DynamicDims();
  const frontend::InputTypes inputs = model.InputTypes({});
  std::vector<compiler::DimSpec> dims;
  for (const auto& [name, type] : inputs) {
    for (size_t axis = 0; axis < type.shape.size(); ++axis) {
      std::string symbol;
      if (type.shape[axis].IsSymbol(&symbol) &&
          std::find(dynamic.begin(), dynamic.end(), symbol) != dynamic.end()) {
        dims.push_back({name, static_cast<int>(axis), symbol});
      }
    }
  }
  // The declared types give the guards (and the old, exact messages for a wrong dtype,
  // rank or constant dim); their symbols are the dynamic dims.
  options.input_types = inputs;
  if (compiler::entries::PadsInputs(options.policy) && !dims.empty()) {
    TraceOptions padded;
    padded.padded = true;
    compiler::PaddingSpec padding{dims, {}};
    for (const auto& [name, type] : model.InputTypes(padded)) {
      auto same = [&](const auto& in) { return in.first == name; };
      if (std::none_of(inputs.begin(), inputs.end(), same)) {
        padding.masks.push_back({name, type.shape, type.dtype});
      }
    }
    if (padding.masks.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          model.Spec(), ": policy ", compiler::entries::PolicyName(options.policy),
          " pads the dynamic dims, but the model declares no mask input for padded traces; "
          "use exact, symbolic or auto"));
    }
    options.padding = std::move(padding);
  }
  options.complete_bindings = [&model](ir::Bindings b) {
    return model.CompleteBindings(std::move(b));
  };
  return options;
}

absl::StatusOr<std::unique_ptr<compiler::JitFunction>> JitModel(const Model& model,
                                                                compiler::JitOptions options) {
  GJ_ASSIGN_OR_RETURN(compiler::JitOptions full, ModelJitOptions(model, std::move(options)));
  std::string name = model.Spec().substr(0, model.Spec().find(':'));
  return compiler::Jit(
      std::move(name), [&model](frontend::Context& ctx) { return model.Forward(ctx); },
      model.params(), std::move(full));
}

}  // namespace graphjit::models
