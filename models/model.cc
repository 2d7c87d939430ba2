#include "models/model.h"

#include <utility>

#include "frontend/eager_context.h"
#include "ir/status_macros.h"

namespace graphjit::models {

absl::Status Model::SetWeights(runtime::TensorMap weights) {
  GJ_RETURN_IF_ERROR(runtime::CheckWeights(params_, weights));
  params_ = std::move(weights);
  return absl::OkStatus();
}

absl::StatusOr<ir::Graph> TraceModel(const Model& model, const TraceOptions& options) {
  std::string name = model.Spec().substr(0, model.Spec().find(':'));
  frontend::TraceContext ctx(name, model.InputTypes(options), model.params());
  std::vector<frontend::Value> outputs = model.Forward(ctx);
  return std::move(ctx).Finish(outputs);
}

absl::StatusOr<std::vector<runtime::Tensor>> RunEager(const Model& model,
                                                      const runtime::TensorMap& inputs,
                                                      const ir::Bindings& bindings) {
  // Check the inputs against the declared types first, with the interpreter's messages
  // (`input 'k_cache': expected ...`), rather than failing later inside some op.
  TraceOptions options;
  options.padded = inputs.contains("kmask");
  ir::Graph declared("inputs");
  for (const auto& [name, type] : model.InputTypes(options)) {
    declared.Append(ir::OpCode::kInput, {},
                    ir::Attrs{{"name", name}, {"dtype", type.dtype}, {"shape", type.shape}}, type);
  }
  GJ_ASSIGN_OR_RETURN(ir::Bindings bound, runtime::BindInputs(declared, inputs, bindings));
  frontend::EagerContext ctx(inputs, model.params(), bound);
  std::vector<frontend::Value> outputs = model.Forward(ctx);
  return ctx.Results(outputs);
}

}  // namespace graphjit::models
