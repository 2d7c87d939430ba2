// Zero-size tensors (issue 16) in every mode: a function whose row count n may be 0 (and
// a batch b that may be 0) run eagerly, traced and interpreted, and through compiler::Jit
// under every policy, including n going 0 -> k -> 0 in one cache.
#include <random>

#include "absl/strings/str_cat.h"
#include "compiler/jit.h"
#include "frontend/eager_context.h"
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

constexpr int64_t kWidth = 4;

// Scores of b queries against n rows, a masked softmax over the rows, the weighted rows,
// and reductions over the n axis (an empty sum is 0, an empty max -inf).
std::vector<Value> Attend(frontend::Context& ctx) {
  Value q = ctx.Input("q");                                       // [b, 4]
  Value rows = ctx.Input("rows");                                 // [n, 4]
  Value s = frontend::Matmul(q, frontend::TransposeLast2(rows));  // [b, n]
  if (ctx.HasInput("mask")) s = s + ctx.Input("mask");            // [1, n]
  Value p = frontend::Softmax(s, -1);
  Value a = frontend::Tanh(frontend::Matmul(p, rows));  // [b, 4]
  Value sum = frontend::ReduceSum(rows, 0);             // [4]
  Value exp = frontend::Unary(ir::OpCode::kExp, rows);  // [n, 4]
  return {a, sum, frontend::ReduceSum(exp, 1)};
}

TensorMap Inputs(int64_t b, int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  return {{"q", models::RandomNormal(ir::DType::kF64, {b, kWidth}, rng)},
          {"rows", models::RandomNormal(ir::DType::kF64, {n, kWidth}, rng)}};
}

std::vector<Tensor> Eager(const TensorMap& in) {
  frontend::EagerContext ctx(in, {});
  std::vector<Value> out = Attend(ctx);
  absl::StatusOr<std::vector<Tensor>> r = ctx.Results(out);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : std::vector<Tensor>{};
}

std::vector<Tensor> Interpreted(const TensorMap& in) {
  frontend::InputTypes types;
  for (const char* name : {"q", "rows"}) {
    const Tensor& t = in.at(name);
    types.push_back({name, {t.dtype(), ir::ConstShape(t.shape())}});
  }
  frontend::TraceContext ctx("ref", types, {});
  std::vector<Value> out = Attend(ctx);
  absl::StatusOr<ir::Graph> graph = std::move(ctx).Finish(out);
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return {};
  absl::StatusOr<std::vector<Tensor>> r = runtime::Interpret(*graph, in, {});
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : std::vector<Tensor>{};
}

void ExpectSame(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].TypeString(), want[i].TypeString()) << "output " << i;
    EXPECT_LT(runtime::MaxAbsDiff(got[i], want[i]), 1e-12) << "output " << i;
  }
}

TEST(ZeroSize, EagerEqualsTheInterpreter) {
  for (int64_t b : {0, 1, 2}) {
    for (int64_t n : {0, 1, 3}) {
      SCOPED_TRACE(absl::StrCat("b=", b, " n=", n));
      TensorMap in = Inputs(b, n, 10 * b + n);
      std::vector<Tensor> want = Interpreted(in);
      ExpectSame(Eager(in), want);
      if (n == 0) {
        // Empty sums are 0: the softmax of no scores weights no rows.
        for (double v : want[0].ToDoubles()) EXPECT_EQ(v, 0.0);
        for (double v : want[1].ToDoubles()) EXPECT_EQ(v, 0.0);
      }
    }
  }
}

TEST(ZeroSize, EveryPolicyEqualsTheInterpreter) {
  for (ShapePolicy policy : entries::AllPolicies()) {
    SCOPED_TRACE(entries::PolicyName(policy));
    JitOptions o;
    o.policy = policy;
    o.log = {};
    o.store = std::make_shared<GraphStore>();
    if (policy == ShapePolicy::kSymbolic) o.dynamic_dims = {{"rows", 0, "n"}, {"q", 0, ""}};
    if (entries::PadsInputs(policy)) {
      o.padding =
          PaddingSpec{{{"rows", 0, "n"}}, {{"mask", {1, ir::SymExpr::Symbol("n")}, std::nullopt}}};
    }
    absl::StatusOr<std::unique_ptr<JitFunction>> fn = Jit("attend", Attend, {}, o);
    ASSERT_TRUE(fn.ok()) << fn.status();
    // 0 first (the first trace), then growing, then back to 0 (a hit or a new entry).
    for (int64_t b : {1, 0, 2}) {
      for (int64_t n : {0, 1, 2, 5, 0, 3, 0}) {
        SCOPED_TRACE(absl::StrCat("b=", b, " n=", n));
        TensorMap in = Inputs(b, n, 100 * b + n);
        absl::StatusOr<std::vector<Tensor>> got = (*fn)->Run(in);
        ASSERT_TRUE(got.ok()) << got.status();
        ExpectSame(*got, Interpreted(in));
      }
    }
  }
}

}  // namespace
}  // namespace graphjit::compiler
