// CompileCache on small models: compile counts the key functions predict, 0/1
// specialization, guard failures, miss explanations, logging, eviction, and what happens
// to the caller's tensors. Every miss is a real compile.
#include "absl/strings/str_split.h"
#include "cache_test_util.h"
#include "compiler/jit.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/jit_model.h"

namespace graphjit::compiler::entries {
namespace {

using runtime::Tensor;
using runtime::TensorMap;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using testutil::DecodeInputs;

std::unique_ptr<JitFunction> MakeCache(const models::Model& model, ShapePolicy policy,
                                       int64_t capacity = 0) {
  JitOptions options;
  options.policy = policy;
  options.capacity = capacity;
  options.log = {};
  absl::StatusOr<std::unique_ptr<JitFunction>> cache = models::JitModel(model, options);
  EXPECT_TRUE(cache.ok()) << cache.status();
  return *std::move(cache);
}

TEST(CompileCache, SymbolicSpecializesZeroAndOneAndSharesOneEntryForTheRest) {
  testutil::ScaleRowsModel model;
  auto cache = MakeCache(model, ShapePolicy::kSymbolic);
  std::set<int64_t> ids;
  for (int64_t S : {0, 1, 2, 5, 9, 1, 0, 64}) {
    SCOPED_TRACE(absl::StrCat("S=", S));
    TensorMap in = *model.ExampleInputs({{"S", S}}, S);
    absl::StatusOr<std::shared_ptr<const CacheEntry>> entry = cache->Acquire(in);
    ASSERT_TRUE(entry.ok()) << entry.status();
    ids.insert((*entry)->id());
    EXPECT_EQ((*entry)->keys()[0], S >= 2 ? kSymbolicDim : S);
    absl::StatusOr<std::vector<Tensor>> got = cache->Run(in);
    absl::StatusOr<std::vector<Tensor>> want = models::RunEager(model, in, {});
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_TRUE(want.ok()) << want.status();
    for (int i = 0; i < 2; ++i) EXPECT_LT(runtime::MaxAbsDiff((*got)[i], (*want)[i]), 1e-12) << i;
  }
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_EQ(cache->stats().compiles, 3);
  EXPECT_EQ(cache->size(), 3);
}

TEST(CompileCache, SymbolicDecodeAtOneRowHasItsOwnEntry) {
  auto model = testutil::SmallDecode();
  auto cache = MakeCache(*model, ShapePolicy::kSymbolic);
  for (int64_t S : {1, 2, 3}) {
    TensorMap in = DecodeInputs(*model, S);
    absl::StatusOr<std::vector<Tensor>> want = models::RunEager(*model, in, {{"P", S - 1}});
    absl::StatusOr<std::vector<Tensor>> got = cache->Run(in, {{"P", S - 1}});
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_LT(runtime::MaxAbsDiff((*got)[0], (*want)[0]), 1e-12) << "S=" << S;
  }
  EXPECT_EQ(cache->stats().compiles, 2);  // S=1, then one symbolic entry for 2 and 3
}

TEST(CompileCache, AutoGoesSymbolicOnTheSecondValueAndDropsTheExactEntry) {
  auto model = testutil::SmallDecode();
  auto cache = MakeCache(*model, ShapePolicy::kAuto);
  auto run = [&](int64_t S) {
    absl::StatusOr<std::shared_ptr<const CacheEntry>> e = cache->Acquire(DecodeInputs(*model, S));
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? (*e)->keys()[0] : -2;
  };
  EXPECT_EQ(run(7), 7);
  EXPECT_EQ(run(7), 7);
  EXPECT_EQ(cache->stats().compiles, 1);
  EXPECT_EQ(run(8), kSymbolicDim);
  EXPECT_EQ(cache->size(), 1);  // the S=7 entry can no longer be reached
  EXPECT_EQ(run(7), kSymbolicDim);
  EXPECT_EQ(run(300), kSymbolicDim);
  EXPECT_EQ(cache->stats().compiles, 2);
  EXPECT_EQ(run(1), 1);  // 0/1 stay specialized
  EXPECT_EQ(cache->stats().compiles, 3);
}

TEST(CompileCache, WrongDtypeRankOrConstantDimIsAClearErrorNotACompile) {
  auto model = testutil::SmallDecode();
  for (ShapePolicy policy : AllPolicies()) {
    SCOPED_TRACE(PolicyName(policy));
    auto cache = MakeCache(*model, policy);
    TensorMap in = DecodeInputs(*model, 5);
    in["x"] = *Tensor::Zeros(ir::DType::kF32, {1, 32});
    absl::StatusOr<std::vector<Tensor>> r = cache->Run(in, {{"P", 4}});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr("x.dtype == f64 failed: got f32"));
    EXPECT_THAT(r.status().message(), HasSubstr("no entry can serve this call"));

    in = DecodeInputs(*model, 5);
    in["k_cache"] = *Tensor::Zeros(ir::DType::kF64, {2, 5});
    r = cache->Run(in, {{"P", 4}});
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.status().message(), HasSubstr("k_cache.rank == 3 failed: got 2"));

    in = DecodeInputs(*model, 5);
    in["cos"] = *Tensor::Zeros(ir::DType::kF64, {1, 1, 6});
    r = cache->Run(in, {{"P", 4}});
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.status().message(), HasSubstr("cos.shape[2] == 8 failed: got 6"));

    CacheStats s = cache->stats();
    EXPECT_EQ(s.compiles, 0);
    EXPECT_EQ(s.rejected, 3);
  }
}

TEST(CompileCache, AnF32ModelServesF32Inputs) {
  auto model = testutil::SmallDecode("decode:d=32,H=4,G=2,dh=8,f=64,dtype=f32");
  auto cache = MakeCache(*model, ShapePolicy::kPow2);
  TensorMap in = DecodeInputs(*model, 5);
  absl::StatusOr<std::vector<Tensor>> want = models::RunEager(*model, in, {{"P", 4}});
  absl::StatusOr<std::vector<Tensor>> got = cache->Run(in, {{"P", 4}});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0].dtype(), ir::DType::kF32);
  EXPECT_LT(runtime::MaxAbsDiff((*got)[0], (*want)[0]), 1e-4);
}

TEST(CompileCache, ExplainMissNamesTheFailedGuardOfTheNearestEntry) {
  auto model = testutil::SmallDecode();
  auto exact = MakeCache(*model, ShapePolicy::kExact);
  EXPECT_EQ(exact->ExplainMiss(DecodeInputs(*model, 128)), "no live entries");
  for (int64_t S : {3, 128}) ASSERT_TRUE(exact->Acquire(DecodeInputs(*model, S)).ok());
  EXPECT_EQ(exact->ExplainMiss(DecodeInputs(*model, 128)), "");
  // Both entries fail one guard; the most recently used one is the nearest.
  EXPECT_EQ(exact->ExplainMiss(DecodeInputs(*model, 129)),
            "k_cache.shape[1] == 128 failed: got 129 (entry #2, nearest of 2)");

  auto symbolic = MakeCache(*model, ShapePolicy::kSymbolic);
  ASSERT_TRUE(symbolic->Acquire(DecodeInputs(*model, 5)).ok());
  EXPECT_THAT(symbolic->ExplainMiss(DecodeInputs(*model, 1)),
              StartsWith("k_cache.shape[1] >= 2 failed: got 1"));

  auto pow2 = MakeCache(*model, ShapePolicy::kPow2);
  ASSERT_TRUE(pow2->Acquire(DecodeInputs(*model, 100)).ok());
  EXPECT_THAT(pow2->ExplainMiss(DecodeInputs(*model, 129)),
              StartsWith("k_cache.shape[1] in [65, 128] failed: got 129"));

  TensorMap bad = DecodeInputs(*model, 5);
  bad["x"] = *Tensor::Zeros(ir::DType::kF32, {1, 32});
  EXPECT_EQ(pow2->ExplainMiss(bad), "x.dtype == f64 failed: got f32");
}

TEST(CompileCache, LogsOneLinePerEventWhenAsked) {
  EXPECT_FALSE(ParseLogFlags("").recompiles);
  EXPECT_FALSE(ParseLogFlags("passes").guards);
  LogFlags both = ParseLogFlags("recompiles, guards");
  EXPECT_TRUE(both.recompiles && both.guards);
  EXPECT_TRUE(ParseLogFlags("all").guards);

  auto model = testutil::SmallDecode();
  JitOptions options;
  options.policy = ShapePolicy::kExact;
  options.capacity = 1;
  options.log = both;
  auto cache = *models::JitModel(*model, options);
  ::testing::internal::CaptureStderr();
  for (int64_t S : {2, 3}) ASSERT_TRUE(cache->Run(DecodeInputs(*model, S)).ok());
  ASSERT_TRUE(cache->Run(DecodeInputs(*model, 3)).ok());  // a hit logs nothing
  TensorMap bad = DecodeInputs(*model, 3);
  bad["x"] = *Tensor::Zeros(ir::DType::kF32, {1, 32});
  EXPECT_FALSE(cache->Run(bad).ok());
  std::string log = ::testing::internal::GetCapturedStderr();
  std::vector<std::string> lines = absl::StrSplit(log, '\n', absl::SkipEmpty());
  EXPECT_EQ(lines.size(), 8u) << log;
  EXPECT_THAT(log, HasSubstr("graphjit[guards]: decode/exact: miss S=2: no live entries\n"));
  EXPECT_THAT(log, HasSubstr("graphjit[guards]: decode/exact: entry #1 guards: x: f64[1, 32], "
                             "k_cache: f64[2, S, 8], v_cache: f64[2, S, 8], cos: f64[1, 1, 8], "
                             "sin: f64[1, 1, 8]; k_cache.shape[1] == 2\n"));
  EXPECT_THAT(log, HasSubstr("graphjit[recompiles]: decode/exact: compiled entry #1 for S=2 in "));
  EXPECT_THAT(log, HasSubstr("graphjit[guards]: decode/exact: miss S=3: k_cache.shape[1] == 2 "
                             "failed: got 3 (entry #1, nearest of 1)\n"));
  EXPECT_THAT(log, HasSubstr("graphjit[recompiles]: decode/exact: evicted entry #1 (S=2), least "
                             "recently used; capacity 1\n"));
  EXPECT_THAT(log, HasSubstr("graphjit[guards]: decode/exact: rejected: x.dtype == f64 failed: "
                             "got f32\n"));
}

TEST(CompileCache, EvictionKeepsTheBoundFreesCodeAndRecompilesWhenNeeded) {
  auto model = testutil::SmallDecode();
  auto cache = MakeCache(*model, ShapePolicy::kExact, /*capacity=*/2);
  auto reference = MakeCache(*model, ShapePolicy::kSymbolic);
  std::weak_ptr<const CacheEntry> first;
  for (int64_t S : {2, 3, 4, 5, 6, 2}) {
    SCOPED_TRACE(absl::StrCat("S=", S));
    {
      // Not held past this block: a held entry stays alive even when evicted.
      absl::StatusOr<std::shared_ptr<const CacheEntry>> e = cache->Acquire(DecodeInputs(*model, S));
      ASSERT_TRUE(e.ok()) << e.status();
      if (cache->stats().compiles == 1) first = *e;
    }
    absl::StatusOr<std::vector<Tensor>> got = cache->Run(DecodeInputs(*model, S));
    absl::StatusOr<std::vector<Tensor>> want = reference->Run(DecodeInputs(*model, S));
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_TRUE(want.ok()) << want.status();
    for (int i = 0; i < 3; ++i) EXPECT_LT(runtime::MaxAbsDiff((*got)[i], (*want)[i]), 1e-12) << i;
    EXPECT_LE(cache->size(), 2);
  }
  // The entry compiled for S=2 was evicted and destroyed (its code freed); coming back to
  // S=2 compiled it again.
  EXPECT_TRUE(first.expired());
  CacheStats s = cache->stats();
  EXPECT_EQ(s.compiles, 6);
  EXPECT_EQ(s.evictions, 4);
  EXPECT_EQ(s.peak_entries, 2);
}

TEST(CompileCache, AHeldEntryOutlivesItsEviction) {
  auto model = testutil::SmallDecode();
  auto cache = MakeCache(*model, ShapePolicy::kExact, /*capacity=*/1);
  TensorMap in = DecodeInputs(*model, 4);
  std::shared_ptr<const CacheEntry> held = *cache->Acquire(in);
  ASSERT_TRUE(cache->Acquire(DecodeInputs(*model, 5)).ok());  // evicts S=4
  EXPECT_EQ(cache->size(), 1);
  absl::StatusOr<std::vector<Tensor>> out = held->compiled().Run(in, {{"P", 3}});
  EXPECT_TRUE(out.ok()) << out.status();
}

TEST(CompileCache, ExactDonatesTheCallersCachesPaddingNeverWritesThem) {
  auto model = testutil::SmallDecode();
  for (ShapePolicy policy : AllPolicies()) {
    SCOPED_TRACE(PolicyName(policy));
    auto cache = MakeCache(*model, policy);
    TensorMap in = DecodeInputs(*model, 6);
    Tensor k_before = in["k_cache"].Clone();
    absl::StatusOr<std::vector<Tensor>> out = cache->Run(in, {{"P", 5}});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[1].shape(), (std::vector<int64_t>{2, 6, 8}));
    EXPECT_GT(runtime::MaxAbsDiff((*out)[1], k_before), 0);  // the new key was written at row P
    if (PadsInputs(policy)) {
      EXPECT_EQ(runtime::MaxAbsDiff(in["k_cache"], k_before), 0);
      EXPECT_FALSE((*out)[1].SharesBufferWith(in["k_cache"]));
    } else {
      EXPECT_TRUE((*out)[1].SharesBufferWith(in["k_cache"]));
    }
  }
}

TEST(CompileCache, PaddingNeedsAModelThatDeclaresAMask) {
  testutil::ScaleRowsModel model;  // no mask for padded traces
  for (ShapePolicy policy : {ShapePolicy::kPow2, ShapePolicy::kMult128}) {
    JitOptions options;
    options.policy = policy;
    absl::StatusOr<std::unique_ptr<JitFunction>> cache = models::JitModel(model, options);
    ASSERT_FALSE(cache.ok());
    EXPECT_THAT(cache.status().message(), HasSubstr("declares no mask input"));
  }
  JitOptions options;
  options.capacity = -1;
  EXPECT_FALSE(models::JitModel(model, options).ok());
}

// Traces only where S * 4 == 8: other lengths fail inside the compile.
class EightElementsModel : public testutil::ScaleRowsModel {
 public:
  std::vector<frontend::Value> Forward(frontend::Context& ctx) const override {
    return {frontend::Reshape(ctx.Input("x") * ctx.Param("w"), {8})};
  }
};

TEST(CompileCache, AFailedCompileReachesItsCallerAndIsNotCached) {
  EightElementsModel model;
  auto cache = MakeCache(model, ShapePolicy::kExact);
  ASSERT_TRUE(cache->Run(*model.ExampleInputs({{"S", 2}}, 1)).ok());
  for (int attempt = 0; attempt < 2; ++attempt) {
    absl::StatusOr<std::vector<Tensor>> r = cache->Run(*model.ExampleInputs({{"S", 3}}, 1));
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(std::string(r.status().message()), StartsWith("scale_rows/exact: compiling S=3: "));
  }
  CacheStats s = cache->stats();
  EXPECT_EQ(s.compiles, 3);
  EXPECT_EQ(s.failed_compiles, 2);
  EXPECT_EQ(cache->size(), 1);
}

TEST(CompileCache, ModelsWithoutDynamicDimsGetOneEntry) {
  absl::StatusOr<std::unique_ptr<models::Model>> model =
      models::CreateModel("linear:in=8,out=4,tokens=3");
  ASSERT_TRUE(model.ok());
  for (ShapePolicy policy : AllPolicies()) {
    auto cache = MakeCache(**model, policy);
    for (int i = 0; i < 3; ++i) {
      absl::StatusOr<std::vector<Tensor>> out = cache->Run(*(*model)->ExampleInputs({}, i));
      ASSERT_TRUE(out.ok()) << out.status();
    }
    EXPECT_EQ(cache->stats().compiles, 1);
    EXPECT_EQ(cache->stats().hits, 2);
  }
}

}  // namespace
}  // namespace graphjit::compiler::entries
