// ONNX models whose sizes depend on tensor data (NonZero, Compress, NonMaxSuppression)
// imported with the counts as unbacked symbols and compiled under every shape policy
// (models::JitOnnxModel) and under value guards (models::OnnxFunction, which specializes on
// NonMaxSuppression's limit and thresholds): every call equals the interpreter, for counts
// of 0, 1 and many, with one compile per input signature, not per count.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/onnx_function.h"
#include "models/onnx_model.h"
#include "onnx/import.h"
#include "onnx/specialize.h"
#include "tests/onnx/model_builder.h"
#include "tests/onnx/model_files.h"

namespace graphjit::models {
namespace {

using onnx::testing::ModelBuilder;
using onnx::testing::WriteModel;
using runtime::Tensor;

constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;
constexpr int32_t kI64 = ::onnx::TensorProto::INT64;
constexpr int32_t kBool = ::onnx::TensorProto::BOOL;

// x f32[N, 5]: the rows of w at the columns where x > 0, summed (y), the indices (idx), and
// the rows of x that `keep` selects, through Compress (rows).
std::string PicksModel() {
  ModelBuilder m;
  m.Input("x", kF32, {std::string("N"), int64_t{5}})
      .Input("keep", kBool, {std::string("N")})
      .Output("y", kF32)
      .Output("idx", kI64)
      .Output("rows", kF32);
  m.Initializer(onnx::testing::F32Tensor("zero", {}, {0.0f}));
  m.Initializer(onnx::testing::I64Tensor("one", {}, {1}));
  std::vector<float> w(15);
  for (int i = 0; i < 15; ++i) w[i] = 0.1f * static_cast<float>(i) - 0.6f;
  m.Initializer(onnx::testing::F32Tensor("w", {5, 3}, w));
  m.Node("Greater", {"x", "zero"}, {"mask"});
  m.Node("NonZero", {"mask"}, {"idx"});
  onnx::testing::SetInt(m.Node("Gather", {"idx", "one"}, {"cols"}), "axis", 0);
  onnx::testing::SetInt(m.Node("Gather", {"w", "cols"}, {"picked"}), "axis", 0);
  m.Node("Tanh", {"picked"}, {"t"});
  onnx::testing::SetInt(m.Node("ReduceSum", {"t"}, {"y"}), "keepdims", 0);
  onnx::testing::SetInt(m.Node("Compress", {"x", "keep"}, {"rows"}), "axis", 0);
  return WriteModel(m, "data_dependent_picks");
}

runtime::TensorMap Inputs(int64_t n, int64_t positive) {
  std::vector<double> x(n * 5), keep(n);
  for (int64_t i = 0; i < n * 5; ++i) x[i] = (i * 7) % (n * 5) < positive ? 0.5 + i : -1.0 - i;
  for (int64_t i = 0; i < n; ++i) keep[i] = (i * 3) % n < positive % (n + 1) ? 1 : 0;
  return {{"x", *Tensor::FromDoubles(ir::DType::kF32, {n, 5}, x)},
          {"keep", *Tensor::FromDoubles(ir::DType::kBool, {n}, keep)}};
}

void ExpectSame(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].shape(), want[k].shape()) << "output " << k;
    EXPECT_LE(runtime::MaxAbsDiff(got[k], want[k]), 1e-6) << "output " << k;
  }
}

TEST(DataDependentModels, NonZeroAndCompressUnderEveryPolicy) {
  const std::string path = PicksModel();
  absl::StatusOr<onnx::ImportedModel> model = onnx::Import(path);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->graph.DefinedSymbols().size(), 2u);
  for (compiler::entries::ShapePolicy policy :
       {compiler::entries::ShapePolicy::kExact, compiler::entries::ShapePolicy::kSymbolic,
        compiler::entries::ShapePolicy::kAuto}) {
    SCOPED_TRACE(compiler::entries::PolicyName(policy));
    compiler::JitOptions options;
    options.policy = policy;
    absl::StatusOr<std::unique_ptr<compiler::JitFunction>> fn = JitOnnxModel(*model, options);
    ASSERT_TRUE(fn.ok()) << fn.status();
    for (auto [n, positive] : std::vector<std::pair<int64_t, int64_t>>{
             {3, 0}, {3, 1}, {3, 9}, {4, 20}, {3, 4}, {4, 2}}) {
      SCOPED_TRACE(absl::StrCat("N=", n, " positive=", positive));
      const runtime::TensorMap in = Inputs(n, positive);
      absl::StatusOr<std::vector<Tensor>> want =
          runtime::Interpret(model->graph, in, model->params);
      ASSERT_TRUE(want.ok()) << want.status();
      absl::StatusOr<std::vector<Tensor>> got = (*fn)->Run(in);
      ASSERT_TRUE(got.ok()) << got.status();
      ExpectSame(*got, *want);
      EXPECT_EQ((*got)[1].dim(1), positive);
    }
    // One compile per input signature (two values of N under exact), none per count.
    EXPECT_LE((*fn)->stats().compiles, 2) << compiler::entries::PolicyName(policy);
  }
}

TEST(DataDependentModels, TwoCountsTheModelAddsAreCheckedEqualWhenItRuns) {
  // rows of x and of y that one condition (or two) selects, added: the importer asserts
  // the two counts equal, so the model imports and the run checks it.
  ModelBuilder m;
  m.Input("x", kF32, {std::string("N"), int64_t{2}})
      .Input("y", kF32, {std::string("N"), int64_t{2}})
      .Input("c", kBool, {std::string("N")})
      .Input("d", kBool, {std::string("N")})
      .Output("sum", kF32);
  onnx::testing::SetInt(m.Node("Compress", {"x", "c"}, {"xs"}), "axis", 0);
  onnx::testing::SetInt(m.Node("Compress", {"y", "d"}, {"ys"}), "axis", 0);
  m.Node("Add", {"xs", "ys"}, {"sum"});
  absl::StatusOr<onnx::ImportedModel> model = onnx::Import(WriteModel(m, "data_dependent_add"));
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::unique_ptr<compiler::JitFunction>> fn = JitOnnxModel(*model);
  ASSERT_TRUE(fn.ok()) << fn.status();
  auto flags = [](std::vector<double> v) {
    return *Tensor::FromDoubles(ir::DType::kBool, {static_cast<int64_t>(v.size())}, v);
  };
  const Tensor x = *Tensor::FromDoubles(ir::DType::kF32, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  // Two true each: rows 0, 2 of x plus rows 1, 3 of y.
  absl::StatusOr<std::vector<Tensor>> sum =
      (*fn)->Run({{"x", x}, {"y", x}, {"c", flags({1, 0, 1, 0})}, {"d", flags({0, 1, 0, 1})}});
  ASSERT_TRUE(sum.ok()) << sum.status();
  ASSERT_EQ((*sum)[0].shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ((*sum)[0].data<float>()[0], 1 + 3);
  EXPECT_EQ((*sum)[0].data<float>()[3], 6 + 8);
  // Two against three: an error naming the assertion, in the compiled code and the
  // interpreter alike.
  const runtime::TensorMap unequal = {
      {"x", x}, {"y", x}, {"c", flags({1, 0, 1, 0})}, {"d", flags({1, 1, 0, 1})}};
  for (absl::Status s : {(*fn)->Run(unequal).status(),
                         runtime::Interpret(model->graph, unequal, model->params).status()}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), ::testing::HasSubstr("assert_dim: dim 0 of f32[3, 2] must equal"));
  }
}

TEST(DataDependentModels, NonMaxSuppressionIsSpecializedOnItsScalars) {
  ModelBuilder m;
  m.Input("boxes", kF32, {int64_t{1}, std::string("B"), int64_t{4}})
      .Input("scores", kF32, {int64_t{1}, int64_t{2}, std::string("B")})
      .Input("max_boxes", kI64, {int64_t{1}})
      .Output("selected", kI64)
      .Output("picked", kF32);
  m.Initializer(onnx::testing::F32Tensor("iou", {1}, {0.5f}));
  m.Initializer(onnx::testing::F32Tensor("min_score", {1}, {0.2f}));
  m.Initializer(onnx::testing::I64Tensor("two", {}, {2}));
  m.Node("NonMaxSuppression", {"boxes", "scores", "max_boxes", "iou", "min_score"}, {"selected"});
  // The selected boxes' coordinates: column 2 of the triples indexes the boxes.
  onnx::testing::SetInt(m.Node("Gather", {"selected", "two"}, {"box_ids"}), "axis", 1);
  m.Node("Squeeze", {"boxes"}, {"flat"});
  onnx::testing::SetInt(m.Node("Gather", {"flat", "box_ids"}, {"picked"}), "axis", 0);
  const std::string path = WriteModel(m, "data_dependent_nms");
  absl::StatusOr<std::unique_ptr<OnnxFunction>> fn = OnnxFunction::Open(path);
  ASSERT_TRUE(fn.ok()) << fn.status();
  auto run = [&](int64_t boxes, int64_t limit) {
    std::vector<double> b(boxes * 4), s(2 * boxes);
    for (int64_t i = 0; i < boxes; ++i) {
      const double at = static_cast<double>(i % 3) * 0.4 + static_cast<double>(i / 3) * 2.0;
      b[i * 4 + 0] = at;
      b[i * 4 + 1] = at;
      b[i * 4 + 2] = at + 1;
      b[i * 4 + 3] = at + 1;
      s[i] = 0.1 * static_cast<double>((i * 5) % 10);
      s[boxes + i] = 1.0 - s[i];
    }
    const runtime::TensorMap in = {
        {"boxes", *Tensor::FromDoubles(ir::DType::kF32, {1, boxes, 4}, b)},
        {"scores", *Tensor::FromDoubles(ir::DType::kF32, {1, 2, boxes}, s)},
        {"max_boxes", onnx::testing::I64Values({limit})}};
    absl::StatusOr<std::vector<Tensor>> got = (*fn)->Run(in);
    ASSERT_TRUE(got.ok()) << got.status();
    absl::StatusOr<onnx::SpecializedImport> imported = onnx::ImportSpecialized(path, in);
    ASSERT_TRUE(imported.ok()) << imported.status();
    runtime::TensorMap rest = in;
    rest.erase("max_boxes");
    absl::StatusOr<std::vector<Tensor>> want =
        runtime::Interpret(imported->model.graph, rest, imported->model.params);
    ASSERT_TRUE(want.ok()) << want.status();
    ExpectSame(*got, *want);
    EXPECT_LE((*got)[0].dim(0), 2 * limit);
  };
  run(7, 3);
  run(9, 3);
  run(7, 0);
  run(12, 2);
  EXPECT_EQ((*fn)->specialized_inputs(), std::vector<std::string>{"max_boxes"});
  EXPECT_EQ((*fn)->specializations(), 3);  // the limits 3, 0 and 2
}

}  // namespace
}  // namespace graphjit::models
