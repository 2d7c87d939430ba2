// Regions: the graphs a control-flow op holds (ir/ops.def's Region ops). Each region is
// a graph of its own whose inputs, in graph order, take the op's operands and whose
// params name the enclosing graph's weights.
// - A while holds `cond` and `body`, which take all its operands (the carried values,
//   then the invariants). `cond` returns one bool scalar, `body` the next carried values
//   with exactly the carried types (symbolic dims included: a carried value keeps its
//   shape from trip to trip).
// - A scan holds `body`, which takes its carried values, one row of each scanned input
//   (its type without dim 0), then the invariants, and returns the next carried values
//   (their exact types) and then any per-row values.
// - An if holds `then` and `else`, which take its operands after the condition; each
//   returns one value of the if's declared type.
#ifndef GRAPHJIT_IR_REGIONS_H_
#define GRAPHJIT_IR_REGIONS_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "ir/graph.h"

namespace graphjit::ir {

// Regions nest at most this deep: a crafted file cannot overflow the stack of the
// recursive parser, decoder, verifier or interpreter.
inline constexpr int kMaxRegionDepth = 16;

// How many regions `op` holds (2 for while and if, 1 for scan; 0 for the other ops).
int NumRegions(OpCode op);
// The name of region `i` of `op` ("cond", "body", "then", "else"), in errors.
// The per-row values of scan `n`'s body: the region's outputs after the carried ones.
int NumScanOutputs(const Node& n);
const char* RegionName(OpCode op, int i);

// Checks that `regions` fit op `op` with operand types `operands` and attributes
// `attrs`: their number, and each region's inputs and outputs against the signature
// above. InvalidArgument naming the region and the value otherwise. The regions'
// own nodes are checked by VerifyGraph.
absl::Status CheckRegionSignatures(OpCode op, absl::Span<const ValueType> operands,
                                   const Attrs& attrs,
                                   const std::vector<std::shared_ptr<const Graph>>& regions);

}  // namespace graphjit::ir

#endif  // GRAPHJIT_IR_REGIONS_H_
