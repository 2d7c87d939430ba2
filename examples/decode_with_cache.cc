// A registry model through compiler::Jit: a small decode layer serves a growing KV cache
// with the pow2 policy, checked against the interpreter. Exit 0 on success.
#include <cmath>
#include <cstdio>

#include "compiler/jit.h"
#include "ir/printer.h"
#include "models/jit_model.h"
#include "models/model.h"
#include "runtime/interpreter.h"

int main() {
  namespace gj = graphjit;
  auto model = gj::models::CreateModel("decode:d=32,H=4,G=2,dh=8,f=64");
  if (!model.ok()) return 1;
  gj::compiler::JitOptions options;
  options.policy = gj::compiler::entries::ShapePolicy::kPow2;
  auto cache = gj::models::JitModel(**model, options);
  if (!cache.ok()) return 2;
  auto graph = gj::models::TraceModel(**model);  // symbolic, for the reference
  if (!graph.ok()) return 3;
  double worst = 0;
  for (int64_t S = 5; S <= 12; ++S) {
    auto inputs = (*model)->ExampleInputs({{"S", S}}, S);
    if (!inputs.ok()) return 4;
    auto want = gj::runtime::Interpret(*graph, *inputs, (*model)->params(), {{"P", S - 1}});
    auto got = (*cache)->Run(*inputs, {{"P", S - 1}});
    if (!want.ok() || !got.ok()) return 5;
    std::vector<double> a = (*want)[0].ToDoubles(), b = (*got)[0].ToDoubles();
    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  }
  gj::compiler::entries::CacheStats stats = (*cache)->stats();
  std::printf("8 decode steps, pow2 buckets: %lld compiles, max |diff| vs interpreter %.1e\n",
              static_cast<long long>(stats.compiles), worst);
  return stats.compiles == 2 && worst < 1e-12 ? 0 : 6;
}
