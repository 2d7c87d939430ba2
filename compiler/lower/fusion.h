// Fusion decisions for lowering: which graph values get a buffer and which are inlined into
// their consumers' loop nests as expressions. A value is materialized when it is a graph output
// or an op with a kernel of its own (Lowering Kernel in ir/ops.def), or when inlining it would
// repeat expensive work: more than one user (unless they meet in one elementwise consumer, as
// x * sigmoid(x) does), a matmul operand re-read per output element, or
// the operand of an overlapping window (a padded input included, and a padded input widened for
// alignment under the slice its readers share, which then stays a view); or when its arithmetic
// is costly and its one user a transpose moving its last axis (the kernel would otherwise run
// in the transposed order and scatter its stores). The cost of inlining is the arithmetic an
// inlined value repeats per use (its scalar op's cost, plus its inlined operands'; layout,
// casts and sources are free).
#ifndef GRAPHJIT_COMPILER_LOWER_FUSION_H_
#define GRAPHJIT_COMPILER_LOWER_FUSION_H_

#include <vector>

#include "ir/graph.h"

namespace graphjit::compiler {

class FusionPolicy {
 public:
  explicit FusionPolicy(const ir::Graph& graph);

  // Decides node `id`, whose operands were decided before it; `buffer_of[v] >= 0` for
  // the values that already have a buffer. Returns whether `id` gets one.
  bool Decide(ir::ValueId id, const std::vector<int>& buffer_of);
  // `id` was given a buffer (here or because a consumer needed one): reading it costs
  // nothing more.
  void Materialized(ir::ValueId id) { cost_[id] = 0; }

  int cost(ir::ValueId id) const { return cost_[id]; }
  // The nodes using `id`, an output counting as a use by the pseudo-node num_nodes()
  // (ir::Graph::Users, the passes' map).
  const std::vector<ir::ValueId>& users(ir::ValueId id) const { return users_[id]; }
  bool is_output(ir::ValueId id) const { return is_output_[id]; }

 private:
  int Cost(ir::ValueId id, const std::vector<int>& buffer_of) const;
  // Whether the users of `id` meet in one elementwise node within a few single-user
  // elementwise steps (x * sigmoid(x) after a depthwise convolution meets at the mul):
  // inlined, `id` is computed once in that node's kernel (lowering builds the expression
  // of a value at an index once per kernel) rather than stored and read back.
  bool MeetInOneConsumer(ir::ValueId id) const;
  bool RhsTransposed(ir::ValueId matmul, const std::vector<int>& buffer_of) const;

  const ir::Graph& g_;
  std::vector<std::vector<ir::ValueId>> users_;
  std::vector<bool> is_output_;
  std::vector<int> cost_;
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_FUSION_H_
