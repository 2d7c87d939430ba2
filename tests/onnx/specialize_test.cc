// Value specialization at import (onnx/specialize.h): an input the importer needs as values
// is fixed from the call's inputs and leaves the graph's inputs; one it cannot have, or a
// big one, keeps a clear error.
#include "onnx/specialize.h"

#include <cstdio>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "tests/onnx/model_builder.h"
#include "tests/onnx/model_files.h"

namespace graphjit::onnx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::I64Values;
using testing::ModelBuilder;
using testing::WriteModel;

constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;
constexpr int32_t kI64 = ::onnx::TensorProto::INT64;

TEST(ImportSpecialized, FixesTheInputsTheImporterNeedsAsValues) {
  const std::string path = testing::WriteTileModel("specialize");
  runtime::TensorMap inputs = {{"axes", I64Values({0})}, {"repeats", I64Values({2, 1, 3})}};
  absl::StatusOr<SpecializedImport> got = ImportSpecialized(path, inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(got->specialized, ElementsAre("axes", "repeats"));
  EXPECT_THAT(got->model.input_names, ElementsAre("x"));
  EXPECT_EQ(ir::TypeToString(got->model.graph.type(got->model.graph.outputs()[0])),
            "f32[2, 3, 12]");

  // Without the value: the importer's error, naming the input.
  absl::StatusOr<SpecializedImport> missing = ImportSpecialized(path, {{"axes", I64Values({0})}});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("input 'repeats' must be known at import"));
  EXPECT_EQ(InputNeededAtImport(missing.status()), "repeats");
  EXPECT_EQ(InputNeededAtImport(absl::InvalidArgumentError("something else")), "");
}

TEST(ImportSpecialized, AnInputTooBigToSpecializeOnIsAnErrorNamingIt) {
  ModelBuilder m;
  m.Input("x", kF32, {int64_t{65}}).Input("shape", kI64, {int64_t{65}}).Output("y", kF32);
  m.Node("Reshape", {"x", "shape"}, {"y"});
  const std::string path = WriteModel(m, "specialize_big");
  std::vector<int64_t> ones(65, 1);
  absl::StatusOr<SpecializedImport> got = ImportSpecialized(path, {{"shape", I64Values(ones)}});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("input 'shape' has 65 elements"));
  EXPECT_THAT(got.status().message(), HasSubstr("at most 64"));
}

// x[: 2 * (H / 2)] + x: the dims agree only for an even H, which a symbolic import cannot
// know; at the call's shape (even) the model imports, at an odd one it is refused.
TEST(ImportSpecialized, ImportsAtTheInputsShapesWhenTheSymbolicImportFails) {
  ModelBuilder m;
  m.Input("x", kF32, {std::string("H")}).Output("y", kF32);
  m.Initializer(testing::I64Tensor("zero", {1}, {0}));
  m.Initializer(testing::I64Tensor("two", {1}, {2}));
  m.Node("Shape", {"x"}, {"h"});
  m.Node("Div", {"h", "two"}, {"half"});
  m.Node("Mul", {"half", "two"}, {"even"});
  m.Node("Slice", {"x", "zero", "even"}, {"head"});
  m.Node("Add", {"head", "x"}, {"y"});
  const std::string path = WriteModel(m, "specialize_shapes");
  ASSERT_FALSE(Import(path).ok());
  auto f32 = [](int64_t n) {
    return *runtime::Tensor::FromDoubles(ir::DType::kF32, {n}, std::vector<double>(n, 1.0));
  };
  absl::StatusOr<SpecializedImport> even = ImportSpecialized(path, {{"x", f32(6)}});
  ASSERT_TRUE(even.ok()) << even.status();
  EXPECT_TRUE(even->shapes_fixed);
  EXPECT_EQ(ir::TypeToString(even->model.graph.type(even->model.graph.outputs()[0])), "f32[6]");
  EXPECT_FALSE(ImportSpecialized(path, {{"x", f32(5)}}).ok());
  EXPECT_THAT(*ModelInputNames(path), ElementsAre("x"));
}

TEST(ImportOptions, InputShapesMustFitTheDeclaredOnes) {
  ModelBuilder m;
  m.Input("a", kF32, {std::string("N"), int64_t{4}})
      .Input("b", kF32, {std::string("N")})
      .Output("y", kF32);
  m.Node("Identity", {"a"}, {"y"});
  const std::string bytes = m.Bytes();
  auto import = [&](std::vector<int64_t> a, std::vector<int64_t> b) {
    ImportOptions options;
    options.input_shapes = {{"a", std::move(a)}, {"b", std::move(b)}};
    return ImportFromBytes(bytes, "test.onnx", options);
  };
  absl::StatusOr<ImportedModel> fixed = import({3, 4}, {3});
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  EXPECT_TRUE(fixed->symbols.empty());
  EXPECT_EQ(ir::TypeToString(fixed->graph.type(fixed->graph.outputs()[0])), "f32[3, 4]");
  EXPECT_THAT(import({3, 5}, {3}).status().message(), HasSubstr("given shape 5"));
  EXPECT_THAT(import({3}, {3}).status().message(), HasSubstr("has rank 2"));
  EXPECT_THAT(import({3, 4}, {2}).status().message(), HasSubstr("elsewhere as 3"));
}

}  // namespace
}  // namespace graphjit::onnx
