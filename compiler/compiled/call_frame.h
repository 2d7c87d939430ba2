// CallFrame: the arguments of one call of a lowered program, built from named tensors
// with the same checks and messages as the interpreter.
#ifndef GRAPHJIT_COMPILER_COMPILED_CALL_FRAME_H_
#define GRAPHJIT_COMPILER_COMPILED_CALL_FRAME_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/lower/lower.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {

class DynamicBounds;

struct CallFrame {
  std::vector<void*> args;               // Program args
  std::vector<int64_t> symbols;          // Program symbols
  std::shared_ptr<char> workspace;       // 64-byte aligned, workspace_bytes long
  std::vector<runtime::Tensor> outputs;  // graph outputs in order; donated ones share
                                         // the input's buffer
};

// Checks `inputs` against the graph's declared inputs (dtype, rank, dims; symbols bound
// consistently; every program symbol bound) and `params` against its params; checks that
// gather indices fed directly by an input are in range; allocates outputs and workspace.
// `constants` holds the tensors of the program's constant buffers (ArgBinding kConstant),
// in arg order. `bounds`: the graph's DynamicBounds if prepared (else prepared here).
absl::StatusOr<CallFrame> PrepareCall(const ir::Graph& graph, const LoweredGraph& lowered,
                                      const runtime::TensorMap& inputs,
                                      const runtime::TensorMap& params,
                                      const std::vector<runtime::Tensor>& constants,
                                      const ir::Bindings& bindings,
                                      const DynamicBounds* bounds = nullptr);

// The bounds CompiledGraph::Run checks for `bindings` (every symbol bound): slice and
// KV-write rows in range, arg reductions over non-empty axes, gathers from tables that
// have a row. Positions bound at call
// time must keep every access in bounds: compiled code does not check as it runs, so a
// bad P is refused here, as the interpreter's kernels refuse it. Prepared once per graph
// (the SymExprs to evaluate, in graph order), checked per call.
class DynamicBounds {
 public:
  DynamicBounds() = default;  // no checks
  explicit DynamicBounds(const ir::Graph& graph);
  bool empty() const { return checks_.empty(); }
  // OK, or InvalidArgument naming the first node whose bounds fail (or an unbound symbol).
  absl::Status Check(const ir::Bindings& bindings) const;

 private:
  struct Range {
    ir::ValueId id;
    ir::OpCode op;
    // kv_write and slice: lo <= hi <= dim; arg reductions: dim > 0 (lo, hi unused);
    // gather: dim (the table's rows) > 0 where hi (the output's elements) > 0.
    // window: dim >= hi (the span of the window over dim `axis`).
    ir::SymExpr lo, hi, dim;
    int axis = 0;
  };
  std::vector<Range> checks_;
};

// The tensors of the constant buffers of `lowered`, in arg order.
std::vector<runtime::Tensor> ConstantTensors(const ir::Graph& graph, const LoweredGraph& lowered);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_COMPILED_CALL_FRAME_H_
