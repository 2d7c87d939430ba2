// Compiled exp (emitted inline by compiler/codegen/codegen_math.cc, KernelEmitter::Exp)
// against libm's over the whole range of each dtype, in vectorized loops and their scalar
// tails alike: within 2 ulps where the result is normal, within one unit of the smallest
// subnormal where it underflows into subnormals, and exactly 0, inf and NaN where libm
// gives those. sigmoid, built on an exp clamped to the normal numbers (ExpClamped), stays
// within a few ulps too (0 where libm's is a subnormal), and so does f32 erf
// (KernelEmitter::ErfF32, on ExpClamped), which vectorizes where libm's erff kept GELU's
// loops scalar.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/compiled/compiled_graph.h"
#include "gtest/gtest.h"
#include "ir/parser.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;

// Every float from lo to hi in `count` steps, then the edges.
std::vector<double> Sweep(double lo, double hi, int count) {
  std::vector<double> v;
  for (int i = 0; i <= count; ++i) v.push_back(lo + (hi - lo) * i / count);
  const double inf = std::numeric_limits<double>::infinity();
  for (double e : {0.0, -0.0, 1e-300, -1e-300, 1e-30, -1e-30, 0.5, -0.5, 1.0, -1.0, inf, -inf,
                   std::numeric_limits<double>::quiet_NaN(), 1e300, -1e300}) {
    v.push_back(e);
  }
  return v;
}

std::vector<double> Compute(const std::string& op, ir::DType dtype, const std::vector<double>& x) {
  const std::string t(ir::DTypeName(dtype));
  const std::string text =
      absl::StrCat("graph g {\n  %0 = input {name=\"x\"} : ", t, "[", x.size(), "]\n  %1 = ", op,
                   "(%0) : ", t, "[", x.size(), "]\n  return %1\n}\n");
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  absl::StatusOr<std::unique_ptr<CompiledGraph>> cg = CompiledGraph::Compile(*g, {});
  EXPECT_TRUE(cg.ok()) << cg.status();
  absl::StatusOr<std::vector<Tensor>> out =
      (*cg)->Run({{"x", *Tensor::FromDoubles(dtype, {static_cast<int64_t>(x.size())}, x)}});
  EXPECT_TRUE(out.ok()) << out.status();
  return (*out)[0].ToDoubles();
}

// How far `got` is from `want`, in ulps of the dtype at `want` (subnormals: in units of
// the smallest subnormal); 0 when both are the same special value.
template <typename T>
double Ulps(double got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(want) || want == 0) return got == want ? 0 : INFINITY;
  if (!std::isfinite(got)) return INFINITY;
  const double unit = std::abs(want) < std::numeric_limits<T>::min()
                          ? std::numeric_limits<T>::denorm_min()
                          : std::numeric_limits<T>::epsilon() * std::abs(want);
  return std::abs(got - want) / unit;
}

// flush_subnormals: where libm's result is below the smallest normal, any result within
// the smallest normal of it passes (sigmoid's 0 for x < -88.37).
template <typename T>
void ExpectNearLibm(const std::string& op, ir::DType dtype, const std::vector<double>& x,
                    double max_ulps, bool flush_subnormals = false) {
  const std::vector<double> got = Compute(op, dtype, x);
  ASSERT_EQ(got.size(), x.size());
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const T xi = static_cast<T>(x[i]);
    const T want = op == "exp"   ? std::exp(xi)
                   : op == "erf" ? std::erf(xi)
                                 : T(1) / (T(1) + std::exp(-xi));
    const bool flushed = flush_subnormals && std::abs(want) < std::numeric_limits<T>::min() &&
                         std::abs(got[i] - want) <= std::numeric_limits<T>::min();
    const double ulps = flushed ? 0 : Ulps<T>(got[i], want);
    worst = std::max(worst, ulps);
    ASSERT_LE(ulps, max_ulps) << op << "(" << xi << ") = " << got[i] << ", libm " << want;
  }
  // The sweep reaches into every region (not all at 0 ulps by accident of the inputs).
  EXPECT_GT(worst, 0) << op;
}

TEST(CompiledExp, F64WithinTwoUlpsOfLibmEverywhere) {
  // Past -745.1 exp underflows to 0, past 709.8 it overflows to inf.
  ExpectNearLibm<double>("exp", ir::DType::kF64, Sweep(-760, 720, 200001), 2);
  ExpectNearLibm<double>("exp", ir::DType::kF64, Sweep(-2, 2, 100001), 2);
  ExpectNearLibm<double>("exp", ir::DType::kF64, Sweep(-745.2, -707, 50001), 2);
}

TEST(CompiledExp, F32WithinTwoUlpsOfLibmEverywhere) {
  ExpectNearLibm<float>("exp", ir::DType::kF32, Sweep(-110, 95, 200001), 2);
  ExpectNearLibm<float>("exp", ir::DType::kF32, Sweep(-2, 2, 100001), 2);
  ExpectNearLibm<float>("exp", ir::DType::kF32, Sweep(-104, -86, 50001), 2);
}

TEST(CompiledExp, SigmoidStaysWithinRounding) {
  ExpectNearLibm<double>("sigmoid", ir::DType::kF64, Sweep(-50, 50, 100001), 4);
  ExpectNearLibm<float>("sigmoid", ir::DType::kF32, Sweep(-50, 50, 100001), 4);
}

// Sigmoid's exp (KernelEmitter::ExpClamped) is clamped where 1 + exp(-x) saturates: 1 for
// large x, and 0 for x < -88.37 (f64 -709.44), where libm's result is a subnormal.
TEST(CompiledExp, SigmoidSaturatesBeyondTheNormalNumbers) {
  ExpectNearLibm<double>("sigmoid", ir::DType::kF64, Sweep(-760, 760, 200001), 4, true);
  ExpectNearLibm<double>("sigmoid", ir::DType::kF64, Sweep(-712, -705, 50001), 4, true);
  ExpectNearLibm<float>("sigmoid", ir::DType::kF32, Sweep(-120, 120, 200001), 4, true);
  ExpectNearLibm<float>("sigmoid", ir::DType::kF32, Sweep(-90, -86, 50001), 4, true);
  const std::vector<double> got = Compute("sigmoid", ir::DType::kF32, {-1000, -88.5, 88.5, 1000});
  EXPECT_EQ(got, (std::vector<double>{0, 0, 1, 1}));
}

TEST(CompiledErf, F32WithinTwoUlpsOfLibmEverywhere) {
  // Both pieces, the switch between them at |x| = 0.927734375, and the saturation to +-1.
  ExpectNearLibm<float>("erf", ir::DType::kF32, Sweep(-12, 12, 200001), 2);
  ExpectNearLibm<float>("erf", ir::DType::kF32, Sweep(-1.2, 1.2, 100001), 2);
  ExpectNearLibm<float>("erf", ir::DType::kF32, Sweep(-1e-3, 1e-3, 10001), 2);
}

TEST(CompiledErf, F64IsLibms) {
  const std::vector<double> x = Sweep(-6, 6, 20001);
  const std::vector<double> got = Compute("erf", ir::DType::kF64, x);
  ASSERT_EQ(got.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(got[i]));
    } else {
      EXPECT_EQ(got[i], std::erf(x[i])) << x[i];
    }
  }
}

// A length that leaves a scalar tail after the vector loop: both give the same bits.
TEST(CompiledExp, VectorAndScalarTailAgree) {
  std::vector<double> x;
  for (int i = 0; i < 37; ++i) x.push_back(-3.0 + 0.17 * (i % 5));
  for (const char* op : {"exp", "erf"}) {
    const std::vector<double> got = Compute(op, ir::DType::kF32, x);
    for (int i = 5; i < 37; ++i) EXPECT_EQ(got[i], got[i % 5]) << op << " " << i;
  }
  const std::vector<double> got = Compute("exp", ir::DType::kF64, x);
  for (int i = 5; i < 37; ++i) EXPECT_EQ(got[i], got[i % 5]) << i;
}

}  // namespace
}  // namespace graphjit::compiler
