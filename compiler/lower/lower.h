// lower: an optimized graph to a kernel program (fused loop nests plus a buffer plan).
#ifndef GRAPHJIT_COMPILER_LOWER_LOWER_H_
#define GRAPHJIT_COMPILER_LOWER_LOWER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/lower/kernel_ir.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// How the program's args map back to the graph, for the code that calls it.
struct ArgBinding {
  enum class Kind { kInput, kParam, kConstant, kOutput };
  Kind kind;
  std::string name;       // the input or param name ("" for constants and outputs)
  ir::ValueId value;      // the graph node (constants: its values feed the buffer)
  int output_index = -1;  // kOutput: which graph output
  int donor_arg = -1;     // kOutput written in place: the arg index of the donated input
};

struct LoweredGraph {
  Program program;
  std::vector<ArgBinding> args;  // args[i] describes program arg i
};

// Lowers an optimized graph (composites decomposed; run the pass pipeline first). Every
// node becomes an expression: elementwise and layout ops (broadcast, transpose, reshape,
// slice, concat, iota) are inlined into their consumers as index rewrites, so a chain of
// them costs one loop nest. A value is materialized in a buffer when it is a graph output,
// a reduction, a matmul, a gather or a kv_write, or when several kernels would otherwise
// recompute an expensive expression. Float matmuls of at least 4096 multiply-adds
// (and more than one row) call OpenBLAS on materialized operands; smaller ones, and
// matrix-vector products, are generated loops. kv_write of a graph input whose old value nobody
// else reads is done in place (the output aliases the donated input). Temps share one
// workspace, reusing space whose live ranges do not overlap. Attention's five kernels
// (scores, max, exp, sum, P @ V) become one (compiler/lower/fuse_attention.h) before the
// workspace is planned. Last, the kernels' index expressions are simplified
// (compiler/lower/simplify_index.h).
struct LowerOptions {
  bool simplify_indices = true;  // off: the expressions as built (for tests and --stats)
  bool fuse_attention = true;    // off: attention as five kernels (for tests)
};
absl::StatusOr<LoweredGraph> Lower(const ir::Graph& graph, const LowerOptions& options = {});

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_LOWER_H_
