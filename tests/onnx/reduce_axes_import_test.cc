// Reductions over several axes (onnx/op_helpers.h, ReduceAxes): adjacent axes (a mean over
// H and W) import as one reduction of a reshape, other sets as one reduction per axis; the
// values and shapes are the same either way, with and without keepdims.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/import.h"
#include "runtime/interpreter.h"
#include "tests/onnx/model_builder.h"

namespace graphjit::onnx {
namespace {

using ::testing::ElementsAre;
using testing::ModelBuilder;
using testing::SetInt;
using testing::SetInts;

constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;

absl::StatusOr<ImportedModel> ReduceModel(const std::string& op, std::vector<int64_t> axes,
                                          bool keepdims) {
  ModelBuilder m;
  m.Input("x", kF32, {int64_t{2}, int64_t{2}, int64_t{2}, int64_t{3}}).Output("y", kF32);
  ::onnx::NodeProto* n = m.Node(op, {"x"}, {"y"}, "reduce");
  SetInts(n, "axes", axes);
  SetInt(n, "keepdims", keepdims ? 1 : 0);
  return ImportFromBytes(m.Bytes(), "reduce.onnx");
}

int CountOps(const ir::Graph& g, ir::OpCode op) {
  int count = 0;
  for (ir::ValueId v = 0; v < g.num_nodes(); ++v) count += g.node(v).op == op;
  return count;
}

// x[i] = i over [2, 2, 2, 3], through the interpreter; the output's shape in *shape.
std::vector<double> Interpreted(const ImportedModel& model, std::vector<int64_t>* shape) {
  std::vector<double> values(24);
  for (int i = 0; i < 24; ++i) values[i] = i;
  const runtime::Tensor x = *runtime::Tensor::FromDoubles(ir::DType::kF32, {2, 2, 2, 3}, values);
  auto out = runtime::Interpret(model.graph, {{"x", x}}, model.params);
  EXPECT_TRUE(out.ok()) << out.status();
  std::vector<double> got;
  if (!out.ok()) return got;
  *shape = (*out)[0].shape();
  for (int64_t i = 0; i < (*out)[0].numel(); ++i) got.push_back((*out)[0].ValueAt(i));
  return got;
}

TEST(OnnxReduceAxes, AdjacentAxesAreOneReduction) {
  absl::StatusOr<ImportedModel> mean = ReduceModel("ReduceMean", {2, 3}, /*keepdims=*/true);
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_EQ(CountOps(mean->graph, ir::OpCode::kReduceMean), 1);
  std::vector<int64_t> shape;
  // The means of 0..5, 6..11, 12..17, 18..23.
  EXPECT_THAT(Interpreted(*mean, &shape), ElementsAre(2.5, 8.5, 14.5, 20.5));
  EXPECT_THAT(shape, ElementsAre(2, 2, 1, 1));
  absl::StatusOr<ImportedModel> max = ReduceModel("ReduceMax", {1, 2, 3}, /*keepdims=*/false);
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_EQ(CountOps(max->graph, ir::OpCode::kReduceMax), 1);
  EXPECT_THAT(Interpreted(*max, &shape), ElementsAre(11, 23));
  EXPECT_THAT(shape, ElementsAre(2));
}

TEST(OnnxReduceAxes, AxesApartAreOneReductionEach) {
  // Must not merge: axes 1 and 3 are not adjacent.
  absl::StatusOr<ImportedModel> max = ReduceModel("ReduceMax", {1, 3}, /*keepdims=*/false);
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_EQ(CountOps(max->graph, ir::OpCode::kReduceMax), 2);
  std::vector<int64_t> shape;
  // x[n, c, h, w] = 12n + 6c + 3h + w: the largest over c and w is 12n + 3h + 8.
  EXPECT_THAT(Interpreted(*max, &shape), ElementsAre(8, 11, 20, 23));
  EXPECT_THAT(shape, ElementsAre(2, 2));
}

}  // namespace
}  // namespace graphjit::onnx
