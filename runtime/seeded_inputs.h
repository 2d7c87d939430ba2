// Seeded inputs for a graph: what to time or profile a graph on when no caller gave any.
#ifndef GRAPHJIT_RUNTIME_SEEDED_INPUTS_H_
#define GRAPHJIT_RUNTIME_SEEDED_INPUTS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/sym_expr.h"
#include "runtime/interpreter.h"

namespace graphjit::runtime {

// Every input of `graph`, shaped by `values` (its dims' symbols): floats N(0, 1) drawn in
// input order from one std::mt19937_64 seeded with `seed`, integers and bools zero (every
// index and mask accepts them). InvalidArgument naming the input whose shape `values`
// does not evaluate.
absl::StatusOr<TensorMap> SeededInputs(const ir::Graph& graph, const ir::Bindings& values,
                                       uint64_t seed);

}  // namespace graphjit::runtime

#endif  // GRAPHJIT_RUNTIME_SEEDED_INPUTS_H_
