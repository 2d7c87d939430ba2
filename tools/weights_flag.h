// The tools' --weights DIR|FILE.safetensors: weights loaded with runtime::LoadWeights and
// checked against what they are for (a model's parameters, or an IR file's param nodes)
// before anything is traced, run or compiled.
#ifndef GRAPHJIT_TOOLS_WEIGHTS_FLAG_H_
#define GRAPHJIT_TOOLS_WEIGHTS_FLAG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ir/graph.h"
#include "ir/op.h"
#include "models/model.h"
#include "runtime/interpreter.h"
#include "runtime/tensor.h"
#include "runtime/weights.h"

namespace graphjit::tools {

// `status` with `path: ` in front of its message (CheckWeights' messages do not say which
// file they are about).
inline absl::Status WithPath(const std::string& path, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(path, ": ", status.message()));
}

// Loads `path` and makes it the model's weights (Model::SetWeights' check: the exact
// names, dtypes and shapes of its parameters). Call before tracing or compiling.
inline absl::Status ApplyWeightsFlag(const std::string& path, models::Model& model) {
  absl::StatusOr<runtime::TensorMap> weights = runtime::LoadWeights(path);
  if (!weights.ok()) return weights.status();
  return WithPath(path, model.SetWeights(*std::move(weights)));
}

// Zero tensors of the types of `graph`'s param nodes: what CheckWeights compares against.
// InvalidArgument for a param whose shape is not constant.
inline absl::StatusOr<runtime::TensorMap> GraphParamTypes(const ir::Graph& graph) {
  runtime::TensorMap expected;
  for (ir::ValueId id : graph.Params()) {
    const ir::Node& node = graph.node(id);
    std::vector<int64_t> shape;
    for (const ir::SymExpr& d : node.type.shape) {
      std::optional<int64_t> v = d.AsConstant();
      if (!v.has_value()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "parameter '", node.name(), "' has a symbolic shape ", ir::TypeToString(node.type)));
      }
      shape.push_back(*v);
    }
    absl::StatusOr<runtime::Tensor> zeros = runtime::Tensor::Zeros(node.type.dtype, shape);
    if (!zeros.ok()) return zeros.status();
    expected[node.name()] = *std::move(zeros);
  }
  return expected;
}

// Loads `path` as the weights of `graph` (an IR file): exactly its params' names, dtypes
// and shapes, else InvalidArgument naming the file and the tensor.
inline absl::StatusOr<runtime::TensorMap> LoadGraphWeights(const std::string& path,
                                                           const ir::Graph& graph) {
  absl::StatusOr<runtime::TensorMap> expected = GraphParamTypes(graph);
  if (!expected.ok()) return expected.status();
  absl::StatusOr<runtime::TensorMap> weights = runtime::LoadWeights(path);
  if (!weights.ok()) return weights.status();
  if (absl::Status s = runtime::CheckWeights(*expected, *weights); !s.ok()) {
    return WithPath(path, s);
  }
  return weights;
}

}  // namespace graphjit::tools

#endif  // GRAPHJIT_TOOLS_WEIGHTS_FLAG_H_
