// An imported ONNX model under compiler::Jit: the graph replayed through the trace
// context under every unpadded policy, each call equal to the interpreter on the imported
// graph, with the model's dim_param as the dynamic dim the policies key.
#include "models/onnx_model.h"

#include "gtest/gtest.h"
#include "runtime/interpreter.h"
#include "tests/onnx/model_builder.h"

namespace graphjit::models {
namespace {

using onnx::testing::F32Tensor;
using onnx::testing::I64Tensor;
using onnx::testing::ModelBuilder;

constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;

// y = relu(reshape(x, [0, -1, 2]) * w + x'): x f32[B, 6, 4], y f32[B, 12, 2].
onnx::ImportedModel BatchModel() {
  ModelBuilder m;
  m.Input("x", kF32, {std::string("B"), int64_t{6}, int64_t{4}}).Output("y", kF32);
  m.Initializer(I64Tensor("target", {3}, {0, -1, 2}));
  m.Initializer(F32Tensor("w", {2}, {0.5f, -2.0f}));
  m.Node("Reshape", {"x", "target"}, {"r"});
  m.Node("Mul", {"r", "w"}, {"m"});
  m.Node("Relu", {"m"}, {"y"});
  absl::StatusOr<onnx::ImportedModel> model = onnx::ImportFromBytes(m.Bytes(), "batch model");
  EXPECT_TRUE(model.ok()) << model.status();
  return *std::move(model);
}

runtime::Tensor Input(int64_t b) {
  std::vector<double> values(b * 6 * 4);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i % 7) - 3.25 + b;
  return *runtime::Tensor::FromDoubles(ir::DType::kF32, {b, 6, 4}, values);
}

TEST(OnnxModel, EveryPolicyEqualsTheInterpreterOverAGrowingBatch) {
  const onnx::ImportedModel model = BatchModel();
  int64_t exact_compiles = 0, symbolic_compiles = 0;
  for (compiler::entries::ShapePolicy policy :
       {compiler::entries::ShapePolicy::kExact, compiler::entries::ShapePolicy::kAuto,
        compiler::entries::ShapePolicy::kSymbolic}) {
    compiler::JitOptions options;
    options.policy = policy;
    options.log = {};
    options.compile.env = &compiler::CompileEnv::MemoryOnly();
    absl::StatusOr<std::unique_ptr<compiler::JitFunction>> fn = JitOnnxModel(model, options);
    ASSERT_TRUE(fn.ok()) << fn.status();
    for (int64_t b : {2, 3, 5, 3}) {
      runtime::TensorMap in = {{"x", Input(b)}};
      absl::StatusOr<std::vector<runtime::Tensor>> got = (*fn)->Run(in);
      ASSERT_TRUE(got.ok()) << got.status();
      absl::StatusOr<std::vector<runtime::Tensor>> want =
          runtime::Interpret(model.graph, in, model.params);
      ASSERT_TRUE(want.ok()) << want.status();
      ASSERT_EQ((*got)[0].shape(), (std::vector<int64_t>{b, 12, 2}));
      EXPECT_EQ(runtime::MaxAbsDiff((*got)[0], (*want)[0]), 0.0)
          << compiler::entries::PolicyName(policy) << " B=" << b;
    }
    if (policy == compiler::entries::ShapePolicy::kExact) exact_compiles = (*fn)->stats().compiles;
    if (policy == compiler::entries::ShapePolicy::kSymbolic) {
      symbolic_compiles = (*fn)->stats().compiles;
    }
  }
  EXPECT_EQ(exact_compiles, 3);     // B = 2, 3, 5
  EXPECT_EQ(symbolic_compiles, 1);  // B >= 2 in one entry
}

TEST(OnnxModel, AWrongInputIsRefusedNamingIt) {
  absl::StatusOr<std::unique_ptr<compiler::JitFunction>> fn = JitOnnxModel(BatchModel());
  ASSERT_TRUE(fn.ok()) << fn.status();
  runtime::TensorMap in = {{"x", *runtime::Tensor::Zeros(ir::DType::kF32, {2, 5, 4})}};
  absl::StatusOr<std::vector<runtime::Tensor>> got = (*fn)->Run(in);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(got.status().message().find("x"), absl::string_view::npos) << got.status();
}

TEST(OnnxModel, DeclaredInputsIgnoreExtraNamesAndRefuseMissingOnes) {
  // The model's inputs are declared (JitOptions::input_types): a call's other tensors are
  // not inputs of the function, so they are ignored rather than traced into a new
  // signature; a declared input the call lacks is refused, naming it.
  const onnx::ImportedModel model = BatchModel();
  absl::StatusOr<std::unique_ptr<compiler::JitFunction>> fn = JitOnnxModel(model);
  ASSERT_TRUE(fn.ok()) << fn.status();
  runtime::TensorMap in = {{"x", Input(3)}};
  absl::StatusOr<std::vector<runtime::Tensor>> plain = (*fn)->Run(in);
  ASSERT_TRUE(plain.ok()) << plain.status();
  in["unused"] = *runtime::Tensor::Zeros(ir::DType::kF64, {7});
  absl::StatusOr<std::vector<runtime::Tensor>> extra = (*fn)->Run(in);
  ASSERT_TRUE(extra.ok()) << extra.status();
  EXPECT_EQ(runtime::MaxAbsDiff((*extra)[0], (*plain)[0]), 0.0);
  EXPECT_EQ((*fn)->num_signatures(), 1);
  EXPECT_EQ((*fn)->stats().compiles, 1);

  absl::StatusOr<std::vector<runtime::Tensor>> missing =
      (*fn)->Run({{"unused", *runtime::Tensor::Zeros(ir::DType::kF64, {7})}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("'x'"), absl::string_view::npos) << missing.status();
}

}  // namespace
}  // namespace graphjit::models
