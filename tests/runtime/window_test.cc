// The window kernel (the index half of convolution and pooling) against an index-by-index
// reference, for every dtype, 1 to 3 window dims with strides and dilations, and its
// errors.
#include "gmock/gmock.h"
#include "tests/runtime/test_util.h"

namespace graphjit::runtime::testutil {
namespace {

using ::testing::HasSubstr;

COVERS_OPS(OpCode::kWindow);

ir::Attrs WindowAttrs(std::vector<int64_t> kernel, std::vector<int64_t> strides,
                      std::vector<int64_t> dilations) {
  return {{"kernel", std::move(kernel)},
          {"strides", std::move(strides)},
          {"dilations", std::move(dilations)}};
}

TEST(WindowTest, MatchesReference) {
  std::mt19937_64 rng(31);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (DType dtype : {DType::kF32, DType::kF64, DType::kI64, DType::kBool}) {
    for (int trial = 0; trial < 40; ++trial) {
      const int k = static_cast<int>(pick(1, 3));
      const int batch = static_cast<int>(pick(0, 2));
      Dims shape, kernel, strides, dilations, out_spatial;
      for (int b = 0; b < batch; ++b) shape.push_back(pick(1, 3));
      for (int i = 0; i < k; ++i) {
        kernel.push_back(pick(1, 3));
        strides.push_back(pick(1, 3));
        dilations.push_back(pick(1, 2));
        const int64_t span = dilations[i] * (kernel[i] - 1) + 1;
        shape.push_back(span + pick(0, 5));
        out_spatial.push_back((shape.back() - span) / strides[i] + 1);
      }
      Tensor x = Random(rng, dtype, shape, -9, 9);
      Dims out(shape.begin(), shape.begin() + batch);
      out.insert(out.end(), kernel.begin(), kernel.end());
      out.insert(out.end(), out_spatial.begin(), out_spatial.end());
      std::vector<double> want(Numel(out));
      for (int64_t f = 0; f < Numel(out); ++f) {
        Dims idx = Unravel(f, out);
        Dims src(idx.begin(), idx.begin() + batch);
        for (int i = 0; i < k; ++i) {
          src.push_back(idx[batch + k + i] * strides[i] + idx[batch + i] * dilations[i]);
        }
        int64_t flat = 0;
        for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + src[d];
        want[f] = x.ValueAt(flat);
      }
      ExpectTensor(EvalOp(OpCode::kWindow, {&x}, WindowAttrs(kernel, strides, dilations)), dtype,
                   out, want, absl::StrCat("window ", x.TypeString(), " trial ", trial));
    }
  }
}

TEST(WindowTest, RejectsBadWindows) {
  std::mt19937_64 rng(32);
  Tensor x = Random(rng, DType::kF32, {2, 5});
  absl::StatusOr<Tensor> too_long = EvalOp(OpCode::kWindow, {&x}, WindowAttrs({3}, {1}, {3}));
  ASSERT_FALSE(too_long.ok());
  EXPECT_THAT(too_long.status().message(), HasSubstr("shorter than the window's span 7"));
  absl::StatusOr<Tensor> lengths = EvalOp(OpCode::kWindow, {&x}, WindowAttrs({3, 1}, {1}, {1}));
  ASSERT_FALSE(lengths.ok());
  EXPECT_THAT(lengths.status().message(), HasSubstr("of one length"));
  absl::StatusOr<Tensor> rank =
      EvalOp(OpCode::kWindow, {&x}, WindowAttrs({1, 1, 1}, {1, 1, 1}, {1, 1, 1}));
  ASSERT_FALSE(rank.ok());
  EXPECT_THAT(rank.status().message(), HasSubstr("needs rank >= 3"));
  absl::StatusOr<Tensor> zero = EvalOp(OpCode::kWindow, {&x}, WindowAttrs({2}, {0}, {1}));
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(zero.status().message(), HasSubstr("must be in [1, 2^31]"));
}

}  // namespace
}  // namespace graphjit::runtime::testutil
