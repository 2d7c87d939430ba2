// Seeds of the ONNX fuzz target (tests/fuzz/corpus/onnx) for the shape computations that
// exporters write and the importer folds: torch's expand(n, -1, -1) (a comparison of a
// dim decided by its range), F.pad's reversed pad list (Slice with step -1, Transpose of
// known integers), an index grid into ScatterND, and a 2x Resize of symbolic dims. The
// test checks that each imports; the disabled one rewrites the files:
//   build/bin/onnx_test --gtest_also_run_disabled_tests --gtest_filter='*WriteFuzzSeeds'
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "onnx/import.h"
#include "tests/onnx/model_builder.h"
#include "tests/onnx/shape_models.h"

namespace graphjit::onnx {
namespace {

using testing::F32Tensor;
using testing::I64Tensor;
using testing::ModelBuilder;
using testing::SetInt;
using testing::SetString;

constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;

std::vector<std::pair<std::string, ModelBuilder>> Seeds() {
  std::vector<std::pair<std::string, ModelBuilder>> seeds;
  seeds.emplace_back("shape_expand_minus_ones.onnx",
                     testing::ExpandOfMinusOnes(/*compare_with_dim=*/false));
  seeds.emplace_back("shape_torch_pad_list.onnx", testing::TorchPadList());
  {
    ModelBuilder m;  // an index grid into ScatterND (swin's window mask)
    m.Input("data", kF32, {int64_t{3}, int64_t{2}})
        .Input("updates", kF32, {int64_t{2}, int64_t{2}})
        .Output("y", kF32);
    m.Initializer(I64Tensor("zero", {}, {0}));
    m.Initializer(I64Tensor("two", {}, {2}));
    m.Initializer(I64Tensor("one", {}, {1}));
    m.Initializer(I64Tensor("last", {1}, {-1}));
    m.Node("Range", {"zero", "two", "one"}, {"r"});
    m.Node("Mul", {"r", "two"}, {"rows"});
    m.Node("Unsqueeze", {"rows", "last"}, {"col"});
    SetInt(m.Node("Concat", {"col"}, {"idx"}), "axis", -1);
    m.Node("ScatterND", {"data", "idx", "updates"}, {"y"});
    seeds.emplace_back("shape_scatternd_grid.onnx", std::move(m));
  }
  for (const char* mode : {"nearest", "linear"}) {
    ModelBuilder m;  // an FPN's 2x upsampling of a dynamic image
    m.Input("x", kF32, {int64_t{1}, int64_t{2}, std::string("H"), std::string("W")})
        .Output("y", kF32);
    m.Initializer(F32Tensor("scales", {4}, {1, 1, 2, 2}));
    auto* n = m.Node("Resize", {"x", "", "scales"}, {"y"});
    SetString(n, "mode", mode);
    seeds.emplace_back(std::string("shape_resize_symbolic_") + mode + ".onnx", std::move(m));
  }
  return seeds;
}

TEST(OnnxFuzzSeeds, EachImports) {
  for (const auto& [name, m] : Seeds()) {
    absl::StatusOr<ImportedModel> model = ImportFromBytes(m.Bytes(), name);
    EXPECT_TRUE(model.ok()) << name << ": " << model.status();
  }
}

TEST(OnnxFuzzSeeds, DISABLED_WriteFuzzSeeds) {
  for (const auto& [name, m] : Seeds()) {
    std::ofstream(std::string(GRAPHJIT_SOURCE_DIR) + "/tests/fuzz/corpus/onnx/" + name,
                  std::ios::binary)
        << m.Bytes();
  }
}

}  // namespace
}  // namespace graphjit::onnx
