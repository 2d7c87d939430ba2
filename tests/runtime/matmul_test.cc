// Matmul against a triple-loop double reference: gemm, both gemv paths (M == 1, N == 1),
// empty contractions, and broadcast batch dims on either side.
#include "gmock/gmock.h"
#include "tests/runtime/test_util.h"

namespace graphjit::runtime::testutil {
namespace {

COVERS_OPS(OpCode::kMatmul);

// [.., M, K] @ [.., K, N] in double, batch dims broadcast.
std::vector<double> ReferenceMatmul(const Tensor& a, const Tensor& b, Dims* out_shape) {
  Dims a_batch(a.shape().begin(), a.shape().end() - 2);
  Dims b_batch(b.shape().begin(), b.shape().end() - 2);
  Dims batch = BroadcastDims(a_batch, b_batch);
  const int64_t m = a.dim(-2), k = a.dim(-1), n = b.dim(-1);
  *out_shape = batch;
  out_shape->push_back(m);
  out_shape->push_back(n);
  std::vector<double> va = a.ToDoubles(), vb = b.ToDoubles();
  std::vector<double> out(Numel(*out_shape));
  for (int64_t bi = 0; bi < Numel(batch); ++bi) {
    Dims idx = Unravel(bi, batch);
    const int64_t ab = BroadcastIndex(idx, a_batch), bb = BroadcastIndex(idx, b_batch);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          sum += va[(ab * m + i) * k + p] * vb[(bb * k + p) * n + j];
        }
        out[(bi * m + i) * n + j] = sum;
      }
    }
  }
  return out;
}

void CheckMatmul(std::mt19937_64& rng, DType dtype, const Dims& sa, const Dims& sb) {
  Tensor a = Random(rng, dtype, sa);
  Tensor b = Random(rng, dtype, sb);
  Dims out_shape;
  std::vector<double> want = ReferenceMatmul(a, b, &out_shape);
  ExpectTensor(EvalOp(OpCode::kMatmul, {&a, &b}), dtype, out_shape, want,
               absl::StrCat("matmul ", a.TypeString(), " @ ", b.TypeString()));
}

TEST(MatmulTest, RandomShapesWithBroadcastBatches) {
  std::mt19937_64 rng(10);
  for (DType dtype : {DType::kF32, DType::kF64}) {
    for (int trial = 0; trial < 60; ++trial) {
      Dims batch = RandomShape(rng, 0, 3, 3);
      Dims ba = trial % 3 == 0 ? batch : BroadcastableTo(rng, batch);
      Dims bb = trial % 3 == 1 ? Dims{} : BroadcastableTo(rng, batch);
      const int64_t m = std::uniform_int_distribution<int64_t>(1, 7)(rng);
      const int64_t k = std::uniform_int_distribution<int64_t>(1, 7)(rng);
      const int64_t n = std::uniform_int_distribution<int64_t>(1, 7)(rng);
      Dims sa = ba, sb = bb;
      sa.push_back(m);
      sa.push_back(k);
      sb.push_back(k);
      sb.push_back(n);
      CheckMatmul(rng, dtype, sa, sb);
    }
  }
}

TEST(MatmulTest, VectorCasesUseEveryPath) {
  std::mt19937_64 rng(11);
  for (DType dtype : {DType::kF32, DType::kF64}) {
    CheckMatmul(rng, dtype, {1, 40}, {40, 33});           // M == 1: gemv on b^T
    CheckMatmul(rng, dtype, {33, 40}, {40, 1});           // N == 1: gemv on a
    CheckMatmul(rng, dtype, {1, 40}, {40, 1});            // a dot product
    CheckMatmul(rng, dtype, {4, 1, 16}, {4, 16, 9});      // batched gemv (attention scores)
    CheckMatmul(rng, dtype, {3, 5, 40}, {40, 17});        // shared b: rows stacked
    CheckMatmul(rng, dtype, {40, 17}, {3, 17, 5});        // shared a
    CheckMatmul(rng, dtype, {2, 1, 3, 4}, {1, 5, 4, 6});  // both sides broadcast
    CheckMatmul(rng, dtype, {37, 45}, {45, 29});          // big enough for BLAS blocking
  }
}

TEST(MatmulTest, EmptyDims) {
  std::mt19937_64 rng(12);
  for (DType dtype : {DType::kF32, DType::kF64}) {
    CheckMatmul(rng, dtype, {3, 0}, {0, 4});  // K == 0: zeros
    CheckMatmul(rng, dtype, {0, 5}, {5, 4});
    CheckMatmul(rng, dtype, {3, 5}, {5, 0});
    CheckMatmul(rng, dtype, {0, 3, 5}, {5, 2});
    CheckMatmul(rng, dtype, {1, 0}, {0, 4});
  }
}

TEST(MatmulTest, RejectsBadOperands) {
  std::mt19937_64 rng(13);
  Tensor a = Random(rng, DType::kF64, {2, 3});
  Tensor b = Random(rng, DType::kF64, {4, 5});
  Tensor v = Random(rng, DType::kF64, {3});
  Tensor ai = Random(rng, DType::kI64, {2, 3}, 0, 3);
  Tensor bf = Random(rng, DType::kF32, {3, 2});
  absl::StatusOr<Tensor> r = EvalOp(OpCode::kMatmul, {&a, &b});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("matmul"));
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("f64[2, 3]"));
  EXPECT_FALSE(EvalOp(OpCode::kMatmul, {&a, &v}).ok());
  EXPECT_FALSE(EvalOp(OpCode::kMatmul, {&ai, &ai}).ok());
  EXPECT_FALSE(EvalOp(OpCode::kMatmul, {&a, &bf}).ok());
  Tensor b3 = Random(rng, DType::kF64, {2, 3, 2});
  Tensor a3 = Random(rng, DType::kF64, {3, 2, 3});
  EXPECT_FALSE(EvalOp(OpCode::kMatmul, {&a3, &b3}).ok());  // batch 3 vs 2
}

}  // namespace
}  // namespace graphjit::runtime::testutil
