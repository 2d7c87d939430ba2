// Options of compiler::Jit (compiler/jit.h): the shape policy, which input dims are
// dynamic, how the bucketing policies pad, and where compiled code is kept.
#ifndef GRAPHJIT_COMPILER_ENTRIES_JIT_OPTIONS_H_
#define GRAPHJIT_COMPILER_ENTRIES_JIT_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/entries/policy.h"
#include "compiler/store/cache_log.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/sym_expr.h"

namespace graphjit::compiler {

class GraphStore;

// One input dim: dim `axis` of input `input`. `symbol` names it in traced graphs; dims
// declared with the same symbol must be equal in every call (a guard), and call-symbol
// completion (JitOptions::complete_bindings) sees the dim's value under that name. An
// empty symbol is named `<input>_<axis>`.
struct DimSpec {
  std::string input;
  int axis = 0;
  std::string symbol;

  std::string ToString() const;  // `x.shape[1]`
};

// An additive mask input the bucketing policies synthesize: 0 where every padded index
// is below its dim's real length, -inf elsewhere. `shape` uses constants and the symbols
// of padded dims, e.g. {1, 1, Symbol("S")}. dtype: that of the first padded input.
struct MaskSpec {
  std::string input;
  ir::Shape shape;
  std::optional<ir::DType> dtype;
};

// What pow2 and mult128 need to run a call at a bucketed length: the dims to pad (with
// zeros) and the masks that hide the padding from the function. The function must add
// each mask where the padding could leak (e.g. to attention scores before a softmax).
// Outputs are cut back along every dim whose traced size is a padded dim's symbol.
struct PaddingSpec {
  std::vector<DimSpec> dims;
  std::vector<MaskSpec> masks;
};

struct JitOptions {
  // exact: one entry per distinct shape; symbolic: `dynamic_dims` stay symbolic (0 and 1
  // specialized), other dims exact; auto: every dim exact until it shows a second value,
  // then symbolic (TorchDynamo's automatic dynamic shapes); pow2 / mult128: the padded
  // dims are bucketed, other dims exact (these need `padding`).
  entries::ShapePolicy policy = entries::ShapePolicy::kAuto;
  int64_t capacity = 0;  // most live entries (least recently used evicted); 0: no bound
  std::vector<DimSpec> dynamic_dims;  // for symbolic (and names for auto)
  // Declared input types (optional): calls are checked against them - dtype, rank and
  // constant dims, each a clear InvalidArgument - instead of a new signature being traced
  // for whatever arrives; their symbols are the dynamic dims (named, e.g. S in
  // k_cache: f64[2, S, 16]), keyed by the policy. Padding dims then match by symbol.
  std::optional<std::vector<std::pair<std::string, ir::ValueType>>> input_types;
  std::optional<PaddingSpec> padding;
  // Completes a call's bindings from the named dims' values (the decode layer's
  // P = S - 1 when P is not given). Empty: bindings are used as given.
  std::function<ir::Bindings(ir::Bindings)> complete_bindings;
  CompileGraphOptions compile;
  // Tiered compilation: a miss is traced and served at once by the interpreter while the
  // code compiles on a background thread; the entry switches to compiled code when it is
  // ready. The background queue holds at most `tier_queue` entries and drops the one
  // asked for least recently when full (so exact does not build a backlog of lengths
  // nobody asks for again). Inputs the code would update in place are not updated by
  // the interpreter tier: use the returned outputs.
  bool tiered = false;
  int tier_queue = 4;
  // Reoptimization, with compile.codegen.tier = baseline: an entry whose baseline code
  // has served this many calls is compiled again at O2 on the background thread (the
  // same bounded queue); both codes are then timed there on seeded inputs of that call's
  // dims (7 calls each, alternating, medians), and the O2 code is installed only if it
  // is faster (calls in flight finish on the old code; CacheStats::reoptimize_kept counts
  // the entries it was not). The baseline tier then pays for the first calls and O2 for
  // the hot entries only. 0: never.
  int64_t reoptimize_after = 0;
  LogFlags log = LogFlagsFromEnvironment();
  // Where compiled code is looked up and kept, by content; null: the process-wide store
  // (GraphStore::Default()), so equal graphs of different functions share code.
  std::shared_ptr<GraphStore> store;
  // For tests: sees (and may change) the two tiers' measured seconds per call before a
  // reoptimized entry's swap is decided.
  std::function<void(double* baseline_seconds, double* o2_seconds)> measured_tiers;
  // For tests: runs on the compiling thread before each compile, outside any lock.
  std::function<void(const entries::DimKeys& keys)> before_compile;
};

// InvalidArgument for options that cannot work, whatever the function: a padding policy
// without `padding`, symbolic without dynamic dims, a negative capacity or thread count,
// a dynamic dim with a negative axis or a symbol that is no identifier.
absl::Status CheckJitOptions(const JitOptions& options);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_ENTRIES_JIT_OPTIONS_H_
