// constant_fold: evaluates, at compile time, the nodes whose operands are all known.
#ifndef GRAPHJIT_COMPILER_PASSES_CONSTANT_FOLD_H_
#define GRAPHJIT_COMPILER_PASSES_CONSTANT_FOLD_H_

#include "absl/status/statusor.h"
#include "compiler/passes/pass_context.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// A node is known when it is a constant, a constant-shaped full or iota, a parameter (only
// if ctx->params_are_constant), or a computing node whose operands are all known and whose
// shape is constant. Known computing nodes are evaluated once with the runtime's eager
// kernels and replaced: by a `constant` node when small (<= kMaxInlineElements), else by a
// new parameter `folded.<N>` added to ctx->params. A parameter of one element (a clip's
// bound) becomes a constant too, so lowering inlines its value into the kernels that read
// it. Returns whether anything was folded.
absl::StatusOr<bool> ConstantFold(ir::Graph* graph, PassContext* ctx);

inline constexpr int64_t kMaxInlineElements = 16;

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_CONSTANT_FOLD_H_
