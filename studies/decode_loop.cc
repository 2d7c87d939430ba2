#include "studies/decode_loop.h"

#include <chrono>
#include <random>

#include "absl/strings/str_cat.h"
#include "compiler/entries/padding.h"
#include "ir/clock.h"
#include "ir/status_macros.h"
#include "models/jit_model.h"
#include "models/random_init.h"

namespace graphjit::studies {
namespace {

using compiler::entries::Resize;
using runtime::Tensor;

// The decode layer's dims as the function's declared input types give them.
struct DecodeDims {
  int64_t d = 0, G = 0, dh = 0;
  ir::DType dtype = ir::DType::kF64;
};

absl::StatusOr<DecodeDims> DimsOf(const compiler::JitFunction& fn) {
  const std::optional<frontend::InputTypes>& types = fn.options().input_types;
  auto find = [&](absl::string_view name) -> const ir::ValueType* {
    if (!types) return nullptr;
    for (const auto& [n, type] : *types) {
      if (n == name) return &type;
    }
    return nullptr;
  };
  const ir::ValueType* x = find("x");
  const ir::ValueType* k = find("k_cache");
  std::string symbol;
  bool ok = x != nullptr && k != nullptr && find("v_cache") && find("cos") && find("sin") &&
            x->rank() == 2 && k->rank() == 3 && x->shape[1].IsConstant() &&
            k->shape[0].IsConstant() && k->shape[2].IsConstant() && k->shape[1].IsSymbol(&symbol);
  if (!ok) {
    std::string declared = "(none declared)";
    if (types) {
      declared.clear();
      for (const auto& [n, type] : *types) {
        absl::StrAppend(&declared, declared.empty() ? "" : ", ", n, ": ", ir::TypeToString(type));
      }
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "the decode loop needs a decode layer (x, k_cache [G, S, dh], v_cache, cos, sin), "
        "got a function with inputs ",
        declared));
  }
  return DecodeDims{*x->shape[1].AsConstant(), *k->shape[0].AsConstant(), *k->shape[2].AsConstant(),
                    x->dtype};
}

}  // namespace

absl::StatusOr<DecodeLoopResult> RunDecodeLoop(compiler::JitFunction& cache,
                                               const DecodeLoopOptions& options) {
  GJ_ASSIGN_OR_RETURN(DecodeDims dims, DimsOf(cache));
  if (options.prompt < 0 || options.steps < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("decode loop: prompt and steps must be >= 0, got ", options.prompt, " and ",
                     options.steps));
  }
  const auto [d, G, dh, dtype] = dims;
  // Drawn in the lecture's order: keys, values, then every step's x.
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
    // A zero row for the new token.
    GJ_ASSIGN_OR_RETURN(Tensor k_grown, Resize(k, {G, S, dh}));
    GJ_ASSIGN_OR_RETURN(Tensor v_grown, Resize(v, {G, S, dh}));
    auto [cos, sin] = models::RopeTables(S - 1, dh, options.theta, dtype);
    runtime::TensorMap inputs = {
        {"x", xs[t]}, {"k_cache", k_grown}, {"v_cache", v_grown}, {"cos", cos}, {"sin", sin}};

    const ir::Clock::time_point start = ir::Clock::now();
    absl::StatusOr<std::vector<Tensor>> out = cache.Run(inputs, {{"P", S - 1}});
    result.step_seconds.push_back(ir::SecondsSince(start));
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
                                               const compiler::JitOptions& jit_options,
                                               const DecodeLoopOptions& options) {
  GJ_ASSIGN_OR_RETURN(std::unique_ptr<compiler::JitFunction> cache,
                      models::JitModel(model, jit_options));
  return RunDecodeLoop(*cache, options);
}

}  // namespace graphjit::studies
