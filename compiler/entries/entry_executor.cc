#include "compiler/entries/entry_executor.h"

#include <algorithm>
#include <utility>

#include "compiler/entries/padding.h"
#include "ir/status_macros.h"

namespace graphjit::compiler::entries {
namespace {

bool HasDynamicDim(const std::vector<DimGuard>& dims) {
  return std::any_of(dims.begin(), dims.end(), [](const DimGuard& d) { return d.dynamic >= 0; });
}

}  // namespace

ir::Bindings EntryExecutor::CallBindings(const DimValues& values,
                                         const ir::Bindings& bindings) const {
  ir::Bindings b = bindings;
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    const DynamicDim& d = signature_.dynamic_dims()[k];
    if (d.named) b[d.symbol] = values[k];
  }
  return options_.complete_bindings ? options_.complete_bindings(std::move(b)) : b;
}

ir::Bindings EntryExecutor::DimBindings(const DimValues& values) const {
  ir::Bindings b;
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    b[signature_.dynamic_dims()[k].symbol] = values[k];
  }
  return b;
}

EntryExecutor::EntryExecutor(const runtime::TensorMap& weights, const JitOptions& options,
                             const InputSignature& signature)
    : weights_(weights), options_(options), signature_(signature) {
  completes_bindings_ = options_.complete_bindings != nullptr;
  for (const DynamicDim& d : signature_.dynamic_dims()) {
    completes_bindings_ = completes_bindings_ || d.named;
  }
}

absl::StatusOr<std::vector<runtime::Tensor>> EntryExecutor::Run(
    const CacheEntry& entry, const CompiledGraph* code, const runtime::TensorMap& inputs,
    const DimValues& values, const ir::Bindings& bindings) const {
  ir::Bindings b = CallBindings(values, bindings);
  if (entry.padded()) return RunPadded(entry, code, inputs, values, std::move(b));
  return RunTier(entry, code, inputs, b);
}

absl::StatusOr<std::vector<runtime::Tensor>> EntryExecutor::RunTier(
    const CacheEntry& entry, const CompiledGraph* code, const runtime::TensorMap& inputs,
    const ir::Bindings& bindings) const {
  if (code != nullptr) return code->Run(inputs, bindings);
  return runtime::Interpret(entry.traced(), inputs, weights_, bindings);
}

absl::StatusOr<std::vector<runtime::Tensor>> EntryExecutor::RunPadded(
    const CacheEntry& entry, const CompiledGraph* code, const runtime::TensorMap& inputs,
    const DimValues& real, ir::Bindings bindings) const {
  DimValues lengths(signature_.num_dynamic());
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    lengths[k] = RunLength(entry.keys()[k], real[k]);
    // Call symbols (P) were completed from the real length; the graph's dims are padded.
    if (signature_.dynamic_dims()[k].named)
      bindings[signature_.dynamic_dims()[k].symbol] = lengths[k];
  }
  // Copies even when no padding is needed, so the caller's tensors are never written.
  runtime::TensorMap padded = inputs;
  for (const InputGuard& g : signature_.inputs()) {
    if (!HasDynamicDim(g.dims)) continue;
    GJ_ASSIGN_OR_RETURN(padded[g.name], Resize(inputs.at(g.name), ShapeAt(g.dims, lengths)));
  }
  for (const InputGuard& m : signature_.masks()) {
    GJ_ASSIGN_OR_RETURN(padded[m.name], MakeMask(m, real, lengths));
  }
  GJ_ASSIGN_OR_RETURN(std::vector<runtime::Tensor> outputs, RunTier(entry, code, padded, bindings));
  for (size_t i = 0; i < outputs.size() && i < entry.output_dims().size(); ++i) {
    if (!HasDynamicDim(entry.output_dims()[i])) continue;
    std::vector<int64_t> shape = ShapeAt(entry.output_dims()[i], real);
    if (outputs[i].shape() == shape) continue;
    GJ_ASSIGN_OR_RETURN(outputs[i], Resize(outputs[i], shape));
  }
  return outputs;
}

}  // namespace graphjit::compiler::entries
