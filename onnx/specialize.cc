#include "onnx/specialize.h"

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
