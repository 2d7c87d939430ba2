// InlineNode: a graph node's value at an index as a kernel expression, for the ops that
// lowering inlines into their consumers (pointwise ops, index rewrites: transpose, reshape,
// slice, window, a concat's select chain); build_kernels asks for operands' values
// through `value`, which loads a buffer or inlines in turn.
#ifndef GRAPHJIT_COMPILER_LOWER_INLINE_NODE_H_
#define GRAPHJIT_COMPILER_LOWER_INLINE_NODE_H_

#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "compiler/lower/kernel_ir.h"
#include "ir/graph.h"

namespace graphjit::compiler {

using ValueFn = absl::FunctionRef<ExprPtr(ir::ValueId, const std::vector<ExprPtr>&)>;

// Node `v` of `g` at index `idx` (its symbols' names `symbols`, as the program's). CHECKs
// that `v` is an op lowering inlines (never a source, a kernel or a composite).
ExprPtr InlineNode(const ir::Graph& g, ir::ValueId v, const std::vector<ExprPtr>& idx,
                   const std::vector<std::string>& symbols, ValueFn value);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_INLINE_NODE_H_
