// Value specialization at import (onnx/specialize.h): an input the importer needs as values
// is fixed from the call's inputs and leaves the graph's inputs; one it cannot have, or a
// big one, keeps a clear error.
#include "onnx/specialize.h"

#include <cstdio>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "tests/onnx/model_builder.h"

namespace graphjit::onnx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ModelBuilder;

constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;
constexpr int32_t kI64 = ::onnx::TensorProto::INT64;

std::string Write(const ModelBuilder& m, const std::string& name) {
  const std::string path = ::testing::TempDir() + "/" + name + ".onnx";
  std::ofstream(path, std::ios::binary) << m.Bytes();
  return path;
}

runtime::Tensor I64(std::vector<int64_t> values) {
  std::vector<double> v(values.begin(), values.end());
  return *runtime::Tensor::FromDoubles(ir::DType::kI64, {static_cast<int64_t>(values.size())}, v);
}

TEST(ImportSpecialized, FixesTheInputsTheImporterNeedsAsValues) {
  ModelBuilder m;
  m.Input("x", kF32, {int64_t{3}, int64_t{4}})
      .Input("axes", kI64, {int64_t{1}})
      .Input("repeats", kI64, {int64_t{3}})
      .Output("y", kF32);
  m.Node("Unsqueeze", {"x", "axes"}, {"u"});
  m.Node("Tile", {"u", "repeats"}, {"y"});
  const std::string path = Write(m, "specialize");
  runtime::TensorMap inputs = {{"axes", I64({0})}, {"repeats", I64({2, 1, 3})}};
  absl::StatusOr<SpecializedImport> got = ImportSpecialized(path, inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(got->specialized, ElementsAre("axes", "repeats"));
  EXPECT_THAT(got->model.input_names, ElementsAre("x"));
  EXPECT_EQ(ir::TypeToString(got->model.graph.type(got->model.graph.outputs()[0])),
            "f32[2, 3, 12]");

  // Without the value: the importer's error, naming the input.
  absl::StatusOr<SpecializedImport> missing = ImportSpecialized(path, {{"axes", I64({0})}});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("input 'repeats' must be known at import"));
  EXPECT_EQ(InputNeededAtImport(missing.status()), "repeats");
  EXPECT_EQ(InputNeededAtImport(absl::InvalidArgumentError("something else")), "");
}

TEST(ImportSpecialized, AnInputTooBigToSpecializeOnIsAnErrorNamingIt) {
  ModelBuilder m;
  m.Input("x", kF32, {int64_t{65}}).Input("shape", kI64, {int64_t{65}}).Output("y", kF32);
  m.Node("Reshape", {"x", "shape"}, {"y"});
  const std::string path = Write(m, "specialize_big");
  std::vector<int64_t> ones(65, 1);
  absl::StatusOr<SpecializedImport> got = ImportSpecialized(path, {{"shape", I64(ones)}});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("input 'shape' has 65 elements"));
  EXPECT_THAT(got.status().message(), HasSubstr("at most 64"));
}

}  // namespace
}  // namespace graphjit::onnx
