// Reverse-mode automatic differentiation of graphs: from a forward graph with a scalar
// loss, one graph that computes the loss and its gradients. The backward nodes are
// ordinary ops of ir/ops.def, so the result runs in the interpreter, through the pass
// pipeline and the JIT, and is counted by the FLOP analysis like any graph.
#ifndef GRAPHJIT_COMPILER_AUTODIFF_AUTODIFF_H_
#define GRAPHJIT_COMPILER_AUTODIFF_AUTODIFF_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// Differentiates output `loss_output` of `forward` (a scalar f32 or f64) with respect to
// the params and inputs named in `wrt` (float typed; a param is looked up before an input
// of the same name). The result keeps the forward's inputs and params; its outputs are
// the loss, then one gradient per `wrt` entry, in order, each of that value's type.
//
// Only gradients on a path from a `wrt` value to the loss are built, and only for the
// operands that need them (so a forward matmul adds exactly its two backward matmuls, or
// one when an operand needs no gradient); a `wrt` value the loss does not depend on gets
// zeros. Forward nodes the result does not need are removed. InvalidArgument names a bad
// loss output or `wrt` entry.
absl::StatusOr<ir::Graph> BuildGradientGraph(const ir::Graph& forward,
                                             absl::Span<const std::string> wrt,
                                             int loss_output = 0);

// The names of every param and every float input of `graph`, in graph order: what a
// training step differentiates by default (integer inputs such as tokens have none).
std::vector<std::string> DifferentiableSources(const ir::Graph& graph);

// `graph` with output `output` reduced to a scalar by summing over every axis (as
// `y.sum().backward()` seeds a non-scalar output); the other outputs are dropped.
absl::StatusOr<ir::Graph> SumOutputToScalar(const ir::Graph& graph, int output = 0);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_AUTODIFF_AUTODIFF_H_
