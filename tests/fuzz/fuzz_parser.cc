// Fuzz target: the textual IR parser (ir/parser.h). Any bytes: ParseGraph must return a
// graph or an InvalidArgument starting with `line:col: `, never crash or hang; a graph it
// accepts prints to text that parses back to the same text (the printer's round trip).
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

bool StartsWithLocation(absl::string_view message) {
  size_t colon = message.find(':');
  if (colon == 0 || colon == absl::string_view::npos) return false;
  for (size_t i = 0; i < colon; ++i) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(message[i]))) return false;
  }
  size_t colon2 = message.find(": ", colon + 1);
  if (colon2 == colon + 1 || colon2 == absl::string_view::npos) return false;
  for (size_t i = colon + 1; i < colon2; ++i) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(message[i]))) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using graphjit::fuzz::Fail;
  if (size > 1 << 16) return 0;  // long inputs only slow the fuzzer down
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<graphjit::ir::Graph> graph = graphjit::ir::ParseGraph(text);
  if (!graph.ok()) {
    if (graph.status().code() != absl::StatusCode::kInvalidArgument ||
        !StartsWithLocation(graph.status().message())) {
      Fail("parse error without a line:col: " + graph.status().ToString());
    }
    return 0;
  }
  std::string printed = graphjit::ir::PrintGraph(*graph);
  absl::StatusOr<graphjit::ir::Graph> again = graphjit::ir::ParseGraph(printed);
  if (!again.ok()) Fail("printed graph does not parse: " + again.status().ToString(), &*graph);
  if (graphjit::ir::PrintGraph(*again) != printed) {
    Fail("printing the reparsed graph differs:\n" + graphjit::ir::PrintGraph(*again), &*graph);
  }
  return 0;
}
