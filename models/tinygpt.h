// TinyGPT (docs/spec/tinygpt_flops.md): a GPT-2 style model used for FLOP accounting
// and the C = 6ND check; forward ends in the cross-entropy loss of predicting the input.
#ifndef GRAPHJIT_MODELS_TINYGPT_H_
#define GRAPHJIT_MODELS_TINYGPT_H_

#include <algorithm>
#include <cstdint>

#include "models/model.h"

namespace graphjit::models {

struct GPTConfig {
  int64_t vocab_size = 21;  // V
  int64_t block_size = 32;  // T
  int64_t n_layer = 2;      // L
  int64_t d_model = 64;     // d
  int64_t batch = 2;        // B
  int64_t n_head() const { return std::max<int64_t>(1, d_model / 8); }
};

// Parameter count N: every parameter once (the tied output head is wte).
int64_t GPTNumParams(const GPTConfig& cfg);

// Parameters: wte, wpe and matrices N(0, 0.02), biases 0, layer-norm weights 1.
runtime::TensorMap GPTParams(const GPTConfig& cfg, ir::DType dtype, uint64_t seed);

// Reads `tokens` (i64 [B, T]) and returns {loss} (a scalar).
std::vector<frontend::Value> TinyGPTLoss(frontend::Context& ctx, const GPTConfig& cfg);

std::unique_ptr<Model> MakeTinyGPTModel(const GPTConfig& cfg, ir::DType dtype, uint64_t seed);

}  // namespace graphjit::models

#endif  // GRAPHJIT_MODELS_TINYGPT_H_
