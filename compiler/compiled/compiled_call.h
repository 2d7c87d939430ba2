// CompiledCall: a reusable call frame of one CompiledGraph, for loops that call the same
// code again and again (a decode loop, a cache hit). Inputs come by position, parameter
// and constant pointers are bound once, outputs and the workspace are kept and reused
// while their shapes stay, so a steady-state call allocates nothing and does no name
// lookups: what remains is the dtype / shape checks and the kernels.
//
// Any input the fast checks do not accept takes CompiledGraph::Run's full checks
// (runtime::BindInputs and PrepareCall), so errors carry the same messages; the bounds
// checks of slices, KV writes, arg reductions and gathers run on every call, as in Run.
#ifndef GRAPHJIT_COMPILER_COMPILED_COMPILED_CALL_H_
#define GRAPHJIT_COMPILER_COMPILED_COMPILED_CALL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "compiler/compiled/compiled_graph.h"

namespace graphjit::compiler {

class CompiledCall {
 public:
  // `graph` must outlive the call. One CompiledCall per thread: Run is not reentrant.
  explicit CompiledCall(const CompiledGraph& graph);

  // The graph's input names, in the order Run takes them.
  const std::vector<std::string>& input_names() const { return input_names_; }

  // Runs on `inputs` (one per input_names(), in that order) with the call symbols that no
  // input dim binds (say P) from `bindings`. The results are in outputs() until the next
  // Run, which writes into the same tensors when their shapes are unchanged (Clone() what
  // you keep). Donated inputs are updated in place, as by CompiledGraph::Run.
  absl::Status Run(absl::Span<const runtime::Tensor> inputs, const ir::Bindings& bindings = {});
  // The same with the inputs by pointer (each non-null), so a caller holding them
  // elsewhere (a cache's signature order) passes them without copying tensors.
  absl::Status Run(absl::Span<const runtime::Tensor* const> inputs,
                   const ir::Bindings& bindings = {});
  const std::vector<runtime::Tensor>& outputs() const { return outputs_; }
  // Moves the results out (the next Run allocates new ones).
  std::vector<runtime::Tensor> TakeOutputs() {
    std::vector<runtime::Tensor> out(outputs_.size());
    out.swap(outputs_);
    return out;
  }

  // Swaps outputs()[k] with tensors[k] for each k < tensors.size(): a loop takes the
  // results as its next state and hands its old state's buffers back, which the next Run
  // writes into when their shapes are unchanged (compiler/compiled/control_flow.h).
  void ExchangeOutputs(absl::Span<runtime::Tensor> tensors);

  // The frame the last successful fast-path Run handed to the kernels (argument
  // pointers, program symbols, workspace): graph().kernels().Run(args, symbols,
  // workspace) runs the kernels alone on it, so a benchmark can tell the call's overhead
  // from its kernels in one run. Valid until the next Run.
  void** frame_args() { return args_.data(); }
  const int64_t* frame_symbols() const { return symbols_.data(); }
  char* frame_workspace() const { return workspace_.get(); }

 private:
  // A symbol's value for this call: from an input dim or the bindings.
  struct Slot {
    std::string name;
    int input = -1, axis = -1;  // the first input dim that is exactly this symbol, if any
  };
  // One input dim: a constant, or exactly one symbol (slot).
  struct DimCheck {
    int input, axis;
    int64_t constant;
    int slot;  // -1: constant
  };
  absl::Status RunFull(absl::Span<const runtime::Tensor* const> inputs,
                       const ir::Bindings& bindings);
  bool BindFast(absl::Span<const runtime::Tensor* const> inputs, const ir::Bindings& bindings);
  // Writes this call's slot values into bound_ (no allocation: its keys are fixed).
  void UpdateBindings();

  const CompiledGraph& graph_;
  std::vector<std::string> input_names_;
  std::vector<ir::ValueId> input_ids_;
  std::vector<ir::ValueType> input_types_;  // per input position, read on every call
  std::vector<Slot> slots_;
  std::vector<DimCheck> dims_;
  std::vector<int> program_slot_;  // slot of each program symbol
  bool fast_ = true;               // false: every call takes the full checks
  bool needs_bindings_ = false;    // shapes or bounds checks need an ir::Bindings
  // The slots by name, for the bounds checks and symbolic shapes; built once, then only
  // its values change (bound_values_ point into it: no insertion after construction).
  ir::Bindings bound_;
  std::vector<int64_t*> bound_values_;
  std::vector<int64_t> values_;   // per slot, this call
  std::vector<int64_t> symbols_;  // per program symbol, this call
  std::vector<void*> args_;       // params and constants bound once
  std::vector<int> arg_input_;    // the input position of each kInput arg, else -1
  // Per kOutput arg whose shape is constant: that shape (checked against the kept output
  // without evaluating SymExprs on every call); empty optional for symbolic shapes.
  std::vector<std::optional<std::vector<int64_t>>> constant_output_dims_;
  std::optional<int64_t> constant_workspace_bytes_;
  std::vector<runtime::Tensor> outputs_;
  std::vector<const runtime::Tensor*> input_pointers_;  // Run by tensors: their addresses
  std::shared_ptr<char> workspace_;
  int64_t workspace_capacity_ = 0;
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_COMPILED_COMPILED_CALL_H_
