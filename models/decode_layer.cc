#include "models/decode_layer.h"

#include <cmath>
#include <random>

#include "absl/strings/str_format.h"
#include "frontend/ops.h"
#include "ir/status_macros.h"
#include "models/random_init.h"

namespace graphjit::models {

using frontend::Value;
using ir::SymExpr;
using runtime::Tensor;

runtime::TensorMap LayerParams(const LayerCfg& c, ir::DType dtype, uint64_t seed) {
  std::mt19937_64 rng(seed);
  runtime::TensorMap p;
  auto matrix = [&](const char* name, int64_t in, int64_t out) {
    p[name] = RandomNormal(dtype, {in, out}, rng, 1.0 / std::sqrt(static_cast<double>(in)), 0.0);
  };
  auto norm = [&](const char* name) { p[name] = RandomNormal(dtype, {c.d}, rng, 0.1, 1.0); };
  norm("attn_norm");
  matrix("wq", c.d, c.H * c.dh);
  matrix("wk", c.d, c.G * c.dh);
  matrix("wv", c.d, c.G * c.dh);
  matrix("wo", c.H * c.dh, c.d);
  norm("mlp_norm");
  matrix("w_gate", c.d, c.f);
  matrix("w_up", c.d, c.f);
  matrix("w_down", c.f, c.d);
  return p;
}

std::pair<Tensor, Tensor> RopeTables(int64_t pos, int64_t dh, double theta, ir::DType dtype) {
  std::vector<double> cos_v(dh), sin_v(dh);
  for (int64_t i = 0; i < dh / 2; ++i) {
    double inv_freq = std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(dh));
    double angle = static_cast<double>(pos) * inv_freq;
    cos_v[i] = cos_v[i + dh / 2] = std::cos(angle);
    sin_v[i] = sin_v[i + dh / 2] = std::sin(angle);
  }
  return {ir::ValueOrDie(Tensor::FromDoubles(dtype, {1, 1, dh}, cos_v)),
          ir::ValueOrDie(Tensor::FromDoubles(dtype, {1, 1, dh}, sin_v))};
}

std::vector<Value> DecodeLayer(frontend::Context& ctx, const LayerCfg& c, const SymExpr& pos) {
  Value x = ctx.Input("x");
  Value k_cache = ctx.Input("k_cache");
  Value v_cache = ctx.Input("v_cache");
  Value cos = ctx.Input("cos");
  Value sin = ctx.Input("sin");

  Value h = RmsNorm(x, ctx.Param("attn_norm"), c.eps);
  Value q = Rope(Reshape(Matmul(h, ctx.Param("wq")), {c.H, 1, c.dh}), cos, sin);
  Value k = Rope(Reshape(Matmul(h, ctx.Param("wk")), {c.G, 1, c.dh}), cos, sin);
  Value v = Reshape(Matmul(h, ctx.Param("wv")), {c.G, 1, c.dh});
  Value K = KvWrite(k_cache, k, pos);
  Value V = KvWrite(v_cache, v, pos);

  // Grouped-query attention without copying K/V per head: query heads viewed as
  // [G, H/G, 1, dh] (head h = g * H/G + j), K and V as [G, 1, S, dh], so the batched
  // matmul broadcasts each group's cache over its H/G heads.
  SymExpr S = K.valid() ? K.shape()[1] : SymExpr(0);
  Value qg = Reshape(q, {c.G, c.H / c.G, 1, c.dh});
  Value Kg = Reshape(K, {c.G, 1, S, c.dh});
  Value Vg = Reshape(V, {c.G, 1, S, c.dh});
  Value s = Matmul(qg, TransposeLast2(Kg)) / std::sqrt(static_cast<double>(c.dh));
  if (ctx.HasInput("kmask")) s = s + ctx.Input("kmask");
  Value a = Matmul(Softmax(s, -1), Vg);  // [G, H/G, 1, dh]
  Value x2 = x + Matmul(Reshape(a, {1, c.H * c.dh}), ctx.Param("wo"));

  Value h2 = RmsNorm(x2, ctx.Param("mlp_norm"), c.eps);
  Value gate = Silu(Matmul(h2, ctx.Param("w_gate")));
  Value up = Matmul(h2, ctx.Param("w_up"));
  Value y = x2 + Matmul(gate * up, ctx.Param("w_down"));
  return {y, K, V};
}

frontend::InputTypes DecodeInputTypes(const LayerCfg& c, ir::DType dtype, const SymExpr& S,
                                      bool masked) {
  frontend::InputTypes types = {
      {"x", {dtype, {1, c.d}}},
      {"k_cache", {dtype, {c.G, S, c.dh}}},
      {"v_cache", {dtype, {c.G, S, c.dh}}},
      {"cos", {dtype, {1, 1, c.dh}}},
      {"sin", {dtype, {1, 1, c.dh}}},
  };
  if (masked) types.push_back({"kmask", {dtype, {1, 1, S}}});
  return types;
}

namespace {

class DecodeModel : public Model {
 public:
  DecodeModel(const LayerCfg& cfg, ir::DType dtype, uint64_t seed)
      : cfg_(cfg), dtype_(dtype), seed_(seed) {
    params_ = LayerParams(cfg, dtype, seed);
  }

  std::string Spec() const override {
    return absl::StrFormat("decode:d=%d,H=%d,G=%d,dh=%d,f=%d,dtype=%s,seed=%d", cfg_.d, cfg_.H,
                           cfg_.G, cfg_.dh, cfg_.f, ir::DTypeName(dtype_), seed_);
  }
  ir::DType dtype() const override { return dtype_; }
  std::vector<std::string> DynamicDims() const override { return {"S"}; }

  frontend::InputTypes InputTypes(const TraceOptions& options) const override {
    auto it = options.fixed_dims.find("S");
    SymExpr S = it == options.fixed_dims.end() ? SymExpr::Symbol("S") : SymExpr(it->second);
    return DecodeInputTypes(cfg_, dtype_, S, options.padded);
  }

  std::vector<Value> Forward(frontend::Context& ctx) const override {
    return DecodeLayer(ctx, cfg_, SymExpr::Symbol("P"));
  }

  ir::Bindings DefaultBindings() const override { return {{"S", 128}, {"P", 127}}; }

  ir::Bindings CompleteBindings(ir::Bindings b) const override {
    if (!b.contains("S")) b["S"] = DefaultBindings()["S"];
    if (!b.contains("P")) b["P"] = b["S"] - 1;
    return b;
  }

  absl::StatusOr<runtime::TensorMap> ExampleInputs(const ir::Bindings& bindings,
                                                   uint64_t seed) const override {
    ir::Bindings b = CompleteBindings(bindings);
    int64_t S = b["S"], P = b["P"];
    if (S < 1 || P < 0 || P >= S) {
      return absl::InvalidArgumentError(
          absl::StrFormat("decode: need S >= 1 and 0 <= P < S, got S=%d, P=%d", S, P));
    }
    std::mt19937_64 rng(seed);
    runtime::TensorMap in;
    in["x"] = RandomNormal(dtype_, {1, cfg_.d}, rng, 1.0, 0.0);
    // Cache rows before P hold history, row P is the (zero) slot for the new token.
    for (const char* name : {"k_cache", "v_cache"}) {
      Tensor cache = RandomNormal(dtype_, {cfg_.G, S, cfg_.dh}, rng, 1.0, 0.0);
      std::vector<double> values = cache.ToDoubles();
      for (int64_t g = 0; g < cfg_.G; ++g) {
        for (int64_t r = P; r < S; ++r) {
          for (int64_t j = 0; j < cfg_.dh; ++j) values[(g * S + r) * cfg_.dh + j] = 0.0;
        }
      }
      in[name] = ir::ValueOrDie(Tensor::FromDoubles(dtype_, {cfg_.G, S, cfg_.dh}, values));
    }
    auto [cos, sin] = RopeTables(P, cfg_.dh, cfg_.theta, dtype_);
    in["cos"] = cos;
    in["sin"] = sin;
    return in;
  }

 private:
  LayerCfg cfg_;
  ir::DType dtype_;
  uint64_t seed_;
};

}  // namespace

std::unique_ptr<Model> MakeDecodeModel(const LayerCfg& cfg, ir::DType dtype, uint64_t seed) {
  return std::make_unique<DecodeModel>(cfg, dtype, seed);
}

}  // namespace graphjit::models
