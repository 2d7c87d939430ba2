// Event logging of the compile cache, switched on by GRAPHJIT_LOG (off by default):
//   GRAPHJIT_LOG=recompiles         every compile (with the guard that missed) and eviction
//   GRAPHJIT_LOG=guards             every new entry's guards, every miss and rejected call
//   GRAPHJIT_LOG=cache              the on-disk code cache: files ignored (and why),
//                                   loads, stores, cleanup
//   GRAPHJIT_LOG=recompiles,guards  several channels (`all` is every one)
// One line per event on stderr. GRAPHJIT_LOG is read by CompileEnv
// (compiler/compiled/compile_env.h), with every other variable.
#ifndef GRAPHJIT_COMPILER_STORE_CACHE_LOG_H_
#define GRAPHJIT_COMPILER_STORE_CACHE_LOG_H_

#include "absl/strings/string_view.h"

namespace graphjit::compiler {

struct LogFlags {
  bool recompiles = false;
  bool guards = false;
  bool cache = false;
};

// Parses a comma-separated list; unknown words are ignored (other parts of graphjit may
// read the same variable for their own channels).
LogFlags ParseLogFlags(absl::string_view text);
// Writes `graphjit[channel]: message` and a newline to stderr in one write, so lines of
// concurrent callers do not interleave.
void LogLine(absl::string_view channel, absl::string_view message);
// Cached code refused as untrusted (a tag that is not the secret's, a file others could
// write): a security event, so reported on stderr whatever GRAPHJIT_LOG says, once per
// process (GRAPHJIT_LOG=cache lists every one).
void WarnUntrusted(absl::string_view where, absl::string_view why);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_STORE_CACHE_LOG_H_
