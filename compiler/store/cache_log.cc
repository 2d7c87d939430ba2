#include "compiler/store/cache_log.h"

#include <atomic>
#include <cstdio>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace graphjit::compiler {

LogFlags ParseLogFlags(absl::string_view text) {
  LogFlags flags;
  for (absl::string_view word : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    word = absl::StripAsciiWhitespace(word);
    if (word == "recompiles" || word == "all") flags.recompiles = true;
    if (word == "guards" || word == "all") flags.guards = true;
    if (word == "cache" || word == "all") flags.cache = true;
  }
  return flags;
}

void LogLine(absl::string_view channel, absl::string_view message) {
  std::string line = absl::StrCat("graphjit[", channel, "]: ", message, "\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
}

void WarnUntrusted(absl::string_view where, absl::string_view why) {
  static std::atomic<bool> warned{false};
  if (warned.exchange(true)) return;
  std::string line = absl::StrCat("graphjit: refused cached code ", where, ": ", why,
                                  "; compiling locally (GRAPHJIT_LOG=cache lists every refusal)\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace graphjit::compiler
