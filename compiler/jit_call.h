// JitCall: a reusable call of a JitFunction, for loops that call it again and again (a
// decode loop, a serving loop). Inputs come by position, in the order of the names given
// at construction; the results stay in outputs() until the next call. The call runs
// through the cache's one call path (compiler/entries/entry_call.h), keeping its frame:
// while calls hit the same compiled entry, a hit does the guards, the cache lookup (none
// when the dims repeat the last call's) and the kernels, and nothing else: no name
// lookups, no TensorMap, and no allocation when shapes repeat. A call whose inputs the
// last call's signature does not take (another dtype or rank, a padding policy) finds its
// signature by name first, as JitFunction::Run does, with the same errors and statistics.
//
//   JitCall call(fn.get(), {"x", "k_cache", "v_cache", "cos", "sin"});
//   for (...) {
//     GJ_RETURN_IF_ERROR(call.Run({x, k, v, cos, sin}, {{"P", p}}));
//     use(call.outputs()[0]);
//   }
#ifndef GRAPHJIT_COMPILER_JIT_CALL_H_
#define GRAPHJIT_COMPILER_JIT_CALL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/entries/entry_call.h"
#include "compiler/jit.h"

namespace graphjit::compiler {

class JitCall {
 public:
  // Calls of `fn` (which must outlive the JitCall) with inputs named `input_names`, in
  // that order. One JitCall per thread: Run is not reentrant.
  JitCall(JitFunction* fn, std::vector<std::string> input_names);

  // Runs the function on `inputs` (one per input name), compiling on a miss. The results
  // are in outputs() until the next Run, which may write into the same tensors (Clone()
  // what you keep). Errors are JitFunction::Run's.
  absl::Status Run(absl::Span<const runtime::Tensor> inputs, const ir::Bindings& bindings = {});
  const std::vector<runtime::Tensor>& outputs() const;
  // The lookup alone, by position: the entry that serves `inputs` (compiled first on a
  // miss), counted as a call that hits or misses, as JitFunction::Acquire does.
  absl::StatusOr<std::shared_ptr<const entries::CacheEntry>> Acquire(
      absl::Span<const runtime::Tensor> inputs);

  // Calls served by the kept call frame, and by the by-name path or the executor.
  int64_t fast_calls() const { return fast_calls_; }
  int64_t slow_calls() const { return slow_calls_; }

 private:
  // InvalidArgument unless `inputs` has one tensor per input name.
  absl::Status CheckCount(absl::Span<const runtime::Tensor> inputs) const;
  // Points args_ at `inputs` and binds the call's dims: false when the last call's cache
  // cannot take them (none yet, a padding policy, another signature).
  bool BindArgs(absl::Span<const runtime::Tensor> inputs);
  // The cache of the signature of `named` (found by name), made the one the next calls
  // try first; its inputs in signature order land in `args`.
  absl::StatusOr<entries::CompileCache*> SelectCache(const runtime::TensorMap& named,
                                                     entries::CompileCache::Args* args);
  // The position of input `name` in names_, or -1.
  int PositionOf(const std::string& name) const;
  // The inputs by name; InvalidArgument if names_ names one twice.
  absl::StatusOr<runtime::TensorMap> Named(absl::Span<const runtime::Tensor> inputs) const;

  JitFunction* fn_;
  std::vector<std::string> names_;
  std::vector<int> signature_position_;  // per signature input: its position, or -1
  entries::CompileCache::Args args_;
  // The call path of the last call's cache (its signature), with its kept frame.
  std::unique_ptr<entries::EntryCall> call_;
  int64_t fast_calls_ = 0, slow_calls_ = 0;
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_JIT_CALL_H_
