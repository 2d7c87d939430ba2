// A graph as compact bytes and back, for the compiler's private records (the disk
// cache's graph-level record, compiler/compiled/graph_record.h): the same graph as the
// textual IR would give, at a fraction of the parse (dims that are constants are values,
// not text). Not an interchange format: the textual IR (ir/printer.h, ir/parser.h) is.
#ifndef GRAPHJIT_IR_GRAPH_CODEC_H_
#define GRAPHJIT_IR_GRAPH_CODEC_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/byte_io.h"
#include "ir/graph.h"

namespace graphjit::ir {

void WriteGraph(const Graph& graph, ByteWriter& w);
// The graph WriteGraph wrote, verified (ir/verifier.h) like a parsed one; the reader's
// DataLoss naming the field for bytes that are damaged (an op, operand, attribute kind or
// dtype out of range), InvalidArgument from the verifier for a graph that does not check.
absl::StatusOr<Graph> ReadGraph(ByteReader& r);

}  // namespace graphjit::ir

#endif  // GRAPHJIT_IR_GRAPH_CODEC_H_
