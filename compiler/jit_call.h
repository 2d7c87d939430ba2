// JitCall: a reusable call of a JitFunction, for loops that call it again and again (a
// decode loop, a serving loop). Inputs come by position, in the order of the names given
// at construction; the results stay in outputs() until the next call. While calls hit the
// same compiled entry, the entry's CompiledCall (compiler/compiled/compiled_call.h) is kept, so a
// hit does the guards, the cache lookup and the kernels and nothing else: no name
// lookups, no TensorMap, and no allocation when shapes repeat. A call with the same
// dims as the last one skips the lookup too (CompileCache::ServeRepeat: no lock, and
// the cache's statistics count it as the hit it is). Everything else - a miss,
// another entry, a padding policy, a tiered entry still interpreted, an input the fast
// checks do not accept - takes JitFunction::Run's path, with its errors and statistics,
// so a JitCall never answers differently from Run.
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
#include "compiler/compiled/compiled_call.h"
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

  // Calls served by the kept call frame, and by JitFunction::Run's path.
  int64_t fast_calls() const { return fast_calls_; }
  int64_t slow_calls() const { return slow_calls_; }

 private:
  // Serves the call from the kept frame when the cache of the last call accepts it;
  // false (nothing run, nothing counted) when Run's path must take it.
  bool RunFast(absl::Span<const runtime::Tensor> inputs, const ir::Bindings& bindings,
               absl::Status* status);
  // Runs the kept frame (call_) on `inputs`.
  void RunKept(absl::Span<const runtime::Tensor> inputs, const ir::Bindings& bindings,
               absl::Status* status);
  absl::Status RunSlow(absl::Span<const runtime::Tensor> inputs, const ir::Bindings& bindings);
  // The position of input `name` in names_, or -1.
  int PositionOf(const std::string& name) const;
  // The inputs by name; InvalidArgument if names_ names one twice.
  absl::StatusOr<runtime::TensorMap> Named(absl::Span<const runtime::Tensor> inputs) const;
  // The call bindings for `bindings` and values_, recomputed only when either changed.
  const ir::Bindings& CompletedBindings(const ir::Bindings& bindings);

  JitFunction* fn_;
  std::vector<std::string> names_;
  cache::CompileCache* cache_ = nullptr;  // the signature of the last call, if it has one
  std::vector<int> signature_position_;   // per signature input: its position, or -1
  cache::CompileCache::Args args_;
  cache::DimValues values_;
  std::shared_ptr<const cache::CacheEntry> entry_;  // the entry call_ runs
  std::unique_ptr<CompiledCall> call_;
  // The code call_ runs, kept alive here: reoptimization may replace the entry's code.
  std::shared_ptr<const CompiledGraph> call_code_;
  uint32_t served_code_version_ = 0;  // entry_'s code_version() when call_ was built
  cache::DimValues served_values_;    // the dims of the last call Serve gave call_'s entry
  std::vector<int> call_position_;    // per call_ input: its position in names_
  std::vector<runtime::Tensor> call_inputs_;
  bool call_takes_inputs_as_given_ = false;  // call_position_ is 0, 1, .. names_.size() - 1
  bool completes_ = false;  // the cache completes call bindings (named dims, a function)
  ir::Bindings last_bindings_, completed_;
  cache::DimValues completed_values_;
  bool completed_valid_ = false;
  bool last_fast_ = false;
  std::vector<runtime::Tensor> outputs_;  // of the slow path
  int64_t fast_calls_ = 0, slow_calls_ = 0;
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_JIT_CALL_H_
