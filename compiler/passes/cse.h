// cse: common subexpression elimination by structural hashing.
#ifndef GRAPHJIT_COMPILER_PASSES_CSE_H_
#define GRAPHJIT_COMPILER_PASSES_CSE_H_

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// Merges nodes with the same op, the same (already merged) operands, equal attributes and
// equal types, symbolic dims included: equal subgraphs become one value. Inputs and
// params are never merged with each other (their names differ), and two kv_writes at
// different positions differ in their `pos` attribute. Returns whether anything merged.
absl::StatusOr<bool> Cse(ir::Graph* graph);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_CSE_H_
