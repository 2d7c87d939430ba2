#include "compiler/analysis/fit.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"

namespace graphjit::compiler {

double LogLogFit::Predict(double x) const { return std::exp(intercept + slope * std::log(x)); }

absl::StatusOr<LogLogFit> FitLogLog(absl::Span<const double> xs, absl::Span<const double> ys) {
  if (xs.size() != ys.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("log-log fit: ", xs.size(), " x values but ", ys.size(), " y values"));
  }
  if (xs.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("log-log fit: need at least 2 points, got ", xs.size()));
  }
  const size_t n = xs.size();
  std::vector<double> lx(n), ly(n);
  for (size_t i = 0; i < n; ++i) {
    for (double v : {xs[i], ys[i]}) {
      if (!std::isfinite(v) || v <= 0) {
        return absl::InvalidArgumentError(absl::StrCat("log-log fit: point ", i, " is (", xs[i],
                                                       ", ", ys[i], "); values must be positive"));
      }
    }
    lx[i] = std::log(xs[i]);
    ly[i] = std::log(ys[i]);
  }
  // Centered sums, which keep precision when the logs are large and close together.
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += lx[i];
    my += ly[i];
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxx += (lx[i] - mx) * (lx[i] - mx);
    sxy += (lx[i] - mx) * (ly[i] - my);
    syy += (ly[i] - my) * (ly[i] - my);
  }
  if (sxx == 0) {
    return absl::InvalidArgumentError(
        "log-log fit: all x values are equal, so no slope is defined");
  }
  LogLogFit fit;
  fit.points = static_cast<int>(n);
  fit.slope = sxy / sxx;
  fit.intercept = my - fit.slope * mx;
  double ss_res = 0;
  for (size_t i = 0; i < n; ++i) {
    const double r = ly[i] - (fit.intercept + fit.slope * lx[i]);
    ss_res += r * r;
  }
  // A constant y is fitted exactly by slope 0: call that a perfect fit rather than 0/0.
  fit.r_squared = syy == 0 ? 1.0 : 1.0 - ss_res / syy;
  return fit;
}

}  // namespace graphjit::compiler
