#include "onnx/specialize.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace graphjit::onnx {

std::string InputNeededAtImport(const absl::Status& status) {
  // Context::InInts and friends: "input 'X' must be known at import (...)".
  constexpr absl::string_view kHead = "input '";
  constexpr absl::string_view kTail = "' must be known at import";
  const absl::string_view message = status.message();
  const size_t tail = message.find(kTail);
  if (tail == absl::string_view::npos) return "";
  const size_t head = message.rfind(kHead, tail);
  if (head == absl::string_view::npos) return "";
  return std::string(message.substr(head + kHead.size(), tail - head - kHead.size()));
}

namespace {

// The (input, axis) pairs that factor_dim nodes of `graph` read (ImportOptions::dim_factor:
// each right after its input, or after the input's cast).
std::vector<std::pair<std::string, int>> FactoredAxes(const ir::Graph& graph) {
  std::vector<std::pair<std::string, int>> out;
  for (const ir::Node& n : graph.nodes()) {
    if (n.op != ir::OpCode::kFactorDim && n.op != ir::OpCode::kAssertDim) continue;
    ir::ValueId v = n.operands[0];
    for (ir::OpCode op = graph.node(v).op;
         op == ir::OpCode::kCast || op == ir::OpCode::kFactorDim || op == ir::OpCode::kAssertDim;
         op = graph.node(v).op) {
      v = graph.node(v).operands[0];
    }
    if (graph.node(v).op != ir::OpCode::kInput) continue;
    out.emplace_back(graph.node(v).name(), static_cast<int>(n.attrs.GetInt("axis")));
  }
  return out;
}

}  // namespace

absl::StatusOr<SpecializedImport> ImportSpecialized(const std::string& path,
                                                    const runtime::TensorMap& inputs,
                                                    ImportOptions options) {
  SpecializedImport out;
  for (;;) {
    absl::StatusOr<ImportedModel> model = Import(path, options);
    if (model.ok()) {
      out.model = *std::move(model);
      return out;
    }
    const std::string name = InputNeededAtImport(model.status());
    auto it = inputs.find(name);
    if (name.empty() && !out.shapes_fixed && !inputs.empty() && options.dim_factor == 0) {
      // The symbolic dims may line up when they are multiples of a power of two.
      for (int64_t f : {8, 16, 32, 64}) {
        ImportOptions factored = options;
        factored.dim_factor = f;
        absl::StatusOr<ImportedModel> m = Import(path, factored);
        if (!m.ok()) continue;
        std::vector<std::pair<std::string, int>> axes = FactoredAxes(m->graph);
        bool fits = true;
        for (const auto& [input, axis] : axes) {
          auto call = inputs.find(input);
          fits &=
              call != inputs.end() && axis < call->second.rank() && call->second.dim(axis) % f == 0;
        }
        if (!fits) continue;
        out.model = *std::move(m);
        out.dim_factor = f;
        out.factored = std::move(axes);
        return out;
      }
    }
    if (name.empty() && !out.shapes_fixed && !inputs.empty()) {
      // Not a value it needs: the symbolic dims themselves. Specialize on the shapes.
      for (const auto& [input, tensor] : inputs) {
        if (!options.known_inputs.contains(input)) options.input_shapes[input] = tensor.shape();
      }
      out.shapes_fixed = true;
      continue;
    }
    if (name.empty() || it == inputs.end() || options.known_inputs.contains(name)) {
      return model.status();
    }
    if (it->second.numel() > kMaxSpecializedElements) {
      return absl::InvalidArgumentError(absl::StrCat(
          model.status().message(), "; input '", name, "' has ", it->second.numel(),
          " elements, and graphjit specializes a model on the values of inputs of at most ",
          kMaxSpecializedElements));
    }
    options.known_inputs[name] = it->second;
    out.specialized.push_back(name);
  }
}

}  // namespace graphjit::onnx
