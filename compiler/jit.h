// compiler::Jit: shape-guarded, cached compilation of any function written against the
// frontend (graphjit's torch.compile). The first call with a new input signature (names,
// dtypes, ranks) traces the function with the call's shapes; guards come from that
// trace; a call that fails them compiles a new entry, per the shape policy:
//
//   graphjit::compiler::JitOptions options;
//   options.policy = graphjit::compiler::entries::ShapePolicy::kAuto;
//   auto fn = graphjit::compiler::Jit("mlp", [](graphjit::frontend::Context& ctx) {
//     return std::vector<graphjit::frontend::Value>{Softmax(Matmul(ctx.Input("x"),
//                                                                  ctx.Param("w1")))};
//   }, weights, options);
//   auto y = (*fn)->Run({{"x", x}});
//
// Compiled code lives in a GraphStore by content (traced graph, weights, options, target),
// so equal graphs - another entry's, another function's - share one compile.
#ifndef GRAPHJIT_COMPILER_JIT_H_
#define GRAPHJIT_COMPILER_JIT_H_

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/compiled/graph_store.h"
#include "compiler/entries/cache_stats.h"
#include "compiler/entries/compile_cache.h"
#include "compiler/entries/jit_options.h"
#include "frontend/value.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {

using TraceFn = std::function<std::vector<frontend::Value>(frontend::Context&)>;

class JitFunction {
 public:
  // Runs the function on `inputs` (by name), compiling on a miss. `bindings` gives call
  // symbols (a symbol the function uses that is no input dim, e.g. the decode layer's
  // write position P). A trace error (a shape error in the function) is returned by the
  // call that traced it and is not cached.
  absl::StatusOr<std::vector<runtime::Tensor>> Run(const runtime::TensorMap& inputs,
                                                   const ir::Bindings& bindings = {});
  // The lookup alone: the entry that serves `inputs`, compiled first on a miss.
  absl::StatusOr<std::shared_ptr<const entries::CacheEntry>> Acquire(
      const runtime::TensorMap& inputs);
  // Why `inputs` would miss (see CompileCache::ExplainMiss); "" on a hit.
  std::string ExplainMiss(const runtime::TensorMap& inputs) const;

  // Counters summed over every input signature seen.
  entries::CacheStats stats() const;
  int64_t size() const;  // live entries
  int64_t num_signatures() const;
  // The signature of the most recently created cache, e.g. `x: f64[x_0, 4]`; "" before
  // the first call.
  std::string SignatureText() const;

  // The cache of the input signature (names, dtypes, ranks) of `inputs`, created on
  // first sight, with `inputs` in its signature order in `args` (null where one is
  // missing); InvalidArgument when the options do not fit the call (e.g. a dynamic dim of
  // a missing input). For callers that keep a cache's call path (JitCall).
  absl::StatusOr<entries::CompileCache*> CacheFor(const runtime::TensorMap& inputs,
                                                  entries::CompileCache::Args* args);

  const std::string& name() const { return function_.name; }
  entries::ShapePolicy policy() const { return options_.policy; }
  const JitOptions& options() const { return options_; }
  const runtime::TensorMap& weights() const { return function_.weights; }
  GraphStore& store() const { return *options_.store; }

 private:
  friend absl::StatusOr<std::unique_ptr<JitFunction>> Jit(std::string name, TraceFn fn,
                                                          runtime::TensorMap weights,
                                                          JitOptions options);
  JitFunction(entries::TracedFunction function, JitOptions options)
      : function_(std::move(function)), options_(std::move(options)) {}

  std::string Prefix() const { return "jit '" + function_.name + "'"; }

  const entries::TracedFunction function_;
  const JitOptions options_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<entries::CompileCache>> caches_;  // guarded by mu_; never shrinks
  // The cache that last matched a call outside the fast path (or was just created).
  std::atomic<entries::CompileCache*> last_{nullptr};
};

// A JitFunction for `fn` reading `weights` by name (ctx.Param). InvalidArgument for
// options that cannot work: a padding policy without JitOptions::padding, symbolic
// without dynamic dims, a negative capacity, an empty function.
absl::StatusOr<std::unique_ptr<JitFunction>> Jit(std::string name, TraceFn fn,
                                                 runtime::TensorMap weights,
                                                 JitOptions options = {});

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_JIT_H_
