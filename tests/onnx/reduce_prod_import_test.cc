// ReduceProd (onnx/ops_reduce.cc): the product of an axis's slices in order, over several
// axes, with and without keepdims; an axis too long to multiply out or symbolic is refused
// naming the node and why.
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

absl::StatusOr<ImportedModel> ProdModel(std::vector<testing::Dim> dims, std::vector<int64_t> axes,
                                        bool keepdims) {
  ModelBuilder m;
  m.Input("x", kF32, dims).Output("y", kF32);
  ::onnx::NodeProto* n = m.Node("ReduceProd", {"x"}, {"y"}, "prod");
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

}  // namespace
}  // namespace graphjit::onnx
