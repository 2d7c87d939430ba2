// The input signature (names, dtypes, ranks and dynamic dims, keyed per the policy) that
// a JitFunction keeps one compile cache for: from the declared JitOptions::input_types,
// or from a call's tensors, where every dim is dynamic and the declared dynamic and
// padding dims give names and policies.
#ifndef GRAPHJIT_COMPILER_ENTRIES_CALL_SIGNATURE_H_
#define GRAPHJIT_COMPILER_ENTRIES_CALL_SIGNATURE_H_

#include <string>

#include "absl/status/statusor.h"
#include "compiler/entries/guards.h"
#include "compiler/entries/jit_options.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler::entries {

// The signature of `inputs` under `options` (the masks of a padding policy included).
// InvalidArgument, prefixed by `prefix`, when the options do not fit the call: a dynamic
// dim of an input the call lacks or beyond its rank, a mask that is not a float tensor or
// whose dims are not constants or padded dims.
absl::StatusOr<InputSignature> CallSignature(const JitOptions& options,
                                             const runtime::TensorMap& inputs,
                                             const std::string& prefix);

}  // namespace graphjit::compiler::entries

#endif  // GRAPHJIT_COMPILER_ENTRIES_CALL_SIGNATURE_H_
