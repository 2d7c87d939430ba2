// Models exported from torch 1.13 (scripts/export_torch_models.py, run here into a
// temporary directory): an MLP, a small CNN (BatchNorm, a depthwise convolution, max
// pooling, hard-swish, global average pooling), a TransformerEncoderLayer, and LSTM, GRU
// and RNN layers, each with dynamic axes. Imported, then run by the interpreter and compiled under
// the symbolic policy (one compile serving every size), at two sizes each, at O2, at the baseline
// tier and tiered (the interpreter serving until the baseline code is ready); every output within
// ONNX Runtime's test tolerances (rtol 1e-4, atol 1e-5) of torch's own.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/jit.h"
#include "compiler/orc/code_tier.h"
#include "gtest/gtest.h"
#include "models/onnx_model.h"
#include "onnx/import.h"
#include "onnx/specialize.h"
#include "runtime/interpreter.h"
#include "runtime/npy.h"
#include "tests/models/run_exporter.h"

namespace graphjit::models {
namespace {

// Exports the models once per process; "" when torch is missing (the tests skip).
const std::string& ExportDir() {
  static const std::string* dir =
      new std::string(RunExporter("scripts/export_torch_models.py", "torch_models"));
  return *dir;
}

#define SKIP_WITHOUT_TORCH()                                                      \
  if (ExportDir().empty())                                                        \
  GTEST_SKIP() << "torch is missing for /usr/bin/python3: install python3-torch " \
                  "(scripts/bootstrap.sh does)"

// Every element of `got` within rtol 1e-4, atol 1e-5 of `want`.
void ExpectClose(const runtime::Tensor& got, const runtime::Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const std::vector<double> g = got.ToDoubles(), w = want.ToDoubles();
  int bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::abs(g[i] - w[i]) > 1e-5 + 1e-4 * std::abs(w[i]) && ++bad <= 3) {
      ADD_FAILURE() << what << ": element " << i << " is " << g[i] << ", torch " << w[i];
    }
  }
  EXPECT_EQ(bad, 0) << what;
}

// `model` through a Jit made with `options`, at each size of `sizes`.
void CheckSizes(const onnx::ImportedModel& model, const compiler::JitOptions& options,
                const std::string& dir, const std::string& name,
                const std::vector<std::string>& sizes) {
  absl::StatusOr<std::unique_ptr<compiler::JitFunction>> fn = JitOnnxModel(model, options);
  ASSERT_TRUE(fn.ok()) << fn.status();
  for (const std::string& size : sizes) {
    const std::string prefix = absl::StrCat(dir, "/", name, ".", size);
    absl::StatusOr<runtime::Tensor> x = runtime::ReadNpy(prefix + ".input0.npy");
    absl::StatusOr<runtime::Tensor> want = runtime::ReadNpy(prefix + ".output0.npy");
    ASSERT_TRUE(x.ok() && want.ok()) << x.status() << " " << want.status();
    runtime::TensorMap in = {{model.input_names.at(0), *x}};
    absl::StatusOr<std::vector<runtime::Tensor>> interpreted =
        runtime::Interpret(model.graph, in, model.params);
    ASSERT_TRUE(interpreted.ok()) << interpreted.status();
    ExpectClose(interpreted->at(0), *want, absl::StrCat(name, " ", size, " interpreted"));
    absl::StatusOr<std::vector<runtime::Tensor>> compiled = (*fn)->Run(in);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    ExpectClose(compiled->at(0), *want, absl::StrCat(name, " ", size, " compiled"));
  }
  // Symbolic: the first size (batch 1, which the policy specializes) and one entry, with
  // every dynamic dim symbolic, for the second (tiered: compiled in the background, maybe
  // not yet).
  if (!options.tiered) {
    EXPECT_EQ((*fn)->stats().compiles, 2) << name;
  }
}

class TorchModel
    : public ::testing::TestWithParam<std::pair<std::string, std::vector<std::string>>> {};

TEST_P(TorchModel, InterpretedAndCompiledEqualTorch) {
  SKIP_WITHOUT_TORCH();
  const auto& [name, sizes] = GetParam();
  const std::string dir = ExportDir();
  absl::StatusOr<onnx::ImportedModel> model = onnx::Import(absl::StrCat(dir, "/", name, ".onnx"));
  ASSERT_TRUE(model.ok()) << model.status();
  for (const char* mode : {"o2", "baseline", "tiered"}) {
    SCOPED_TRACE(mode);
    compiler::JitOptions options;
    options.policy = compiler::entries::ShapePolicy::kSymbolic;
    options.log = {};
    options.compile.env = &compiler::CompileEnv::MemoryOnly();
    if (std::string(mode) != "o2") options.compile.codegen.tier = compiler::CodeTier::kBaseline;
    options.tiered = std::string(mode) == "tiered";
    CheckSizes(*model, options, dir, name, sizes);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Exported, TorchModel,
    ::testing::Values(
        std::make_pair(std::string("mlp"), std::vector<std::string>{"b1", "b5"}),
        std::make_pair(std::string("cnn"), std::vector<std::string>{"16x16", "2x24x20"}),
        std::make_pair(std::string("transformer"), std::vector<std::string>{"s16", "s64"})),
    [](const auto& info) { return info.param.first; });

// LSTM (two layers, bidirectional), GRU and RNN layers with dynamic batch and time: the
// symbolic time imports as a scan op per direction (ImportSpecialized fixes nothing), and
// every output (y, h_n, c_n) is compared with torch's, interpreted and compiled at O2 and
// at the baseline tier.
class TorchRecurrent : public ::testing::TestWithParam<std::string> {};

TEST_P(TorchRecurrent, EveryOutputEqualsTorchAtEverySize) {
  SKIP_WITHOUT_TORCH();
  const std::string& name = GetParam();
  const std::string path = absl::StrCat(ExportDir(), "/", name, ".onnx");
  for (const char* size : {"b1t5", "b3t9"}) {
    const std::string prefix = absl::StrCat(ExportDir(), "/", name, ".", size);
    absl::StatusOr<runtime::Tensor> x = runtime::ReadNpy(prefix + ".input0.npy");
    ASSERT_TRUE(x.ok()) << x.status();
    const runtime::TensorMap in = {{"x", *x}};
    absl::StatusOr<onnx::SpecializedImport> imported = onnx::ImportSpecialized(path, in);
    ASSERT_TRUE(imported.ok()) << imported.status();
    EXPECT_FALSE(imported->shapes_fixed) << name << ": the symbolic time was not imported";
    const onnx::ImportedModel& model = imported->model;
    absl::StatusOr<std::vector<runtime::Tensor>> interpreted =
        runtime::Interpret(model.graph, in, model.params);
    ASSERT_TRUE(interpreted.ok()) << interpreted.status();
    for (const bool baseline : {false, true}) {
      compiler::JitOptions options;
      options.log = {};
      options.compile.env = &compiler::CompileEnv::MemoryOnly();
      if (baseline) options.compile.codegen.tier = compiler::CodeTier::kBaseline;
      absl::StatusOr<std::unique_ptr<compiler::JitFunction>> fn = JitOnnxModel(model, options);
      ASSERT_TRUE(fn.ok()) << fn.status();
      absl::StatusOr<std::vector<runtime::Tensor>> compiled = (*fn)->Run(in);
      ASSERT_TRUE(compiled.ok()) << compiled.status();
      const size_t outputs = name == "lstm" ? 3 : 2;
      ASSERT_EQ(compiled->size(), outputs);
      for (size_t i = 0; i < outputs; ++i) {
        absl::StatusOr<runtime::Tensor> want =
            runtime::ReadNpy(absl::StrCat(prefix, ".output", i, ".npy"));
        ASSERT_TRUE(want.ok()) << want.status();
        const std::string what = absl::StrCat(name, " ", size, " output ", i);
        if (!baseline) ExpectClose(interpreted->at(i), *want, what + " interpreted");
        ExpectClose(compiled->at(i), *want, what + (baseline ? " baseline" : " O2"));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Exported, TorchRecurrent, ::testing::Values("lstm", "gru", "rnn"));

// The lecture's demo 3 scripted (torch.jit.script) and exported: one ONNX Loop whose
// condition the body computes from data (and an If inside it). It imports as one while
// op, compiles once under the symbolic policy for two batch sizes, and gives torch's trip
// count and, within 1e-12, its y.
TEST(TorchLoop, TheScriptedConvergenceLoopIsOneWhileMatchingTorch) {
  SKIP_WITHOUT_TORCH();
  absl::StatusOr<onnx::ImportedModel> model =
      onnx::Import(absl::StrCat(ExportDir(), "/converge.onnx"));
  ASSERT_TRUE(model.ok()) << model.status();
  int whiles = 0;
  for (const ir::Node& n : model->graph.nodes()) whiles += n.op == ir::OpCode::kWhile;
  EXPECT_EQ(whiles, 1);
  compiler::JitOptions options;
  options.policy = compiler::entries::ShapePolicy::kSymbolic;
  options.log = {};
  options.compile.env = &compiler::CompileEnv::MemoryOnly();
  absl::StatusOr<std::unique_ptr<compiler::JitFunction>> fn = JitOnnxModel(*model, options);
  ASSERT_TRUE(fn.ok()) << fn.status();
  for (const char* size : {"b4", "b7"}) {
    SCOPED_TRACE(size);
    const std::string prefix = absl::StrCat(ExportDir(), "/converge.", size);
    absl::StatusOr<runtime::Tensor> y = runtime::ReadNpy(prefix + ".input0.npy");
    absl::StatusOr<runtime::Tensor> want_y = runtime::ReadNpy(prefix + ".output0.npy");
    absl::StatusOr<runtime::Tensor> want_trips = runtime::ReadNpy(prefix + ".output1.npy");
    ASSERT_TRUE(y.ok() && want_y.ok() && want_trips.ok());
    absl::StatusOr<std::vector<runtime::Tensor>> got = (*fn)->Run({{model->input_names[0], *y}});
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), 2u);
    EXPECT_EQ(got->at(1).ToDoubles(), want_trips->ToDoubles());
    EXPECT_GT(want_trips->ToDoubles()[0], 2) << "the loop ran several trips";
    ASSERT_EQ(got->at(0).shape(), want_y->shape());
    EXPECT_LE(runtime::MaxAbsDiff(got->at(0), *want_y), 1e-12);
  }
  EXPECT_EQ((*fn)->stats().compiles, 1) << "one symbolic entry for both batch sizes";
}

}  // namespace
}  // namespace graphjit::models
