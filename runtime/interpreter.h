// The graph interpreter: runs an ir::Graph node by node with the eager kernels. It is
// the reference semantics the compiled code is checked against.
#ifndef GRAPHJIT_RUNTIME_INTERPRETER_H_
#define GRAPHJIT_RUNTIME_INTERPRETER_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/graph.h"
#include "runtime/tensor.h"

namespace graphjit::runtime {

// Tensors by name (graph inputs, or named parameters).
using TensorMap = absl::flat_hash_map<std::string, Tensor>;

// Runs `graph` and returns its outputs in order. Symbols that appear as a bare dim of an
// input (`S` in `[2, S, 16]`) are bound from the input tensors; others (such as `P`)
// come from `bindings` (a symbol given in both must agree). Every input and param of
// the graph must be supplied with its declared dtype, rank and dims under the binding;
// otherwise InvalidArgument names the input, the expected and the actual type.
absl::StatusOr<std::vector<Tensor>> Interpret(const ir::Graph& graph, const TensorMap& inputs,
                                              const TensorMap& params,
                                              const ir::Bindings& bindings = {});

// Runs control-flow node `node` (a while, a scan or an if, ir/regions.h) on `operands`,
// its regions reading their params from `params` and their symbols from `bindings`: a
// while's final carried values, in order; a scan's, then its per-row values stacked; or
// the taken branch's one value. The interpreter runs
// while nodes with it; so do the eager context and the compiled graph's reference checks.
absl::StatusOr<std::vector<Tensor>> RunRegionOp(const ir::Node& node,
                                                absl::Span<const Tensor* const> operands,
                                                const TensorMap& params,
                                                const ir::Bindings& bindings);

// The binding step alone: checks `inputs` against the graph's declared input types and
// returns `bindings` extended with the symbols bound from the input shapes.
absl::StatusOr<ir::Bindings> BindInputs(const ir::Graph& graph, const TensorMap& inputs,
                                        const ir::Bindings& bindings);

// Binds the unbacked symbol that runtime node `n` (ir::IsRuntimeOp) defines,
// if any, to its dim in `result`, the node's value as its kernel made it.
void BindDefinedSymbol(const ir::Node& n, const Tensor& result, ir::Bindings* bindings);

}  // namespace graphjit::runtime

#endif  // GRAPHJIT_RUNTIME_INTERPRETER_H_
