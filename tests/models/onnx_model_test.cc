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

// A Scan over x [T, 2] (T symbolic: one scan op) whose body branches on data: each row
// is added to the sum when the row's first element is positive (an If with a product in
// a branch: an if op), every sum stacked. Under every policy, against the interpreter.
onnx::ImportedModel ScanWithBranch() {
  ModelBuilder m;
  m.Input("x", kF32, {std::string("T"), int64_t{2}}).Output("sum", kF32).Output("sums", kF32);
  m.Initializer(F32Tensor("zero", {2}, {0, 0}));
  m.Initializer(F32Tensor("origin", {}, {0}));
  m.Initializer(F32Tensor("eye", {2, 2}, {1, 0, 0, 1}));
  m.Initializer(I64Tensor("first", {1}, {0}));
  auto* scan = m.Node("Scan", {"zero", "x"}, {"sum", "sums"});
  onnx::testing::SetInt(scan, "num_scan_inputs", 1);
  ::onnx::GraphProto* body = onnx::testing::SetGraph(scan, "body", {"next", "out"});
  for (const char* in : {"acc", "row"}) body->add_input()->set_name(in);
  onnx::testing::AddNode(body, "Gather", {"row", "first"}, {"head"});
  onnx::testing::AddNode(body, "Squeeze", {"head", "first"}, {"head0"});
  onnx::testing::AddNode(body, "Greater", {"head0", "origin"}, {"positive"});
  auto* branch = onnx::testing::AddNode(body, "If", {"positive"}, {"next"});
  ::onnx::GraphProto* then_branch = onnx::testing::SetGraph(branch, "then_branch", {"added"});
  onnx::testing::AddNode(then_branch, "MatMul", {"row", "eye"}, {"turned"});
  onnx::testing::AddNode(then_branch, "Add", {"acc", "turned"}, {"added"});
  onnx::testing::AddNode(onnx::testing::SetGraph(branch, "else_branch", {"kept"}), "Identity",
                         {"acc"}, {"kept"});
  onnx::testing::AddNode(body, "Identity", {"next"}, {"out"});
  absl::StatusOr<onnx::ImportedModel> model = onnx::ImportFromBytes(m.Bytes(), "scan model");
  EXPECT_TRUE(model.ok()) << model.status();
  return *std::move(model);
}

TEST(OnnxModel, AScanWithABranchCompilesUnderEveryPolicy) {
  const onnx::ImportedModel model = ScanWithBranch();
  for (compiler::entries::ShapePolicy policy :
       {compiler::entries::ShapePolicy::kExact, compiler::entries::ShapePolicy::kSymbolic}) {
    compiler::JitOptions options;
    options.policy = policy;
    options.log = {};
    options.compile.env = &compiler::CompileEnv::MemoryOnly();
    absl::StatusOr<std::unique_ptr<compiler::JitFunction>> fn = JitOnnxModel(model, options);
    ASSERT_TRUE(fn.ok()) << fn.status();
    for (int64_t t : {3, 5}) {
      std::vector<double> x;
      for (int64_t i = 0; i < 2 * t; ++i) x.push_back((i % 3) - 0.5 * (i % 4));
      runtime::TensorMap in = {{"x", *runtime::Tensor::FromDoubles(ir::DType::kF32, {t, 2}, x)}};
      absl::StatusOr<std::vector<runtime::Tensor>> got = (*fn)->Run(in);
      ASSERT_TRUE(got.ok()) << got.status();
      absl::StatusOr<std::vector<runtime::Tensor>> want =
          runtime::Interpret(model.graph, in, model.params);
      ASSERT_TRUE(want.ok()) << want.status();
      for (size_t k = 0; k < 2; ++k) {
        ASSERT_EQ((*got)[k].shape(), (*want)[k].shape());
        EXPECT_EQ(runtime::MaxAbsDiff((*got)[k], (*want)[k]), 0.0) << k;
      }
    }
    if (policy == compiler::entries::ShapePolicy::kSymbolic) {
      EXPECT_EQ((*fn)->stats().compiles, 1) << "one entry for every length";
    }
  }
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
