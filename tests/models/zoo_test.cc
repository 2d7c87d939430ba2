// The twelve torchvision CNNs of benchmarks/zoo (exported by its export.py into a
// temporary directory: random weights from a fixed seed, opset 17, dynamic batch), each
// imported, compiled for N = 1 and run on the exporter's input: the output within 1e-5 of
// torch's own, relative to its largest magnitude. Under GRAPHJIT_PRODUCTS=auto their
// windowed convolutions run the generated product tiles and the other products the tiles
// or OpenBLAS as it chooses on this host; a second pass forces the tiles on two of them.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/jit.h"
#include "gtest/gtest.h"
#include "models/onnx_model.h"
#include "onnx/import.h"
#include "runtime/npy.h"
#include "tests/models/run_exporter.h"

namespace graphjit::models {
namespace {

const char* const kModels[] = {"resnet18",           "resnet50",      "mobilenet_v2",
                               "mobilenet_v3_small", "squeezenet1_1", "shufflenet_v2_x1_0",
                               "regnet_y_400mf",     "mnasnet0_5",    "googlenet",
                               "densenet121",        "convnext_tiny", "efficientnet_b0"};

// Exports the models once per process; "" when torchvision is missing (the tests skip).
const std::string& ExportDir() {
  static const std::string* dir = new std::string(RunExporter("benchmarks/zoo/export.py", "zoo"));
  return *dir;
}

#define SKIP_WITHOUT_TORCHVISION()                                        \
  if (ExportDir().empty())                                                \
  GTEST_SKIP() << "torchvision is missing for /usr/bin/python3: install " \
                  "python3-torchvision (scripts/bootstrap.sh does)"

// max |got - torch| / max(1, max |torch|) for model `name` compiled with `options`.
void Check(const std::string& name, const compiler::JitOptions& options) {
  SCOPED_TRACE(name);
  const std::string prefix = absl::StrCat(ExportDir(), "/", name);
  absl::StatusOr<onnx::ImportedModel> model = onnx::Import(prefix + ".onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<runtime::Tensor> x = runtime::ReadNpy(prefix + ".n1.x.npy");
  absl::StatusOr<runtime::Tensor> want = runtime::ReadNpy(prefix + ".n1.y.npy");
  ASSERT_TRUE(x.ok() && want.ok()) << x.status() << " " << want.status();
  absl::StatusOr<std::unique_ptr<compiler::JitFunction>> fn = JitOnnxModel(*model, options);
  ASSERT_TRUE(fn.ok()) << fn.status();
  absl::StatusOr<std::vector<runtime::Tensor>> got = (*fn)->Run({{model->input_names[0], *x}});
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->at(0).shape(), want->shape());
  const std::vector<double> g = got->at(0).ToDoubles(), w = want->ToDoubles();
  double scale = 1, diff = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    scale = std::max(scale, std::abs(w[i]));
    diff = std::max(diff, std::abs(g[i] - w[i]));
  }
  EXPECT_LE(diff / scale, 1e-5) << "max |difference| " << diff << ", max |torch| " << scale;
}

TEST(Zoo, TwelveTorchvisionModelsMatchTorch) {
  SKIP_WITHOUT_TORCHVISION();
  for (const char* name : kModels) Check(name, {});
}

TEST(Zoo, ForcedTilesMatchTorch) {
  SKIP_WITHOUT_TORCHVISION();
  compiler::JitOptions options;
  options.compile.products = compiler::ProductKernels::kTiles;
  for (const char* name : {"resnet18", "mobilenet_v3_small"}) Check(name, options);
}

}  // namespace
}  // namespace graphjit::models
