// dce: dead code elimination.
#ifndef GRAPHJIT_COMPILER_PASSES_DCE_H_
#define GRAPHJIT_COMPILER_PASSES_DCE_H_

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// Removes nodes that reach no output. Graph inputs are kept even when unused: they are
// the graph's calling convention, and callers pass them by name. Returns whether anything
// was removed.
absl::StatusOr<bool> Dce(ir::Graph* graph);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_DCE_H_
