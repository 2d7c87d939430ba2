// CountModelFlops: a model's parameter count and its forward and training FLOPs, and
// symbolic counts of the decode layer (forward and training) that agree with exact graphs
// traced at each S.
#include "gtest/gtest.h"
#include "models/model.h"
#include "studies/six_nd.h"

namespace graphjit::studies {
namespace {

using ir::SymExpr;

TEST(Flops, LinearLayerOfTheSpec) {
  auto model = *models::CreateModel("linear:in=256,out=512,tokens=64");
  absl::StatusOr<ModelFlops> f = CountModelFlops(*model);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->num_params, 256 * 512);
  EXPECT_EQ(f->forward, SymExpr(16777216));
  EXPECT_EQ(f->train, SymExpr(50331648));
}

// The decode layer's symbolic graph counts as a formula of S: its projections are fixed,
// its two attention matmuls grow with the cache. The formula at each S equals the count of
// the graph traced with that S fixed, for the forward and for the training graph (whose
// gradients flow through kv_write into the caches).
TEST(Flops, DecodeLayerFormulaOfSMatchesExactGraphs) {
  auto model = *models::CreateModel("decode");
  absl::StatusOr<ModelFlops> symbolic = CountModelFlops(*model);
  ASSERT_TRUE(symbolic.ok()) << symbolic.status();
  const SymExpr S = SymExpr::Symbol("S");
  // d=128, H=8, G=2, dh=16, f=344: q, k, v, o and the three MLP projections, plus
  // 2 * (2 * H * dh * S) for scores and the weighted sum.
  const int64_t projections = 2 * (128 * 128 + 2 * 128 * 32 + 128 * 128 + 3 * 128 * 344);
  EXPECT_EQ(symbolic->forward, projections + 512 * S);
  EXPECT_EQ(symbolic->train, 3 * symbolic->forward);
  for (int64_t s : {1, 2, 7, 64, 128, 1000}) {
    SCOPED_TRACE(s);
    models::TraceOptions exact;
    exact.fixed_dims = {{"S", s}};
    absl::StatusOr<ModelFlops> fixed = CountModelFlops(*model, exact);
    ASSERT_TRUE(fixed.ok()) << fixed.status();
    ASSERT_TRUE(fixed->forward.IsConstant());
    EXPECT_EQ(*symbolic->forward.Evaluate({{"S", s}}), *fixed->forward.AsConstant());
    EXPECT_EQ(*symbolic->train.Evaluate({{"S", s}}), *fixed->train.AsConstant());
    EXPECT_EQ(fixed->num_params, symbolic->num_params);
  }
}

}  // namespace
}  // namespace graphjit::studies
