// Seeded random tensors for parameter initialisation and example inputs.
#ifndef GRAPHJIT_MODELS_RANDOM_INIT_H_
#define GRAPHJIT_MODELS_RANDOM_INIT_H_

#include <cstdint>
#include <random>
#include <vector>

#include "runtime/tensor.h"

namespace graphjit::models {

// offset + scale * N(0, 1), element by element in row-major order from `rng`.
runtime::Tensor RandomNormal(ir::DType dtype, std::vector<int64_t> shape, std::mt19937_64& rng,
                             double scale = 1.0, double offset = 0.0);

// A tensor filled with `value`.
runtime::Tensor Filled(ir::DType dtype, std::vector<int64_t> shape, double value);

}  // namespace graphjit::models

#endif  // GRAPHJIT_MODELS_RANDOM_INIT_H_
