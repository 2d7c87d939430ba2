// The textual IR printer (format documented in docs/IR.md; ir/parser.h reads it back).
#ifndef GRAPHJIT_IR_PRINTER_H_
#define GRAPHJIT_IR_PRINTER_H_

#include <string>

#include "ir/graph.h"

namespace graphjit::ir {

// One node per line, values renumbered %0, %1, ... in graph order:
//   graph NAME {
//     %0 = input {name="x"} : f64[1, 128]
//     %1 = rmsnorm(%0) {eps=1e-06} : f64[1, 128]
//     return %1
//   }
// Source ops (input, param, constant, full) take dtype and shape from the result type, so
// those two attributes are not repeated. A control-flow op's regions (ir/regions.h)
// follow its line, each `region graph NAME { ... }` indented under it.
std::string PrintGraph(const Graph& graph);

// `%3 = matmul(%1, %2) : f64[1, 512]` (no indentation or newline).
std::string PrintNode(const Graph& graph, ValueId id);

}  // namespace graphjit::ir

#endif  // GRAPHJIT_IR_PRINTER_H_
