// How hard LLVM works on a module: the optimizing tier (new-PM O2 with the loop and SLP
// vectorizers, then machine code at -O3) or the baseline tier (a handful of IR passes,
// then LLVM's fast instruction selector and register allocator), which compiles several
// times faster for slower code. No LLVM types: the options of every layer name it.
#ifndef GRAPHJIT_COMPILER_ORC_CODE_TIER_H_
#define GRAPHJIT_COMPILER_ORC_CODE_TIER_H_

#include <string_view>

#include "absl/status/statusor.h"

namespace graphjit::compiler {

enum class CodeTier {
  kOptimized,  // "o2"
  kBaseline,   // "baseline"
};

// "o2" or "baseline": what the tools' --tier flag and reports say.
const char* CodeTierName(CodeTier tier);
// The tier named `name`; InvalidArgument naming the choices otherwise.
absl::StatusOr<CodeTier> ParseCodeTier(std::string_view name);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_ORC_CODE_TIER_H_
