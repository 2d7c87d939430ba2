#include "models/linear.h"

#include <cmath>
#include <random>

#include "absl/strings/str_format.h"
#include "frontend/ops.h"
#include "models/random_init.h"

namespace graphjit::models {

std::vector<frontend::Value> Linear(frontend::Context& ctx) {
  return {Matmul(ctx.Input("x"), ctx.Param("w"))};
}

namespace {

class LinearModel : public Model {
 public:
  LinearModel(const LinearCfg& cfg, ir::DType dtype, uint64_t seed)
      : cfg_(cfg), dtype_(dtype), seed_(seed) {
    std::mt19937_64 rng(seed);
    params_["w"] =
        RandomNormal(dtype, {cfg.in, cfg.out}, rng, 1.0 / std::sqrt(static_cast<double>(cfg.in)));
  }

  std::string Spec() const override {
    return absl::StrFormat("linear:in=%d,out=%d,tokens=%d,dtype=%s,seed=%d", cfg_.in, cfg_.out,
                           cfg_.tokens, ir::DTypeName(dtype_), seed_);
  }
  ir::DType dtype() const override { return dtype_; }
  std::vector<std::string> DynamicDims() const override { return {}; }
  frontend::InputTypes InputTypes(const TraceOptions&) const override {
    return {{"x", {dtype_, {cfg_.tokens, cfg_.in}}}};
  }
  std::vector<frontend::Value> Forward(frontend::Context& ctx) const override {
    return Linear(ctx);
  }
  ir::Bindings DefaultBindings() const override { return {}; }
  absl::StatusOr<runtime::TensorMap> ExampleInputs(const ir::Bindings&,
                                                   uint64_t seed) const override {
    std::mt19937_64 rng(seed);
    return runtime::TensorMap{{"x", RandomNormal(dtype_, {cfg_.tokens, cfg_.in}, rng)}};
  }

 private:
  LinearCfg cfg_;
  ir::DType dtype_;
  uint64_t seed_;
};

}  // namespace

std::unique_ptr<Model> MakeLinearModel(const LinearCfg& cfg, ir::DType dtype, uint64_t seed) {
  return std::make_unique<LinearModel>(cfg, dtype, seed);
}

}  // namespace graphjit::models
