#include "runtime/seeded_inputs.h"

#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"

namespace graphjit::runtime {

absl::StatusOr<TensorMap> SeededInputs(const ir::Graph& graph, const ir::Bindings& values,
                                       uint64_t seed) {
  std::mt19937_64 rng(seed);
  TensorMap inputs;
  for (ir::ValueId id : graph.Inputs()) {
    const ir::Node& node = graph.node(id);
    absl::StatusOr<std::vector<int64_t>> shape = ir::EvaluateShape(node.type.shape, values);
    if (!shape.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("input '", node.name(), "' has shape ",
                                                     ir::ShapeToString(node.type.shape), ": ",
                                                     shape.status().message()));
    }
    if (!ir::IsFloat(node.type.dtype)) {
      GJ_ASSIGN_OR_RETURN(inputs[node.name()], Tensor::Zeros(node.type.dtype, *shape));
      continue;
    }
    int64_t n = 1;
    for (int64_t d : *shape) n *= d;
    // A distribution per tensor: the draws match a per-tensor normal fill of one stream.
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<double> draws(n);
    for (double& v : draws) v = normal(rng);
    GJ_ASSIGN_OR_RETURN(inputs[node.name()],
                        Tensor::FromDoubles(node.type.dtype, *std::move(shape), draws));
  }
  return inputs;
}

}  // namespace graphjit::runtime
