// Real models' graphs through the whole compiler: every ONNX node test case the importer
// takes (tests/onnx/node_tests_test.cc checks them against ONNX's expected outputs in
// the interpreter) is compiled to native code, run on its test data and compared with
// the interpreter, at both code tiers. These are graphs graphjit's own frontend never
// writes (ops in other orders, broadcasts, i64 and bool data, empty and scalar shapes),
// in one process.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/orc/code_tier.h"
#include "gtest/gtest.h"
#include "runtime/interpreter.h"
#include "tests/onnx/node_cases.h"

namespace graphjit::onnx {
namespace {

namespace fs = std::filesystem;

// Compiled against interpreted: vector code may reorder a float sum, so floats match to
// within |got - want| <= 1e-5 + 1e-4 |want| (f64 1e-9 + 1e-7 |want|); NaN matches NaN,
// everything else exactly.
std::string Compare(const runtime::Tensor& got, const runtime::Tensor& want) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    return absl::StrCat("got ", got.TypeString(), ", want ", want.TypeString());
  }
  const bool f32 = want.dtype() == ir::DType::kF32;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.ValueAt(i), w = want.ValueAt(i);
    bool ok = g == w || (std::isnan(g) && std::isnan(w));
    if (!ok && ir::IsFloat(want.dtype()) && std::isfinite(g) && std::isfinite(w)) {
      ok = std::abs(g - w) <= (f32 ? 1e-5 + 1e-4 * std::abs(w) : 1e-9 + 1e-7 * std::abs(w));
    }
    if (!ok) return absl::StrCat("element ", i, ": compiled ", g, ", interpreted ", w);
  }
  return "";
}

// Cases the interpreter ran when this test was written; fewer fails (an importer or
// interpreter regression), more means raising it.
constexpr int kMinCompiled = 752;

TEST(OnnxCompiled, EveryImportedNodeTestCompilesAndMatchesTheInterpreter) {
  if (!fs::is_directory(testing::kNodeTests)) {
    GTEST_SKIP() << testing::kNodeTests << " is missing: apt-get install libonnx-testdata "
                 << "(or run scripts/bootstrap.sh)";
  }
  compiler::CompileGraphOptions o2, baseline;
  o2.env = baseline.env = &compiler::CompileEnv::MemoryOnly();  // every case a real compile
  baseline.codegen.tier = compiler::CodeTier::kBaseline;
  int compiled = 0;  // cases that match at both tiers
  std::vector<std::string> failures;
  for (const fs::path& dir : testing::NodeCaseDirs()) {
    const std::string name = dir.filename().string();
    bool known_inputs = false;
    absl::StatusOr<ImportedModel> model = testing::ImportNodeCase(dir, &known_inputs);
    if (!model.ok()) continue;  // refused at import: node_tests_test.cc accounts for it
    absl::StatusOr<runtime::TensorMap> inputs = testing::NodeCaseInputs(dir, *model);
    if (!inputs.ok()) continue;
    absl::StatusOr<std::vector<runtime::Tensor>> want =
        runtime::Interpret(model->graph, *inputs, model->params);
    if (!want.ok()) continue;
    // The failure of `name` at `options`' tier, or "".
    auto check = [&](const compiler::CompileGraphOptions& options) -> std::string {
      absl::StatusOr<std::unique_ptr<compiler::CompiledGraph>> code =
          compiler::CompiledGraph::Compile(model->graph, model->params, options);
      if (!code.ok()) return absl::StrCat("compile: ", code.status().ToString());
      absl::StatusOr<std::vector<runtime::Tensor>> got = (*code)->Run(*inputs);
      if (!got.ok()) return absl::StrCat("run: ", got.status().ToString());
      if (got->size() != want->size()) return "output count differs";
      for (size_t i = 0; i < got->size(); ++i) {
        std::string diff = Compare((*got)[i], (*want)[i]);
        if (!diff.empty()) return absl::StrCat("output ", i, ": ", diff);
      }
      return "";
    };
    bool ok = true;
    for (const compiler::CompileGraphOptions* options : {&o2, &baseline}) {
      std::string failure = check(*options);
      if (failure.empty()) continue;
      failures.push_back(
          absl::StrCat(name, " (", compiler::CodeTierName(options->codegen.tier), "): ", failure));
      ok = false;
    }
    compiled += ok;
  }
  std::printf(
      "ONNX node tests compiled at O2 and the baseline: %d match the interpreter at "
      "both, %zu failures\n",
      compiled, failures.size());
  for (const std::string& f : failures) ADD_FAILURE() << f;
  EXPECT_GE(compiled, kMinCompiled);
}

}  // namespace
}  // namespace graphjit::onnx
