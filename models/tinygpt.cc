#include "models/tinygpt.h"

#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "frontend/ops.h"
#include "ir/status_macros.h"
#include "models/random_init.h"

namespace graphjit::models {

using frontend::Value;

namespace {
std::string LayerParam(int64_t layer, absl::string_view name) {
  return absl::StrCat("h", layer, ".", name);
}
}  // namespace

int64_t GPTNumParams(const GPTConfig& c) {
  int64_t d = c.d_model;
  int64_t per_layer =
      2 * d + (3 * d * d + 3 * d) + (d * d + d) + 2 * d + (4 * d * d + 4 * d) + (4 * d * d + d);
  return c.vocab_size * d + c.block_size * d + c.n_layer * per_layer + 2 * d;
}

runtime::TensorMap GPTParams(const GPTConfig& c, ir::DType dtype, uint64_t seed) {
  std::mt19937_64 rng(seed);
  int64_t d = c.d_model;
  runtime::TensorMap p;
  p["wte"] = RandomNormal(dtype, {c.vocab_size, d}, rng, 0.02);
  p["wpe"] = RandomNormal(dtype, {c.block_size, d}, rng, 0.02);
  for (int64_t l = 0; l < c.n_layer; ++l) {
    p[LayerParam(l, "ln1_w")] = Filled(dtype, {d}, 1.0);
    p[LayerParam(l, "ln1_b")] = Filled(dtype, {d}, 0.0);
    p[LayerParam(l, "w_qkv")] = RandomNormal(dtype, {d, 3 * d}, rng, 0.02);
    p[LayerParam(l, "b_qkv")] = Filled(dtype, {3 * d}, 0.0);
    p[LayerParam(l, "w_proj")] = RandomNormal(dtype, {d, d}, rng, 0.02);
    p[LayerParam(l, "b_proj")] = Filled(dtype, {d}, 0.0);
    p[LayerParam(l, "ln2_w")] = Filled(dtype, {d}, 1.0);
    p[LayerParam(l, "ln2_b")] = Filled(dtype, {d}, 0.0);
    p[LayerParam(l, "w_fc")] = RandomNormal(dtype, {d, 4 * d}, rng, 0.02);
    p[LayerParam(l, "b_fc")] = Filled(dtype, {4 * d}, 0.0);
    p[LayerParam(l, "w_fc2")] = RandomNormal(dtype, {4 * d, d}, rng, 0.02);
    p[LayerParam(l, "b_fc2")] = Filled(dtype, {d}, 0.0);
  }
  p["lnf_w"] = Filled(dtype, {d}, 1.0);
  p["lnf_b"] = Filled(dtype, {d}, 0.0);
  return p;
}

std::vector<Value> TinyGPTLoss(frontend::Context& ctx, const GPTConfig& c) {
  const int64_t B = c.batch, T = c.block_size, d = c.d_model;
  const int64_t nh = c.n_head(), hd = d / nh;
  const double eps = 1e-5;
  Value tokens = ctx.Input("tokens");
  Value x = Gather(ctx.Param("wte"), tokens) + Slice(ctx.Param("wpe"), 0, 0, T);  // [B, T, d]
  auto heads = [&](const Value& t) {  // [B, T, d] -> [B, nh, T, hd]
    return Transpose(Reshape(t, {B, T, nh, hd}), {0, 2, 1, 3});
  };
  for (int64_t l = 0; l < c.n_layer; ++l) {
    auto p = [&](absl::string_view name) { return ctx.Param(LayerParam(l, name)); };
    Value a = LayerNorm(x, p("ln1_w"), p("ln1_b"), eps);
    Value qkv = Matmul(a, p("w_qkv")) + p("b_qkv");  // [B, T, 3d]
    Value q = heads(Slice(qkv, -1, 0, d));
    Value k = heads(Slice(qkv, -1, d, 2 * d));
    Value v = heads(Slice(qkv, -1, 2 * d, 3 * d));
    Value att = Matmul(q, TransposeLast2(k)) / std::sqrt(static_cast<double>(hd));
    Value y = Matmul(Softmax(CausalMask(att), -1), v);  // [B, nh, T, hd]
    y = Reshape(Transpose(y, {0, 2, 1, 3}), {B, T, d});
    x = x + (Matmul(y, p("w_proj")) + p("b_proj"));
    Value m = LayerNorm(x, p("ln2_w"), p("ln2_b"), eps);
    Value hidden = GeluTanh(Matmul(m, p("w_fc")) + p("b_fc"));
    x = x + (Matmul(hidden, p("w_fc2")) + p("b_fc2"));
  }
  Value xf = LayerNorm(x, ctx.Param("lnf_w"), ctx.Param("lnf_b"), eps);
  Value logits = Matmul(xf, TransposeLast2(ctx.Param("wte")));  // tied head, [B, T, V]
  return {CrossEntropy(logits, tokens)};
}

namespace {

class TinyGPTModel : public Model {
 public:
  TinyGPTModel(const GPTConfig& cfg, ir::DType dtype, uint64_t seed)
      : cfg_(cfg), dtype_(dtype), seed_(seed) {
    params_ = GPTParams(cfg, dtype, seed);
  }

  std::string Spec() const override {
    return absl::StrFormat("tinygpt:L=%d,d=%d,T=%d,V=%d,B=%d,dtype=%s,seed=%d", cfg_.n_layer,
                           cfg_.d_model, cfg_.block_size, cfg_.vocab_size, cfg_.batch,
                           ir::DTypeName(dtype_), seed_);
  }
  ir::DType dtype() const override { return dtype_; }
  std::vector<std::string> DynamicDims() const override { return {}; }
  frontend::InputTypes InputTypes(const TraceOptions&) const override {
    return {{"tokens", {ir::DType::kI64, {cfg_.batch, cfg_.block_size}}}};
  }
  std::vector<Value> Forward(frontend::Context& ctx) const override {
    return TinyGPTLoss(ctx, cfg_);
  }
  ir::Bindings DefaultBindings() const override { return {}; }
  absl::StatusOr<runtime::TensorMap> ExampleInputs(const ir::Bindings&,
                                                   uint64_t seed) const override {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int64_t> token(0, cfg_.vocab_size - 1);
    std::vector<int64_t> ids(cfg_.batch * cfg_.block_size);
    for (int64_t& t : ids) t = token(rng);
    GJ_ASSIGN_OR_RETURN(runtime::Tensor t,
                        runtime::Tensor::FromVector<int64_t>({cfg_.batch, cfg_.block_size},
                                                             absl::Span<const int64_t>(ids)));
    return runtime::TensorMap{{"tokens", t}};
  }

 private:
  GPTConfig cfg_;
  ir::DType dtype_;
  uint64_t seed_;
};

}  // namespace

std::unique_ptr<Model> MakeTinyGPTModel(const GPTConfig& cfg, ir::DType dtype, uint64_t seed) {
  return std::make_unique<TinyGPTModel>(cfg, dtype, seed);
}

}  // namespace graphjit::models
