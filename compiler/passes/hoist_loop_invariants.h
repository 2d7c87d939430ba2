// hoist_loop_invariants: loop-invariant code motion out of while regions.
#ifndef GRAPHJIT_COMPILER_PASSES_HOIST_LOOP_INVARIANTS_H_
#define GRAPHJIT_COMPILER_PASSES_HOIST_LOOP_INVARIANTS_H_

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// Moves what a while's regions compute from its invariants alone (and from weights and
// constants) out of the loop: computed once before it and passed to both regions as new
// invariant operands, instead of once per trip. Ops that can fail at run time (a gather
// or scatter out of range, a KV write, an arg-reduction over nothing) stay inside, so a
// loop that runs no trip cannot fail where it did not before; so do nested loops.
// Regions nested in regions are left as they are (each is optimized when compiled).
// Returns whether anything moved.
absl::StatusOr<bool> HoistLoopInvariants(ir::Graph* graph);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_HOIST_LOOP_INVARIANTS_H_
