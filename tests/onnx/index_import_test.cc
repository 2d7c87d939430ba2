// GatherND, ScatterElements and ReverseSequence on indices known at import (onnx/ops_index.cc):
// a result checked element by element, an index input taken from a call (ImportSpecialized),
// and each malformed node refused with InvalidArgument naming it and what is wrong. The ONNX
// node cases check them against the reference too (node_tests_test.cc).
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/import.h"
#include "onnx/specialize.h"
#include "runtime/interpreter.h"
#include "tests/onnx/model_builder.h"

namespace graphjit::onnx {
namespace {

using ::testing::HasSubstr;
using testing::I64Tensor;
using testing::ModelBuilder;
using testing::SetInt;

constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;
constexpr int32_t kI64 = ::onnx::TensorProto::INT64;

runtime::Tensor F32(std::vector<int64_t> shape, std::vector<double> values) {
  return *runtime::Tensor::FromDoubles(ir::DType::kF32, shape, values);
}

std::vector<double> Outputs(const ImportedModel& model, const runtime::TensorMap& inputs) {
  absl::StatusOr<std::vector<runtime::Tensor>> out =
      runtime::Interpret(model.graph, inputs, model.params);
  EXPECT_TRUE(out.ok()) << out.status();
  std::vector<double> values;
  if (!out.ok()) return values;
  for (int64_t i = 0; i < (*out)[0].numel(); ++i) values.push_back((*out)[0].ValueAt(i));
  return values;
}

// The refusal of a model whose node `n` gets `indices` (an initializer, known at import).
absl::Status Refusal(const std::string& op, std::vector<int64_t> data_dims,
                     std::vector<int64_t> idx_dims, std::vector<int64_t> indices,
                     void (*attrs)(::onnx::NodeProto*) = nullptr, bool updates = false) {
  ModelBuilder m;
  m.Input("x", kF32, {data_dims.begin(), data_dims.end()}).Output("y", kF32);
  m.Initializer(I64Tensor("i", idx_dims, indices));
  std::vector<std::string> inputs = {"x", "i"};
  if (updates) {
    m.Input("u", kF32, {idx_dims.begin(), idx_dims.end()});
    inputs.push_back("u");
  }
  ::onnx::NodeProto* n = m.Node(op, inputs, {"y"}, "n");
  if (attrs != nullptr) attrs(n);
  return ImportFromBytes(m.Bytes(), op + ".onnx").status();
}

TEST(OnnxIndexOps, GatherNDWithBatchDimsPicksEachBatchsOwnRows) {
  // data [2, 2, 2], batch_dims 1, indices [2, 1, 1]: y[b] = data[b, idx[b]].
  ModelBuilder m;
  m.Input("x", kF32, {int64_t{2}, int64_t{2}, int64_t{2}}).Output("y", kF32);
  m.Initializer(I64Tensor("i", {2, 1, 1}, {1, 0}));
  SetInt(m.Node("GatherND", {"x", "i"}, {"y"}, "g"), "batch_dims", 1);
  absl::StatusOr<ImportedModel> model = ImportFromBytes(m.Bytes(), "gathernd.onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_THAT(Outputs(*model, {{"x", F32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7})}}),
              ::testing::ElementsAre(2, 3, 4, 5));
}

TEST(OnnxIndexOps, ScatterElementsTakesItsIndicesFromTheCall) {
  ModelBuilder m;
  m.Input("x", kF32, {int64_t{2}, int64_t{3}})
      .Input("i", kI64, {int64_t{1}, int64_t{2}})
      .Input("u", kF32, {int64_t{1}, int64_t{2}})
      .Output("y", kF32);
  SetInt(m.Node("ScatterElements", {"x", "i", "u"}, {"y"}, "s"), "axis", 1);
  const std::string path = ::testing::TempDir() + "/scatter_elements.onnx";
  std::ofstream(path, std::ios::binary) << m.Bytes();
  const runtime::TensorMap inputs = {
      {"x", F32({2, 3}, {0, 0, 0, 0, 0, 0})},
      {"i", *runtime::Tensor::FromDoubles(ir::DType::kI64, {1, 2}, {2, -3})},
      {"u", F32({1, 2}, {7, 8})}};
  absl::StatusOr<SpecializedImport> got = ImportSpecialized(path, inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(got->specialized, ::testing::ElementsAre("i"));
  EXPECT_THAT(Outputs(got->model, {{"x", inputs.at("x")}, {"u", inputs.at("u")}}),
              ::testing::ElementsAre(8, 0, 7, 0, 0, 0));
}

TEST(OnnxIndexOps, ReverseSequenceReversesEachEntrysOwnLength) {
  // x [T = 3, B = 2], lens [3, 1]: entry 0 reversed whole, entry 1 kept.
  ModelBuilder m;
  m.Input("x", kF32, {int64_t{3}, int64_t{2}}).Output("y", kF32);
  m.Initializer(I64Tensor("i", {2}, {3, 1}));
  m.Node("ReverseSequence", {"x", "i"}, {"y"}, "r");
  absl::StatusOr<ImportedModel> model = ImportFromBytes(m.Bytes(), "reverse.onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_THAT(Outputs(*model, {{"x", F32({3, 2}, {0, 1, 2, 3, 4, 5})}}),
              ::testing::ElementsAre(4, 1, 2, 3, 0, 5));
}

TEST(OnnxIndexOps, MalformedNodesAreInvalidArgumentNamingTheNode) {
  struct Case {
    absl::Status status;
    const char* why;
  };
  const Case cases[] = {
      {Refusal("GatherND", {2, 3}, {1, 2}, {0, 3}), "index 3 out of bounds for dim 1 of size 3"},
      {Refusal("GatherND", {2, 3}, {1, 3}, {0, 0, 0}), "the indices' last dim 3"},
      {Refusal("GatherND", {2, 3}, {3, 1}, {0, 1, 0},
               [](::onnx::NodeProto* n) { SetInt(n, "batch_dims", 1); }),
       "the batch dims of data and indices differ"},
      {Refusal("ScatterElements", {2, 3}, {1, 2}, {0, 5}, nullptr, /*updates=*/true),
       "index 5 out of bounds for dim 0 of size 2"},
      {Refusal("ScatterElements", {2, 3}, {3, 1}, {0, 0, 0}, nullptr, /*updates=*/true),
       "indices larger than data"},
      {Refusal("ReverseSequence", {3, 2}, {2}, {4, 1}), "sequence_lens[0] = 4 outside [0, 3]"},
      {Refusal("ReverseSequence", {3, 2}, {3}, {1, 1, 1}),
       "sequence_lens has 3 entries for a batch of 2"},
      {Refusal("ReverseSequence", {3, 2}, {2}, {1, 1},
               [](::onnx::NodeProto* n) { SetInt(n, "time_axis", 1); }),
       "time_axis and batch_axis must be 0 and 1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.why);
    EXPECT_EQ(c.status.code(), absl::StatusCode::kInvalidArgument) << c.status;
    EXPECT_THAT(c.status.message(), HasSubstr("node 'n'"));
    EXPECT_THAT(c.status.message(), HasSubstr(c.why));
  }
}

}  // namespace
}  // namespace graphjit::onnx
