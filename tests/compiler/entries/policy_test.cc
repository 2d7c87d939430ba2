// The key functions of the shape policies and the ranges their entries serve.
#include "compiler/entries/policy.h"

#include "cache_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphjit::compiler::entries {
namespace {

using ::testing::HasSubstr;

TEST(Policy, NamesRoundTripAndUnknownNamesListTheValidOnes) {
  for (ShapePolicy p : AllPolicies()) EXPECT_EQ(*ParsePolicy(PolicyName(p)), p);
  EXPECT_EQ(AllPolicies().size(), 5u);
  absl::StatusOr<ShapePolicy> bad = ParsePolicy("buckets");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("exact, pow2, mult128, symbolic, auto"));
}

TEST(Policy, BucketFunctions) {
  EXPECT_EQ(NextPow2(0), 1);
  EXPECT_EQ(NextPow2(1), 1);
  EXPECT_EQ(NextPow2(2), 2);
  EXPECT_EQ(NextPow2(3), 4);
  EXPECT_EQ(NextPow2(101), 128);
  EXPECT_EQ(NextPow2(128), 128);
  EXPECT_EQ(NextPow2(129), 256);
  EXPECT_EQ(NextPow2(612), 1024);
  EXPECT_EQ(RoundUp128(0), 0);
  EXPECT_EQ(RoundUp128(1), 128);
  EXPECT_EQ(RoundUp128(128), 128);
  EXPECT_EQ(RoundUp128(129), 256);
  EXPECT_EQ(RoundUp128(612), 640);
}

TEST(Policy, KeysOfStatelessPolicies) {
  EXPECT_EQ(KeyFor(ShapePolicy::kExact, 0), 0);
  EXPECT_EQ(KeyFor(ShapePolicy::kExact, 129), 129);
  EXPECT_EQ(KeyFor(ShapePolicy::kPow2, 129), 256);
  EXPECT_EQ(KeyFor(ShapePolicy::kMult128, 129), 256);
  // 0 and 1 are specialized, every S >= 2 shares the symbolic key.
  EXPECT_EQ(KeyFor(ShapePolicy::kSymbolic, 0), 0);
  EXPECT_EQ(KeyFor(ShapePolicy::kSymbolic, 1), 1);
  EXPECT_EQ(KeyFor(ShapePolicy::kSymbolic, 2), kSymbolicDim);
  EXPECT_EQ(KeyFor(ShapePolicy::kSymbolic, 612), kSymbolicDim);
}

TEST(Policy, AutoIsExactUntilASecondValueThenSymbolicWithZeroOneSpecialized) {
  AutoDimState s;
  EXPECT_EQ(s.Observe(101), 101);
  EXPECT_EQ(s.Observe(101), 101);
  EXPECT_FALSE(s.dynamic());
  EXPECT_EQ(s.Observe(102), kSymbolicDim);
  EXPECT_TRUE(s.dynamic());
  EXPECT_EQ(s.Observe(101), kSymbolicDim);  // the first value now uses the symbolic entry
  EXPECT_EQ(s.Observe(1), 1);
  EXPECT_EQ(s.Observe(0), 0);
}

TEST(Policy, RangesServedByEachKeyAreTheKeyFunctionsPreimage) {
  for (ShapePolicy p :
       {ShapePolicy::kExact, ShapePolicy::kPow2, ShapePolicy::kMult128, ShapePolicy::kSymbolic}) {
    for (int64_t s = 0; s <= 700; ++s) {
      DimKey key = KeyFor(p, s);
      DimRange r = RangeForKey(p, key);
      EXPECT_TRUE(r.Contains(s)) << PolicyName(p) << " s=" << s;
      // The values just outside the range have other keys.
      if (r.lo > 0) {
        EXPECT_NE(KeyFor(p, r.lo - 1), key) << PolicyName(p) << " s=" << s;
      }
      if (!r.unbounded()) {
        EXPECT_NE(KeyFor(p, r.hi + 1), key) << PolicyName(p) << " s=" << s;
      }
    }
  }
  EXPECT_EQ(RangeForKey(ShapePolicy::kPow2, 512).lo, 257);
  EXPECT_EQ(RangeForKey(ShapePolicy::kMult128, 640).lo, 513);
  EXPECT_EQ(RangeForKey(ShapePolicy::kSymbolic, kSymbolicDim).lo, 2);
  EXPECT_TRUE(RangeForKey(ShapePolicy::kAuto, kSymbolicDim).unbounded());
}

TEST(Policy, RunLengthIsTheBucketOrTheValue) {
  EXPECT_EQ(RunLength(128, 101), 128);
  EXPECT_EQ(RunLength(kSymbolicDim, 101), 101);
  EXPECT_EQ(KeyToString("S", 128), "S=128");
  EXPECT_EQ(KeyToString("S", kSymbolicDim), "S=sym");
}

// The policy study's compile counts (prompt 100, 512 steps; docs/spec/decode_layer.md)
// follow from the key functions alone.
TEST(Policy, PredictedCompilesOfTheSeedsLoop) {
  using testutil::PredictedCompiles;
  EXPECT_EQ(PredictedCompiles(ShapePolicy::kExact, 100, 512), 512);
  EXPECT_EQ(PredictedCompiles(ShapePolicy::kPow2, 100, 512), 4);
  EXPECT_EQ(PredictedCompiles(ShapePolicy::kMult128, 100, 512), 5);
  EXPECT_EQ(PredictedCompiles(ShapePolicy::kSymbolic, 100, 512), 1);
  EXPECT_EQ(PredictedCompiles(ShapePolicy::kAuto, 100, 512), 2);
}

}  // namespace
}  // namespace graphjit::compiler::entries
