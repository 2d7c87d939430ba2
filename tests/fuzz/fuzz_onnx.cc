// Fuzz target: ONNX model bytes -> import -> interpret. Any bytes: ImportFromBytes returns
// a model or an InvalidArgument / Unimplemented naming the file, never crashes. An
// imported graph prints to IR text that parses back, and runs in the interpreter with its
// symbols bound to small values (0..4; counts by their runs) and deterministic inputs: outputs of
// the declared types or an InvalidArgument. Graphs whose nodes would hold more than 2^16 elements
// are not run.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/hash/hash.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "onnx/import.h"
#include "runtime/interpreter.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace gj = graphjit;
  using gj::fuzz::Fail;
  if (size > 1 << 16) return 0;
  absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<gj::onnx::ImportedModel> model = gj::onnx::ImportFromBytes(bytes, "fuzz.onnx");
  if (!model.ok()) {
    const absl::StatusCode code = model.status().code();
    if ((code != absl::StatusCode::kInvalidArgument && code != absl::StatusCode::kUnimplemented) ||
        !absl::StrContains(model.status().message(), "fuzz.onnx")) {
      Fail("unexpected error: " + model.status().ToString());
    }
    return 0;
  }
  const gj::ir::Graph& graph = model->graph;
  const std::string text = gj::ir::PrintGraph(graph);
  absl::StatusOr<gj::ir::Graph> parsed = gj::ir::ParseGraph(text);
  if (!parsed.ok())
    Fail("imported graph does not parse back: " + parsed.status().ToString(), &graph);
  const uint64_t seed = absl::HashOf(bytes);
  const gj::fuzz::RunBindings run = gj::fuzz::SmallBindings(graph, seed);
  const gj::ir::Bindings& bindings = run.call;
  if (!gj::fuzz::ShapesAreSmall(graph, run.sizes, 1 << 16)) return 0;
  gj::runtime::TensorMap inputs;
  uint64_t salt = seed;
  for (gj::ir::ValueId id : graph.Inputs()) {
    const gj::ir::Node& n = graph.node(id);
    std::optional<gj::runtime::Tensor> t =
        gj::fuzz::MakeTensor(n.type, bindings, ++salt, gj::fuzz::ValueKind::kIndex, /*bound=*/3);
    if (!t) return 0;
    inputs[n.name()] = *t;
  }
  absl::StatusOr<std::vector<gj::runtime::Tensor>> out =
      gj::runtime::Interpret(graph, inputs, model->params, bindings);
  if (!out.ok()) {
    if (out.status().code() != absl::StatusCode::kInvalidArgument) {
      Fail("interpreter error is not InvalidArgument: " + out.status().ToString(), &graph);
    }
    return 0;
  }
  for (size_t i = 0; i < out->size(); ++i) {
    const gj::ir::ValueType& type = graph.type(graph.outputs()[i]);
    if (!gj::fuzz::HasDeclaredType((*out)[i], type, run)) {
      Fail(absl::StrCat("output ", i, " is ", (*out)[i].TypeString(), ", declared ",
                        gj::ir::TypeToString(type)),
           &graph);
    }
  }
  return 0;
}
