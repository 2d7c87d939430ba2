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

namespace graphjit::onnx {
namespace {

using testing::F32Tensor;
using testing::I64Tensor;
using testing::ModelBuilder;
using testing::SetInt;
using testing::SetInts;
using testing::SetString;

constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;

std::vector<std::pair<std::string, ModelBuilder>> Seeds() {
  std::vector<std::pair<std::string, ModelBuilder>> seeds;
  {
    ModelBuilder m;  // ViT's class token: Where(Equal([N, -1, -1], -1), 1, ...) -> Expand
    m.Input("x", kF32, {std::string("N"), int64_t{4}}).Output("y", kF32);
    m.Initializer(I64Tensor("zero", {}, {0}));
    m.Initializer(I64Tensor("axes", {1}, {0}));
    m.Initializer(I64Tensor("minus_ones", {2}, {-1, -1}));
    m.Initializer(I64Tensor("minus_one", {1}, {-1}));
    m.Initializer(I64Tensor("ones", {3}, {1, 1, 1}));
    m.Initializer(F32Tensor("tok", {1, 1, 4}, {1, 2, 3, 4}));
    m.Node("Shape", {"x"}, {"shape"});
    m.Node("Gather", {"shape", "zero"}, {"n"});
    m.Node("Unsqueeze", {"n", "axes"}, {"n1"});
    SetInt(m.Node("Concat", {"n1", "minus_ones"}, {"target"}), "axis", 0);
    m.Node("Equal", {"target", "minus_one"}, {"eq"});
    m.Node("Where", {"eq", "ones", "target"}, {"dims"});
    m.Node("Expand", {"tok", "dims"}, {"y"});
    seeds.emplace_back("shape_expand_minus_ones.onnx", std::move(m));
  }
  {
    ModelBuilder m;  // torch's F.pad: [-1, 2] view, step -1 slice, transpose, flatten
    m.Input("x", kF32, {std::string("N"), int64_t{5}}).Output("y", kF32);
    m.Initializer(I64Tensor("pads4", {4}, {0, 1, 0, 2}));
    m.Initializer(I64Tensor("grid", {2}, {-1, 2}));
    m.Initializer(I64Tensor("start", {1}, {-1}));
    m.Initializer(I64Tensor("end", {1}, {-9223372036854775807}));
    m.Initializer(I64Tensor("axis0", {1}, {0}));
    m.Initializer(I64Tensor("step", {1}, {-1}));
    m.Initializer(I64Tensor("flat", {1}, {-1}));
    m.Node("Reshape", {"pads4", "grid"}, {"pairs"});
    m.Node("Slice", {"pairs", "start", "end", "axis0", "step"}, {"reversed"});
    SetInts(m.Node("Transpose", {"reversed"}, {"t"}), "perm", {1, 0});
    m.Node("Reshape", {"t", "flat"}, {"pads"});
    m.Node("Pad", {"x", "pads"}, {"y"});
    seeds.emplace_back("shape_torch_pad_list.onnx", std::move(m));
  }
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
