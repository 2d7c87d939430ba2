// Guards: the model's input signature (dtype, rank, constant dims, one value per dynamic
// dim) and the per-entry dim ranges, with the messages that explain a failure.
#include "compiler/cache/guards.h"

#include "cache_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphjit::compiler::cache {
namespace {

using runtime::Tensor;
using ::testing::HasSubstr;

class GuardsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = testutil::SmallDecode();
    models::TraceOptions padded;
    padded.padded = true;
    absl::StatusOr<InputSignature> sig = InputSignature::Create(
        model_->InputTypes({}), model_->InputTypes(padded), model_->DynamicDims());
    ASSERT_TRUE(sig.ok()) << sig.status();
    sig_ = *sig;
    in_ = testutil::DecodeInputs(*model_, 8);
  }

  std::vector<const Tensor*> Args() {
    std::vector<const Tensor*> args;
    for (const InputGuard& g : sig_.inputs()) {
      auto it = in_.find(g.name);
      args.push_back(it == in_.end() ? nullptr : &it->second);
    }
    return args;
  }

  std::unique_ptr<models::Model> model_;
  InputSignature sig_;
  runtime::TensorMap in_;
};

TEST_F(GuardsTest, SignatureOfTheDecodeLayer) {
  EXPECT_EQ(sig_.ToString(),
            "x: f64[1, 32], k_cache: f64[2, S, 8], v_cache: f64[2, S, 8], cos: f64[1, 1, 8], "
            "sin: f64[1, 1, 8]");
  ASSERT_EQ(sig_.masks().size(), 1u);
  EXPECT_EQ(sig_.masks()[0].name, "kmask");
  EXPECT_EQ(sig_.DimSource(0), "k_cache.shape[1]");
}

TEST_F(GuardsTest, BindReadsTheDynamicDim) {
  DimValues v{};
  EXPECT_TRUE(sig_.Bind(Args(), &v));
  EXPECT_EQ(v[0], 8);
  EXPECT_EQ(sig_.ExplainFailure(Args()), "");
}

TEST_F(GuardsTest, EachFailureNamesTheGuard) {
  DimValues v{};
  auto expect_failure = [&](const std::string& want) {
    EXPECT_FALSE(sig_.Bind(Args(), &v));
    EXPECT_EQ(sig_.ExplainFailure(Args()), want);
  };
  runtime::TensorMap good = in_;
  in_["x"] = *Tensor::Zeros(ir::DType::kF32, {1, 32});
  expect_failure("x.dtype == f64 failed: got f32");
  in_ = good;
  in_["k_cache"] = *Tensor::Zeros(ir::DType::kF64, {2, 8});
  expect_failure("k_cache.rank == 3 failed: got 2 (f64[2, 8])");
  in_ = good;
  in_["x"] = *Tensor::Zeros(ir::DType::kF64, {1, 33});
  expect_failure("x.shape[1] == 32 failed: got 33");
  in_ = good;
  in_["v_cache"] = *Tensor::Zeros(ir::DType::kF64, {2, 7, 8});
  expect_failure("v_cache.shape[1] == k_cache.shape[1] (S) failed: got 7 vs 8");
  in_ = good;
  in_.erase("cos");
  expect_failure("input 'cos' is missing (expected cos: f64[1, 1, 8])");
}

TEST_F(GuardsTest, EntryRangesExplainTheFirstFailure) {
  DimValues v{129};
  EntryGuards exact(1, {DimRange{128, 128}});
  EXPECT_FALSE(exact.Check(v));
  EXPECT_EQ(exact.CountFailures(v), 1);
  EXPECT_EQ(exact.ExplainFailure(sig_, v), "k_cache.shape[1] == 128 failed: got 129");
  EXPECT_EQ(exact.ToString(sig_), "k_cache.shape[1] == 128");

  EntryGuards symbolic(1, {RangeForKey(ShapePolicy::kSymbolic, kSymbolicDim)});
  EXPECT_TRUE(symbolic.Check(v));
  EXPECT_EQ(symbolic.ExplainFailure(sig_, v), "");
  EXPECT_EQ(symbolic.ExplainFailure(sig_, DimValues{1}), "k_cache.shape[1] >= 2 failed: got 1");

  EntryGuards bucket(1, {RangeForKey(ShapePolicy::kPow2, 512)});
  EXPECT_EQ(bucket.ExplainFailure(sig_, DimValues{513}),
            "k_cache.shape[1] in [257, 512] failed: got 513");
}

TEST(GuardsCreate, UnguardableDimsAreRefused) {
  frontend::InputTypes types = {{"x", {ir::DType::kF64, {ir::SymExpr::Symbol("S") + 1, 4}}}};
  absl::StatusOr<InputSignature> sig = InputSignature::Create(types, types, {"S"});
  ASSERT_FALSE(sig.ok());
  EXPECT_THAT(sig.status().message(), HasSubstr("input 'x' dim 0 is `S+1`"));

  frontend::InputTypes plain = {{"x", {ir::DType::kF64, {4}}}};
  sig = InputSignature::Create(plain, plain, {"S"});
  ASSERT_FALSE(sig.ok());
  EXPECT_THAT(sig.status().message(), HasSubstr("dynamic dim 'S' is not a dim of any input"));
}

}  // namespace
}  // namespace graphjit::compiler::cache
