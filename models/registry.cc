// CreateModel: spec strings (`name:key=value,...`) to models, with errors that list what
// is valid.
#include <functional>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ir/status_macros.h"
#include "models/decode_layer.h"
#include "models/linear.h"
#include "models/model.h"
#include "models/tinygpt.h"

namespace graphjit::models {
namespace {

// The keys a model accepts: each writes into the config being built.
struct KeyedConfig {
  std::map<std::string, int64_t*> ints;  // positive integers
  ir::DType dtype = ir::DType::kF64;
  int64_t seed = 0;
};

absl::Status ApplyKeys(absl::string_view model, absl::string_view keys, KeyedConfig& cfg) {
  cfg.ints["seed"] = &cfg.seed;
  std::vector<std::string> valid;
  for (const auto& [k, v] : cfg.ints) valid.push_back(k);
  valid.push_back("dtype");
  std::sort(valid.begin(), valid.end());
  if (keys.empty()) return absl::OkStatus();
  for (absl::string_view item : absl::StrSplit(keys, ',')) {
    std::vector<absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    if (kv.size() != 2 || kv[0].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(model, ": expected key=value, got '", item,
                                                     "' (keys: ", absl::StrJoin(valid, ", "), ")"));
    }
    if (kv[0] == "dtype") {
      std::optional<ir::DType> d = ir::DTypeFromName(kv[1]);
      if (!d || !ir::IsFloat(*d)) {
        return absl::InvalidArgumentError(
            absl::StrCat(model, ": dtype must be f32 or f64, got '", kv[1], "'"));
      }
      cfg.dtype = *d;
      continue;
    }
    auto it = cfg.ints.find(std::string(kv[0]));
    if (it == cfg.ints.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          model, ": unknown key '", kv[0], "'; valid keys: ", absl::StrJoin(valid, ", ")));
    }
    int64_t value = 0;
    bool is_seed = kv[0] == "seed";
    if (!absl::SimpleAtoi(kv[1], &value) || value < (is_seed ? 0 : 1) || value > (1LL << 40)) {
      return absl::InvalidArgumentError(absl::StrCat(model, ": key '", kv[0], "' must be a ",
                                                     is_seed ? "non-negative" : "positive",
                                                     " integer, got '", kv[1], "'"));
    }
    *it->second = value;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Model>> CreateDecode(absl::string_view keys) {
  LayerCfg c;
  KeyedConfig k;
  k.ints = {{"d", &c.d}, {"H", &c.H}, {"G", &c.G}, {"dh", &c.dh}, {"f", &c.f}};
  GJ_RETURN_IF_ERROR(ApplyKeys("decode", keys, k));
  if (c.H % c.G != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("decode: H (", c.H, ") must be a multiple of G (", c.G, ")"));
  }
  if (c.dh % 2 != 0) {
    return absl::InvalidArgumentError(absl::StrCat("decode: dh (", c.dh, ") must be even"));
  }
  return MakeDecodeModel(c, k.dtype, k.seed);
}

absl::StatusOr<std::unique_ptr<Model>> CreateTinyGPT(absl::string_view keys) {
  GPTConfig c;
  KeyedConfig k;
  k.ints = {{"L", &c.n_layer},
            {"d", &c.d_model},
            {"T", &c.block_size},
            {"V", &c.vocab_size},
            {"B", &c.batch}};
  GJ_RETURN_IF_ERROR(ApplyKeys("tinygpt", keys, k));
  if (c.d_model % c.n_head() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tinygpt: d (", c.d_model, ") must be a multiple of n_head (", c.n_head(), ")"));
  }
  return MakeTinyGPTModel(c, k.dtype, k.seed);
}

absl::StatusOr<std::unique_ptr<Model>> CreateLinear(absl::string_view keys) {
  LinearCfg c;
  KeyedConfig k;
  k.ints = {{"in", &c.in}, {"out", &c.out}, {"tokens", &c.tokens}};
  GJ_RETURN_IF_ERROR(ApplyKeys("linear", keys, k));
  return MakeLinearModel(c, k.dtype, k.seed);
}

using Factory = std::function<absl::StatusOr<std::unique_ptr<Model>>(absl::string_view)>;

const std::map<std::string, Factory>& Factories() {
  static const auto* factories = new std::map<std::string, Factory>{
      {"decode", CreateDecode}, {"linear", CreateLinear}, {"tinygpt", CreateTinyGPT}};
  return *factories;
}

}  // namespace

std::vector<std::string> ModelNames() {
  std::vector<std::string> names;
  for (const auto& [name, f] : Factories()) names.push_back(name);
  return names;
}

absl::StatusOr<std::unique_ptr<Model>> CreateModel(absl::string_view spec) {
  std::vector<absl::string_view> parts = absl::StrSplit(spec, absl::MaxSplits(':', 1));
  auto it = Factories().find(std::string(parts[0]));
  if (it == Factories().end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown model '", parts[0], "'; valid models: ", absl::StrJoin(ModelNames(), ", ")));
  }
  return it->second(parts.size() > 1 ? parts[1] : absl::string_view());
}

}  // namespace graphjit::models
