#include "compiler/analysis/fit.h"

#include <cmath>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphjit::compiler {
namespace {

using ::testing::HasSubstr;

TEST(FitLogLog, RecoversAnExactPowerLaw) {
  std::vector<double> xs = {1, 10, 100, 1000, 1e4}, ys;
  for (double x : xs) ys.push_back(3.0 * std::pow(x, -0.076));
  absl::StatusOr<LogLogFit> fit = FitLogLog(xs, ys);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->slope, -0.076, 1e-12);
  EXPECT_NEAR(fit->intercept, std::log(3.0), 1e-12);
  EXPECT_NEAR(fit->r_squared, 1.0, 1e-12);
  EXPECT_EQ(fit->points, 5);
  EXPECT_NEAR(fit->Predict(1e6), 3.0 * std::pow(1e6, -0.076), 1e-12);
}

// Lecture 4's demo 2a: the mean of n samples has squared error sigma^2 / n, slope -1.
TEST(FitLogLog, MeanEstimationErrorHasSlopeMinusOne) {
  std::mt19937_64 rng(0);
  std::normal_distribution<double> normal(3.0, 1.0);
  std::vector<double> ns = {4, 16, 64, 256, 1024}, mse;
  for (double n : ns) {
    double total = 0;
    const int reps = 4000;
    for (int r = 0; r < reps; ++r) {
      double sum = 0;
      for (int i = 0; i < n; ++i) sum += normal(rng);
      total += (sum / n - 3.0) * (sum / n - 3.0);
    }
    mse.push_back(total / reps);
  }
  absl::StatusOr<LogLogFit> fit = FitLogLog(ns, mse);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->slope, -1.0, 0.05);
  EXPECT_GT(fit->r_squared, 0.99);
  EXPECT_LT(fit->r_squared, 1.0);
}

// The residuals known: points off the line by factors e and 1/e give R^2 below 1.
TEST(FitLogLog, RSquaredOfScatteredPoints) {
  const double e = std::exp(1.0);
  absl::StatusOr<LogLogFit> fit = FitLogLog({1, e, e * e, e * e * e}, {e, 1, e * e * e, e * e});
  ASSERT_TRUE(fit.ok()) << fit.status();
  // log points (0,1) (1,0) (2,3) (3,2): Sxx = Syy = 5, Sxy = 3, so slope 3/5, intercept
  // 1.5 - 0.6 * 1.5 = 0.6 and R^2 = Sxy^2 / (Sxx Syy) = 9/25.
  EXPECT_NEAR(fit->slope, 0.6, 1e-12);
  EXPECT_NEAR(fit->intercept, 0.6, 1e-12);
  EXPECT_NEAR(fit->r_squared, 0.36, 1e-12);
}

TEST(FitLogLog, ConstantYIsAFlatPerfectFit) {
  absl::StatusOr<LogLogFit> fit = FitLogLog({1, 2, 4}, {5, 5, 5});
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_EQ(fit->slope, 0.0);
  EXPECT_EQ(fit->r_squared, 1.0);
}

TEST(FitLogLog, RejectsBadInput) {
  EXPECT_THAT(FitLogLog({1, 2}, {1}).status().message(), HasSubstr("2 x values but 1 y values"));
  EXPECT_THAT(FitLogLog({1}, {1}).status().message(), HasSubstr("at least 2 points"));
  EXPECT_THAT(FitLogLog({1, 0}, {1, 2}).status().message(), HasSubstr("must be positive"));
  EXPECT_THAT(FitLogLog({1, 2}, {1, -1}).status().message(), HasSubstr("point 1 is (2, -1)"));
  EXPECT_THAT(FitLogLog({1, 2}, {1, NAN}).status().message(), HasSubstr("must be positive"));
  EXPECT_THAT(FitLogLog({3, 3}, {1, 2}).status().message(), HasSubstr("all x values are equal"));
  EXPECT_EQ(FitLogLog({3, 3}, {1, 2}).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace graphjit::compiler
