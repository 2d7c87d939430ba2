// Padding helpers: resize (pad with zeros / cut back) and the additive mask.
#include "compiler/entries/padding.h"

#include <cmath>

#include "gtest/gtest.h"

namespace graphjit::compiler::entries {
namespace {

using runtime::Tensor;

TEST(Padding, ResizePadsWithZerosAndCutsBack) {
  Tensor t =
      *Tensor::FromDoubles(ir::DType::kF64, {2, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  Tensor padded = *Resize(t, {2, 5, 2});
  EXPECT_EQ(padded.ToDoubles(), (std::vector<double>{1, 2, 3, 4,  5,  6,  0, 0, 0, 0,  //
                                                     7, 8, 9, 10, 11, 12, 0, 0, 0, 0}));
  Tensor cut = *Resize(padded, {2, 3, 2});
  EXPECT_EQ(cut.ToDoubles(), t.ToDoubles());
  EXPECT_FALSE(cut.SharesBufferWith(padded));
  // Same shape: a copy, never the caller's buffer.
  Tensor same = *Resize(t, {2, 3, 2});
  EXPECT_EQ(same.ToDoubles(), t.ToDoubles());
  EXPECT_FALSE(same.SharesBufferWith(t));
  // Zero-length dims and f32 work too.
  EXPECT_EQ(Resize(t, {2, 0, 2})->numel(), 0);
  Tensor f = *Tensor::FromDoubles(ir::DType::kF32, {2}, {1.5, 2.5});
  EXPECT_EQ(Resize(f, {3})->ToDoubles(), (std::vector<double>{1.5, 2.5, 0}));
  EXPECT_EQ(Resize(*Resize(f, {0}), {2})->ToDoubles(), (std::vector<double>{0, 0}));
}

TEST(Padding, MaskIsZeroForRealPositionsAndMinusInfinityForPadding) {
  InputGuard kmask{"kmask", ir::DType::kF64, {{1, -1}, {1, -1}, {0, 0}}};
  DimValues real{5}, lengths{8};
  EXPECT_EQ(ShapeAt(kmask.dims, lengths), (std::vector<int64_t>{1, 1, 8}));
  Tensor m = *MakeMask(kmask, real, lengths);
  std::vector<double> v = m.ToDoubles();
  ASSERT_EQ(v.size(), 8u);
  for (int j = 0; j < 8; ++j) {
    if (j < 5) {
      EXPECT_EQ(v[j], 0.0) << j;
    } else {
      EXPECT_TRUE(std::isinf(v[j]) && v[j] < 0) << j;
    }
  }
}

}  // namespace
}  // namespace graphjit::compiler::entries
