// Weights from and to a directory of .npy files or a .safetensors file, and CheckWeights,
// which turns a mismatched checkpoint into one message instead of a failure deep in a run.
#include "runtime/weights.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status_macros.h"
#include "runtime/npy.h"
#include "runtime/safetensors.h"

namespace graphjit::runtime {
namespace {

namespace fs = std::filesystem;

constexpr char kNpySuffix[] = ".npy";
constexpr char kSafetensorsSuffix[] = ".safetensors";
constexpr char kAccepted[] = "expected a directory of NAME.npy files or a .safetensors file";

std::string Quote(absl::string_view name) { return absl::StrCat("'", absl::CHexEscape(name), "'"); }

absl::StatusOr<TensorMap> LoadNpyDirectory(const std::string& path) {
  std::error_code ec;
  std::vector<std::string> files;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    std::string file = it->path().filename().string();
    // Hidden files are editors' and tools' leftovers, not weights (and SaveWeights never
    // writes a name starting with '.').
    if (!absl::EndsWith(file, kNpySuffix) || absl::StartsWith(file, ".")) continue;
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) continue;  // follows symlinks
    files.push_back(std::move(file));
  }
  if (ec) return absl::InvalidArgumentError(absl::StrCat(path, ": cannot list: ", ec.message()));
  if (files.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": no .npy files found (", kAccepted, ")"));
  }
  // Sorted, so that which bad file is reported does not depend on the directory order.
  std::sort(files.begin(), files.end());
  TensorMap weights;
  for (const std::string& file : files) {
    GJ_ASSIGN_OR_RETURN(weights[file.substr(0, file.size() - std::strlen(kNpySuffix))],
                        ReadNpy((fs::path(path) / file).string()));
  }
  return weights;
}

}  // namespace

absl::StatusOr<TensorMap> LoadWeights(const std::string& path) {
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (fs::is_directory(status)) return LoadNpyDirectory(path);
  if (absl::EndsWith(path, kSafetensorsSuffix)) return ReadSafetensors(path);
  if (!fs::exists(status)) {
    return absl::NotFoundError(absl::StrCat(path, ": not found (", kAccepted, ")"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": unsupported weights path (", kAccepted, ")"));
}

absl::Status SaveWeights(const std::string& path, const TensorMap& weights) {
  if (absl::EndsWith(path, kSafetensorsSuffix)) return WriteSafetensors(path, weights);
  std::vector<std::string> names;
  for (const auto& [name, t] : weights) names.push_back(name);
  std::sort(names.begin(), names.end());
  // Check every name before creating anything, so a bad map leaves no partial directory.
  for (const std::string& name : names) {
    if (name.empty() || absl::StrContains(name, '/') || absl::StrContains(name, '\0') ||
        absl::StartsWith(name, ".")) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": tensor name ", Quote(name),
          " cannot be a file name (it must be non-empty, without '/' and not start with "
          "'.'); save to a .safetensors file instead"));
    }
    if (!weights.at(name).valid()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": tensor ", Quote(name), " is not a valid tensor"));
    }
  }
  std::error_code ec;
  fs::create_directories(path, ec);
  if (!fs::is_directory(path)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": cannot create the directory",
        ec ? absl::StrCat(": ", ec.message()) : std::string(" (a file is in the way)")));
  }
  for (const std::string& name : names) {
    GJ_RETURN_IF_ERROR(WriteNpy((fs::path(path) / (name + kNpySuffix)).string(), weights.at(name)));
  }
  return absl::OkStatus();
}

absl::Status CheckWeights(const TensorMap& expected, const TensorMap& actual) {
  std::vector<std::string> names, expected_names;
  for (const auto& [name, t] : expected) expected_names.push_back(name);
  std::sort(expected_names.begin(), expected_names.end());
  names = expected_names;
  for (const auto& [name, t] : actual) {
    if (!expected.contains(name)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    auto want = expected.find(name);
    auto got = actual.find(name);
    if (got == actual.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "weights: missing ", Quote(name), " (expected ", want->second.TypeString(), ")"));
    }
    std::string got_type = got->second.valid() ? got->second.TypeString() : "no tensor";
    if (want == expected.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("weights: unexpected tensor ", Quote(name), " (", got_type,
                       "); the model's parameters are: ", absl::StrJoin(expected_names, ", ")));
    }
    const Tensor& w = want->second;
    const Tensor& g = got->second;
    if (!g.valid() || g.dtype() != w.dtype() || g.shape() != w.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat("weights: ", Quote(name), " has ", got_type, ", expected ", w.TypeString()));
    }
  }
  return absl::OkStatus();
}

}  // namespace graphjit::runtime
