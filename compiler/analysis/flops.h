// FLOP accounting (docs/spec/tinygpt_flops.md): only matmul-like work counts, 2 FLOPs
// per multiply-add, as PyTorch's FlopCounterMode counts. Counts are SymExprs over the
// graph's symbols, so a symbolic graph reports a formula (e.g. of S) and an exact graph a
// number.
#ifndef GRAPHJIT_COMPILER_ANALYSIS_FLOPS_H_
#define GRAPHJIT_COMPILER_ANALYSIS_FLOPS_H_

#include <vector>

#include "ir/graph.h"

namespace graphjit::compiler {

// The FLOPs of node `id`: a matmul `[.., M, K] @ [.., K, N]` whose broadcast batch dims
// multiply to B costs 2*B*M*N*K; every other op costs 0 (elementwise ops, reductions,
// softmax, norms, gathers; a causal mask does not halve the matmul it follows).
ir::SymExpr NodeFlops(const ir::Graph& graph, ir::ValueId id);

struct FlopCount {
  std::vector<ir::SymExpr> per_node;  // indexed by ValueId
  ir::SymExpr total;
};

// Counts every node of `graph`, dead ones included (run dce first if they must not count).
FlopCount CountFlops(const ir::Graph& graph);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_ANALYSIS_FLOPS_H_
