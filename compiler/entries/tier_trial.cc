#include "compiler/entries/tier_trial.h"

#include <vector>

#include "ir/clock.h"
#include "ir/status_macros.h"
#include "runtime/seeded_inputs.h"

namespace graphjit::compiler::entries {

absl::StatusOr<TierTimes> TimeTiers(const CompiledGraph& baseline, const CompiledGraph& o2,
                                    const ir::Graph& traced, const ir::Bindings& dims,
                                    const ir::Bindings& bindings, int runs) {
  // Seeded normal floats, zero integers: the time of exp or tanh hardly depends on the
  // values, and no NaN or denormal makes one tier look slow.
  GJ_ASSIGN_OR_RETURN(const runtime::TensorMap inputs, runtime::SeededInputs(traced, dims, 0x5eed));
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

}  // namespace graphjit::compiler::entries
