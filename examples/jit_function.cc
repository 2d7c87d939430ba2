// Jits a function written here (not a registry model) over a growing dim: attention of
// one query over n rows plus a projection, under the auto policy, checked against the
// interpreter at every n. Exit 0 on success.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "compiler/jit.h"
#include "compiler/jit_call.h"
#include "frontend/ops.h"
#include "frontend/trace_context.h"
#include "runtime/interpreter.h"

namespace gj = graphjit;
using gj::frontend::Value;

std::vector<Value> Attend(gj::frontend::Context& ctx) {
  Value q = ctx.Input("q");                                       // [1, 16]
  Value rows = ctx.Input("rows");                                 // [n, 16]
  Value p = Softmax(Matmul(q, TransposeLast2(rows)) * 0.25, -1);  // [1, n]
  return {Tanh(Matmul(Matmul(p, rows), ctx.Param("w")))};         // [1, 16]
}

gj::runtime::Tensor Random(std::vector<int64_t> shape, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(n);
  for (double& x : v) x = normal(rng);
  return *gj::runtime::Tensor::FromDoubles(gj::ir::DType::kF64, shape, v);
}

int main() {
  std::mt19937_64 rng(1);
  gj::runtime::TensorMap weights = {{"w", Random({16, 16}, rng)}};
  gj::compiler::JitOptions options;
  options.policy = gj::compiler::entries::ShapePolicy::kAuto;
  auto fn = gj::compiler::Jit("attend", Attend, weights, options);
  if (!fn.ok()) return 1;
  double worst = 0;
  for (int64_t n = 1; n <= 24; ++n) {
    gj::runtime::TensorMap in = {{"q", Random({1, 16}, rng)}, {"rows", Random({n, 16}, rng)}};
    auto got = (*fn)->Run(in);
    // The reference: the same function traced at this n and interpreted.
    gj::frontend::TraceContext ctx(
        "ref", {{"q", {gj::ir::DType::kF64, {1, 16}}}, {"rows", {gj::ir::DType::kF64, {n, 16}}}},
        weights);
    auto graph = std::move(ctx).Finish(Attend(ctx));
    if (!got.ok() || !graph.ok()) return 2;
    auto want = gj::runtime::Interpret(*graph, in, weights);
    if (!want.ok()) return 3;
    std::vector<double> a = (*want)[0].ToDoubles(), b = (*got)[0].ToDoubles();
    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  }
  gj::compiler::entries::CacheStats stats = (*fn)->stats();
  std::printf("24 calls, n = 1..24, auto policy: %lld compiles, %lld hits, max |diff| %.1e\n",
              static_cast<long long>(stats.compiles), static_cast<long long>(stats.hits), worst);
  // n = 1, then one symbolic entry for n >= 2.
  if (stats.compiles != 2 || worst >= 1e-12) return 4;

  // A loop of calls by position: after the first, each hit reuses the kept call frame.
  gj::compiler::JitCall call(fn->get(), {"q", "rows"});
  const gj::runtime::Tensor q = Random({1, 16}, rng), rows = Random({24, 16}, rng);
  auto want = (*fn)->Run({{"q", q}, {"rows", rows}});
  for (int i = 0; i < 3; ++i) {
    if (!call.Run({q, rows}).ok() || !want.ok()) return 5;
    if (call.outputs()[0].ToDoubles() != (*want)[0].ToDoubles()) return 6;
  }
  std::printf("3 positional calls: %lld served from the kept frame\n",
              static_cast<long long>(call.fast_calls()));
  return call.fast_calls() >= 2 ? 0 : 7;
}
