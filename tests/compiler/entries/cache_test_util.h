// Shared helpers of the compile-cache tests: a small decode layer (compiles fast), a
// tiny model whose dynamic dim may be 0, predicted compile counts and comparisons.
#ifndef GRAPHJIT_TESTS_COMPILER_CACHE_CACHE_TEST_UTIL_H_
#define GRAPHJIT_TESTS_COMPILER_CACHE_CACHE_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "compiler/entries/policy.h"
#include "frontend/ops.h"
#include "gtest/gtest.h"
#include "models/model.h"
#include "models/random_init.h"
#include "runtime/tensor.h"

namespace graphjit::compiler::entries::testutil {

// A decode layer small enough to compile in a fraction of the default's time; the
// behaviours tested with it do not depend on the sizes.
inline constexpr char kSmallDecode[] = "decode:d=32,H=4,G=2,dh=8,f=64";

inline std::unique_ptr<models::Model> SmallDecode(const char* spec = kSmallDecode) {
  absl::StatusOr<std::unique_ptr<models::Model>> model = models::CreateModel(spec);
  EXPECT_TRUE(model.ok()) << model.status();
  return *std::move(model);
}

// Decode inputs at cache length S with fresh caches (compiled code updates donated
// caches in place, so a call must not share them with another).
inline runtime::TensorMap DecodeInputs(const models::Model& model, int64_t S, uint64_t seed = 7) {
  absl::StatusOr<runtime::TensorMap> in = model.ExampleInputs({{"S", S}}, seed);
  EXPECT_TRUE(in.ok()) << in.status();
  return *in;
}

// How many compiles the decode loop S = prompt+1 .. prompt+steps costs under `policy`,
// from the key functions alone.
inline int64_t PredictedCompiles(ShapePolicy policy, int64_t prompt, int64_t steps) {
  std::set<DimKey> keys;
  AutoDimState auto_state;
  for (int64_t S = prompt + 1; S <= prompt + steps; ++S) {
    keys.insert(policy == ShapePolicy::kAuto ? auto_state.Observe(S) : KeyFor(policy, S));
  }
  return static_cast<int64_t>(keys.size());
}

// A model whose dynamic dim S may be 0: x [S, 4] scaled by w [4], and its column sums.
class ScaleRowsModel : public models::Model {
 public:
  ScaleRowsModel() {
    std::mt19937_64 rng(3);
    params_["w"] = models::RandomNormal(ir::DType::kF64, {4}, rng);
  }
  std::string Spec() const override { return "scale_rows"; }
  ir::DType dtype() const override { return ir::DType::kF64; }
  std::vector<std::string> DynamicDims() const override { return {"S"}; }
  frontend::InputTypes InputTypes(const models::TraceOptions& options) const override {
    auto it = options.fixed_dims.find("S");
    ir::SymExpr S = it == options.fixed_dims.end() ? ir::SymExpr::Symbol("S") : it->second;
    return {{"x", {ir::DType::kF64, {S, 4}}}};
  }
  std::vector<frontend::Value> Forward(frontend::Context& ctx) const override {
    frontend::Value y = ctx.Input("x") * ctx.Param("w");
    return {frontend::ReduceSum(y, 0), y};
  }
  ir::Bindings DefaultBindings() const override { return {{"S", 4}}; }
  absl::StatusOr<runtime::TensorMap> ExampleInputs(const ir::Bindings& bindings,
                                                   uint64_t seed) const override {
    std::mt19937_64 rng(seed);
    return runtime::TensorMap{
        {"x", models::RandomNormal(ir::DType::kF64, {bindings.at("S"), 4}, rng)}};
  }
};

}  // namespace graphjit::compiler::entries::testutil

#endif  // GRAPHJIT_TESTS_COMPILER_CACHE_CACHE_TEST_UTIL_H_
