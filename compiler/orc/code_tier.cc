#include "compiler/orc/code_tier.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace graphjit::compiler {

const char* CodeTierName(CodeTier tier) {
  switch (tier) {
    case CodeTier::kOptimized:
      return "o2";
    case CodeTier::kBaseline:
      return "baseline";
  }
  return "?";
}

absl::StatusOr<CodeTier> ParseCodeTier(std::string_view name) {
  for (CodeTier tier : {CodeTier::kOptimized, CodeTier::kBaseline}) {
    if (name == CodeTierName(tier)) return tier;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown code tier '", std::string(name), "' (expected o2 or baseline)"));
}

}  // namespace graphjit::compiler
