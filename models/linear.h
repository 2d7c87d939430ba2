// A bias-free linear layer y = x @ W, lecture 4's smallest FLOP-counting example.
#ifndef GRAPHJIT_MODELS_LINEAR_H_
#define GRAPHJIT_MODELS_LINEAR_H_

#include <cstdint>

#include "models/model.h"

namespace graphjit::models {

struct LinearCfg {
  int64_t in = 256;
  int64_t out = 512;
  int64_t tokens = 64;
};

// Reads `x` [tokens, in] and param `w` [in, out]; returns {x @ w}.
std::vector<frontend::Value> Linear(frontend::Context& ctx);

std::unique_ptr<Model> MakeLinearModel(const LinearCfg& cfg, ir::DType dtype, uint64_t seed);

}  // namespace graphjit::models

#endif  // GRAPHJIT_MODELS_LINEAR_H_
