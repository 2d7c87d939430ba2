// Model::SetWeights: external weights replace the generated ones only if they fit.
#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/model.h"
#include "runtime/weights.h"

namespace graphjit::models {
namespace {

using runtime::Tensor;
using runtime::TensorMap;

TEST(SetWeights, RejectsAWrongShapeAndKeepsTheOldWeights) {
  std::unique_ptr<Model> model = *CreateModel("decode:d=32,H=4,G=2,dh=8,f=64");
  TensorMap before = model->params();
  TensorMap weights = before;
  weights["wq"] = *Tensor::Zeros(ir::DType::kF64, {32, 16});
  absl::Status s = model->SetWeights(weights);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "weights: 'wq' has f64[32, 16], expected f64[32, 32]");
  // A model's dtype is part of its parameters' types.
  TensorMap f32 = before;
  f32["wo"] = *Tensor::Zeros(ir::DType::kF32, {32, 32});
  EXPECT_EQ(model->SetWeights(f32).message(),
            "weights: 'wo' has f32[32, 32], expected f64[32, 32]");
  TensorMap missing = before;
  missing.erase("w_up");
  EXPECT_EQ(model->SetWeights(missing).message(), "weights: missing 'w_up' (expected f64[32, 64])");
  for (const auto& [name, t] : before) EXPECT_TRUE(model->params().at(name).SharesBufferWith(t));
}

TEST(SetWeights, AcceptsAGoodMapAndTheModelRunsOnIt) {
  std::unique_ptr<Model> model = *CreateModel("linear:in=2,out=3,tokens=1");
  // w = [[1, 2, 3], [4, 5, 6]], so x = [10, 100] gives [410, 520, 630].
  TensorMap weights = {{"w", *Tensor::FromDoubles(model->dtype(), {2, 3}, {1, 2, 3, 4, 5, 6})}};
  ASSERT_TRUE(model->SetWeights(weights).ok());
  EXPECT_TRUE(model->params().at("w").SharesBufferWith(weights.at("w")));
  EXPECT_EQ(model->params().at("w").ToDoubles(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  TensorMap inputs = {{"x", *Tensor::FromDoubles(model->dtype(), {1, 2}, {10, 100})}};
  absl::StatusOr<std::vector<Tensor>> y = RunEager(*model, inputs, {});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0].ToDoubles(), (std::vector<double>{410, 520, 630}));
  // The traced graph reads the new weights too.
  EXPECT_TRUE(TraceModel(*model).ok());
}

TEST(SetWeights, LoadsWeightsSavedFromAnotherModel) {
  // Two seeds, same shapes: the second model takes the first one's weights from disk.
  std::unique_ptr<Model> a = *CreateModel("decode:d=32,H=4,G=2,dh=8,f=64,seed=1");
  std::unique_ptr<Model> b = *CreateModel("decode:d=32,H=4,G=2,dh=8,f=64,seed=2");
  std::string path =
      absl::StrCat(::testing::TempDir(), "/graphjit_set_weights_", getpid(), ".safetensors");
  ASSERT_TRUE(runtime::SaveWeights(path, a->params()).ok());
  absl::StatusOr<TensorMap> loaded = runtime::LoadWeights(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  // Fresh inputs per run: the decode layer writes its caches.
  auto run = [&](const Model& m) {
    return (*RunEager(m, *m.ExampleInputs({{"S", 4}}, 3), {{"P", 3}}))[0].ToDoubles();
  };
  EXPECT_NE(run(*a), run(*b));
  ASSERT_TRUE(b->SetWeights(*loaded).ok());
  EXPECT_EQ(run(*a), run(*b));
}

}  // namespace
}  // namespace graphjit::models
