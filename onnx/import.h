// ONNX import: an ONNX model (a ModelProto file or its bytes) as an ir::Graph plus its
// weights, with the model's shape computations folded into symbolic dims. See docs/ONNX.md.
#ifndef GRAPHJIT_ONNX_IMPORT_H_
#define GRAPHJIT_ONNX_IMPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/graph.h"
#include "runtime/interpreter.h"

namespace graphjit::onnx {

struct ImportOptions {
  // The graph's name; empty takes the ONNX graph's name (or "main" if it has none).
  // Characters the IR's names cannot hold (other than letters, digits, '_', '.', '-')
  // become '_'.
  std::string graph_name;
  // Inputs whose values are fixed at import: each becomes a constant, like an
  // initializer, instead of a graph input. For models that take a shape, axes or a
  // repeat count as an input, which the importer otherwise refuses as data-dependent.
  runtime::TensorMap known_inputs;
  // Inputs imported at these constant shapes instead of their declared (symbolic) ones:
  // the model specialized on a call's shapes, as an exact compile of it would be. For
  // models whose dims must satisfy facts the importer cannot know of symbols (an image
  // side a multiple of 32, so that an FPN's upsampled maps line up). A rank, or a
  // declared dim, that differs, or one symbol given two values, is InvalidArgument.
  absl::flat_hash_map<std::string, std::vector<int64_t>> input_shapes;
  // Every symbolic dim of the inputs past axis 0 (the batch) is known to be a multiple of
  // this: symbol S is read as dim_factor * S_by<dim_factor>, which a factor_dim node
  // defines right after the input and checks when it runs (a call whose S is not a
  // multiple is InvalidArgument naming it). For models whose symbolic import needs that
  // fact (an FPN's maps line up for sides that are multiples of 32). 0: no such fact.
  int64_t dim_factor = 0;
};

struct ImportedModel {
  ir::Graph graph;
  // The weights the graph's params name: initializers and Constant nodes that the graph
  // uses as data. Constants only read as shapes or axes are folded and appear nowhere.
  runtime::TensorMap params;
  // The graph's inputs (initializers excluded) and outputs, in the model's order; the
  // graph's input nodes carry these names and its outputs are in this order.
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  // Symbols of the inputs' dims, in order of first appearance: a dim_param (made an
  // identifier) or, for a dim with neither value nor name, `<input>_<axis>`.
  std::vector<std::string> symbols;
  int64_t opset = 0;  // of the default domain
};

// Imports the model in the file `path`. NotFound if it cannot be read; InvalidArgument
// naming the file if it is not a valid ModelProto or is inconsistent; Unimplemented
// naming the node (name and op_type) for an op, attribute or data type graphjit cannot
// express exactly, and for a shape that depends on tensor data.
absl::StatusOr<ImportedModel> Import(const std::string& path, const ImportOptions& options = {});

// The names of the graph inputs of the model in `path` (initializers excluded), in order,
// without importing it: what a caller binds its tensors to before an import that needs
// them (onnx/specialize.h).
absl::StatusOr<std::vector<std::string>> ModelInputNames(const std::string& path);

// The same for the bytes of a serialized ModelProto; `what` names them in errors.
absl::StatusOr<ImportedModel> ImportFromBytes(absl::string_view bytes, absl::string_view what,
                                              const ImportOptions& options = {});

}  // namespace graphjit::onnx

#endif  // GRAPHJIT_ONNX_IMPORT_H_
