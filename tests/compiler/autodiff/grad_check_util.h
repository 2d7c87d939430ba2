// Test helpers: random inputs and a central-difference check of a gradient graph.
#ifndef GRAPHJIT_TESTS_COMPILER_AUTODIFF_GRAD_CHECK_UTIL_H_
#define GRAPHJIT_TESTS_COMPILER_AUTODIFF_GRAD_CHECK_UTIL_H_

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/autodiff/autodiff.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler::testutil {

enum class InputKind {
  kNormal,    // N(0, 1)
  kPositive,  // uniform [0.5, 2]: bases of log, sqrt, pow, divisors
  kIndex,     // integers in [0, index_limit)
};

inline runtime::Tensor RandomTensor(std::mt19937_64& rng, ir::DType dtype, const ir::Shape& shape,
                                    const ir::Bindings& bindings, InputKind kind,
                                    int64_t index_limit) {
  std::vector<int64_t> dims = *ir::EvaluateShape(shape, bindings);
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> positive(0.5, 2.0);
  std::vector<double> v(count);
  for (double& e : v) {
    switch (kind) {
      case InputKind::kNormal:
        e = normal(rng);
        break;
      case InputKind::kPositive:
        e = positive(rng);
        break;
      case InputKind::kIndex:
        e = static_cast<double>(rng() % index_limit);
        break;
    }
  }
  return *runtime::Tensor::FromDoubles(dtype, dims, v);
}

struct GradCheckResult {
  absl::Status status;
  double max_error = 0;  // max |analytic - numeric| / (1 + |numeric|)
  std::string worst;     // where it was
  int checked = 0;       // elements compared
};

// Compares the gradients of output 0 of `forward` w.r.t. the inputs or params named in
// `wrt` (from BuildGradientGraph, run in the interpreter) with central differences of step
// `h`. Every element is perturbed, or `per_value` random ones of each value if > 0.
inline GradCheckResult CheckGradients(const ir::Graph& forward, const std::vector<std::string>& wrt,
                                      const runtime::TensorMap& inputs,
                                      const runtime::TensorMap& params,
                                      const ir::Bindings& bindings, int per_value = 0,
                                      uint64_t seed = 0, double h = 1e-6) {
  GradCheckResult result;
  absl::StatusOr<ir::Graph> grads = BuildGradientGraph(forward, wrt);
  if (!grads.ok()) {
    result.status = grads.status();
    return result;
  }
  absl::StatusOr<std::vector<runtime::Tensor>> analytic =
      runtime::Interpret(*grads, inputs, params, bindings);
  if (!analytic.ok()) {
    result.status = analytic.status();
    return result;
  }
  std::mt19937_64 rng(seed);
  for (size_t w = 0; w < wrt.size(); ++w) {
    const bool is_param = params.contains(wrt[w]);
    const runtime::Tensor& value = is_param ? params.at(wrt[w]) : inputs.at(wrt[w]);
    const std::vector<double> base = value.ToDoubles();
    const std::vector<double> got = (*analytic)[1 + w].ToDoubles();
    std::vector<int64_t> elements(base.size());
    for (size_t i = 0; i < base.size(); ++i) elements[i] = static_cast<int64_t>(i);
    if (per_value > 0 && static_cast<int>(elements.size()) > per_value) {
      std::shuffle(elements.begin(), elements.end(), rng);
      elements.resize(per_value);
    }
    for (int64_t i : elements) {
      double loss[2];
      for (int side = 0; side < 2; ++side) {
        std::vector<double> moved = base;
        moved[i] += side == 0 ? h : -h;
        runtime::TensorMap in = inputs, p = params;
        (is_param ? p : in)[wrt[w]] =
            *runtime::Tensor::FromDoubles(value.dtype(), value.shape(), moved);
        absl::StatusOr<std::vector<runtime::Tensor>> out =
            runtime::Interpret(forward, in, p, bindings);
        if (!out.ok()) {
          result.status = out.status();
          return result;
        }
        loss[side] = (*out)[0].ValueAt(0);
      }
      const double numeric = (loss[0] - loss[1]) / (2 * h);
      const double error = std::abs(got[i] - numeric) / (1 + std::abs(numeric));
      ++result.checked;
      if (!(error <= result.max_error)) {  // also catches NaN
        result.max_error = std::isnan(error) ? INFINITY : error;
        result.worst = absl::StrCat(wrt[w], "[", i, "]: analytic ", got[i], ", numeric ", numeric);
      }
    }
  }
  return result;
}

}  // namespace graphjit::compiler::testutil

#endif  // GRAPHJIT_TESTS_COMPILER_AUTODIFF_GRAD_CHECK_UTIL_H_
