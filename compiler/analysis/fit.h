// Least-squares fits on log-log axes: how a cost grows with size (compile time vs graph
// size, loss vs parameters), as lecture 4's `fitted_slope` reports it.
#ifndef GRAPHJIT_COMPILER_ANALYSIS_FIT_H_
#define GRAPHJIT_COMPILER_ANALYSIS_FIT_H_

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace graphjit::compiler {

// The line log(y) = intercept + slope * log(x) (natural logs), i.e. y = e^intercept * x^slope.
struct LogLogFit {
  double slope = 0;
  double intercept = 0;
  double r_squared = 0;  // of the fit in log space; 1 when the points lie on the line
  int points = 0;

  // The fitted y at `x`.
  double Predict(double x) const;
};

// Fits (xs[i], ys[i]) as numpy.polyfit(log(xs), log(ys), 1) does. InvalidArgument if the
// spans differ in length, there are fewer than two points, any value is not finite and
// positive, or all xs are equal (no slope is defined).
absl::StatusOr<LogLogFit> FitLogLog(absl::Span<const double> xs, absl::Span<const double> ys);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_ANALYSIS_FIT_H_
