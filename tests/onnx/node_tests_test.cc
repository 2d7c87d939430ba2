// ONNX's own node tests (libonnx-testdata): every case is imported, interpreted on its
// test_data_set_0 and compared with the expected outputs. A case must pass or be refused
// at import (Unimplemented / InvalidArgument); a wrong answer, a run error or any other
// status fails the test. The refused cases are listed in node_cases_refused.tsv, so a
// case that stops importing fails, and so does a listed one that starts to (unlist it).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "onnx/import.h"
#include "onnx/onnx_pb.h"
#include "onnx/tensor_proto.h"
#include "runtime/interpreter.h"
#include "tests/onnx/node_cases.h"

namespace graphjit::onnx {
namespace {

namespace fs = std::filesystem;

// Passing cases measured when the suite was written; raise it as ops are added.
constexpr int kMinPassed = 752;

// node_cases_refused.tsv: case name -> the reason it was refused with.
std::map<std::string, std::string> ExpectedRefusals() {
  std::map<std::string, std::string> out;
  std::ifstream in(std::string(GRAPHJIT_SOURCE_DIR) + "/tests/onnx/node_cases_refused.tsv");
  EXPECT_TRUE(in.good()) << "cannot read tests/onnx/node_cases_refused.tsv";
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    out[line.substr(0, tab)] = tab == std::string::npos ? "" : line.substr(tab + 1);
  }
  return out;
}

// Float outputs match within |got - want| <= kAtol + kRtol * |want| (the reference is
// numpy, whose libm and summation order differ from ours); NaN matches NaN, infinities
// match exactly. Integers and bools match exactly.
constexpr double kRtolF32 = 1e-4, kAtolF32 = 1e-5;
constexpr double kRtolF64 = 1e-7, kAtolF64 = 1e-9;
// The signal windows' expected outputs come from a numpy reference that takes pi as
// 3.1415 (the ONNX spec's own function body uses 2 pi = 6.2831855); ONNX's backend runner
// compares with rtol 1e-3, and so do these cases.
constexpr double kRtolWindows = 1e-3;

bool IsWindowCase(const std::string& name) {
  for (const char* w : {"test_hannwindow", "test_hammingwindow", "test_blackmanwindow"}) {
    if (name.rfind(w, 0) == 0) return true;
  }
  return false;
}

// "" if `got` matches `want`, else what differs.
std::string Compare(const runtime::Tensor& got, const runtime::Tensor& want, double rtol_f32) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    return absl::StrCat("got ", got.TypeString(), ", want ", want.TypeString());
  }
  const bool f32 = want.dtype() == ir::DType::kF32;
  const bool is_float = ir::IsFloat(want.dtype());
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.ValueAt(i), w = want.ValueAt(i);
    bool ok = g == w || (std::isnan(g) && std::isnan(w));
    if (!ok && is_float && std::isfinite(w) && std::isfinite(g)) {
      ok = std::abs(g - w) <=
           (f32 ? kAtolF32 + rtol_f32 * std::abs(w) : kAtolF64 + kRtolF64 * std::abs(w));
    }
    if (!ok) return absl::StrCat("element ", i, ": got ", g, ", want ", w);
  }
  return "";
}

// The ONNX op a refusal names ("node 'n' (Relu): ..."), or a short reason.
std::string RefusalKey(const absl::Status& s) {
  static const std::regex kNodeOp(R"(node [^(]*\((\w+)\))");
  std::smatch m;
  const std::string msg(s.message());
  if (std::regex_search(msg, m, kNodeOp)) return m[1];
  if (msg.find("element type") != std::string::npos) return "(element type)";
  if (msg.find("opset") != std::string::npos) return "(opset)";
  if (msg.find("not a tensor") != std::string::npos) return "(sequence or optional input)";
  return "(other)";
}

TEST(OnnxNodeTests, EveryCasePassesOrIsRefusedAtImport) {
  if (!fs::is_directory(testing::kNodeTests)) {
    GTEST_SKIP() << testing::kNodeTests << " is missing: apt-get install libonnx-testdata "
                 << "(or run scripts/bootstrap.sh)";
  }
  const std::vector<fs::path> cases = testing::NodeCaseDirs();

  std::map<std::string, std::string> expected_refusals = ExpectedRefusals();
  int passed = 0, passed_with_known_inputs = 0, refused = 0;
  std::map<std::string, int> refused_by;
  std::vector<std::string> failures;
  for (const fs::path& dir : cases) {
    const std::string name = dir.filename().string();
    const bool listed = expected_refusals.erase(name) > 0;
    bool known_inputs = false;
    absl::StatusOr<ImportedModel> model = testing::ImportNodeCase(dir, &known_inputs);
    if (!model.ok()) {
      const absl::StatusCode code = model.status().code();
      if (code == absl::StatusCode::kUnimplemented || code == absl::StatusCode::kInvalidArgument) {
        ++refused;
        ++refused_by[RefusalKey(model.status())];
        if (!listed) {
          failures.push_back(absl::StrCat(
              name, " is refused but not in node_cases_refused.tsv: ", model.status().message()));
        }
      } else {
        failures.push_back(absl::StrCat(name, ": import: ", model.status().ToString()));
      }
      continue;
    }
    if (listed) {
      failures.push_back(absl::StrCat(name, " imports now: remove it from node_cases_refused.tsv"));
    }
    std::string failure;
    absl::StatusOr<runtime::TensorMap> inputs = testing::NodeCaseInputs(dir, *model);
    if (!inputs.ok()) failure = inputs.status().ToString();
    absl::StatusOr<std::vector<runtime::Tensor>> out;
    if (failure.empty()) out = runtime::Interpret(model->graph, *inputs, model->params);
    if (failure.empty() && !out.ok()) failure = absl::StrCat("run: ", out.status().ToString());
    for (size_t i = 0; failure.empty() && i < model->output_names.size(); ++i) {
      absl::StatusOr<runtime::Tensor> want =
          ReadTensorProto(testing::DataFile(dir, "output", static_cast<int>(i)));
      if (!want.ok()) {
        failure = absl::StrCat("output ", i, ": ", want.status().ToString());
      } else if (std::string diff =
                     Compare((*out)[i], *want, IsWindowCase(name) ? kRtolWindows : kRtolF32);
                 !diff.empty()) {
        failure = absl::StrCat("output '", model->output_names[i], "': ", diff);
      }
    }
    if (failure.empty()) {
      ++passed;
      passed_with_known_inputs += known_inputs;
    } else {
      failures.push_back(absl::StrCat(name, ": ", failure));
    }
  }

  std::vector<std::pair<int, std::string>> by_count;
  for (const auto& [op, n] : refused_by) by_count.push_back({-n, op});
  std::sort(by_count.begin(), by_count.end());
  std::string refused_list;
  for (const auto& [n, op] : by_count) absl::StrAppend(&refused_list, " ", op, "=", -n);
  std::printf(
      "ONNX node tests: %zu cases, %d passed (%d with inputs fixed at import), "
      "%d refused at import, %zu failed\nrefused by op:%s\n",
      cases.size(), passed, passed_with_known_inputs, refused, failures.size(),
      refused_list.c_str());
  for (const auto& [name, reason] : expected_refusals) {
    failures.push_back(absl::StrCat(name, " is in node_cases_refused.tsv but no such case exists"));
  }
  for (const std::string& f : failures) ADD_FAILURE() << f;
  EXPECT_GE(passed, kMinPassed) << "fewer node tests pass than when the floor was measured";
}

}  // namespace
}  // namespace graphjit::onnx
