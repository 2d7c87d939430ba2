#include "models/random_init.h"

#include "ir/status_macros.h"

namespace graphjit::models {

runtime::Tensor RandomNormal(ir::DType dtype, std::vector<int64_t> shape, std::mt19937_64& rng,
                             double scale, double offset) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> values(n);
  for (double& v : values) v = offset + scale * normal(rng);
  return ir::ValueOrDie(runtime::Tensor::FromDoubles(dtype, std::move(shape), values));
}

runtime::Tensor Filled(ir::DType dtype, std::vector<int64_t> shape, double value) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return ir::ValueOrDie(
      runtime::Tensor::FromDoubles(dtype, std::move(shape), std::vector<double>(n, value)));
}

}  // namespace graphjit::models
