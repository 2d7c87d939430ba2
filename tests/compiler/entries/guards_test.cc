// Guards: an input signature (dtype, rank, constant dims, one value per dynamic dim) and
// the per-entry dim ranges and equalities, with the messages that explain a failure.
#include "compiler/entries/guards.h"

#include "cache_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphjit::compiler::entries {
namespace {

using runtime::Tensor;
using ::testing::HasSubstr;

class GuardsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = testutil::SmallDecode();
    sig_ = Signature(ShapePolicy::kExact);
    in_ = testutil::DecodeInputs(*model_, 8);
  }

  // The decode layer's signature with S keyed by `policy` (and its padding mask).
  InputSignature Signature(ShapePolicy policy) {
    models::TraceOptions padded;
    padded.padded = true;
    frontend::InputTypes masks;
    for (const auto& [name, type] : model_->InputTypes(padded)) {
      if (name == "kmask") masks.emplace_back(name, type);
    }
    absl::StatusOr<InputSignature> sig =
        InputSignature::Create(model_->InputTypes({}), masks, {{"S", policy, true}});
    EXPECT_TRUE(sig.ok()) << sig.status();
    return *sig;
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
  EntryGuards exact(sig_, DimKeys{128});
  EXPECT_FALSE(exact.Check(v));
  EXPECT_EQ(exact.CountFailures(v), 1);
  EXPECT_EQ(exact.ExplainFailure(sig_, v), "k_cache.shape[1] == 128 failed: got 129");
  EXPECT_EQ(exact.ToString(sig_), "k_cache.shape[1] == 128");

  EntryGuards symbolic(Signature(ShapePolicy::kSymbolic), DimKeys{SymbolicKey(0)});
  EXPECT_TRUE(symbolic.Check(v));
  EXPECT_EQ(symbolic.ExplainFailure(sig_, v), "");
  EXPECT_EQ(symbolic.ExplainFailure(sig_, DimValues{1}), "k_cache.shape[1] >= 2 failed: got 1");

  EntryGuards bucket(Signature(ShapePolicy::kPow2), DimKeys{512});
  EXPECT_EQ(bucket.ExplainFailure(sig_, DimValues{513}),
            "k_cache.shape[1] in [257, 512] failed: got 513");
}

TEST(GuardsCreate, DimsTracedWithAnotherDimsSymbolMustEqualIt) {
  const ir::SymExpr a = ir::SymExpr::Symbol("a"), b = ir::SymExpr::Symbol("b");
  frontend::InputTypes types = {{"x", {ir::DType::kF64, {a}}}, {"y", {ir::DType::kF64, {b}}}};
  absl::StatusOr<InputSignature> sig = InputSignature::Create(
      types, {}, {{"a", ShapePolicy::kAuto, false}, {"b", ShapePolicy::kAuto, false}});
  ASSERT_TRUE(sig.ok()) << sig.status();
  EntryGuards same(*sig, DimKeys{SymbolicKey(0), SymbolicKey(0)});  // b traced as a
  EXPECT_TRUE(same.Check(DimValues{5, 5}));
  EXPECT_FALSE(same.Check(DimValues{5, 6}));
  EXPECT_EQ(same.ExplainFailure(*sig, DimValues{5, 6}),
            "y.shape[0] == x.shape[0] failed: got 6 vs 5");
  EXPECT_EQ(same.ToString(*sig), "x.shape[0] >= 2, y.shape[0] >= 2, y.shape[0] == x.shape[0]");
  frontend::InputTypes traced = sig->TraceTypes(DimKeys{SymbolicKey(0), SymbolicKey(0)}, false);
  EXPECT_EQ(ir::TypeToString(traced[1].second), "f64[a]");
  traced = sig->TraceTypes(DimKeys{3, SymbolicKey(1)}, false);
  EXPECT_EQ(ir::TypeToString(traced[0].second), "f64[3]");
  EXPECT_EQ(ir::TypeToString(traced[1].second), "f64[b]");
}

TEST(GuardsCreate, UnguardableDimsAreRefused) {
  frontend::InputTypes types = {{"x", {ir::DType::kF64, {ir::SymExpr::Symbol("S") + 1, 4}}}};
  absl::StatusOr<InputSignature> sig =
      InputSignature::Create(types, {}, {{"S", ShapePolicy::kExact, true}});
  ASSERT_FALSE(sig.ok());
  EXPECT_THAT(sig.status().message(), HasSubstr("input 'x' dim 0 is `S+1`"));

  frontend::InputTypes plain = {{"x", {ir::DType::kF64, {4}}}};
  sig = InputSignature::Create(plain, {}, {{"S", ShapePolicy::kExact, true}});
  ASSERT_FALSE(sig.ok());
  EXPECT_THAT(sig.status().message(), HasSubstr("dynamic dim 'S' is not a dim of any input"));
}

}  // namespace
}  // namespace graphjit::compiler::entries
