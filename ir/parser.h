// The textual IR parser: reads back what ir/printer.h writes (format in docs/IR.md), so
// tests and tools can use IR text as input.
#ifndef GRAPHJIT_IR_PARSER_H_
#define GRAPHJIT_IR_PARSER_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/graph.h"

namespace graphjit::ir {

// Parses one `graph NAME { ... }` and verifies it. Value names (`%0`, `%x`) are renumbered
// densely in order of definition; `#` starts a comment. Every node's declared type must
// equal the type its shape rule infers. Any malformed text gives InvalidArgument whose
// message starts with `line:col: ` (1-based) and says what was expected and found; no
// input makes the parser crash or hang.
absl::StatusOr<Graph> ParseGraph(absl::string_view text);

// Reads and parses a file: NotFound if it cannot be opened; parse errors are prefixed with
// the path (`path:line:col: ...`).
absl::StatusOr<Graph> ParseGraphFile(const std::string& path);

}  // namespace graphjit::ir

#endif  // GRAPHJIT_IR_PARSER_H_
