// Command-line conveniences shared by the tools.
#ifndef GRAPHJIT_TOOLS_FLAG_UTIL_H_
#define GRAPHJIT_TOOLS_FLAG_UTIL_H_

#include <string>
#include <vector>

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

}  // namespace graphjit::tools

#endif  // GRAPHJIT_TOOLS_FLAG_UTIL_H_
