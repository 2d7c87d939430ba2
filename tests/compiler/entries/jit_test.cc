// compiler::Jit on user-written functions (no model, no registry): every policy equals
// the interpreter over a growing dim and a batch dim, trace errors reach their call,
// equal graphs share code through the code store, bad options are InvalidArgument.
#include "compiler/jit.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "compiler/compiled/graph_key.h"
#include "compiler/store/content_key.h"
#include "frontend/ops.h"
#include "frontend/trace_context.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/random_init.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {
namespace {

using entries::ShapePolicy;
using frontend::Value;
using runtime::Tensor;
using runtime::TensorMap;
using ::testing::HasSubstr;

constexpr int64_t kWidth = 8;

absl::StatusOr<Tensor> Full(ir::DType dtype, std::vector<int64_t> shape, double value) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return Tensor::FromDoubles(dtype, shape, std::vector<double>(n, value));
}

// Attention-like: scores of a query against n rows, masked, softmax over them, weighted
// sum of the rows, plus an MLP on the result. Only `mask` may hide padded rows.
std::vector<Value> Attend(frontend::Context& ctx) {
  Value q = ctx.Input("q");                                       // [b, 8]
  Value rows = ctx.Input("rows");                                 // [n, 8]
  Value s = frontend::Matmul(q, frontend::TransposeLast2(rows));  // [b, n]
  if (ctx.HasInput("mask")) s = s + ctx.Input("mask");            // [1, n]
  Value a = frontend::Matmul(frontend::Softmax(s, -1), rows);     // [b, 8]
  Value h = frontend::Tanh(frontend::Matmul(a, ctx.Param("w1")));
  return {h, frontend::Softmax(s, -1)};
}

TensorMap Weights() {
  std::mt19937_64 rng(5);
  return {{"w1", models::RandomNormal(ir::DType::kF64, {kWidth, kWidth}, rng)}};
}

TensorMap Inputs(int64_t b, int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  return {{"q", models::RandomNormal(ir::DType::kF64, {b, kWidth}, rng)},
          {"rows", models::RandomNormal(ir::DType::kF64, {n, kWidth}, rng)}};
}

// The reference: the function traced at these exact shapes and interpreted.
std::vector<Tensor> Interpreted(const TensorMap& in, const TensorMap& weights) {
  frontend::InputTypes types;
  for (const char* name : {"q", "rows"}) {
    const Tensor& t = in.at(name);
    types.push_back({name, {t.dtype(), ir::ConstShape(t.shape())}});
  }
  frontend::TraceContext ctx("ref", types, weights);
  std::vector<Value> out = Attend(ctx);
  absl::StatusOr<ir::Graph> graph = std::move(ctx).Finish(out);
  EXPECT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<std::vector<Tensor>> r = runtime::Interpret(*graph, in, weights);
  EXPECT_TRUE(r.ok()) << r.status();
  return *r;
}

JitOptions OptionsFor(ShapePolicy policy) {
  JitOptions o;
  o.policy = policy;
  o.log = {};
  o.store = std::make_shared<GraphStore>();  // counts of this test only
  if (policy == ShapePolicy::kSymbolic) o.dynamic_dims = {{"rows", 0, "n"}, {"q", 0, ""}};
  if (entries::PadsInputs(policy)) {
    o.padding =
        PaddingSpec{{{"rows", 0, "n"}}, {{"mask", {1, ir::SymExpr::Symbol("n")}, std::nullopt}}};
  }
  return o;
}

TEST(Jit, EveryPolicyEqualsTheInterpreterOverAGrowingAndABatchDim) {
  const TensorMap weights = Weights();
  for (ShapePolicy policy : entries::AllPolicies()) {
    SCOPED_TRACE(entries::PolicyName(policy));
    absl::StatusOr<std::unique_ptr<JitFunction>> fn =
        Jit("attend", Attend, weights, OptionsFor(policy));
    ASSERT_TRUE(fn.ok()) << fn.status();
    for (int64_t b : {1, 3}) {
      for (int64_t n = 1; n <= 40; ++n) {
        SCOPED_TRACE(absl::StrCat("b=", b, " n=", n));
        TensorMap in = Inputs(b, n, 100 * b + n);
        absl::StatusOr<std::vector<Tensor>> got = (*fn)->Run(in);
        ASSERT_TRUE(got.ok()) << got.status();
        std::vector<Tensor> want = Interpreted(in, weights);
        ASSERT_EQ(got->size(), 2u);
        for (int i = 0; i < 2; ++i) {
          ASSERT_EQ((*got)[i].shape(), want[i].shape()) << i;
          EXPECT_LT(runtime::MaxAbsDiff((*got)[i], want[i]), 1e-12) << i;
        }
      }
    }
    entries::CacheStats s = (*fn)->stats();
    EXPECT_EQ(s.calls, 80);
    EXPECT_EQ(s.hits + s.compiles + s.shared, s.calls);
    // What each policy must compile for n = 1..40 at b = 1 and 3.
    switch (policy) {
      case ShapePolicy::kExact:
        EXPECT_EQ(s.compiles, 80);
        break;
      case ShapePolicy::kSymbolic:  // n and b: {1, sym} each
        EXPECT_EQ(s.compiles, 4);
        break;
      case ShapePolicy::kPow2:  // buckets 1, 2, 4, ..., 64 per b
        EXPECT_EQ(s.compiles, 14);
        EXPECT_GT(s.padding_overhead(), 0);
        break;
      case ShapePolicy::kMult128:  // bucket 128 per b
        EXPECT_EQ(s.compiles, 2);
        break;
      case ShapePolicy::kAuto:
        // b=1: n=1, then n goes symbolic; b=3: b goes symbolic (n=1, n symbolic), and at
        // n=3 the two unnamed dims are equal, so duck sizing traces them as one symbol.
        EXPECT_EQ(s.compiles, 5);
        break;
    }
  }
}

TEST(Jit, AutoDuckSizesDimsOfEqualValue) {
  // x + y over two unnamed growing dims: traced with one symbol while they are equal.
  auto add = [](frontend::Context& ctx) -> std::vector<Value> {
    return {ctx.Input("x") + ctx.Input("y")};
  };
  JitOptions o = OptionsFor(ShapePolicy::kAuto);
  absl::StatusOr<std::unique_ptr<JitFunction>> fn = Jit("add", add, {}, o);
  ASSERT_TRUE(fn.ok()) << fn.status();
  for (int64_t n : {3, 4, 9, 17}) {
    TensorMap in{{"x", *Full(ir::DType::kF64, {n}, 1.5)}, {"y", *Full(ir::DType::kF64, {n}, 2.0)}};
    absl::StatusOr<std::vector<Tensor>> got = (*fn)->Run(in);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ((*got)[0].ValueAt(n - 1), 3.5);
  }
  EXPECT_EQ((*fn)->stats().compiles, 2);  // n=3 exact, then one symbolic entry
  EXPECT_THAT((*fn)->SignatureText(), HasSubstr("x: f64[x_0]"));
}

TEST(Jit, ATraceErrorReachesTheCallThatTracedItAndOtherShapesStillWork) {
  // Reshape to 8 elements: only inputs of 8 elements trace.
  auto eight = [](frontend::Context& ctx) -> std::vector<Value> {
    return {frontend::Reshape(ctx.Input("x") * 2.0, {8})};
  };
  absl::StatusOr<std::unique_ptr<JitFunction>> fn =
      Jit("eight", eight, {}, OptionsFor(ShapePolicy::kExact));
  ASSERT_TRUE(fn.ok());
  absl::StatusOr<std::vector<Tensor>> bad =
      (*fn)->Run({{"x", *Tensor::Zeros(ir::DType::kF64, {3, 3})}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("reshape"));
  EXPECT_THAT(bad.status().message(), HasSubstr("eight/exact: compiling"));
  absl::StatusOr<std::vector<Tensor>> good =
      (*fn)->Run({{"x", *Full(ir::DType::kF64, {2, 4}, 1.0)}});
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ((*good)[0].ValueAt(7), 2.0);
  EXPECT_EQ((*fn)->stats().failed_compiles, 1);
  EXPECT_EQ((*fn)->size(), 1);
}

TEST(Jit, ANewDtypeOrRankIsANewSignatureNotAWrongAnswer) {
  auto twice = [](frontend::Context& ctx) -> std::vector<Value> { return {ctx.Input("x") * 2.0}; };
  absl::StatusOr<std::unique_ptr<JitFunction>> fn =
      Jit("twice", twice, {}, OptionsFor(ShapePolicy::kAuto));
  ASSERT_TRUE(fn.ok());
  ASSERT_TRUE((*fn)->Run({{"x", *Full(ir::DType::kF64, {2}, 1.0)}}).ok());
  absl::StatusOr<std::vector<Tensor>> f32 =
      (*fn)->Run({{"x", *Full(ir::DType::kF32, {2, 2}, 1.5)}});
  ASSERT_TRUE(f32.ok()) << f32.status();
  EXPECT_EQ((*f32)[0].dtype(), ir::DType::kF32);
  EXPECT_EQ((*f32)[0].ValueAt(3), 3.0);
  EXPECT_EQ((*fn)->num_signatures(), 2);
  EXPECT_EQ((*fn)->stats().compiles, 2);
}

TEST(Jit, TwoFunctionsWithTheSameGraphAndWeightsShareCompiledCode) {
  auto store = std::make_shared<GraphStore>();
  JitOptions o = OptionsFor(ShapePolicy::kExact);
  o.store = store;
  const TensorMap weights = Weights();
  auto a = Jit("first", Attend, weights, o);
  auto b = Jit("second", Attend, weights, o);
  ASSERT_TRUE(a.ok() && b.ok());
  TensorMap in = Inputs(2, 5, 1);
  ASSERT_TRUE((*a)->Run(in).ok());
  absl::StatusOr<std::shared_ptr<const entries::CacheEntry>> ea = (*a)->Acquire(in);
  absl::StatusOr<std::shared_ptr<const entries::CacheEntry>> eb = (*b)->Acquire(in);
  ASSERT_TRUE(ea.ok() && eb.ok());
  EXPECT_EQ((*ea)->code().get(), (*eb)->code().get());
  EXPECT_EQ((*ea)->content_key(), (*eb)->content_key());
  EXPECT_EQ((*a)->stats().compiles, 1);
  EXPECT_EQ((*b)->stats().compiles, 0);
  EXPECT_EQ((*b)->stats().shared, 1);
  EXPECT_EQ(store->stats().compiles, 1);

  // Other weights are other code: compiled code keeps (and may fold) its weights.
  TensorMap other = weights;
  other["w1"] = *Full(ir::DType::kF64, {kWidth, kWidth}, 0.5);
  auto c = Jit("third", Attend, other, o);
  ASSERT_TRUE(c.ok());
  absl::StatusOr<std::shared_ptr<const entries::CacheEntry>> ec = (*c)->Acquire(in);
  ASSERT_TRUE(ec.ok());
  EXPECT_NE((*ec)->code().get(), (*ea)->code().get());
  EXPECT_EQ(store->stats().compiles, 2);

  // Code lives while an entry holds it: destroying both functions frees it.
  std::weak_ptr<const CompiledGraph> code = (*ea)->code();
  ea->reset();
  eb->reset();
  a->reset();
  EXPECT_FALSE(code.expired());  // b still holds it
  b->reset();
  EXPECT_TRUE(code.expired());
}

TEST(Jit, ContentKeysDependOnGraphWeightsAndOptionsNotOnNames) {
  auto trace = [](const std::string& name, double scale) {
    frontend::TraceContext ctx(name, {{"x", {ir::DType::kF64, {4}}}}, {});
    std::vector<Value> out = {ctx.Input("x") * scale};
    return *std::move(ctx).Finish(out);
  };
  CompileGraphOptions opt;
  ContentKey k1 = GraphContentKey(trace("a", 2.0), {}, opt);
  EXPECT_EQ(k1, GraphContentKey(trace("b", 2.0), {}, opt));
  EXPECT_NE(k1, GraphContentKey(trace("a", 3.0), {}, opt));
  CompileGraphOptions no_opt;
  no_opt.optimize = false;
  EXPECT_NE(k1, GraphContentKey(trace("a", 2.0), {}, no_opt));
  EXPECT_EQ(k1.ToHex().size(), 32u);
}

TEST(Jit, OptionsThatCannotWorkAreInvalidArgument) {
  const TensorMap weights = Weights();
  auto status_of = [&](JitOptions o) { return Jit("f", Attend, weights, std::move(o)).status(); };
  JitOptions o = OptionsFor(ShapePolicy::kExact);
  o.policy = ShapePolicy::kPow2;
  EXPECT_THAT(status_of(o).message(), HasSubstr("needs JitOptions::padding"));
  o.policy = ShapePolicy::kSymbolic;
  EXPECT_THAT(status_of(o).message(), HasSubstr("needs JitOptions::dynamic_dims"));
  o = OptionsFor(ShapePolicy::kExact);
  o.capacity = -2;
  EXPECT_THAT(status_of(o).message(), HasSubstr("capacity must be >= 0"));
  o = OptionsFor(ShapePolicy::kSymbolic);
  o.dynamic_dims = {{"rows", 0, "not an identifier"}};
  EXPECT_THAT(status_of(o).message(), HasSubstr("is not an identifier"));
  EXPECT_FALSE(Jit("f", nullptr, {}, {}).ok());

  // Dims of inputs the call does not pass, or past an input's rank: on the call.
  o = OptionsFor(ShapePolicy::kSymbolic);
  o.dynamic_dims = {{"rows", 2, ""}};
  auto fn = Jit("f", Attend, weights, o);
  ASSERT_TRUE(fn.ok());
  absl::StatusOr<std::vector<Tensor>> r = (*fn)->Run(Inputs(1, 3, 0));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("rows.shape[2]: input 'rows' is f64[3, 8]"));
  o.dynamic_dims = {{"keys", 0, ""}};
  fn = Jit("f", Attend, weights, o);
  r = (*fn)->Run(Inputs(1, 3, 0));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("names input 'keys', which this call does not pass"));
  // A mask over a dim that is not padded.
  o = OptionsFor(ShapePolicy::kPow2);
  o.padding->masks = {{"mask", {1, ir::SymExpr::Symbol("m")}, std::nullopt}};
  fn = Jit("f", Attend, weights, o);
  r = (*fn)->Run(Inputs(1, 3, 0));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("must be a constant or the symbol of a padded dim"));
}

TEST(Jit, NamedDimsMustAgreeAndCallSymbolsAreCompleted) {
  // y = x[0:n] + z with x and z both declared as n: a mismatch is a guard failure.
  auto add = [](frontend::Context& ctx) -> std::vector<Value> {
    return {ctx.Input("x") + ctx.Input("z")};
  };
  JitOptions o = OptionsFor(ShapePolicy::kSymbolic);
  o.dynamic_dims = {{"x", 0, "n"}, {"z", 0, "n"}};
  auto fn = Jit("add", add, {}, o);
  ASSERT_TRUE(fn.ok());
  TensorMap in{{"x", *Full(ir::DType::kF64, {5}, 1.0)}, {"z", *Full(ir::DType::kF64, {5}, 2.0)}};
  ASSERT_TRUE((*fn)->Run(in).ok());
  in["z"] = *Full(ir::DType::kF64, {6}, 2.0);
  absl::StatusOr<std::vector<Tensor>> r = (*fn)->Run(in);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("z.shape[0] == x.shape[0] (n) failed: got 6 vs 5"));

  // A call symbol completed from a named dim: write position p = n - 1.
  auto write = [](frontend::Context& ctx) -> std::vector<Value> {
    return {frontend::KvWrite(ctx.Input("cache"), ctx.Input("row"), ir::SymExpr::Symbol("p"))};
  };
  JitOptions w = OptionsFor(ShapePolicy::kSymbolic);
  w.dynamic_dims = {{"cache", 1, "n"}};
  w.complete_bindings = [](ir::Bindings b) {
    if (!b.contains("p")) b["p"] = b.at("n") - 1;
    return b;
  };
  auto wfn = Jit("write", write, {}, w);
  ASSERT_TRUE(wfn.ok());
  for (int64_t n : {2, 3, 7}) {
    TensorMap win{{"cache", *Tensor::Zeros(ir::DType::kF64, {1, n, 2})},
                  {"row", *Full(ir::DType::kF64, {1, 1, 2}, 4.0)}};
    absl::StatusOr<std::vector<Tensor>> out = (*wfn)->Run(win);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].ValueAt(2 * n - 1), 4.0);
    EXPECT_EQ((*out)[0].ValueAt(0), 0.0);
  }
  EXPECT_EQ((*wfn)->stats().compiles, 1);
}

}  // namespace
}  // namespace graphjit::compiler
