// Command-line conveniences shared by the tools.
#ifndef GRAPHJIT_TOOLS_FLAG_UTIL_H_
#define GRAPHJIT_TOOLS_FLAG_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "compiler/orc/code_tier.h"
#include "ir/sym_expr.h"

namespace graphjit::tools {

// Abseil flag names are C identifiers; the tools document LLVM-style dashed spellings
// (`--print-after-all`). Returns argv with dashes inside each `--flag` name turned into
// underscores (values and positional arguments untouched), ready for ParseCommandLine.
inline std::vector<std::string> UnderscoreFlagNames(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i) {
    std::string& a = args[i];
    if (a == "--") break;
    if (a.size() < 3 || a[0] != '-' || a[1] != '-') continue;
    for (size_t j = 2; j < a.size() && a[j] != '='; ++j) {
      if (a[j] == '-') a[j] = '_';
    }
  }
  return args;
}

// Parses `NAME=value` items of a list flag such as `--dim S=64,P=63` into bindings;
// InvalidArgument names `flag` and the item. Dims and positions are never negative.
inline absl::StatusOr<ir::Bindings> ParseBindingsFlag(const std::vector<std::string>& items,
                                                      const std::string& flag) {
  ir::Bindings bindings;
  for (const std::string& item : items) {
    std::vector<std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    int64_t value = 0;
    if (kv.size() != 2 || kv[0].empty() || !absl::SimpleAtoi(kv[1], &value) || value < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, ": expected NAME=non-negative integer, got '", item, "'"));
    }
    bindings[kv[0]] = value;
  }
  return bindings;
}

// --tier of the tools that run a Jit: o2 or baseline, or tiered, the Jit's three tiers
// (misses interpreted, baseline code compiled in the background, entries called
// kTieredReoptimizeAfter times recompiled at o2; the flags' help texts say 16).
inline constexpr int64_t kTieredReoptimizeAfter = 16;
struct TierFlag {
  compiler::CodeTier tier = compiler::CodeTier::kOptimized;
  int64_t reoptimize_after = 0;  // JitOptions::reoptimize_after; > 0 only when tiered
  bool tiered() const { return reoptimize_after > 0; }
};
inline absl::StatusOr<TierFlag> ParseTierFlag(const std::string& value) {
  if (value == "tiered") return TierFlag{compiler::CodeTier::kBaseline, kTieredReoptimizeAfter};
  absl::StatusOr<compiler::CodeTier> tier = compiler::ParseCodeTier(value);
  if (!tier.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tier: ", tier.status().message(), " (or tiered)"));
  }
  return TierFlag{*tier, 0};
}

}  // namespace graphjit::tools

#endif  // GRAPHJIT_TOOLS_FLAG_UTIL_H_
