// An ONNX model file under value guards (models/onnx_function.h): inputs the importer needs
// as values are specialized on each call's values, a new value compiles another entry and
// says so, the entries stop at their limit (then the interpreter runs), and every call
// equals the interpreter on the model imported with that call's values.
#include "models/onnx_function.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/specialize.h"
#include "tests/onnx/model_builder.h"
#include "tests/onnx/model_files.h"

namespace graphjit::models {
namespace {

using onnx::testing::I64Values;
using onnx::testing::ModelBuilder;
using onnx::testing::WriteModel;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;
constexpr int32_t kI64 = ::onnx::TensorProto::INT64;

runtime::Tensor F32(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = 0.25 * static_cast<double>(i % 11) - 1;
  return *runtime::Tensor::FromDoubles(ir::DType::kF32, shape, v);
}

std::string TileModel() { return onnx::testing::WriteTileModel("onnx_function_tile"); }

// What the interpreter computes for `inputs` on the model imported with their values.
runtime::Tensor Expected(const std::string& path, const runtime::TensorMap& inputs) {
  absl::StatusOr<onnx::SpecializedImport> imported = onnx::ImportSpecialized(path, inputs);
  EXPECT_TRUE(imported.ok()) << imported.status();
  runtime::TensorMap rest = inputs;
  for (const std::string& name : imported->specialized) rest.erase(name);
  auto out = runtime::Interpret(imported->model.graph, rest, imported->model.params);
  EXPECT_TRUE(out.ok()) << out.status();
  return (*out)[0];
}

void ExpectRunEquals(OnnxFunction& fn, const std::string& path, const runtime::TensorMap& inputs) {
  absl::StatusOr<std::vector<runtime::Tensor>> got = fn.Run(inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  const runtime::Tensor want = Expected(path, inputs);
  ASSERT_EQ(got->at(0).shape(), want.shape());
  EXPECT_EQ(runtime::MaxAbsDiff(got->at(0), want), 0);
}

TEST(OnnxFunction, EachNewValueIsAGuardMissThatCompilesAnotherEntry) {
  const std::string path = TileModel();
  compiler::JitOptions options;
  options.log.recompiles = true;
  absl::StatusOr<std::unique_ptr<OnnxFunction>> fn = OnnxFunction::Open(path, options);
  ASSERT_TRUE(fn.ok()) << fn.status();
  const runtime::TensorMap first = {
      {"x", F32({3, 4})}, {"axes", I64Values({0})}, {"repeats", I64Values({2, 1, 3})}};
  const runtime::TensorMap second = {
      {"x", F32({3, 4})}, {"axes", I64Values({0})}, {"repeats", I64Values({1, 2, 1})}};
  ::testing::internal::CaptureStderr();
  ExpectRunEquals(**fn, path, first);
  ExpectRunEquals(**fn, path, first);
  EXPECT_EQ((*fn)->specializations(), 1);
  ExpectRunEquals(**fn, path, second);
  ExpectRunEquals(**fn, path, first);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ((*fn)->specializations(), 2);
  EXPECT_THAT((*fn)->specialized_inputs(), ::testing::ElementsAre("axes", "repeats"));
  EXPECT_EQ((*fn)->interpreted_calls(), 0);
  EXPECT_THAT(log, HasSubstr("specialized on axes = [0], repeats = [2, 1, 3]"));
  EXPECT_THAT(log, HasSubstr("guard miss: axes = [0], repeats = [1, 2, 1] (the last entry's: "
                             "axes = [0], repeats = [2, 1, 3]); specialization #2"));
  // Asked for the values it specializes on, each call's shape is its own: [2, 3, 12].
  EXPECT_EQ((*(*fn)->Run(first))[0].shape(), (std::vector<int64_t>{2, 3, 12}));
}

// A value that changes on every call stops compiling at the limit: the interpreter runs the
// rest (said once), with the same results.
TEST(OnnxFunction, PastTheLimitNewValuesRunInTheInterpreter) {
  const std::string path = TileModel();
  compiler::JitOptions options;
  options.log.recompiles = true;
  absl::StatusOr<std::unique_ptr<OnnxFunction>> fn =
      OnnxFunction::Open(path, options, /*max_specializations=*/2);
  ASSERT_TRUE(fn.ok()) << fn.status();
  ::testing::internal::CaptureStderr();
  for (int64_t r = 1; r <= 5; ++r) {
    ExpectRunEquals(
        **fn, path,
        {{"x", F32({3, 4})}, {"axes", I64Values({2})}, {"repeats", I64Values({r, 1, 1})}});
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ((*fn)->specializations(), 2);
  EXPECT_EQ((*fn)->interpreted_calls(), 3);
  EXPECT_THAT(log, HasSubstr("2 specializations compiled; calls with other values (axes = [2], "
                             "repeats = [3, 1, 1]) run in the interpreter"));
  EXPECT_THAT(log, Not(HasSubstr("repeats = [4, 1, 1]) run")));  // reported once
}

// Calls from several threads with two values: each result the interpreter's, one
// specialization per value however the misses race.
TEST(OnnxFunction, ConcurrentCallsShareTheSpecializations) {
  const std::string path = TileModel();
  absl::StatusOr<std::unique_ptr<OnnxFunction>> fn = OnnxFunction::Open(path);
  ASSERT_TRUE(fn.ok()) << fn.status();
  const std::vector<runtime::TensorMap> calls = {
      {{"x", F32({3, 4})}, {"axes", I64Values({0})}, {"repeats", I64Values({2, 1, 3})}},
      {{"x", F32({3, 4})}, {"axes", I64Values({1})}, {"repeats", I64Values({1, 2, 2})}}};
  std::vector<runtime::Tensor> want;
  for (const runtime::TensorMap& call : calls) want.push_back(Expected(path, call));
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 6; ++i) {
        const size_t c = static_cast<size_t>((t + i) % 2);
        absl::StatusOr<std::vector<runtime::Tensor>> got = (*fn)->Run(calls[c]);
        if (!got.ok() || got->at(0).shape() != want[c].shape() ||
            runtime::MaxAbsDiff(got->at(0), want[c]) != 0) {
          ++wrong;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ((*fn)->specializations(), 2);
}

// x[: 2 * (H / 2)] + x imports only at an even H: each shape is a specialization of its own,
// an odd one the importer's error.
TEST(OnnxFunction, AModelThatImportsOnlyAtFixedShapesIsSpecializedOnThem) {
  ModelBuilder m;
  m.Input("x", kF32, {std::string("H")}).Output("y", kF32);
  m.Initializer(onnx::testing::I64Tensor("zero", {1}, {0}));
  m.Initializer(onnx::testing::I64Tensor("two", {1}, {2}));
  m.Node("Shape", {"x"}, {"h"});
  m.Node("Div", {"h", "two"}, {"half"});
  m.Node("Mul", {"half", "two"}, {"even"});
  m.Node("Slice", {"x", "zero", "even"}, {"head"});
  m.Node("Add", {"head", "x"}, {"y"});
  const std::string path = WriteModel(m, "onnx_function_shapes");
  absl::StatusOr<std::unique_ptr<OnnxFunction>> fn = OnnxFunction::Open(path);
  ASSERT_TRUE(fn.ok()) << fn.status();
  ExpectRunEquals(**fn, path, {{"x", F32({6})}});
  ExpectRunEquals(**fn, path, {{"x", F32({4})}});
  ExpectRunEquals(**fn, path, {{"x", F32({6})}});
  EXPECT_EQ((*fn)->specializations(), 2);
  EXPECT_FALSE((*fn)->Run({{"x", F32({5})}}).ok());
}

// x + upsample(pool(pool(x))): the maps line up only for sides that are multiples of 4, so
// the symbolic import fails and the model imports with its sides as multiples of 8 (the
// first factor tried that the call's sides are multiples of): one specialization, symbolic
// in the sides / 8, serves every such call; other sides get fixed-shape specializations.
TEST(OnnxFunction, SidesThatMustBeMultiplesShareOneFactoredSpecialization) {
  ModelBuilder m;
  m.Input("x", kF32, {int64_t{1}, int64_t{1}, std::string("H"), std::string("W")})
      .Output("y", kF32);
  m.Initializer(onnx::testing::F32Tensor("scales", {4}, {1, 1, 4, 4}));
  for (const char* step : {"p1", "p2"}) {
    auto* pool = m.Node("MaxPool", {step == std::string("p1") ? "x" : "p1"}, {step});
    onnx::testing::SetInts(pool, "kernel_shape", {2, 2});
    onnx::testing::SetInts(pool, "strides", {2, 2});
  }
  m.Node("Resize", {"p2", "", "scales"}, {"up"});
  m.Node("Add", {"x", "up"}, {"y"});
  const std::string path = WriteModel(m, "onnx_function_multiples");
  compiler::JitOptions options;
  options.policy = compiler::entries::ShapePolicy::kSymbolic;
  absl::StatusOr<std::unique_ptr<OnnxFunction>> fn = OnnxFunction::Open(path, options);
  ASSERT_TRUE(fn.ok()) << fn.status();
  ExpectRunEquals(**fn, path, {{"x", F32({1, 1, 16, 16})}});
  ExpectRunEquals(**fn, path, {{"x", F32({1, 1, 24, 40})}});
  ExpectRunEquals(**fn, path, {{"x", F32({1, 1, 32, 8})}});
  EXPECT_EQ((*fn)->specializations(), 1);
  absl::StatusOr<onnx::SpecializedImport> imported =
      onnx::ImportSpecialized(path, {{"x", F32({1, 1, 16, 16})}});
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->dim_factor, 8);
  EXPECT_FALSE(imported->shapes_fixed);
  // Multiples of 4, not of 8: imported at the call's shape.
  ExpectRunEquals(**fn, path, {{"x", F32({1, 1, 20, 12})}});
  EXPECT_EQ((*fn)->specializations(), 2);
  ExpectRunEquals(**fn, path, {{"x", F32({1, 1, 48, 16})}});
  EXPECT_EQ((*fn)->specializations(), 2);
}

TEST(OnnxFunction, AModelThatNeedsNoValuesIsOneJitFunction) {
  ModelBuilder m;
  m.Input("x", kF32, {std::string("N"), int64_t{4}}).Output("y", kF32);
  m.Node("Relu", {"x"}, {"y"});
  const std::string path = WriteModel(m, "onnx_function_plain");
  absl::StatusOr<std::unique_ptr<OnnxFunction>> fn = OnnxFunction::Open(path);
  ASSERT_TRUE(fn.ok()) << fn.status();
  ExpectRunEquals(**fn, path, {{"x", F32({2, 4})}});
  ExpectRunEquals(**fn, path, {{"x", F32({5, 4})}});
  EXPECT_EQ((*fn)->specializations(), 0);
  EXPECT_TRUE((*fn)->specialized_inputs().empty());
}

TEST(OnnxFunction, BadInputsAreErrorsNamingWhatIsWrong) {
  EXPECT_EQ(OnnxFunction::Open(::testing::TempDir() + "/no_such_model.onnx").status().code(),
            absl::StatusCode::kNotFound);
  const std::string path = TileModel();
  absl::StatusOr<std::unique_ptr<OnnxFunction>> zero = OnnxFunction::Open(path, {}, 0);
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(zero.status().message(), HasSubstr("max_specializations 0"));
  absl::StatusOr<std::unique_ptr<OnnxFunction>> fn = OnnxFunction::Open(path);
  ASSERT_TRUE(fn.ok()) << fn.status();
  // A value input not given: the importer's error, naming it.
  absl::StatusOr<std::vector<runtime::Tensor>> missing =
      (*fn)->Run({{"x", F32({3, 4})}, {"axes", I64Values({0})}});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("input 'repeats' must be known at import"));
  // Too large to specialize on: the input, its size, the limit and the node that needs it.
  ModelBuilder m;
  m.Input("x", kF32, {int64_t{65}}).Input("shape", kI64, {int64_t{65}}).Output("y", kF32);
  m.Node("Reshape", {"x", "shape"}, {"y"}, "reshape_big");
  const std::string big = WriteModel(m, "onnx_function_big");
  absl::StatusOr<std::unique_ptr<OnnxFunction>> big_fn = OnnxFunction::Open(big);
  ASSERT_TRUE(big_fn.ok()) << big_fn.status();
  absl::StatusOr<std::vector<runtime::Tensor>> too_big =
      (*big_fn)->Run({{"x", F32({65})}, {"shape", I64Values(std::vector<int64_t>(65, 1))}});
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(too_big.status().message(), HasSubstr("input 'shape' has 65 elements"));
  EXPECT_THAT(too_big.status().message(), HasSubstr("reshape_big"));
  EXPECT_EQ((*big_fn)->specializations(), 0);
}

}  // namespace
}  // namespace graphjit::models
