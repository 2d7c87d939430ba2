// ONNX's node test cases (libonnx-testdata) as the ONNX tests read them: the cases'
// folders, a case's model imported (integer inputs fixed at import where the importer
// needs them known), its test_data_set_0 inputs by graph input name.
#ifndef GRAPHJIT_TESTS_ONNX_NODE_CASES_H_
#define GRAPHJIT_TESTS_ONNX_NODE_CASES_H_

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "onnx/import.h"
#include "onnx/onnx_pb.h"
#include "onnx/specialize.h"
#include "onnx/tensor_proto.h"

namespace graphjit::onnx::testing {

inline constexpr char kNodeTests[] = "/usr/share/libonnx-testdata/data/node";

// The cases' folders in name order; empty when the test data is not installed.
inline std::vector<std::filesystem::path> NodeCaseDirs() {
  std::vector<std::filesystem::path> cases;
  if (!std::filesystem::is_directory(kNodeTests)) return cases;
  for (const auto& e : std::filesystem::directory_iterator(kNodeTests)) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  return cases;
}

// The name of the model's i-th graph input (test data files are numbered in that order).
inline absl::StatusOr<std::string> InputName(const std::string& model_path, int i) {
  std::ifstream in(model_path, std::ios::binary);
  ::onnx::ModelProto model;
  if (!model.ParseFromIstream(&in)) return absl::InvalidArgumentError("unreadable model");
  if (i >= model.graph().input_size()) return absl::InvalidArgumentError("no such input");
  return model.graph().input(i).name();
}

inline std::string DataFile(const std::filesystem::path& dir, const char* kind, int i) {
  return (dir / "test_data_set_0" / absl::StrCat(kind, "_", i, ".pb")).string();
}

// Imports the case in `dir` as graphjit-run does (onnx/specialize.h): node tests pass
// shapes, axes, repeat counts and scales as inputs, and an input the importer needs as
// values is fixed from the case's data (`*known_inputs` tells whether any was).
inline absl::StatusOr<ImportedModel> ImportNodeCase(const std::filesystem::path& dir,
                                                    bool* known_inputs) {
  const std::string path = (dir / "model.onnx").string();
  *known_inputs = false;
  runtime::TensorMap data;
  for (int i = 0; std::filesystem::exists(DataFile(dir, "input", i)); ++i) {
    absl::StatusOr<std::string> name = InputName(path, i);
    absl::StatusOr<runtime::Tensor> t = ReadTensorProto(DataFile(dir, "input", i));
    if (name.ok() && t.ok()) data[*name] = *std::move(t);
  }
  absl::StatusOr<SpecializedImport> imported = ImportSpecialized(path, data);
  if (!imported.ok()) return imported.status();
  *known_inputs = !imported->specialized.empty();
  return std::move(imported->model);
}

// The case's inputs that `model` takes, by name.
inline absl::StatusOr<runtime::TensorMap> NodeCaseInputs(const std::filesystem::path& dir,
                                                         const ImportedModel& model) {
  const std::string path = (dir / "model.onnx").string();
  runtime::TensorMap inputs;
  for (int i = 0; std::filesystem::exists(DataFile(dir, "input", i)); ++i) {
    absl::StatusOr<runtime::Tensor> t = ReadTensorProto(DataFile(dir, "input", i));
    if (!t.ok())
      return absl::Status(t.status().code(), absl::StrCat("input ", i, ": ", t.status().message()));
    absl::StatusOr<std::string> name = InputName(path, i);
    if (!name.ok())
      return absl::Status(name.status().code(),
                          absl::StrCat("input ", i, ": ", name.status().message()));
    if (std::find(model.input_names.begin(), model.input_names.end(), *name) !=
        model.input_names.end()) {
      inputs[*name] = *t;
    }
  }
  return inputs;
}

}  // namespace graphjit::onnx::testing

#endif  // GRAPHJIT_TESTS_ONNX_NODE_CASES_H_
