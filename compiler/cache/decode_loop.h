// The decode loop of seed 000 demo 1 (../shared/spec/decode_layer.md): one decode layer
// called for `steps` tokens while its KV cache grows by one row per step, through a
// CompileCache under one shape policy. The policy study prints its table from this.
#ifndef GRAPHJIT_COMPILER_CACHE_DECODE_LOOP_H_
#define GRAPHJIT_COMPILER_CACHE_DECODE_LOOP_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/cache/compile_cache.h"
#include "models/decode_layer.h"

namespace graphjit::compiler::cache {

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
  std::vector<int64_t> live_entries;  // cache entries alive after each step
  runtime::Tensor k_cache, v_cache;   // after the last step, [G, prompt + steps, dh]
  CacheStats stats;                   // the cache's counters after the loop
};

// Runs the loop through `cache`, whose model must be a decode layer (inputs x, k_cache,
// v_cache, cos, sin; dynamic dim S; call symbol P). Per step: append one zero row to each
// cache, RoPE tables for position S - 1, call with P = S - 1, keep the returned caches.
absl::StatusOr<DecodeLoopResult> RunDecodeLoop(CompileCache& cache,
                                               const DecodeLoopOptions& options = {});

// Likewise through a new cache for `model` with `cache_options`.
absl::StatusOr<DecodeLoopResult> RunDecodeLoop(const models::Model& model,
                                               const CompileCacheOptions& cache_options,
                                               const DecodeLoopOptions& options = {});

}  // namespace graphjit::compiler::cache

#endif  // GRAPHJIT_COMPILER_CACHE_DECODE_LOOP_H_
