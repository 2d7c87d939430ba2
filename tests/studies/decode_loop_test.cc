// The decode loop through a compile cache on a small decode layer: short loops around the
// bucket boundaries compile what the key functions predict under every policy.
#include "studies/decode_loop.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "models/jit_model.h"
#include "tests/compiler/entries/cache_test_util.h"

namespace graphjit::studies {
namespace {

using compiler::JitFunction;
using compiler::JitOptions;
using compiler::entries::AllPolicies;
using compiler::entries::PadsInputs;
using compiler::entries::PolicyName;
using compiler::entries::ShapePolicy;
using runtime::Tensor;
namespace testutil = compiler::entries::testutil;

std::unique_ptr<JitFunction> MakeCache(const models::Model& model, ShapePolicy policy) {
  JitOptions options;
  options.policy = policy;
  options.log = {};
  absl::StatusOr<std::unique_ptr<JitFunction>> cache = models::JitModel(model, options);
  EXPECT_TRUE(cache.ok()) << cache.status();
  return *std::move(cache);
}

// Short loops around the interesting boundaries (1, 128, 256) under every policy: the
// compiles are what the key functions predict, and the outputs equal exact's.
TEST(CompileCache, ShortLoopsCompileWhatTheKeyFunctionsPredict) {
  auto model = testutil::SmallDecode();
  struct Loop {
    int64_t prompt, steps;
  };
  for (Loop loop : {Loop{0, 9}, Loop{126, 5}, Loop{250, 10}}) {
    DecodeLoopOptions opts;
    opts.prompt = loop.prompt;
    opts.steps = loop.steps;
    std::vector<Tensor> reference;
    for (ShapePolicy policy : AllPolicies()) {
      SCOPED_TRACE(
          absl::StrCat(PolicyName(policy), " prompt=", loop.prompt, " steps=", loop.steps));
      auto cache = MakeCache(*model, policy);
      absl::StatusOr<DecodeLoopResult> r = RunDecodeLoop(*cache, opts);
      ASSERT_TRUE(r.ok()) << r.status();
      int64_t want = testutil::PredictedCompiles(policy, loop.prompt, loop.steps);
      EXPECT_EQ(r->stats.compiles, want);
      EXPECT_EQ(r->stats.hits, loop.steps - want);
      EXPECT_EQ(r->stats.calls, loop.steps);
      EXPECT_EQ(r->stats.real_elements, (2 * loop.prompt + loop.steps + 1) * loop.steps / 2);
      if (!PadsInputs(policy)) {
        EXPECT_EQ(r->stats.padded_elements, r->stats.real_elements);
      }
      ASSERT_EQ(r->outputs.size(), static_cast<size_t>(loop.steps));
      if (policy == ShapePolicy::kExact) reference = r->outputs;
      for (int64_t t = 0; t < loop.steps; ++t) {
        EXPECT_LT(runtime::MaxAbsDiff(r->outputs[t], reference[t]), 1e-12) << "step " << t;
      }
    }
  }
}

}  // namespace
}  // namespace graphjit::studies
