// The decode loop of the compile-cache lecture's first demo (docs/spec/decode_layer.md): one
// decode layer called for `steps` tokens while its KV cache grows by one row per step,
// through a Jit function (models::JitModel) under one shape policy. The policy study prints
// its table from this.
#ifndef GRAPHJIT_STUDIES_DECODE_LOOP_H_
#define GRAPHJIT_STUDIES_DECODE_LOOP_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/jit.h"
#include "models/decode_layer.h"

namespace graphjit::studies {

struct DecodeLoopOptions {
  int64_t prompt = 100;  // cache rows before the first step (N(0,1) keys and values)
  int64_t steps = 512;   // step t runs at S = prompt + t + 1
  uint64_t seed = 0;     // the prompt cache and every step's x, all drawn up front
  // RoPE base: every decode model of the registry uses the LayerCfg default.
  double theta = models::LayerCfg{}.theta;
};

struct DecodeLoopResult {
  std::vector<runtime::Tensor> outputs;  // y of each step, [1, d]
  // Wall seconds of each step's layer call through the cache (its compile included on a
  // miss); building the step's inputs is not included.
  std::vector<double> step_seconds;
  std::vector<int64_t> live_entries;    // cache entries alive after each step
  runtime::Tensor k_cache, v_cache;     // after the last step, [G, prompt + steps, dh]
  compiler::entries::CacheStats stats;  // the cache's counters after the loop
};

// Runs the loop through `fn`, a decode layer with declared input types (as
// models::JitModel makes it: x, k_cache [G, S, dh], v_cache, cos, sin; call symbol P). Per
// step: append one zero row to each cache, RoPE tables for position S - 1, call with
// P = S - 1, keep the returned caches.
absl::StatusOr<DecodeLoopResult> RunDecodeLoop(compiler::JitFunction& fn,
                                               const DecodeLoopOptions& options = {});

// Likewise through a new Jit function for `model` with `jit_options`.
absl::StatusOr<DecodeLoopResult> RunDecodeLoop(const models::Model& model,
                                               const compiler::JitOptions& jit_options,
                                               const DecodeLoopOptions& options = {});

}  // namespace graphjit::studies

#endif  // GRAPHJIT_STUDIES_DECODE_LOOP_H_
