#include "compiler/entries/tier_trial.h"

#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/clock.h"
#include "ir/status_macros.h"

namespace graphjit::compiler::cache {
namespace {

// Floats in [-1, 1) (the time of exp or tanh does not depend on the values much, but
// NaN or denormal inputs could make one tier look slow); integers and bools zero, which
// every index and mask accepts.
absl::StatusOr<runtime::TensorMap> SeededInputs(const ir::Graph& traced, const ir::Bindings& dims) {
  std::mt19937_64 rng(0x5eed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  runtime::TensorMap inputs;
  for (ir::ValueId id : traced.Inputs()) {
    const ir::Node& node = traced.node(id);
    absl::StatusOr<std::vector<int64_t>> shape = ir::EvaluateShape(node.type.shape, dims);
    if (!shape.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("input '", node.name(), "': ", shape.status().message()));
    }
    GJ_ASSIGN_OR_RETURN(runtime::Tensor t, runtime::Tensor::Zeros(node.type.dtype, *shape));
    if (node.type.dtype == ir::DType::kF64) {
      for (double& x : absl::MakeSpan(t.data<double>(), t.numel())) x = uniform(rng);
    } else if (node.type.dtype == ir::DType::kF32) {
      for (float& x : absl::MakeSpan(t.data<float>(), t.numel())) {
        x = static_cast<float>(uniform(rng));
      }
    }
    inputs.emplace(node.name(), std::move(t));
  }
  return inputs;
}

}  // namespace

absl::StatusOr<TierTimes> TimeTiers(const CompiledGraph& baseline, const CompiledGraph& o2,
                                    const ir::Graph& traced, const ir::Bindings& dims,
                                    const ir::Bindings& bindings, int runs) {
  GJ_ASSIGN_OR_RETURN(const runtime::TensorMap inputs, SeededInputs(traced, dims));
  std::vector<double> times[2];
  const CompiledGraph* code[2] = {&baseline, &o2};
  for (int r = -1; r < runs; ++r) {  // r = -1: warm-up
    for (int t = 0; t < 2; ++t) {
      const auto start = ir::Clock::now();
      absl::StatusOr<std::vector<runtime::Tensor>> out = code[t]->Run(inputs, bindings);
      const double seconds = ir::SecondsSince(start);
      if (!out.ok()) return out.status();
      if (r >= 0) times[t].push_back(seconds);
    }
  }
  return TierTimes{ir::Median(times[0]), ir::Median(times[1])};
}

}  // namespace graphjit::compiler::cache
