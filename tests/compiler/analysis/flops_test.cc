// The FLOP analysis: the counting rule per node (whole models are counted in
// tests/studies/model_flops_test.cc).
#include "compiler/analysis/flops.h"

#include "gtest/gtest.h"
#include "ir/parser.h"

namespace graphjit::compiler {
namespace {

using ir::SymExpr;

TEST(Flops, MatmulCountsTwoPerMultiplyAddWithBroadcastBatch) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(R"(graph g {
  %0 = input {name="a"} : f32[2, 1, 3, 4]
  %1 = input {name="b"} : f32[5, 4, S]
  %2 = matmul(%0, %1) : f32[2, 5, 3, S]
  %3 = softmax(%2) {axis=-1} : f32[2, 5, 3, S]
  %4 = exp(%3) : f32[2, 5, 3, S]
  %5 = reduce_sum(%4) {axis=0, keepdim=false} : f32[5, 3, S]
  return %5
}
)");
  ASSERT_TRUE(g.ok()) << g.status();
  const SymExpr S = SymExpr::Symbol("S");
  FlopCount c = CountFlops(*g);
  ASSERT_EQ(c.per_node.size(), 6u);
  // batch 2 x 5, M = 3, N = S, K = 4.
  EXPECT_EQ(c.per_node[2], 2 * 10 * 3 * 4 * S);
  for (int id : {0, 1, 3, 4, 5}) EXPECT_EQ(c.per_node[id], SymExpr(0)) << id;
  EXPECT_EQ(c.total, 240 * S);
  EXPECT_EQ(*c.total.Evaluate({{"S", 7}}), 1680);
}

}  // namespace
}  // namespace graphjit::compiler
