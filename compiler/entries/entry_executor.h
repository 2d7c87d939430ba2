// EntryExecutor: runs a served entry on a call's inputs: the call symbols completed from
// the named dims, then, under a padding policy, the inputs padded to the entry's lengths
// (with the masks that hide the padding) and the outputs cut back; then the entry's code,
// or the interpreter on its traced graph while a tiered entry's code is being compiled.
//
// Unpadded entries get the caller's inputs as they are, so inputs the code updates in
// place (CompiledGraph::donated_inputs, the decode layer's caches) are updated and
// returned as outputs. Padded entries pad copies, so the caller's tensors are never
// written.
#ifndef GRAPHJIT_COMPILER_ENTRIES_ENTRY_EXECUTOR_H_
#define GRAPHJIT_COMPILER_ENTRIES_ENTRY_EXECUTOR_H_

#include <vector>

#include "absl/status/statusor.h"
#include "compiler/entries/cache_entry.h"
#include "compiler/entries/guards.h"
#include "compiler/entries/jit_options.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler::entries {

class EntryExecutor {
 public:
  // All three must outlive the executor.
  EntryExecutor(const runtime::TensorMap& weights, const JitOptions& options,
                const InputSignature& signature);

  // Runs `entry` (its code `code`, null for the interpreter) on `inputs`, whose dynamic
  // dims have `values`, with the caller's `bindings`.
  absl::StatusOr<std::vector<runtime::Tensor>> Run(const CacheEntry& entry,
                                                   const CompiledGraph* code,
                                                   const runtime::TensorMap& inputs,
                                                   const DimValues& values,
                                                   const ir::Bindings& bindings) const;
  // The call symbols of a call whose dynamic dims have `values`: `bindings` with the
  // named dims added, completed by JitOptions::complete_bindings.
  ir::Bindings CallBindings(const DimValues& values, const ir::Bindings& bindings) const;
  // Every dynamic dim's symbol bound to its value in `values` (the shapes of a call).
  ir::Bindings DimBindings(const DimValues& values) const;
  // Whether CallBindings can add to the caller's bindings (named dims or a completion).
  bool completes_bindings() const { return completes_bindings_; }

 private:
  absl::StatusOr<std::vector<runtime::Tensor>> RunPadded(const CacheEntry& entry,
                                                         const CompiledGraph* code,
                                                         const runtime::TensorMap& inputs,
                                                         const DimValues& real,
                                                         ir::Bindings bindings) const;
  absl::StatusOr<std::vector<runtime::Tensor>> RunTier(const CacheEntry& entry,
                                                       const CompiledGraph* code,
                                                       const runtime::TensorMap& inputs,
                                                       const ir::Bindings& bindings) const;

  const runtime::TensorMap& weights_;
  const JitOptions& options_;
  const InputSignature& signature_;
  bool completes_bindings_ = false;
};

}  // namespace graphjit::compiler::entries

#endif  // GRAPHJIT_COMPILER_ENTRIES_ENTRY_EXECUTOR_H_
