// Value specialization at import: a model that takes as inputs what the importer needs as
// values when it builds the graph (Unsqueeze's axes, Resize's scales, Pad's pads, Tile's
// repeats, OneHot's depth, Range's bounds) is imported with those inputs' values fixed,
// taken from the call that runs it, as TorchDynamo specializes on a Python int. The
// values become constants of the graph; the caller no longer passes those inputs. Used by
// graphjit-run and the ONNX node-case tests, so both import a case the same way.
#ifndef GRAPHJIT_ONNX_SPECIALIZE_H_
#define GRAPHJIT_ONNX_SPECIALIZE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "onnx/import.h"
#include "runtime/interpreter.h"

namespace graphjit::onnx {

// Inputs larger than this are never specialized on: a model needing the values of a big
// input at import is refused rather than compiled for one tensor's contents.
inline constexpr int64_t kMaxSpecializedElements = 64;

struct SpecializedImport {
  ImportedModel model;
  // The inputs fixed at import, in the order the importer asked for them.
  std::vector<std::string> specialized;
  // Whether the model was imported at the inputs' shapes (ImportOptions::input_shapes)
  // because its symbolic import failed.
  bool shapes_fixed = false;
  // Or, instead, with its symbolic dims past the batch taken as multiples of this
  // (ImportOptions::dim_factor: 8, 16, 32 or 64, the smallest that imports and that the
  // inputs' dims are multiples of); 0 if not. `factored` lists the (input, axis) pairs.
  int64_t dim_factor = 0;
  std::vector<std::pair<std::string, int>> factored;
};

// Imports `path`; each time the importer needs the values of a graph input ("input 'X'
// must be known at import"), takes them from `inputs` and imports again with X fixed
// (options.known_inputs). The importer's error is returned when X is not in `inputs`
// or was fixed already; InvalidArgument naming X, its size and the limit when it has
// more than kMaxSpecializedElements elements. When the symbolic import fails otherwise
// (dims that must agree only for some sizes, e.g. an FPN's maps for sides that are
// multiples of 32), the model is imported with its symbolic dims past the batch taken as
// multiples of 8, 16, 32 or 64 (the first that imports and that `inputs` satisfy:
// dim_factor), else once more at the shapes of `inputs` (shapes_fixed), and that import's
// result returned.
absl::StatusOr<SpecializedImport> ImportSpecialized(const std::string& path,
                                                    const runtime::TensorMap& inputs,
                                                    ImportOptions options = {});

// The input a failed import needs to know ("" if the error is not that one).
std::string InputNeededAtImport(const absl::Status& status);

}  // namespace graphjit::onnx

#endif  // GRAPHJIT_ONNX_SPECIALIZE_H_
