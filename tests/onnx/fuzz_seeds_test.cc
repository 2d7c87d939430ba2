// Seeds of the ONNX fuzz target (tests/fuzz/corpus/onnx) for the shape computations that
// exporters write and the importer folds: torch's expand(n, -1, -1) (a comparison of a
// dim decided by its range), F.pad's reversed pad list (Slice with step -1, Transpose of
// known integers), an index grid into ScatterND, a 2x Resize of symbolic dims, the index
// ops and ReduceProd on known indices, a signal window and a transposed convolution padded
// SAME, a 2 x 2 / 2 transposed convolution without overlap (a product and a depth to
// space), a Loop until convergence with an If on data in its body (one while op), and
// counts only a run gives (NonZero, two Compress asserted equal). The
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
  {
    ModelBuilder m;  // index ops on indices known at import
    m.Input("x", kF32, {int64_t{2}, int64_t{3}})
        .Input("u", kF32, {int64_t{1}, int64_t{2}})
        .Output("g", kF32)
        .Output("s", kF32)
        .Output("r", kF32)
        .Output("p", kF32);
    m.Initializer(I64Tensor("nd", {2, 1}, {1, 0}));
    m.Initializer(I64Tensor("el", {1, 2}, {2, -3}));
    m.Initializer(I64Tensor("lens", {3}, {2, 1, 2}));
    SetInt(m.Node("GatherND", {"x", "nd"}, {"g"}), "batch_dims", 1);
    auto* scatter = m.Node("ScatterElements", {"x", "el", "u"}, {"s"});
    SetInt(scatter, "axis", 1);
    SetString(scatter, "reduction", "add");
    auto* reverse = m.Node("ReverseSequence", {"x", "lens"}, {"r"});
    SetInt(reverse, "time_axis", 0);
    SetInt(reverse, "batch_axis", 1);
    SetInt(m.Node("ReduceProd", {"x"}, {"p"}), "keepdims", 0);
    seeds.emplace_back("index_ops_known_indices.onnx", std::move(m));
  }
  {
    ModelBuilder m;  // a window of a known size; a transposed convolution padded SAME
    m.Input("x", kF32, {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{3}})
        .Output("w", kF32)
        .Output("y", kF32);
    m.Initializer(I64Tensor("size", {}, {8}));
    SetInt(m.Node("HannWindow", {"size"}, {"w"}), "periodic", 0);
    m.Initializer(F32Tensor("k", {2, 1, 3, 3}, std::vector<float>(18, 0.5f)));
    auto* t = m.Node("ConvTranspose", {"x", "k"}, {"y"});
    SetString(t, "auto_pad", "SAME_LOWER");
    testing::SetInts(t, "strides", {2, 2});
    seeds.emplace_back("signal_window_conv_transpose_same.onnx", std::move(m));
  }
  {
    ModelBuilder m;  // a decoder's 2 x 2 / 2 upsampling (no overlap: a product), cropped
    m.Input("x", kF32, {int64_t{1}, int64_t{3}, int64_t{4}, std::string("W")}).Output("y", kF32);
    m.Initializer(F32Tensor("k", {3, 2, 2, 2}, std::vector<float>(24, 0.25f)));
    m.Initializer(F32Tensor("b", {2}, {0.5f, -0.5f}));
    auto* t = m.Node("ConvTranspose", {"x", "k", "b"}, {"y"});
    testing::SetInts(t, "strides", {2, 2});
    testing::SetInts(t, "pads", {0, 1, 1, 0});
    testing::SetInts(t, "output_padding", {1, 0});
    seeds.emplace_back("conv_transpose_disjoint.onnx", std::move(m));
  }
  {
    ModelBuilder m;  // y += x until sum(y) >= 100 or 50 trips (torch.jit.script's while)
    m.Input("x", kF32, {int64_t{2}}).Output("y", kF32);
    m.Initializer(F32Tensor("y0", {2}, {0, 1}));
    m.Initializer(F32Tensor("hundred", {}, {100}));
    m.Initializer(I64Tensor("fifty", {}, {50}));
    auto* loop = m.Node("Loop", {"", "", "y0"}, {"y"});
    ::onnx::GraphProto* body = testing::SetGraph(loop, "body", {"go", "y_next"});
    for (const char* in : {"i", "cond", "y_in"}) body->add_input()->set_name(in);
    testing::AddNode(body, "Add", {"y_in", "x"}, {"y_next"});
    SetInt(testing::AddNode(body, "ReduceSum", {"y_next"}, {"total"}), "keepdims", 0);
    testing::AddNode(body, "Less", {"total", "hundred"}, {"below"});
    auto* branch = testing::AddNode(body, "If", {"below"}, {"go"});
    testing::AddNode(testing::SetGraph(branch, "then_branch", {"more"}), "Less", {"i", "fifty"},
                     {"more"});
    testing::AddNode(testing::SetGraph(branch, "else_branch", {"stop"}), "Identity", {"below"},
                     {"stop"});
    seeds.emplace_back("control_loop_until_converged.onnx", std::move(m));
  }
  {
    ModelBuilder m;  // data-dependent counts: NonZero's columns gathered, two Compress added
    m.Input("x", kF32, {std::string("N"), int64_t{3}})
        .Input("c", ::onnx::TensorProto::BOOL, {std::string("N")})
        .Output("picked", kF32)
        .Output("sum", kF32);
    m.Initializer(F32Tensor("zero", {}, {0}));
    m.Initializer(I64Tensor("one", {}, {1}));
    m.Node("Greater", {"x", "zero"}, {"mask"});
    m.Node("NonZero", {"mask"}, {"idx"});
    SetInt(m.Node("Gather", {"idx", "one"}, {"cols"}), "axis", 0);
    SetInt(m.Node("Gather", {"x", "cols"}, {"picked"}), "axis", 1);
    SetInt(m.Node("Compress", {"x", "c"}, {"a"}), "axis", 0);
    m.Node("Not", {"c"}, {"not_c"});
    m.Node("Not", {"not_c"}, {"c_again"});
    SetInt(m.Node("Compress", {"x", "c_again"}, {"b"}), "axis", 0);
    m.Node("Add", {"a", "b"}, {"sum"});
    seeds.emplace_back("data_dependent_counts.onnx", std::move(m));
  }
  {
    ModelBuilder m;  // Unique ids: the distinct ones, where each came from, how often
    m.Input("ids", ::onnx::TensorProto::INT64, {std::string("N")})
        .Output("distinct", ::onnx::TensorProto::INT64)
        .Output("first", ::onnx::TensorProto::INT64)
        .Output("inverse", ::onnx::TensorProto::INT64)
        .Output("counts", ::onnx::TensorProto::INT64);
    m.Node("Unique", {"ids"}, {"distinct", "first", "inverse", "counts"});
    seeds.emplace_back("unique_ids.onnx", std::move(m));
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
