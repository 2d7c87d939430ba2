// Composite kernels (rmsnorm, layernorm, silu, gelu_tanh, rope, cross_entropy,
// causal_mask, kv_write) against straightforward double references.
#include <cmath>
#include <limits>
#include <numbers>

#include "gmock/gmock.h"
#include "tests/runtime/test_util.h"

namespace graphjit::runtime::testutil {
namespace {

using ir::SymExpr;
using ::testing::HasSubstr;

COVERS_OPS(OpCode::kRmsNorm, OpCode::kLayerNorm, OpCode::kSilu, OpCode::kGeluTanh, OpCode::kRope,
           OpCode::kCrossEntropy, OpCode::kCausalMask, OpCode::kKvWrite);

const DType kFloats[] = {DType::kF32, DType::kF64};

TEST(CompositeTest, RmsNormWithAndWithoutWeight) {
  std::mt19937_64 rng(40);
  for (DType dtype : kFloats) {
    for (int trial = 0; trial < 20; ++trial) {
      Dims shape = RandomShape(rng, 1, 4, trial % 4 == 0 ? 50 : 6);
      const int64_t d = shape.back();
      Tensor x = Random(rng, dtype, shape, -3, 3);
      Tensor w = Random(rng, dtype, {d}, 0.5, 1.5);
      const double eps = trial % 2 == 0 ? 1e-6 : 0.1;
      const bool with_w = trial % 3 != 0;
      std::vector<double> vx = x.ToDoubles(), vw = w.ToDoubles(), want(vx.size());
      for (int64_t r = 0; r < x.numel() / d; ++r) {
        double ss = 0;
        for (int64_t j = 0; j < d; ++j) ss += vx[r * d + j] * vx[r * d + j];
        const double denom = std::sqrt(ss / d + eps);
        for (int64_t j = 0; j < d; ++j) {
          want[r * d + j] = vx[r * d + j] / denom * (with_w ? vw[j] : 1.0);
        }
      }
      std::vector<const Tensor*> operands = {&x};
      if (with_w) operands.push_back(&w);
      ExpectTensor(EvalOp(OpCode::kRmsNorm, operands, {{"eps", eps}}), dtype, shape, want,
                   absl::StrCat("rmsnorm ", x.TypeString(), with_w ? " with w" : ""));
    }
  }
}

TEST(CompositeTest, LayerNorm) {
  std::mt19937_64 rng(41);
  for (DType dtype : kFloats) {
    for (int trial = 0; trial < 20; ++trial) {
      Dims shape = RandomShape(rng, 1, 4, trial % 4 == 0 ? 50 : 6);
      const int64_t d = shape.back();
      Tensor x = Random(rng, dtype, shape, -3, 3);
      Tensor w = Random(rng, dtype, {d}, 0.5, 1.5);
      Tensor b = Random(rng, dtype, {d});
      const double eps = 1e-5;
      std::vector<double> vx = x.ToDoubles(), vw = w.ToDoubles(), vb = b.ToDoubles();
      std::vector<double> want(vx.size());
      for (int64_t r = 0; r < x.numel() / d; ++r) {
        double mean = 0, var = 0;
        for (int64_t j = 0; j < d; ++j) mean += vx[r * d + j] / d;
        for (int64_t j = 0; j < d; ++j) {
          var += (vx[r * d + j] - mean) * (vx[r * d + j] - mean) / d;
        }
        for (int64_t j = 0; j < d; ++j) {
          want[r * d + j] = (vx[r * d + j] - mean) / std::sqrt(var + eps) * vw[j] + vb[j];
        }
      }
      ExpectTensor(EvalOp(OpCode::kLayerNorm, {&x, &w, &b}, {{"eps", eps}}), dtype, shape, want,
                   absl::StrCat("layernorm ", x.TypeString()));
    }
  }
}

TEST(CompositeTest, SiluAndGeluTanh) {
  std::mt19937_64 rng(42);
  for (DType dtype : kFloats) {
    for (int trial = 0; trial < 10; ++trial) {
      Dims shape = RandomShape(rng, 0, 4, 6);
      Tensor x = Random(rng, dtype, shape, -6, 6);
      std::vector<double> silu = x.ToDoubles(), gelu = x.ToDoubles();
      for (double& v : silu) v = v / (1 + std::exp(-v));
      for (double& v : gelu) {
        v = 0.5 * v * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (v + 0.044715 * v * v * v)));
      }
      ExpectTensor(EvalOp(OpCode::kSilu, {&x}), dtype, shape, silu, "silu " + x.TypeString());
      ExpectTensor(EvalOp(OpCode::kGeluTanh, {&x}), dtype, shape, gelu, "gelu " + x.TypeString());
    }
  }
}

TEST(CompositeTest, RopeWithBroadcastTables) {
  std::mt19937_64 rng(43);
  for (DType dtype : kFloats) {
    for (int trial = 0; trial < 30; ++trial) {
      Dims lead = RandomShape(rng, 0, 3, 4);
      const int64_t d = 2 * std::uniform_int_distribution<int64_t>(1, 5)(rng);
      Dims shape = lead;
      shape.push_back(d);
      // Tables of the full shape, broadcast over leading dims, or with last dim 1.
      Dims sc = trial % 3 == 0 ? shape : BroadcastableTo(rng, shape);
      Dims ss = trial % 3 == 0 ? shape : BroadcastableTo(rng, shape);
      Tensor x = Random(rng, dtype, shape);
      Tensor c = Random(rng, dtype, sc);
      Tensor s = Random(rng, dtype, ss);
      std::vector<double> vx = x.ToDoubles(), vc = c.ToDoubles(), vs = s.ToDoubles();
      std::vector<double> want(vx.size());
      for (int64_t i = 0; i < x.numel(); ++i) {
        Dims idx = Unravel(i, shape);
        const int64_t j = idx.back(), h = d / 2;
        const double rot = j < h ? -vx[i + h] : vx[i - h];
        want[i] = vx[i] * vc[BroadcastIndex(idx, sc)] + rot * vs[BroadcastIndex(idx, ss)];
      }
      ExpectTensor(
          EvalOp(OpCode::kRope, {&x, &c, &s}), dtype, shape, want,
          absl::StrCat("rope ", x.TypeString(), " cos ", DimsString(sc), " sin ", DimsString(ss)));
    }
    Tensor odd = Random(rng, dtype, {2, 3});
    absl::StatusOr<Tensor> r = EvalOp(OpCode::kRope, {&odd, &odd, &odd});
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.status().message(), HasSubstr("even"));
  }
}

TEST(CompositeTest, CrossEntropy) {
  std::mt19937_64 rng(44);
  for (DType dtype : kFloats) {
    for (int trial = 0; trial < 20; ++trial) {
      Dims rows = RandomShape(rng, 0, 3, 4);
      const int64_t v = std::uniform_int_distribution<int64_t>(1, trial % 4 == 0 ? 60 : 7)(rng);
      Dims shape = rows;
      shape.push_back(v);
      Tensor logits = Random(rng, dtype, shape, -5, 5);
      Tensor targets = Random(rng, DType::kI64, rows, 0, v - 1);
      std::vector<double> vl = logits.ToDoubles(), vt = targets.ToDoubles();
      double total = 0;
      for (int64_t r = 0; r < Numel(rows); ++r) {
        double m = -std::numeric_limits<double>::infinity(), sum = 0;
        for (int64_t j = 0; j < v; ++j) m = std::max(m, vl[r * v + j]);
        for (int64_t j = 0; j < v; ++j) sum += std::exp(vl[r * v + j] - m);
        total += m + std::log(sum) - vl[r * v + static_cast<int64_t>(vt[r])];
      }
      ExpectTensor(EvalOp(OpCode::kCrossEntropy, {&logits, &targets}), dtype, {},
                   {total / Numel(rows)}, "cross_entropy " + logits.TypeString());
    }
  }
}

TEST(CompositeTest, CrossEntropyRejectsOutOfRangeTargets) {
  std::mt19937_64 rng(45);
  Tensor logits = Random(rng, DType::kF64, {2, 4});
  for (double bad : {4.0, -1.0}) {
    Tensor targets = FromValues(DType::kI64, {2}, {1, bad});
    absl::StatusOr<Tensor> r = EvalOp(OpCode::kCrossEntropy, {&logits, &targets});
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.status().message(), HasSubstr("cross_entropy"));
    EXPECT_THAT(r.status().message(), HasSubstr("[0, 4)"));
  }
  Tensor wrong_shape = FromValues(DType::kI64, {3}, {0, 0, 0});
  EXPECT_FALSE(EvalOp(OpCode::kCrossEntropy, {&logits, &wrong_shape}).ok());
}

TEST(CompositeTest, CausalMask) {
  std::mt19937_64 rng(46);
  const double inf = std::numeric_limits<double>::infinity();
  for (DType dtype : kFloats) {
    for (int trial = 0; trial < 20; ++trial) {
      Dims shape = RandomShape(rng, 0, 2, 3);
      const int64_t t = std::uniform_int_distribution<int64_t>(0, 5)(rng);
      const int64_t u = std::uniform_int_distribution<int64_t>(0, 7)(rng);
      shape.push_back(t);
      shape.push_back(u);
      Tensor s = Random(rng, dtype, shape);
      std::vector<double> want = s.ToDoubles();
      for (int64_t i = 0; i < s.numel(); ++i) {
        Dims idx = Unravel(i, shape);
        const int64_t row = idx[idx.size() - 2], col = idx.back();
        if (col > row + (u - t)) want[i] = -inf;
      }
      ExpectTensor(EvalOp(OpCode::kCausalMask, {&s}), dtype, shape, want,
                   "causal_mask " + s.TypeString());
    }
  }
}

TEST(CompositeTest, KvWriteCopiesTheCacheAndWritesRows) {
  std::mt19937_64 rng(47);
  SymExpr p = SymExpr::Symbol("P");
  for (DType dtype : {DType::kF32, DType::kF64, DType::kI64, DType::kBool}) {
    for (int trial = 0; trial < 20; ++trial) {
      Dims lead = RandomShape(rng, 0, 2, 3);
      const int64_t s = std::uniform_int_distribution<int64_t>(1, 8)(rng);
      const int64_t r = std::uniform_int_distribution<int64_t>(0, s)(rng);
      const int64_t d = std::uniform_int_distribution<int64_t>(1, 5)(rng);
      const int64_t pos = std::uniform_int_distribution<int64_t>(0, s - r)(rng);
      Dims cs = lead, rs = lead;
      cs.push_back(s);
      cs.push_back(d);
      rs.push_back(r);
      rs.push_back(d);
      Tensor cache = Random(rng, dtype, cs, -9, 9);
      Tensor rows = Random(rng, dtype, rs, -9, 9);
      std::vector<double> before = cache.ToDoubles(), want = before;
      for (int64_t o = 0; o < Numel(lead); ++o) {
        for (int64_t i = 0; i < r * d; ++i)
          want[(o * s + pos) * d + i] = rows.ValueAt(o * r * d + i);
      }
      absl::StatusOr<Tensor> out =
          EvalOp(OpCode::kKvWrite, {&cache, &rows}, {{"pos", p}}, {{"P", pos}});
      ExpectTensor(out, dtype, cs, want, absl::StrCat("kv_write ", cache.TypeString()));
      ASSERT_TRUE(out.ok());
      EXPECT_FALSE(out->SharesBufferWith(cache));
      EXPECT_EQ(cache.ToDoubles(), before);  // the operand is untouched
    }
  }
}

TEST(CompositeTest, KvWriteChecksPos) {
  std::mt19937_64 rng(48);
  Tensor cache = Random(rng, DType::kF64, {2, 4, 3});
  Tensor rows = Random(rng, DType::kF64, {2, 1, 3});
  ir::Attrs attrs = {{"pos", SymExpr::Symbol("P")}};
  EXPECT_TRUE(EvalOp(OpCode::kKvWrite, {&cache, &rows}, attrs, {{"P", 3}}).ok());
  for (int64_t bad : {4, 100, -1}) {
    absl::StatusOr<Tensor> r = EvalOp(OpCode::kKvWrite, {&cache, &rows}, attrs, {{"P", bad}});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr("kv_write"));
    EXPECT_THAT(r.status().message(), HasSubstr("f64[2, 4, 3]"));
  }
  absl::StatusOr<Tensor> unbound = EvalOp(OpCode::kKvWrite, {&cache, &rows}, attrs);
  ASSERT_FALSE(unbound.ok());
  EXPECT_THAT(unbound.status().message(), HasSubstr("symbol 'P' is not bound"));
  Tensor wide = Random(rng, DType::kF64, {2, 1, 4});
  EXPECT_FALSE(EvalOp(OpCode::kKvWrite, {&cache, &wide}, attrs, {{"P", 0}}).ok());
}

}  // namespace
}  // namespace graphjit::runtime::testutil
