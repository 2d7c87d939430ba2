// Fuzz target: parse -> verify -> interpret. Any bytes that parse as a graph (the parser
// verifies it) run in the interpreter with every symbol bound to a small value (0..4, from
// a hash of the text) and deterministic inputs and params: the interpreter returns outputs
// of the declared types or an InvalidArgument, never crashes. Graphs whose nodes would
// hold more than 2^16 elements are skipped.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "ir/parser.h"
#include "runtime/interpreter.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace gj = graphjit;
  using gj::fuzz::Fail;
  if (size > 1 << 14) return 0;
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<gj::ir::Graph> graph = gj::ir::ParseGraph(text);
  if (!graph.ok()) return 0;
  const uint64_t seed = absl::HashOf(text);
  const gj::fuzz::RunBindings run = gj::fuzz::SmallBindings(*graph, seed);
  const gj::ir::Bindings& bindings = run.call;
  if (!gj::fuzz::ShapesAreSmall(*graph, run.sizes, 1 << 16)) return 0;
  gj::runtime::TensorMap inputs, params;
  uint64_t salt = seed;
  for (gj::ir::ValueId id : graph->Inputs()) {
    const gj::ir::Node& n = graph->node(id);
    std::optional<gj::runtime::Tensor> t =
        gj::fuzz::MakeTensor(n.type, bindings, ++salt, gj::fuzz::ValueKind::kIndex, /*bound=*/3);
    if (!t) return 0;
    inputs[n.name()] = *t;
  }
  for (gj::ir::ValueId id : graph->Params()) {
    const gj::ir::Node& n = graph->node(id);
    std::optional<gj::runtime::Tensor> t = gj::fuzz::MakeTensor(n.type, bindings, ++salt);
    if (!t) return 0;
    params[n.name()] = *t;
  }
  absl::StatusOr<std::vector<gj::runtime::Tensor>> out =
      gj::runtime::Interpret(*graph, inputs, params, bindings);
  if (!out.ok()) {
    if (out.status().code() != absl::StatusCode::kInvalidArgument) {
      Fail("interpreter error is not InvalidArgument: " + out.status().ToString(), &*graph);
    }
    return 0;
  }
  if (out->size() != graph->outputs().size()) Fail("wrong number of outputs", &*graph);
  for (size_t i = 0; i < out->size(); ++i) {
    const gj::ir::ValueType& type = graph->type(graph->outputs()[i]);
    if (!gj::fuzz::HasDeclaredType((*out)[i], type, run)) {
      Fail(absl::StrCat("output ", i, " is ", (*out)[i].TypeString(), ", declared ",
                        gj::ir::TypeToString(type)),
           &*graph);
    }
    for (int64_t e = 0; e < (*out)[i].numel(); ++e) (void)(*out)[i].ValueAt(e);
  }
  return 0;
}
