// Every op of runtime/float_math.def, found through the list itself: its eager kernel is
// its C++ function, element for element, for f32 and f64, at ordinary and edge values
// (NaN, +-inf, +-0, huge, tiny). A new row needs no line here.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "tests/runtime/test_util.h"

namespace graphjit::runtime::testutil {
namespace {

struct FloatMath {
  OpCode op;
  double (*f64)(double);
  float (*f32)(float);
};

const std::vector<FloatMath>& AllFloatMath() {
  static const auto* all = new std::vector<FloatMath>{
#define GJ_FLOAT_MATH(name, spelling, cost, function, ...)          \
  {OpCode::k##name, [](double x) -> double { return function(x); }, \
   [](float x) -> float { return function(x); }},
#include "runtime/float_math.def"
#undef GJ_FLOAT_MATH
  };
  return *all;
}

[[maybe_unused]] const bool kCovered = [] {
  for (const FloatMath& m : AllFloatMath()) CoveredOps().insert(m.op);
  return true;
}();

const std::vector<double> kValues = {NAN,   INFINITY, -INFINITY, 1e300, -1e300, 0.0,   -0.0,
                                     0.5,   -0.5,     1.0,       -1.0,  2.5,    -2.5,  7.25,
                                     -7.25, 1e-300,   -1e-300,   1e10,  -1e10,  100.0, -0.999};

template <typename T>
bool SameValue(T a, T b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof(T)) == 0;  // -0 is not +0
}

TEST(FloatMathTest, EveryKernelIsItsFunction) {
  ASSERT_FALSE(AllFloatMath().empty());
  for (const FloatMath& m : AllFloatMath()) {
    for (DType dtype : {DType::kF32, DType::kF64}) {
      SCOPED_TRACE(absl::StrCat(ir::OpName(m.op), " ", ir::DTypeName(dtype)));
      Tensor x = *Tensor::FromDoubles(dtype, {static_cast<int64_t>(kValues.size())}, kValues);
      absl::StatusOr<Tensor> y = EvalOp(m.op, {&x});
      ASSERT_TRUE(y.ok()) << y.status();
      for (int64_t i = 0; i < x.numel(); ++i) {
        if (dtype == DType::kF32) {
          const float in = x.data<float>()[i], out = y->data<float>()[i];
          EXPECT_TRUE(SameValue(out, m.f32(in))) << in << " -> " << out;
        } else {
          const double in = x.data<double>()[i], out = y->data<double>()[i];
          EXPECT_TRUE(SameValue(out, m.f64(in))) << in << " -> " << out;
        }
      }
      // Integer operands are refused (the shape rule is FloatUnaryRule).
      Tensor i = *Tensor::FromDoubles(DType::kI64, {1}, {1});
      EXPECT_FALSE(EvalOp(m.op, {&i}).ok());
    }
  }
}

}  // namespace
}  // namespace graphjit::runtime::testutil
