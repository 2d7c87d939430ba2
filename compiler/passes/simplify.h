// simplify: algebraic identities that make a graph smaller without changing its results.
#ifndef GRAPHJIT_COMPILER_PASSES_SIMPLIFY_H_
#define GRAPHJIT_COMPILER_PASSES_SIMPLIFY_H_

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// Rewrites, on symbolic shapes as well as constant ones:
//   x*1, 1*x, x+0, 0+x, x-0, x/1 -> x (only when x already has the result's type, so a
//   broadcast is never dropped); x-x -> 0 (assumes x finite, as fast-math would);
//   neg(neg x) -> x; x / c -> x * (1/c) for a scalar float constant c;
//   reshape(reshape x) -> one reshape; transpose(transpose x) -> one transpose;
//   reshapes and transposes that change nothing -> x;
//   exp(log x) -> x only where exact: x known non-negative (exp, sigmoid, sqrt, rsqrt,
//   abs, softmax, or a non-negative constant).
// Returns whether anything changed.
absl::StatusOr<bool> Simplify(ir::Graph* graph);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_SIMPLIFY_H_
