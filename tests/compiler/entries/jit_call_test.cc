// JitCall: positional calls of a JitFunction that keep the hit entry's call frame. Under
// every policy (and tiered) a JitCall's outputs equal JitFunction::Run's on the same
// inputs, bit for bit; hits of non-padding policies are served by the kept frame and
// counted once in the cache's statistics; misses, padding and errors take Run's path
// and give Run's messages.
#include "compiler/jit_call.h"

#include <map>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "frontend/ops.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/random_init.h"

namespace graphjit::compiler {
namespace {

using entries::ShapePolicy;
using frontend::Value;
using runtime::Tensor;
using runtime::TensorMap;
using ::testing::HasSubstr;

// Scores of a query against n rows, a softmax over them, their weighted sum through a
// weight; the rows are written into a cache at position P (a call symbol) first.
std::vector<Value> Attend(frontend::Context& ctx) {
  Value q = ctx.Input("q");        // [1, 8]
  Value rows = ctx.Input("rows");  // [n, 8]
  Value s = frontend::Matmul(q, frontend::TransposeLast2(rows));
  if (ctx.HasInput("mask")) s = s + ctx.Input("mask");
  Value a = frontend::Matmul(frontend::Softmax(s, -1), rows);
  return {frontend::Tanh(frontend::Matmul(a, ctx.Param("w"))), s};
}

TensorMap Weights() {
  std::mt19937_64 rng(3);
  return {{"w", models::RandomNormal(ir::DType::kF64, {8, 8}, rng)}};
}

JitOptions OptionsFor(ShapePolicy policy, bool tiered = false) {
  JitOptions o;
  o.policy = policy;
  o.log = {};
  o.tiered = tiered;
  o.store = std::make_shared<GraphStore>();
  if (policy == ShapePolicy::kSymbolic) o.dynamic_dims = {{"rows", 0, "n"}};
  if (entries::PadsInputs(policy)) {
    o.padding =
        PaddingSpec{{{"rows", 0, "n"}}, {{"mask", {1, ir::SymExpr::Symbol("n")}, std::nullopt}}};
  }
  return o;
}

std::vector<Tensor> Inputs(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  return {models::RandomNormal(ir::DType::kF64, {n, 8}, rng),  // rows first: any order works
          models::RandomNormal(ir::DType::kF64, {1, 8}, rng)};
}

TensorMap Named(const std::vector<Tensor>& in) { return {{"rows", in[0]}, {"q", in[1]}}; }

void ExpectSame(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].shape(), want[i].shape()) << i;
    EXPECT_EQ(got[i].ToDoubles(), want[i].ToDoubles()) << i;
  }
}

TEST(JitCall, EqualsRunUnderEveryPolicyAndServesHitsFromItsFrame) {
  for (bool tiered : {false, true}) {
    for (ShapePolicy policy : entries::AllPolicies()) {
      SCOPED_TRACE(absl::StrCat(entries::PolicyName(policy), tiered ? " tiered" : ""));
      auto fn = Jit("attend", Attend, Weights(), OptionsFor(policy, tiered));
      auto ref = Jit("attend", Attend, Weights(), OptionsFor(policy, tiered));
      ASSERT_TRUE(fn.ok() && ref.ok());
      JitCall call(fn->get(), {"rows", "q"});
      int64_t calls = 0;
      // Lengths that repeat (hits), grow (misses under exact) and come back.
      for (int64_t n : {3, 3, 3, 4, 4, 9, 3, 130, 130, 4}) {
        SCOPED_TRACE(absl::StrCat("n=", n));
        const std::vector<Tensor> in = Inputs(n, 10 + n);
        absl::StatusOr<std::vector<Tensor>> want = (*ref)->Run(Named(in));
        ASSERT_TRUE(want.ok()) << want.status();
        ASSERT_TRUE(call.Run(in).ok());
        ++calls;
        ExpectSame(call.outputs(), *want);
      }
      EXPECT_EQ(call.fast_calls() + call.slow_calls(), calls);
      // Each call is counted once, as Run counts it.
      EXPECT_EQ((*fn)->stats().calls, calls);
      EXPECT_EQ((*fn)->stats().compiles, (*ref)->stats().compiles);
      if (entries::PadsInputs(policy)) {
        EXPECT_EQ(call.fast_calls(), 0) << "padding takes Run's path";
      } else if (!tiered) {
        // Every call after the first of its entry that hits the same entry again.
        EXPECT_GE(call.fast_calls(), 3);
      }
    }
  }
}

// Inputs named in either order: one of the two differs from the graph's input order, so
// the call reorders them for its frame (the other passes them on as given).
TEST(JitCall, EitherInputOrderGivesRunsResults) {
  auto fn = Jit("attend", Attend, Weights(), OptionsFor(ShapePolicy::kSymbolic));
  auto ref = Jit("attend", Attend, Weights(), OptionsFor(ShapePolicy::kSymbolic));
  ASSERT_TRUE(fn.ok() && ref.ok());
  JitCall given(fn->get(), {"rows", "q"});
  JitCall swapped(fn->get(), {"q", "rows"});
  for (int64_t n : {3, 3, 5, 5}) {
    SCOPED_TRACE(n);
    const std::vector<Tensor> in = Inputs(n, 10 + n);
    absl::StatusOr<std::vector<Tensor>> want = (*ref)->Run(Named(in));
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(given.Run(in).ok());
    ExpectSame(given.outputs(), *want);
    ASSERT_TRUE(swapped.Run({in[1], in[0]}).ok());
    ExpectSame(swapped.outputs(), *want);
  }
  EXPECT_GE(given.fast_calls(), 2);
  EXPECT_GE(swapped.fast_calls(), 2);
}

// The frame's outputs are reused between hits of one shape: results of an earlier call
// must be cloned to be kept, and a later call's shape change gives fresh tensors.
TEST(JitCall, OutputsFollowTheLastCall) {
  auto fn = Jit("attend", Attend, Weights(), OptionsFor(ShapePolicy::kSymbolic));
  ASSERT_TRUE(fn.ok());
  JitCall call(fn->get(), {"rows", "q"});
  ASSERT_TRUE(call.Run(Inputs(5, 1)).ok());
  ASSERT_TRUE(call.Run(Inputs(5, 2)).ok());
  const Tensor first = call.outputs()[1].Clone();
  ASSERT_TRUE(call.Run(Inputs(7, 3)).ok());
  EXPECT_EQ(call.outputs()[1].shape(), (std::vector<int64_t>{1, 7}));
  EXPECT_EQ(first.shape(), (std::vector<int64_t>{1, 5}));
  EXPECT_GE(call.fast_calls(), 2);
  absl::StatusOr<std::vector<Tensor>> want = (*fn)->Run(Named(Inputs(7, 3)));
  ASSERT_TRUE(want.ok());
  ExpectSame(call.outputs(), *want);
}

// Calls that repeat the last call's dims skip the cache's lock and lookup
// (CompileCache::ServeRepeat). The cache must still count them as the hits they are, stamp
// their entry's last use for the LRU bound, and stop serving an entry once another caller
// evicted it (capacity) or the auto policy dropped it (a dim turned dynamic). A reference
// function given the same calls through Run must end with the same statistics.
TEST(JitCall, RepeatedDimsCountAsHitsAndFollowEvictionAndAuto) {
  struct Step {
    bool through_call;  // the JitCall, else Run on the same function (another caller)
    int64_t n;
  };
  struct Case {
    ShapePolicy policy;
    int64_t capacity;
    std::vector<Step> steps;
  };
  const std::vector<Case> cases = {
      // Evicted by another caller, then asked for again: compiled again, not served.
      {ShapePolicy::kExact, 1, {{true, 3}, {true, 3}, {false, 4}, {true, 3}, {true, 3}}},
      // Repeats are uses: n = 3 was used after n = 4, so n = 5 evicts n = 4.
      {ShapePolicy::kExact, 2, {{true, 3}, {false, 4}, {true, 3}, {false, 5}, {false, 3}}},
      // n = 4 turns the dim dynamic and drops the n = 3 entry the JitCall kept.
      {ShapePolicy::kAuto, 0, {{true, 3}, {true, 3}, {false, 4}, {true, 3}, {true, 3}}},
      // Named dims: the element counts of repeats are counted too.
      {ShapePolicy::kSymbolic, 0, {{true, 3}, {true, 3}, {true, 3}, {false, 6}, {true, 3}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(entries::PolicyName(c.policy), " capacity ", c.capacity));
    // Each with a code store of its own, so that neither shares the other's code.
    JitOptions options = OptionsFor(c.policy), ref_options = OptionsFor(c.policy);
    options.capacity = ref_options.capacity = c.capacity;
    auto fn = Jit("attend", Attend, Weights(), options);
    auto ref = Jit("attend", Attend, Weights(), ref_options);
    ASSERT_TRUE(fn.ok() && ref.ok());
    JitCall call(fn->get(), {"rows", "q"});
    for (const Step& step : c.steps) {
      SCOPED_TRACE(absl::StrCat(step.through_call ? "call" : "run", " n=", step.n));
      const std::vector<Tensor> in = Inputs(step.n, 10 + step.n);
      absl::StatusOr<std::vector<Tensor>> want = (*ref)->Run(Named(in));
      ASSERT_TRUE(want.ok()) << want.status();
      if (step.through_call) {
        ASSERT_TRUE(call.Run(in).ok());
        ExpectSame(call.outputs(), *want);
      } else {
        absl::StatusOr<std::vector<Tensor>> got = (*fn)->Run(Named(in));
        ASSERT_TRUE(got.ok()) << got.status();
        ExpectSame(*got, *want);
      }
    }
    EXPECT_GE(call.fast_calls(), 1);
    const entries::CacheStats got = (*fn)->stats(), want = (*ref)->stats();
    EXPECT_EQ(got.calls, want.calls);
    EXPECT_EQ(got.hits, want.hits);
    // Misses: an entry the JitCall still holds after its eviction lends its code.
    EXPECT_EQ(got.compiles + got.shared, want.compiles + want.shared);
    EXPECT_EQ(got.evictions, want.evictions);
    EXPECT_EQ(got.real_elements, want.real_elements);
    EXPECT_EQ(got.padded_elements, want.padded_elements);
    EXPECT_EQ((*fn)->size(), (*ref)->size());
  }
}

// JitCalls on two threads share one cache of capacity 1. Each calls its two lengths in
// pairs (a repeat served without the lock follows each miss) while the other's misses
// evict its entries. Every result must equal a reference's and every call must be
// counted once. Run under ThreadSanitizer by scripts/sanitize.sh thread.
TEST(JitCall, RepeatsOnTwoThreadsWhileTheOtherEvicts) {
  JitOptions options = OptionsFor(ShapePolicy::kExact);
  options.capacity = 1;
  auto fn = Jit("attend", Attend, Weights(), options);
  auto ref = Jit("attend", Attend, Weights(), OptionsFor(ShapePolicy::kExact));
  ASSERT_TRUE(fn.ok() && ref.ok());
  const std::vector<std::vector<int64_t>> lengths = {{3, 3, 4, 4, 3, 3, 4, 4},
                                                     {5, 5, 6, 6, 5, 5, 6, 6}};
  std::map<int64_t, std::vector<Tensor>> inputs, wants;
  for (int64_t n : {3, 4, 5, 6}) {
    inputs[n] = Inputs(n, 20 + n);
    absl::StatusOr<std::vector<Tensor>> want = (*ref)->Run(Named(inputs[n]));
    ASSERT_TRUE(want.ok()) << want.status();
    wants[n] = *std::move(want);
  }
  std::vector<int> mismatches(2, 0), errors(2, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      JitCall call(fn->get(), {"rows", "q"});
      for (int64_t n : lengths[t]) {
        if (!call.Run(inputs.at(n)).ok()) {
          ++errors[t];
          continue;
        }
        for (size_t o = 0; o < wants.at(n).size(); ++o) {
          if (call.outputs()[o].ToDoubles() != wants.at(n)[o].ToDoubles()) ++mismatches[t];
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(errors, (std::vector<int>{0, 0}));
  EXPECT_EQ(mismatches, (std::vector<int>{0, 0}));
  const entries::CacheStats stats = (*fn)->stats();
  EXPECT_EQ(stats.calls, 16);
  EXPECT_EQ(stats.calls, stats.hits + stats.compiles + stats.shared);
  EXPECT_GT(stats.evictions, 0);
}

TEST(JitCall, BadCallsGiveRunsErrors) {
  auto fn = Jit("attend", Attend, Weights(), OptionsFor(ShapePolicy::kExact));
  ASSERT_TRUE(fn.ok());
  JitCall call(fn->get(), {"rows", "q"});
  absl::Status s = call.Run({Inputs(3, 1)[0]});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("expected 2 inputs (rows, q), got 1"));

  ASSERT_TRUE(call.Run(Inputs(3, 1)).ok());  // the signature is known now
  // A wrong width: a trace error for Run and for the JitCall alike.
  std::vector<Tensor> bad = Inputs(3, 1);
  bad[1] = models::Filled(ir::DType::kF64, {1, 5}, 1.0);
  absl::StatusOr<std::vector<Tensor>> run = (*fn)->Run(Named(bad));
  ASSERT_FALSE(run.ok());
  s = call.Run(bad);
  EXPECT_EQ(s.code(), run.status().code());
  EXPECT_EQ(s.message(), run.status().message());
  // Another dtype is another signature; it works and the first still does.
  std::vector<Tensor> f32 = {models::Filled(ir::DType::kF32, {3, 8}, 0.5),
                             models::Filled(ir::DType::kF32, {1, 8}, 0.25)};
  absl::StatusOr<std::unique_ptr<JitFunction>> w32 = Jit(
      "attend", [](frontend::Context& ctx) { return Attend(ctx); },
      {{"w", models::Filled(ir::DType::kF32, {8, 8}, 0.1)}}, OptionsFor(ShapePolicy::kExact));
  ASSERT_TRUE(w32.ok());
  JitCall call32(w32->get(), {"rows", "q"});
  EXPECT_TRUE(call32.Run(f32).ok());
  EXPECT_TRUE(call.Run(Inputs(3, 2)).ok());

  JitCall twice(fn->get(), {"rows", "rows"});
  s = twice.Run(Inputs(3, 1));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("input 'rows' is named twice"));
}

}  // namespace
}  // namespace graphjit::compiler
