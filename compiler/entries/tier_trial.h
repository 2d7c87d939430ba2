// TimeTiers: a reoptimized entry's O2 code against the baseline code it would replace,
// timed on the same inputs before the swap (EntryTiers), so O2 code is swapped in only
// when it is measured faster. O2 usually is; on small or memory-bound graphs the two
// tiers can be equal, and a swap that is not faster only costs the swap.
#ifndef GRAPHJIT_COMPILER_ENTRIES_TIER_TRIAL_H_
#define GRAPHJIT_COMPILER_ENTRIES_TIER_TRIAL_H_

#include "absl/status/statusor.h"
#include "compiler/compiled/compiled_graph.h"
#include "ir/graph.h"
#include "ir/sym_expr.h"

namespace graphjit::compiler::entries {

struct TierTimes {
  double baseline_seconds = 0;  // median wall time of one call
  double o2_seconds = 0;
};

// Runs both codes `runs` times each, alternating (after one warm-up call each), on
// seeded inputs shaped like `traced`'s inputs under `dims` (every symbol of the input
// shapes) with call symbols `bindings`; the medians. An input shape that does not
// evaluate, or a call that fails, is the error (the caller then swaps unmeasured).
absl::StatusOr<TierTimes> TimeTiers(const CompiledGraph& baseline, const CompiledGraph& o2,
                                    const ir::Graph& traced, const ir::Bindings& dims,
                                    const ir::Bindings& bindings, int runs = 7);

}  // namespace graphjit::compiler::entries

#endif  // GRAPHJIT_COMPILER_ENTRIES_TIER_TRIAL_H_
