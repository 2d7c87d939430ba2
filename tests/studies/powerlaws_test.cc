// Lecture 4's power-law demos 1 and 2 as studies::RunPowerLawStudy computes
// them with compiled graphs: demo 1's deterministic numbers, the slopes of demo 2 against
// theory, and the nearest-neighbour graph against the interpreter and a scalar loop.
#include "studies/powerlaws.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "absl/strings/str_format.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/jit.h"
#include "frontend/trace_context.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/interpreter.h"

namespace graphjit::studies {
namespace {

using runtime::Tensor;
using runtime::TensorMap;
using ::testing::HasSubstr;

// One run for the whole file (a few seconds, most of it LLVM compiles).
const absl::StatusOr<PowerLawStudy>& Study() {
  static const auto* study = new absl::StatusOr<PowerLawStudy>(RunPowerLawStudy());
  return *study;
}

std::string F4(double v) { return absl::StrFormat("%.4f", v); }

TEST(PowerLaws, Demo1KaplanFactorsAreTheSeeds) {
  ASSERT_TRUE(Study().ok()) << Study().status();
  const std::vector<LossFactors>& f = Study()->factors;
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].alpha, 0.076);
  EXPECT_EQ(F4(f[0].per_doubling), "0.9487");  // 5.1% less loss per doubling of N
  EXPECT_EQ(F4(f[0].per_tenfold), "0.8395");
  EXPECT_EQ(absl::StrFormat("%.1e", f[0].halving_multiplier), "9.1e+03");
  EXPECT_NEAR(f[0].per_doubling, std::pow(2.0, -0.076), 1e-15);
  EXPECT_NEAR(f[0].halving_multiplier, std::pow(2.0, 1 / 0.076), 1e-9);
  EXPECT_EQ(absl::StrFormat("%.3f", f[1].per_tenfold), "0.316");  // alpha = 0.5
  EXPECT_NEAR(f[2].per_tenfold, 0.1, 1e-15);                      // alpha = 1: the mean
  EXPECT_NEAR(f[2].halving_multiplier, 2.0, 1e-15);
}

TEST(PowerLaws, Demo1ReducibleLossKeepsItsSlopeWhileTheLossBends) {
  ASSERT_TRUE(Study().ok()) << Study().status();
  const std::vector<ChinchillaPoint>& c = Study()->chinchilla;
  ASSERT_EQ(c.size(), 7u);
  // The lecture's table: L(1e6) = 5.3964, L - E = 3.7064; L(1e12) = 1.7238.
  EXPECT_EQ(F4(c[0].loss), "5.3964");
  EXPECT_EQ(F4(c[0].reducible), "3.7064");
  EXPECT_EQ(F4(c[6].loss), "1.7238");
  EXPECT_EQ(F4(c[6].reducible), "0.0338");
  for (size_t i = 0; i + 1 < c.size(); ++i) {
    SCOPED_TRACE(c[i].n);
    EXPECT_EQ(F4(c[i].reducible_slope), "0.3400");
    EXPECT_NEAR(c[i].reducible_slope, 0.34, 1e-12);
    EXPECT_NEAR(c[i].reducible, c[i].loss - 1.69, 1e-12);
    if (i > 0) {
      EXPECT_LT(c[i].loss_slope, c[i - 1].loss_slope);  // L flattens
    }
  }
  EXPECT_EQ(F4(c[0].loss_slope), "0.2027");
  EXPECT_EQ(F4(c[5].loss_slope), "0.0100");
  EXPECT_TRUE(std::isnan(c[6].loss_slope));
  EXPECT_TRUE(std::isnan(c[6].reducible_slope));
}

TEST(PowerLaws, Demo2MeanEstimationFallsAsOneOverN) {
  ASSERT_TRUE(Study().ok()) << Study().status();
  const ScalingCurve& m = Study()->mean_estimation;
  std::printf("mean estimation: slope %.4f (theory -1), MSE at n=4 %.5f, at n=1024 %.6f\n",
              m.fit.slope, m.y.front(), m.y.back());
  ASSERT_EQ(m.y.size(), 5u);
  EXPECT_EQ(m.theory_slope, -1.0);
  EXPECT_NEAR(m.fit.slope, -1.0, 0.05);
  // sigma^2 / n within sampling error (4000 repetitions: about 2.2% relative).
  for (size_t i = 0; i < m.x.size(); ++i) EXPECT_NEAR(m.y[i] * m.x[i], 1.0, 0.1) << m.x[i];
}

TEST(PowerLaws, Demo2NearestNeighborExponentShrinksWithDimension) {
  ASSERT_TRUE(Study().ok()) << Study().status();
  const std::vector<ScalingCurve>& nn = Study()->nearest_neighbor;
  ASSERT_EQ(nn.size(), 4u);
  for (const ScalingCurve& c : nn) {
    std::printf("nearest neighbour %s: slope %.3f (theory %.3f), MSE %.2e .. %.2e\n",
                c.name.c_str(), c.fit.slope, c.theory_slope, c.y.front(), c.y.back());
    SCOPED_TRACE(c.name);
    // A loose band around -2/d: 500 test points and four sizes leave sampling noise, and
    // at d = 8 the asymptotic rate is not reached by n = 4096 (the lecture measures -0.21).
    EXPECT_LT(c.fit.slope, 0.6 * c.theory_slope);
    EXPECT_GT(c.fit.slope, 1.3 * c.theory_slope);
    for (size_t i = 1; i < c.y.size(); ++i) EXPECT_LT(c.y[i], c.y[i - 1]);  // more data helps
  }
  // d = 1 steepest, then 2, 4, 8; d = 8 near -0.25.
  for (size_t i = 1; i < nn.size(); ++i) EXPECT_LT(nn[i - 1].fit.slope, nn[i].fit.slope);
  EXPECT_NEAR(nn[3].fit.slope, -0.25, 0.1);
}

TEST(PowerLaws, Demo2ZipfPiecesGiveBothExponentsFromOneDistribution) {
  ASSERT_TRUE(Study().ok()) << Study().status();
  const ScalingCurve& cap = Study()->zipf_capacity;
  const ScalingCurve& data = Study()->zipf_data;
  std::printf("zipf: capacity slope %.4f (theory -0.5), data slope %.4f (theory %.4f)\n",
              cap.fit.slope, data.fit.slope, data.theory_slope);
  EXPECT_NEAR(cap.fit.slope, -0.5, 0.02);
  EXPECT_NEAR(data.fit.slope, -1.0 / 3.0, 0.03);
  EXPECT_NEAR(data.theory_slope, -1.0 / 3.0, 1e-15);
  // No randomness here: the lecture's numpy values, digit for digit.
  const char* want_cap[] = {"0.2356", "0.0757", "0.0235", "0.0069"};
  const char* want_data[] = {"0.0934", "0.0430", "0.0195", "0.0087"};
  ASSERT_EQ(cap.y.size(), 4u);
  ASSERT_EQ(data.y.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(F4(cap.y[i]), want_cap[i]) << "n = " << cap.x[i];
    EXPECT_EQ(F4(data.y[i]), want_data[i]) << "D = " << data.x[i];
  }
  EXPECT_EQ(absl::StrFormat("%.3f", cap.fit.slope), "-0.511");
  EXPECT_EQ(absl::StrFormat("%.3f", data.fit.slope), "-0.344");
}

TEST(PowerLaws, EveryPartRanCompiledAndReportsItsCost) {
  ASSERT_TRUE(Study().ok()) << Study().status();
  const PowerLawStudy& s = *Study();
  std::printf("power-law study: %lld compiles (%.2f s), %.2f s in all\n",
              static_cast<long long>(s.compiles), s.compile_seconds, s.seconds);
  // Five functions, at least one compile each; the varying shapes of demo 2 add a few
  // under the auto policy (exact first, then symbolic), not one per call (31 calls).
  EXPECT_GE(s.compiles, 5);
  EXPECT_LE(s.compiles, 12);
  EXPECT_GT(s.compile_seconds, 0);
  EXPECT_GE(s.seconds, s.demo1_seconds + s.mean_seconds + s.nn_seconds + s.zipf_seconds);
}

TEST(PowerLaws, BadOptionsAreInvalidArguments) {
  PowerLawOptions o;
  o.zipf_capacity = {10, 2000000};
  absl::StatusOr<PowerLawStudy> r = RunPowerLawStudy(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("capacity 2000000 is outside [1, 1000000]"));
  o = {};
  o.alphas = {0.076, 0};
  EXPECT_THAT(RunPowerLawStudy(o).status().message(), HasSubstr("alpha 0 must be > 0"));
  o = {};
  o.nn_train = {64};
  EXPECT_THAT(RunPowerLawStudy(o).status().message(), HasSubstr("too few sizes"));
}

// ---- The distance / argmin graph on small inputs.

struct Neighbors {
  std::vector<int64_t> index;
  double mse = 0;
};

// The lecture's formula in scalar loops: the same terms, the first minimum.
Neighbors ScalarNearest(const std::vector<double>& test, const std::vector<double>& train,
                        int64_t t, int64_t n, int64_t d) {
  auto target = [d](const double* x) {
    double s = 0;
    for (int64_t j = 0; j < d; ++j) s += std::sin(x[j] * (2 * M_PI));
    return s;
  };
  Neighbors out;
  double sum = 0;
  for (int64_t i = 0; i < t; ++i) {
    const double* a = &test[i * d];
    double aa = 0;
    for (int64_t j = 0; j < d; ++j) aa += a[j] * a[j];
    double best = std::numeric_limits<double>::infinity();
    int64_t arg = 0;
    for (int64_t r = 0; r < n; ++r) {
      const double* b = &train[r * d];
      double bb = 0, ab = 0;
      for (int64_t j = 0; j < d; ++j) {
        bb += b[j] * b[j];
        ab += a[j] * b[j];
      }
      const double dist = aa + bb - 2 * ab;
      if (dist < best) {
        best = dist;
        arg = r;
      }
    }
    out.index.push_back(arg);
    const double e = target(&train[arg * d]) - target(a);
    sum += e * e;
  }
  out.mse = sum / static_cast<double>(t);
  return out;
}

std::vector<int64_t> Indices(const Tensor& t) {
  std::vector<int64_t> v(t.data<int64_t>(), t.data<int64_t>() + t.numel());
  return v;
}

// Integer coordinates keep every product and sum exact in f64, so each distance has one
// value whatever the order of summation (BLAS blocks, vector lanes, FMA): the indices must
// agree exactly, and the many exact ties check the first-index rule. Real coordinates
// check the MSE. The larger case crosses the threshold where the matmul goes to BLAS.
TEST(PowerLaws, NearestNeighborGraphMatchesTheInterpreterAndAScalarLoop) {
  struct Case {
    int64_t t, n, d;
    bool integer;
  };
  std::mt19937_64 rng(17);
  for (const Case& c : {Case{9, 20, 3, true}, Case{50, 300, 4, true}, Case{40, 200, 2, false}}) {
    SCOPED_TRACE(absl::StrFormat("T=%d n=%d d=%d", c.t, c.n, c.d));
    std::uniform_int_distribution<int> small(-3, 3);
    std::uniform_real_distribution<double> unit(0, 1);
    std::vector<double> test(c.t * c.d), train(c.n * c.d);
    for (std::vector<double>* v : {&test, &train}) {
      for (double& x : *v) x = c.integer ? small(rng) : unit(rng);
    }
    TensorMap in = {{"test", *Tensor::FromDoubles(ir::DType::kF64, {c.t, c.d}, test)},
                    {"train", *Tensor::FromDoubles(ir::DType::kF64, {c.n, c.d}, train)}};
    const TensorMap no_params;
    frontend::TraceContext ctx(
        "nearest_neighbor",
        {{"test", {ir::DType::kF64, {c.t, c.d}}}, {"train", {ir::DType::kF64, {c.n, c.d}}}},
        no_params);
    std::vector<frontend::Value> outs = NearestNeighborFn(ctx);
    absl::StatusOr<ir::Graph> g = std::move(ctx).Finish(outs);
    ASSERT_TRUE(g.ok()) << g.status();

    absl::StatusOr<std::vector<Tensor>> interpreted = runtime::Interpret(*g, in, {});
    ASSERT_TRUE(interpreted.ok()) << interpreted.status();
    absl::StatusOr<std::unique_ptr<compiler::CompiledGraph>> cg =
        compiler::CompiledGraph::Compile(*g, {});
    ASSERT_TRUE(cg.ok()) << cg.status();
    absl::StatusOr<std::vector<Tensor>> compiled = (*cg)->Run(in);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    const Neighbors scalar = ScalarNearest(test, train, c.t, c.n, c.d);

    EXPECT_EQ(Indices((*compiled)[0]), scalar.index);
    EXPECT_EQ(Indices((*interpreted)[0]), scalar.index);
    EXPECT_NEAR((*compiled)[1].ValueAt(0), scalar.mse, 1e-12 * (1 + scalar.mse));
    EXPECT_NEAR((*interpreted)[1].ValueAt(0), scalar.mse, 1e-12 * (1 + scalar.mse));

    // The arg-min is its own kernel over the fused distance expression; the big cross
    // term is a BLAS call.
    bool arg_reduce = false, blas = false;
    for (const compiler::Kernel& k : (*cg)->program().kernels) {
      arg_reduce |= k.kind == compiler::KernelKind::kArgReduce;
      blas |= k.kind == compiler::KernelKind::kExternMatmul;
    }
    EXPECT_TRUE(arg_reduce);
    EXPECT_EQ(blas, c.t * c.n * c.d >= 4096);
  }
}

}  // namespace
}  // namespace graphjit::studies
