#include "compiler/cache/decode_loop.h"

#include <chrono>
#include <random>

#include "absl/strings/str_cat.h"
#include "compiler/cache/padding.h"
#include "models/random_init.h"

namespace graphjit::compiler::cache {
namespace {

using runtime::Tensor;

// The decode layer's dims as the cache's signature declares them.
struct DecodeDims {
  int64_t d = 0, G = 0, dh = 0;
  ir::DType dtype = ir::DType::kF64;
};

absl::StatusOr<DecodeDims> DimsOf(const CompileCache& cache) {
  const InputSignature& sig = cache.signature();
  auto find = [&](absl::string_view name) -> const InputGuard* {
    for (const InputGuard& g : sig.inputs()) {
      if (g.name == name) return &g;
    }
    return nullptr;
  };
  const InputGuard* x = find("x");
  const InputGuard* k = find("k_cache");
  bool ok = x != nullptr && k != nullptr && find("v_cache") && find("cos") && find("sin") &&
            x->dims.size() == 2 && k->dims.size() == 3 && k->dims[1].dynamic == 0 &&
            sig.dynamic_dims() == std::vector<std::string>{"S"};
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the decode loop needs a decode layer (x, k_cache [G, S, dh], v_cache, cos, sin), "
        "got a model with inputs ",
        sig.ToString()));
  }
  return DecodeDims{x->dims[1].constant, k->dims[0].constant, k->dims[2].constant, x->dtype};
}

}  // namespace

absl::StatusOr<DecodeLoopResult> RunDecodeLoop(CompileCache& cache,
                                               const DecodeLoopOptions& options) {
  absl::StatusOr<DecodeDims> dims = DimsOf(cache);
  if (!dims.ok()) return dims.status();
  if (options.prompt < 0 || options.steps < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("decode loop: prompt and steps must be >= 0, got ", options.prompt, " and ",
                     options.steps));
  }
  const auto [d, G, dh, dtype] = *dims;
  // Drawn in the seed's order: keys, values, then every step's x.
  std::mt19937_64 rng(options.seed);
  Tensor k = models::RandomNormal(dtype, {G, options.prompt, dh}, rng);
  Tensor v = models::RandomNormal(dtype, {G, options.prompt, dh}, rng);
  std::vector<Tensor> xs;
  for (int64_t t = 0; t < options.steps; ++t) {
    xs.push_back(models::RandomNormal(dtype, {1, d}, rng));
  }

  DecodeLoopResult result;
  for (int64_t t = 0; t < options.steps; ++t) {
    const int64_t S = options.prompt + t + 1;
    absl::StatusOr<Tensor> k_grown = Resize(k, {G, S, dh});  // a zero row for the new token
    absl::StatusOr<Tensor> v_grown = Resize(v, {G, S, dh});
    if (!k_grown.ok()) return k_grown.status();
    if (!v_grown.ok()) return v_grown.status();
    auto [cos, sin] = models::RopeTables(S - 1, dh, options.theta, dtype);
    runtime::TensorMap inputs = {
        {"x", xs[t]}, {"k_cache", *k_grown}, {"v_cache", *v_grown}, {"cos", cos}, {"sin", sin}};

    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::vector<Tensor>> out = cache.Run(inputs, {{"P", S - 1}});
    result.step_seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!out.ok()) {
      return absl::Status(out.status().code(), absl::StrCat("decode step ", t, " (S=", S,
                                                            "): ", out.status().message()));
    }
    result.outputs.push_back((*out)[0]);
    k = (*out)[1];
    v = (*out)[2];
    result.live_entries.push_back(cache.size());
  }
  result.k_cache = k;
  result.v_cache = v;
  result.stats = cache.stats();
  return result;
}

absl::StatusOr<DecodeLoopResult> RunDecodeLoop(const models::Model& model,
                                               const CompileCacheOptions& cache_options,
                                               const DecodeLoopOptions& options) {
  absl::StatusOr<std::unique_ptr<CompileCache>> cache = CompileCache::Create(model, cache_options);
  if (!cache.ok()) return cache.status();
  return RunDecodeLoop(**cache, options);
}

}  // namespace graphjit::compiler::cache
