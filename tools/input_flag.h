// The `--input NAME=@FILE.npy` flag of the tools that run or dump an ONNX model: a graph
// input's tensor from a .npy file or an ONNX TensorProto (.pb).
#ifndef GRAPHJIT_TOOLS_INPUT_FLAG_H_
#define GRAPHJIT_TOOLS_INPUT_FLAG_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ir/status_macros.h"
#include "onnx/tensor_proto.h"
#include "runtime/interpreter.h"
#include "runtime/npy.h"

namespace graphjit::tools {

// Reads each `NAME=@FILE.npy` (or `NAME=@FILE.pb`) of `items` into `inputs`;
// InvalidArgument names an item of another form, the readers' errors a bad file.
inline absl::Status ReadInputsFlag(const std::vector<std::string>& items,
                                   runtime::TensorMap* inputs) {
  for (const std::string& item : items) {
    std::vector<std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    if (kv.size() != 2 || kv[0].empty() || !absl::StartsWith(kv[1], "@")) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input: expected NAME=@FILE.npy or NAME=@FILE.pb, got '", item, "'"));
    }
    const std::string path = kv[1].substr(1);
    if (absl::EndsWith(path, ".pb")) {
      GJ_ASSIGN_OR_RETURN((*inputs)[kv[0]], onnx::ReadTensorProto(path));
    } else {
      GJ_ASSIGN_OR_RETURN((*inputs)[kv[0]], runtime::ReadNpy(path));
    }
  }
  return absl::OkStatus();
}

}  // namespace graphjit::tools

#endif  // GRAPHJIT_TOOLS_INPUT_FLAG_H_
