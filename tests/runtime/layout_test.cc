// Layout and source kernels (transpose, reshape, expand, concat, slice, gather,
// scatter_add, constant, full, iota, input, param) against index-by-index references, for
// every dtype.
#include <algorithm>
#include <numeric>

#include "gmock/gmock.h"
#include "tests/runtime/test_util.h"

namespace graphjit::runtime::testutil {
namespace {

using ir::SymExpr;
using ::testing::HasSubstr;

COVERS_OPS(OpCode::kTranspose, OpCode::kReshape, OpCode::kExpand, OpCode::kConcat, OpCode::kSlice,
           OpCode::kGather, OpCode::kScatterAdd, OpCode::kConstant, OpCode::kFull, OpCode::kIota,
           OpCode::kInput, OpCode::kParam);

const DType kAllDTypes[] = {DType::kF32, DType::kF64, DType::kI64, DType::kBool};

int64_t Flat(const Dims& idx, const Dims& shape) {
  int64_t f = 0;
  for (size_t i = 0; i < shape.size(); ++i) f = f * shape[i] + idx[i];
  return f;
}

TEST(LayoutTest, TransposeMatchesReference) {
  std::mt19937_64 rng(20);
  for (DType dtype : kAllDTypes) {
    for (int trial = 0; trial < 30; ++trial) {
      Dims shape = RandomShape(rng, 0, 5, 5);
      std::vector<int64_t> perm(shape.size());
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      Tensor x = Random(rng, dtype, shape, -100, 100);
      Dims out(shape.size());
      for (size_t k = 0; k < perm.size(); ++k) out[k] = shape[perm[k]];
      std::vector<double> vx = x.ToDoubles(), want(Numel(out));
      for (int64_t i = 0; i < Numel(out); ++i) {
        Dims idx = Unravel(i, out), src(shape.size());
        for (size_t k = 0; k < perm.size(); ++k) src[perm[k]] = idx[k];
        want[i] = vx[Flat(src, shape)];
      }
      ExpectTensor(EvalOp(OpCode::kTranspose, {&x}, {{"perm", perm}}), dtype, out, want,
                   absl::StrCat("transpose ", x.TypeString(), " perm ", DimsString(perm)));
    }
  }
}

TEST(LayoutTest, ReshapeKeepsRowMajorOrderAndCopies) {
  std::mt19937_64 rng(21);
  for (DType dtype : kAllDTypes) {
    Tensor x = Random(rng, dtype, {2, 3, 4}, -9, 9);
    absl::StatusOr<Tensor> r =
        EvalOp(OpCode::kReshape, {&x}, {{"shape", ir::ConstShape({4, 1, 6})}});
    ExpectTensor(r, dtype, {4, 1, 6}, x.ToDoubles(), "reshape");
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r->SharesBufferWith(x));
  }
  Tensor x = Random(rng, DType::kF64, {2, 6});
  ir::Bindings b = {{"S", 3}};
  ExpectTensor(EvalOp(OpCode::kReshape, {&x}, {{"shape", ir::Shape{SymExpr::Symbol("S"), 4}}}, b),
               DType::kF64, {3, 4}, x.ToDoubles(), "symbolic reshape");
  absl::StatusOr<Tensor> bad = EvalOp(OpCode::kReshape, {&x}, {{"shape", ir::ConstShape({5})}});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("reshape"));
}

TEST(LayoutTest, ExpandMatchesReference) {
  std::mt19937_64 rng(22);
  for (DType dtype : kAllDTypes) {
    for (int trial = 0; trial < 30; ++trial) {
      Dims out = RandomShape(rng, 0, 4, 4);
      Dims in = BroadcastableTo(rng, out);
      Tensor x = Random(rng, dtype, in, -9, 9);
      std::vector<double> vx = x.ToDoubles(), want(Numel(out));
      for (int64_t i = 0; i < Numel(out); ++i) want[i] = vx[BroadcastIndex(Unravel(i, out), in)];
      ExpectTensor(EvalOp(OpCode::kExpand, {&x}, {{"shape", ir::ConstShape(out)}}), dtype, out,
                   want, absl::StrCat("expand ", x.TypeString(), " to ", DimsString(out)));
    }
  }
}

TEST(LayoutTest, ConcatMatchesReference) {
  std::mt19937_64 rng(23);
  for (DType dtype : kAllDTypes) {
    for (int trial = 0; trial < 20; ++trial) {
      Dims base = RandomShape(rng, 1, 4, 4);
      const int axis = std::uniform_int_distribution<int>(0, base.size() - 1)(rng);
      const int count = std::uniform_int_distribution<int>(1, 4)(rng);
      std::vector<Tensor> parts;
      for (int i = 0; i < count; ++i) {
        Dims s = base;
        s[axis] = std::uniform_int_distribution<int64_t>(0, 3)(rng);
        parts.push_back(Random(rng, dtype, s, -9, 9));
      }
      Dims out = base;
      out[axis] = 0;
      for (const Tensor& t : parts) out[axis] += t.dim(axis);
      std::vector<double> want(Numel(out));
      for (int64_t i = 0; i < Numel(out); ++i) {
        Dims idx = Unravel(i, out);
        int part = 0;
        while (idx[axis] >= parts[part].dim(axis)) idx[axis] -= parts[part++].dim(axis);
        want[i] = parts[part].ValueAt(Flat(idx, parts[part].shape()));
      }
      std::vector<const Tensor*> ptrs;
      for (const Tensor& t : parts) ptrs.push_back(&t);
      // A negative axis counts from the end.
      int64_t attr_axis = trial % 2 == 0 ? axis : axis - static_cast<int64_t>(base.size());
      ExpectTensor(EvalOp(OpCode::kConcat, ptrs, {{"axis", attr_axis}}), dtype, out, want,
                   absl::StrCat("concat of ", count, " on axis ", axis));
    }
  }
}

TEST(LayoutTest, SliceMatchesReference) {
  std::mt19937_64 rng(24);
  for (DType dtype : kAllDTypes) {
    for (int trial = 0; trial < 30; ++trial) {
      Dims shape = RandomShape(rng, 1, 4, 5);
      const int axis = std::uniform_int_distribution<int>(0, shape.size() - 1)(rng);
      const int64_t start = std::uniform_int_distribution<int64_t>(0, shape[axis])(rng);
      const int64_t end = std::uniform_int_distribution<int64_t>(start, shape[axis])(rng);
      Tensor x = Random(rng, dtype, shape, -9, 9);
      Dims out = shape;
      out[axis] = end - start;
      std::vector<double> want(Numel(out));
      for (int64_t i = 0; i < Numel(out); ++i) {
        Dims idx = Unravel(i, out);
        idx[axis] += start;
        want[i] = x.ValueAt(Flat(idx, shape));
      }
      ExpectTensor(
          EvalOp(OpCode::kSlice, {&x},
                 {{"axis", int64_t{axis}}, {"start", SymExpr(start)}, {"end", SymExpr(end)}}),
          dtype, out, want, absl::StrCat("slice ", x.TypeString(), " axis ", axis));
    }
  }
}

TEST(LayoutTest, SliceBoundsAreEvaluatedAndChecked) {
  std::mt19937_64 rng(25);
  Tensor x = Random(rng, DType::kF64, {2, 6});
  SymExpr p = SymExpr::Symbol("P");
  ir::Attrs attrs = {{"axis", int64_t{1}}, {"start", p}, {"end", p + 2}};
  std::vector<double> v = x.ToDoubles();
  ExpectTensor(EvalOp(OpCode::kSlice, {&x}, attrs, {{"P", 3}}), DType::kF64, {2, 2},
               {v[3], v[4], v[9], v[10]}, "symbolic slice");
  absl::StatusOr<Tensor> over = EvalOp(OpCode::kSlice, {&x}, attrs, {{"P", 5}});
  ASSERT_FALSE(over.ok());
  EXPECT_THAT(over.status().message(), HasSubstr("slice"));
  EXPECT_THAT(over.status().message(), HasSubstr("[5, 7)"));
  EXPECT_FALSE(EvalOp(OpCode::kSlice, {&x}, attrs, {{"P", -1}}).ok());
  absl::StatusOr<Tensor> unbound = EvalOp(OpCode::kSlice, {&x}, attrs);
  ASSERT_FALSE(unbound.ok());
  EXPECT_THAT(unbound.status().message(), HasSubstr("symbol 'P' is not bound"));
}

TEST(LayoutTest, GatherMatchesReference) {
  std::mt19937_64 rng(26);
  for (DType dtype : kAllDTypes) {
    for (int trial = 0; trial < 20; ++trial) {
      Dims table_shape = RandomShape(rng, 1, 3, 5);
      Dims idx_shape = RandomShape(rng, 0, 3, 4);
      Tensor table = Random(rng, dtype, table_shape, -9, 9);
      Tensor idx = Random(rng, DType::kI64, idx_shape, 0, table_shape[0] - 1);
      Dims out = idx_shape;
      out.insert(out.end(), table_shape.begin() + 1, table_shape.end());
      const int64_t row = Numel(table_shape) / table_shape[0];
      std::vector<double> want;
      for (double id : idx.ToDoubles()) {
        for (int64_t j = 0; j < row; ++j) {
          want.push_back(table.ValueAt(static_cast<int64_t>(id) * row + j));
        }
      }
      ExpectTensor(EvalOp(OpCode::kGather, {&table, &idx}), dtype, out, want,
                   absl::StrCat("gather ", table.TypeString(), " by ", idx.TypeString()));
    }
  }
}

TEST(LayoutTest, GatherRejectsOutOfRangeIndices) {
  std::mt19937_64 rng(27);
  Tensor table = Random(rng, DType::kF32, {5, 3});
  for (double bad : {5.0, -1.0, 1e12}) {
    Tensor idx = FromValues(DType::kI64, {2}, {0, bad});
    absl::StatusOr<Tensor> r = EvalOp(OpCode::kGather, {&table, &idx});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr("gather"));
    EXPECT_THAT(r.status().message(), HasSubstr("[0, 5)"));
  }
  Tensor fidx = Random(rng, DType::kF32, {2});
  EXPECT_FALSE(EvalOp(OpCode::kGather, {&table, &fidx}).ok());
}

TEST(LayoutTest, ScatterAddMatchesReference) {
  std::mt19937_64 rng(28);
  for (DType dtype : {DType::kF32, DType::kF64, DType::kI64}) {
    for (int trial = 0; trial < 20; ++trial) {
      Dims table_shape = RandomShape(rng, 1, 3, 5);
      Dims idx_shape = RandomShape(rng, 0, 3, 4);
      Tensor table = Random(rng, dtype, table_shape, -9, 9);
      // Few rows and many indices, so repeated indices (which must accumulate) are common.
      Tensor idx = Random(rng, DType::kI64, idx_shape, 0, table_shape[0] - 1);
      Dims upd_shape = idx_shape;
      upd_shape.insert(upd_shape.end(), table_shape.begin() + 1, table_shape.end());
      Tensor updates = Random(rng, dtype, upd_shape, -9, 9);
      const int64_t row = Numel(table_shape) / table_shape[0];
      std::vector<double> want = table.ToDoubles();
      std::vector<double> ids = idx.ToDoubles();
      for (size_t i = 0; i < ids.size(); ++i) {
        for (int64_t j = 0; j < row; ++j) {
          want[static_cast<int64_t>(ids[i]) * row + j] +=
              updates.ValueAt(static_cast<int64_t>(i) * row + j);
        }
      }
      ExpectTensor(EvalOp(OpCode::kScatterAdd, {&table, &idx, &updates}), dtype, table_shape, want,
                   absl::StrCat("scatter_add into ", table.TypeString(), " by ", idx.TypeString()));
    }
  }
}

TEST(LayoutTest, ScatterAddRejectsOutOfRangeIndicesAndBadUpdates) {
  std::mt19937_64 rng(29);
  Tensor table = Random(rng, DType::kF64, {5, 3});
  Tensor updates = Random(rng, DType::kF64, {2, 3});
  for (double bad : {5.0, -1.0}) {
    Tensor idx = FromValues(DType::kI64, {2}, {0, bad});
    absl::StatusOr<Tensor> r = EvalOp(OpCode::kScatterAdd, {&table, &idx, &updates});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr("scatter_add"));
    EXPECT_THAT(r.status().message(), HasSubstr("[0, 5)"));
  }
  Tensor idx = FromValues(DType::kI64, {2}, {0, 1});
  Tensor wrong = Random(rng, DType::kF64, {2, 4});
  EXPECT_FALSE(EvalOp(OpCode::kScatterAdd, {&table, &idx, &wrong}).ok());
}

TEST(SourceTest, ConstantConvertsItsValues) {
  const std::vector<double> values = {1.5, -2.5, 0, 3};
  for (DType dtype : kAllDTypes) {
    std::vector<double> want = values;
    for (double& v : want) {
      if (dtype == DType::kI64) v = std::trunc(v);
      if (dtype == DType::kBool) v = v != 0;
    }
    ExpectTensor(EvalOp(OpCode::kConstant, {},
                        {{"value", values}, {"dtype", dtype}, {"shape", ir::ConstShape({2, 2})}}),
                 dtype, {2, 2}, want, absl::StrCat("constant ", Name(dtype)));
  }
  EXPECT_FALSE(EvalOp(OpCode::kConstant, {},
                      {{"value", values}, {"dtype", DType::kF64}, {"shape", ir::ConstShape({3})}})
                   .ok());
}

TEST(SourceTest, FullFillsASymbolicShape) {
  for (DType dtype : kAllDTypes) {
    ir::Attrs attrs = {
        {"value", 2.0}, {"dtype", dtype}, {"shape", ir::Shape{2, SymExpr::Symbol("S") + 1}}};
    ExpectTensor(EvalOp(OpCode::kFull, {}, attrs, {{"S", 2}}), dtype, {2, 3},
                 std::vector<double>(6, dtype == DType::kBool ? 1 : 2),
                 absl::StrCat("full ", Name(dtype)));
    ExpectTensor(EvalOp(OpCode::kFull, {}, attrs, {{"S", -1}}), dtype, {2, 0}, {}, "empty full");
    absl::StatusOr<Tensor> bad = EvalOp(OpCode::kFull, {}, attrs, {{"S", -3}});
    ASSERT_FALSE(bad.ok());
    EXPECT_THAT(bad.status().message(), HasSubstr("full"));
    EXPECT_FALSE(EvalOp(OpCode::kFull, {}, attrs).ok());
  }
}

TEST(SourceTest, IotaCountsAlongItsAxis) {
  std::mt19937_64 rng(28);
  for (DType dtype : {DType::kF32, DType::kF64, DType::kI64}) {
    for (int trial = 0; trial < 10; ++trial) {
      Dims shape = RandomShape(rng, 1, 4, 5);
      const int axis = std::uniform_int_distribution<int>(0, shape.size() - 1)(rng);
      std::vector<double> want(Numel(shape));
      for (int64_t i = 0; i < Numel(shape); ++i) want[i] = Unravel(i, shape)[axis];
      const int64_t attr_axis = trial % 2 == 0 ? axis : axis - static_cast<int64_t>(shape.size());
      ExpectTensor(
          EvalOp(OpCode::kIota, {},
                 {{"axis", attr_axis}, {"dtype", dtype}, {"shape", ir::ConstShape(shape)}}),
          dtype, shape, want, absl::StrCat("iota ", DimsString(shape), " axis ", axis));
    }
  }
  ir::Attrs symbolic = {
      {"axis", int64_t{1}}, {"dtype", DType::kI64}, {"shape", ir::Shape{2, SymExpr::Symbol("S")}}};
  ExpectTensor(EvalOp(OpCode::kIota, {}, symbolic, {{"S", 3}}), DType::kI64, {2, 3},
               {0, 1, 2, 0, 1, 2}, "symbolic iota");
  EXPECT_FALSE(
      EvalOp(OpCode::kIota, {},
             {{"axis", int64_t{0}}, {"dtype", DType::kBool}, {"shape", ir::ConstShape({2})}})
          .ok());
  EXPECT_FALSE(
      EvalOp(OpCode::kIota, {},
             {{"axis", int64_t{1}}, {"dtype", DType::kF64}, {"shape", ir::ConstShape({2})}})
          .ok());
}

TEST(SourceTest, InputAndParamAreSuppliedByTheCaller) {
  for (OpCode op : {OpCode::kInput, OpCode::kParam}) {
    absl::StatusOr<Tensor> r = EvalOp(
        op, {}, {{"name", std::string("x")}, {"dtype", DType::kF64}, {"shape", ir::Shape{}}});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(r.status().message(), HasSubstr("'x'"));
  }
}

}  // namespace
}  // namespace graphjit::runtime::testutil
