// One Llama-style decode layer (docs/spec/decode_layer.md): RMSNorm, GQA attention
// over a KV cache with RoPE, SwiGLU MLP. The study's embedded default model.
#ifndef GRAPHJIT_MODELS_DECODE_LAYER_H_
#define GRAPHJIT_MODELS_DECODE_LAYER_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "frontend/value.h"
#include "models/model.h"

namespace graphjit::models {

struct LayerCfg {
  int64_t d = 128;  // model width
  int64_t H = 8;    // query heads
  int64_t G = 2;    // key/value heads (groups); head h reads group h / (H / G)
  int64_t dh = 16;  // head dim (even: RoPE rotates halves)
  int64_t f = 344;  // MLP hidden width
  double theta = 10000.0;
  double eps = 1e-6;
};

// The named parameters: matrices N(0,1)/sqrt(fan_in), norm weights 1 + 0.1 N(0,1), from
// a std::mt19937_64 seeded with `seed`.
runtime::TensorMap LayerParams(const LayerCfg& cfg, ir::DType dtype, uint64_t seed);

// RoPE tables for position `pos`: cos and sin, each [1, 1, dh].
std::pair<runtime::Tensor, runtime::Tensor> RopeTables(int64_t pos, int64_t dh, double theta,
                                                       ir::DType dtype);

// The layer: reads inputs x, k_cache, v_cache, cos, sin (and kmask if present) and the
// params from `ctx`; writes the new key/value at row `pos`. Returns {y, K, V}.
std::vector<frontend::Value> DecodeLayer(frontend::Context& ctx, const LayerCfg& cfg,
                                         const ir::SymExpr& pos);

// Input types for cache length `S` (a constant or a symbol).
frontend::InputTypes DecodeInputTypes(const LayerCfg& cfg, ir::DType dtype, const ir::SymExpr& S,
                                      bool masked);

// The registry's Model for the decode layer; P (the write position) is a symbol bound
// per call, P = S - 1 unless given.
std::unique_ptr<Model> MakeDecodeModel(const LayerCfg& cfg, ir::DType dtype, uint64_t seed);

}  // namespace graphjit::models

#endif  // GRAPHJIT_MODELS_DECODE_LAYER_H_
