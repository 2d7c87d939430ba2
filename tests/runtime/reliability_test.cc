// Regressions of issue 16 in the runtime: bool .npy bytes other than 0 and 1 (reading them
// was undefined behaviour), the shared scalar semantics (runtime/scalar_semantics.h) of
// casts and floor division, and zero-size tensors through every kind of kernel.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/interpreter.h"
#include "runtime/npy.h"
#include "runtime/scalar_semantics.h"

namespace graphjit::runtime {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(NpyBool, BytesOtherThanZeroAndOneAreRejected) {
  std::string bytes = EncodeNpy(*Tensor::FromDoubles(DType::kBool, {2}, {1, 0}));
  bytes.back() = '\x02';  // bool[2] with bytes 01 02
  absl::StatusOr<Tensor> t = ParseNpy(bytes, "b.npy");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("b.npy: bool element 1 is byte 2"));
  bytes.back() = '\x01';
  ASSERT_TRUE(ParseNpy(bytes, "b.npy").ok());
}

TEST(ScalarSemantics, FloatToI64Saturates) {
  const double in[] = {1e300,
                       -1e300,
                       INFINITY,
                       -INFINITY,
                       NAN,
                       -2.5,
                       2.9,
                       9.3e18,
                       -9.3e18,
                       9223372036854775807.0,
                       -9223372036854775808.0};
  const int64_t want[] = {kMax, kMin, kMax, kMin, 0, -2, 2, kMax, kMin, kMax, kMin};
  for (size_t i = 0; i < std::size(in); ++i) {
    EXPECT_EQ(SaturatingToI64(in[i]), want[i]) << in[i];
    EXPECT_EQ(SaturatingToI64(static_cast<float>(in[i])), want[i]) << in[i];
    EXPECT_EQ((ConvertElement<int64_t, double>(in[i])), want[i]);
  }
  EXPECT_TRUE((ConvertElement<bool, double>(NAN)));
  EXPECT_FALSE((ConvertElement<bool, double>(-0.0)));
}

TEST(ScalarSemantics, FloorDivisionAndWrapping) {
  EXPECT_EQ(FloorDivI64(7, 2), 3);
  EXPECT_EQ(FloorDivI64(-7, 2), -4);
  EXPECT_EQ(FloorDivI64(7, -2), -4);
  EXPECT_EQ(FloorDivI64(kMin, -1), kMin);  // wraps, as two's complement negation
  EXPECT_EQ(FloorDivI64(kMin, 1), kMin);
  EXPECT_EQ(FloorModI64(-7, 2), 1);
  EXPECT_EQ(FloorModI64(7, -2), -1);
  EXPECT_EQ(FloorModI64(kMin, -1), 0);
  EXPECT_EQ(WrapAdd(kMax, 1), kMin);
  EXPECT_EQ(WrapMul(kMin, -1), kMin);
  EXPECT_EQ(WrapNeg(kMin), kMin);
  EXPECT_EQ(WrapAbs(kMin), kMin);
}

// The issue's reproducer, in the interpreter: f64 [1e300, -1e300, inf, -inf, nan, -2.5]
// cast to i64.
TEST(ScalarSemantics, InterpreterCastSaturates) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(R"(graph c {
    %0 = input {name="x"} : f64[6]
    %1 = cast(%0) {dtype=i64} : i64[6]
    %2 = input {name="y"} : f32[6]
    %3 = cast(%2) {dtype=i64} : i64[6]
    return %1, %3
  })");
  ASSERT_TRUE(g.ok()) << g.status();
  std::vector<double> x = {1e300, -1e300, INFINITY, -INFINITY, NAN, -2.5};
  TensorMap in = {{"x", *Tensor::FromDoubles(DType::kF64, {6}, x)},
                  {"y", *Tensor::FromDoubles(DType::kF32, {6}, x)}};
  absl::StatusOr<std::vector<Tensor>> out = Interpret(*g, in, {});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<int64_t> want = {kMax, kMin, kMax, kMin, 0, -2};
  for (const Tensor& t : *out) {
    EXPECT_EQ(std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + 6), want);
  }
}

// Zero-size operands through elementwise, layout, reduction, matmul, gather and the
// composites: results of the declared (empty or not) shapes.
TEST(ZeroSize, InterpreterRunsEveryKindOfOp) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(R"(graph z {
    %x = input {name="x"} : f64[0, 4]
    %y = input {name="y"} : f64[4, 0]
    %i = input {name="i"} : i64[0]
    %e = exp(%x) : f64[0, 4]
    %a = add(%e, %x) : f64[0, 4]
    %m = matmul(%y, %x) : f64[4, 4]
    %m2 = matmul(%x, %y) : f64[0, 0]
    %s = reduce_sum(%x) {axis=0, keepdim=false} : f64[4]
    %mx = reduce_max(%x) {axis=0, keepdim=false} : f64[4]
    %mn = reduce_mean(%x) {axis=0, keepdim=false} : f64[4]
    %t = transpose(%a) {perm=[1, 0]} : f64[4, 0]
    %r = reshape(%t) {shape=[0, 2, 2]} : f64[0, 2, 2]
    %c = concat(%x, %x) {axis=0} : f64[0, 4]
    %sl = slice(%x) {axis=1, start=1, end=3} : f64[0, 2]
    %g = gather(%y, %i) : f64[0, 0]
    %sm = softmax(%x) {axis=-1} : f64[0, 4]
    %ce = cross_entropy(%x, %i) : f64[]
    %ci = cast(%x) {dtype=i64} : i64[0, 4]
    %k = constant {value=[]} : f32[0, 5]
    %ng = neg(%k) : f32[0, 5]
    return %m, %m2, %s, %mx, %mn, %r, %c, %sl, %g, %sm, %ce, %ci, %ng
  })");
  ASSERT_TRUE(g.ok()) << g.status();
  TensorMap in = {{"x", *Tensor::Zeros(DType::kF64, {0, 4})},
                  {"y", *Tensor::Zeros(DType::kF64, {4, 0})},
                  {"i", *Tensor::Zeros(DType::kI64, {0})}};
  absl::StatusOr<std::vector<Tensor>> out = Interpret(*g, in, {});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 13u);
  EXPECT_EQ((*out)[0].ToDoubles(), std::vector<double>(16, 0.0));  // an empty sum is 0
  EXPECT_EQ((*out)[1].numel(), 0);
  EXPECT_EQ((*out)[2].ToDoubles(), std::vector<double>(4, 0.0));
  EXPECT_EQ((*out)[3].ToDoubles(), std::vector<double>(4, -INFINITY));
  for (double v : (*out)[4].ToDoubles()) EXPECT_TRUE(std::isnan(v));  // 0 / 0
  EXPECT_EQ((*out)[5].TypeString(), "f64[0, 2, 2]");
  EXPECT_EQ((*out)[8].TypeString(), "f64[0, 0]");
  EXPECT_TRUE(std::isnan((*out)[10].ToDoubles()[0]));  // the mean over no rows
  EXPECT_EQ((*out)[12].TypeString(), "f32[0, 5]");
}

}  // namespace
}  // namespace graphjit::runtime
