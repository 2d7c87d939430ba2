// A lowered graph (kernel program plus arg bindings) as bytes and back: what the
// graph-level record of the disk cache (compiler/compiled/graph_record.h) keeps so a warm
// start skips the passes and lowering.
//
// The bytes are a compact binary form, not a stable interchange format: a record is only
// read by the build that wrote it. Expressions are written once each (a table in
// post-order, operands referring to earlier rows), so subtrees the kernels share stay
// shared and the size stays proportional to the program.
#ifndef GRAPHJIT_COMPILER_LOWER_PROGRAM_CODEC_H_
#define GRAPHJIT_COMPILER_LOWER_PROGRAM_CODEC_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/lower/lower.h"

namespace graphjit::compiler {

std::string EncodeLoweredGraph(const LoweredGraph& lowered);

// The lowered graph `bytes` encode. DataLoss naming what is wrong for bytes that are
// truncated, have trailing garbage, or name anything out of range (an enum value, a
// buffer, symbol, expression row or operand count that does not fit), so a damaged record
// is refused here, before any kernel is bound to it. ArgBinding::value is not checked
// against a graph (the caller has the graph).
absl::StatusOr<LoweredGraph> DecodeLoweredGraph(absl::string_view bytes);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_PROGRAM_CODEC_H_
