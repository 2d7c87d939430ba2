// ReduceProd (onnx/ops_reduce.cc): the product of an axis's slices in order, over several
// axes, with and without keepdims; an axis too long to multiply out or symbolic is refused
// naming the node and why. Reductions over several axes (onnx/op_helpers.h, ReduceAxes):
// adjacent axes (a mean over H and W) import as one reduction of a reshape, other sets as
// one reduction per axis, with the same values and shapes.
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
using ::testing::HasSubstr;
using testing::ModelBuilder;
using testing::SetInt;
using testing::SetInts;

constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;

// A model of one `op` node (ReduceProd unless said) over `axes` of x with `dims`.
absl::StatusOr<ImportedModel> ProdModel(std::vector<testing::Dim> dims, std::vector<int64_t> axes,
                                        bool keepdims, const std::string& op = "ReduceProd") {
  ModelBuilder m;
  m.Input("x", kF32, dims).Output("y", kF32);
  ::onnx::NodeProto* n = m.Node(op, {"x"}, {"y"}, "prod");
  if (!axes.empty()) SetInts(n, "axes", axes);
  SetInt(n, "keepdims", keepdims ? 1 : 0);
  return ImportFromBytes(m.Bytes(), "prod.onnx");
}

std::vector<double> Outputs(const ImportedModel& model, const runtime::Tensor& x,
                            std::vector<int64_t>* shape) {
  auto out = runtime::Interpret(model.graph, {{"x", x}}, model.params);
  EXPECT_TRUE(out.ok()) << out.status();
  std::vector<double> values;
  if (!out.ok()) return values;
  *shape = (*out)[0].shape();
  for (int64_t i = 0; i < (*out)[0].numel(); ++i) values.push_back((*out)[0].ValueAt(i));
  return values;
}

TEST(OnnxReduceProd, MultipliesTheSlicesOfEachAxis) {
  const runtime::Tensor x =
      *runtime::Tensor::FromDoubles(ir::DType::kF32, {2, 3}, {1, 2, 3, 4, 5, -6});
  std::vector<int64_t> shape;
  absl::StatusOr<ImportedModel> rows = ProdModel({int64_t{2}, int64_t{3}}, {1}, false);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(Outputs(*rows, x, &shape), ElementsAre(6, -120));
  EXPECT_THAT(shape, ElementsAre(2));
  absl::StatusOr<ImportedModel> all = ProdModel({int64_t{2}, int64_t{3}}, {}, true);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_THAT(Outputs(*all, x, &shape), ElementsAre(-720));
  EXPECT_THAT(shape, ElementsAre(1, 1));
}

TEST(OnnxReduceProd, ALongOrSymbolicAxisIsRefusedNamingTheNode) {
  absl::StatusOr<ImportedModel> long_axis = ProdModel({int64_t{2}, int64_t{65}}, {1}, true);
  EXPECT_EQ(long_axis.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(long_axis.status().message(), HasSubstr("node 'prod'"));
  EXPECT_THAT(long_axis.status().message(), HasSubstr("an axis of 65 elements (1 to 64"));
  absl::StatusOr<ImportedModel> symbolic = ProdModel({int64_t{2}, std::string("W")}, {1}, true);
  EXPECT_EQ(symbolic.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(symbolic.status().message(), HasSubstr("ReduceProd over a symbolic axis"));
}

int CountOps(const ir::Graph& g, ir::OpCode op) {
  int count = 0;
  for (ir::ValueId v = 0; v < g.num_nodes(); ++v) count += g.node(v).op == op;
  return count;
}

// x[n, c, h, w] = 12n + 6c + 3h + w over [2, 2, 2, 3].
runtime::Tensor Counting() {
  std::vector<double> values(24);
  for (int i = 0; i < 24; ++i) values[i] = i;
  return *runtime::Tensor::FromDoubles(ir::DType::kF32, {2, 2, 2, 3}, values);
}

const std::vector<testing::Dim> kDims = {int64_t{2}, int64_t{2}, int64_t{2}, int64_t{3}};

TEST(OnnxReduceAxes, AdjacentAxesAreOneReduction) {
  absl::StatusOr<ImportedModel> mean = ProdModel(kDims, {2, 3}, true, "ReduceMean");
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_EQ(CountOps(mean->graph, ir::OpCode::kReduceMean), 1);
  std::vector<int64_t> shape;
  // The means of 0..5, 6..11, 12..17, 18..23.
  EXPECT_THAT(Outputs(*mean, Counting(), &shape), ElementsAre(2.5, 8.5, 14.5, 20.5));
  EXPECT_THAT(shape, ElementsAre(2, 2, 1, 1));
  absl::StatusOr<ImportedModel> max = ProdModel(kDims, {1, 2, 3}, false, "ReduceMax");
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_EQ(CountOps(max->graph, ir::OpCode::kReduceMax), 1);
  EXPECT_THAT(Outputs(*max, Counting(), &shape), ElementsAre(11, 23));
  EXPECT_THAT(shape, ElementsAre(2));
}

TEST(OnnxReduceAxes, AxesApartAreOneReductionEach) {
  // Must not merge: axes 1 and 3 are not adjacent.
  absl::StatusOr<ImportedModel> max = ProdModel(kDims, {1, 3}, false, "ReduceMax");
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_EQ(CountOps(max->graph, ir::OpCode::kReduceMax), 2);
  std::vector<int64_t> shape;
  // The largest over c and w is 12n + 3h + 8.
  EXPECT_THAT(Outputs(*max, Counting(), &shape), ElementsAre(8, 11, 20, 23));
  EXPECT_THAT(shape, ElementsAre(2, 2));
}

}  // namespace
}  // namespace graphjit::onnx
