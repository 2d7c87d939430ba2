// The importer on small models built in the test: symbolic dims, folded shape
// computations, weights as params, and the errors for bad files, unknown ops and shapes
// that depend on data.
#include "onnx/import.h"

#include <cstdio>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "runtime/interpreter.h"
#include "tests/onnx/model_builder.h"
#include "tests/onnx/shape_models.h"

namespace graphjit::onnx {
namespace {

using testing::F32Tensor;
using ::testing::HasSubstr;
using testing::I64Tensor;
using testing::ModelBuilder;
using ::testing::Not;
using testing::SetInt;
using testing::SetInts;
using testing::SetString;

constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;
constexpr int32_t kI64 = ::onnx::TensorProto::INT64;

ImportedModel MustImport(const ModelBuilder& m) {
  absl::StatusOr<ImportedModel> imported = ImportFromBytes(m.Bytes(), "test.onnx");
  EXPECT_TRUE(imported.ok()) << imported.status();
  return *std::move(imported);
}

runtime::Tensor Iota(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i);
  return *runtime::Tensor::FromDoubles(ir::DType::kF32, shape, v);
}

TEST(OnnxImport, SymbolsComeFromDimParamsAndFromInputAndAxis) {
  ModelBuilder m;
  m.Input("x", kF32, {std::string("batch"), int64_t{3}, std::monostate{}}).Output("y", kF32);
  m.Node("Relu", {"x"}, {"y"});
  ImportedModel model = MustImport(m);
  EXPECT_EQ(ir::TypeToString(model.graph.type(model.graph.FindInput("x"))), "f32[batch, 3, x_2]");
  EXPECT_THAT(model.symbols, ::testing::ElementsAre("batch", "x_2"));
  EXPECT_THAT(model.input_names, ::testing::ElementsAre("x"));
  EXPECT_THAT(model.output_names, ::testing::ElementsAre("y"));
  EXPECT_EQ(model.opset, 17);
}

TEST(OnnxImport, ShapeGatherConcatReshapeFoldsToASymbolicReshape) {
  // The exporters' flatten: Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])).
  ModelBuilder m;
  m.Input("x", kF32, {std::string("N"), int64_t{4}, std::string("W")}).Output("y", kF32);
  m.Initializer(I64Tensor("zero", {}, {0}));
  m.Initializer(I64Tensor("axes", {1}, {0}));
  m.Initializer(I64Tensor("minus_one", {1}, {-1}));
  m.Node("Shape", {"x"}, {"shape"});
  m.Node("Gather", {"shape", "zero"}, {"n"});
  m.Node("Unsqueeze", {"n", "axes"}, {"n1"});
  SetInt(m.Node("Concat", {"n1", "minus_one"}, {"target"}), "axis", 0);
  m.Node("Reshape", {"x", "target"}, {"y"});
  ImportedModel model = MustImport(m);
  const std::string text = ir::PrintGraph(model.graph);
  EXPECT_THAT(text, HasSubstr("reshape(%0) {shape=[N, 4*W]} : f32[N, 4*W]"));
  EXPECT_EQ(model.graph.num_nodes(), 2) << text;  // the input and the reshape
  EXPECT_TRUE(model.params.empty());              // shape constants are folded away

  runtime::TensorMap inputs = {{"x", Iota({2, 4, 3})}};
  absl::StatusOr<std::vector<runtime::Tensor>> out =
      runtime::Interpret(model.graph, inputs, model.params);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{2, 12}));
  EXPECT_EQ((*out)[0].ValueAt(13), 13.0);
}

// torch's expand(n, -1, -1) (ViT's class token): Where(Equal(shape, -1), 1, shape) over
// [N, -1, -1]. N == -1 is decided false for a dim, so the target folds to [N, 1, 1]; two
// free dims compared stay undecided, and the Expand then names its data-dependent input.
TEST(OnnxImport, ExpandOfMinusOnesFoldsBecauseDimsAreNotNegative) {
  ImportedModel model = MustImport(testing::ExpandOfMinusOnes(/*compare_with_dim=*/false));
  EXPECT_EQ(ir::TypeToString(model.graph.type(model.graph.outputs()[0])), "f32[N, 1, 4]");
  absl::StatusOr<ImportedModel> undecided =
      ImportFromBytes(testing::ExpandOfMinusOnes(/*compare_with_dim=*/true).Bytes(), "test.onnx");
  ASSERT_FALSE(undecided.ok());
  EXPECT_THAT(undecided.status().message(), HasSubstr("Expand"));
}

// torch's F.pad lowering on known pads: Concat -> Reshape [-1, 2] -> Slice with step -1
// (reversed) -> Transpose -> Reshape [-1] (swin_t's window padding). Every step folds,
// and the Pad reads constant pads.
TEST(OnnxImport, TorchsPadListFoldsThroughSliceTransposeAndReshape) {
  ImportedModel model = MustImport(testing::TorchPadList());
  // [begin0, begin1, end0, end1] = [0, 0, 2, 1]: two rows after, one column after.
  EXPECT_EQ(ir::TypeToString(model.graph.type(model.graph.outputs()[0])), "f32[N+2, 6]");
}

// Index grids (swin's attention-mask coordinates): Range -> Expand -> Unsqueeze -> Concat
// along the last axis stay known integers, and ScatterND writes through them: rows of a
// zero table set to the updates, a repeated row taking its last update; reduction mul
// multiplies a repeated row's updates in order.
TEST(OnnxImport, ScatterNDThroughKnownIndexGrids) {
  for (const char* reduction : {"none", "mul"}) {
    SCOPED_TRACE(reduction);
    ModelBuilder m;
    m.Input("data", kF32, {int64_t{3}, int64_t{2}, int64_t{2}})
        .Input("updates", kF32, {int64_t{2}, int64_t{2}, int64_t{2}})
        .Output("y", kF32);
    m.Initializer(I64Tensor("zero", {}, {0}));
    m.Initializer(I64Tensor("two", {}, {2}));
    m.Initializer(I64Tensor("one", {}, {1}));
    m.Initializer(I64Tensor("shape2", {1}, {2}));
    m.Initializer(I64Tensor("last", {1}, {-1}));
    m.Node("Range", {"zero", "two", "one"}, {"r"});          // [0, 1]
    m.Node("Expand", {"r", "shape2"}, {"rows"});             // [0, 1]
    m.Node("Mul", {"rows", "two"}, {"rows2"});               // [0, 2]
    m.Node("Unsqueeze", {"rows2", "last"}, {"col"});         // [[0], [2]]
    SetInt(m.Node("Concat", {"col"}, {"idx"}), "axis", -1);  // [[0], [2]]
    SetString(m.Node("ScatterND", {"data", "idx", "updates"}, {"y"}), "reduction", reduction);
    ImportedModel model = MustImport(m);
    runtime::TensorMap inputs = {{"data", Iota({3, 2, 2})}, {"updates", Iota({2, 2, 2})}};
    absl::StatusOr<std::vector<runtime::Tensor>> out =
        runtime::Interpret(model.graph, inputs, model.params);
    ASSERT_TRUE(out.ok()) << out.status();
    const runtime::Tensor& y = (*out)[0];
    for (int i = 0; i < 12; ++i) {
      const int row = i / 4;
      double want = i;  // the data
      if (row == 0) want = std::string(reduction) == "mul" ? i * (i % 4) : i % 4;
      if (row == 2) want = std::string(reduction) == "mul" ? i * (4 + i % 4) : 4 + i % 4;
      EXPECT_EQ(y.ValueAt(i), want) << i;
    }
  }
  // Indices that depend on data are still refused, naming the input.
  ModelBuilder m;
  m.Input("data", kF32, {int64_t{3}})
      .Input("idx", kI64, {int64_t{1}, int64_t{1}})
      .Input("updates", kF32, {int64_t{1}})
      .Output("y", kF32);
  m.Node("ScatterND", {"data", "idx", "updates"}, {"y"});
  absl::StatusOr<ImportedModel> refused = ImportFromBytes(m.Bytes(), "test.onnx");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("input 'idx' must be known at import"));
}

// torch's F.dropout defaults to training=True: with ratio 0 it is the identity (swin_t);
// a real training-mode dropout stays refused.
TEST(OnnxImport, TrainingModeDropoutOfRatioZeroIsTheIdentity) {
  for (float ratio : {0.0f, 0.5f}) {
    ModelBuilder m;
    m.Input("x", kF32, {int64_t{2}}).Output("y", kF32);
    m.Initializer(F32Tensor("ratio", {}, {ratio}));
    ::onnx::TensorProto training;
    training.set_name("training");
    training.set_data_type(::onnx::TensorProto::BOOL);
    training.add_int32_data(1);
    m.Initializer(training);
    m.Node("Dropout", {"x", "ratio", "training"}, {"y"});
    absl::StatusOr<ImportedModel> model = ImportFromBytes(m.Bytes(), "test.onnx");
    if (ratio == 0.0f) {
      ASSERT_TRUE(model.ok()) << model.status();
      EXPECT_EQ(model->graph.num_nodes(), 1);  // the input is the output
    } else {
      ASSERT_FALSE(model.ok());
      EXPECT_THAT(model.status().message(), HasSubstr("training-mode Dropout"));
    }
  }
}

// Resize by an integer scale of symbolic dims (the OCR detector's FPN upsampling): each
// output phase a fixed combination of clamped neighbours. The same bits as the model
// imported with constant dims, in every mode it takes; align_corners, cubic and a
// fractional scale on a symbolic dim stay refused.
TEST(OnnxImport, IntegerScaleResizeOfSymbolicDimsEqualsTheConstantDimsOne) {
  struct Case {
    const char* mode;
    const char* coordinate;
    const char* nearest;
    float scale;
    bool imports;
  };
  const Case cases[] = {
      {"nearest", "asymmetric", "floor", 2, true},
      {"nearest", "half_pixel", "round_prefer_floor", 2, true},
      {"nearest", "asymmetric", "round_prefer_ceil", 3, true},
      {"linear", "half_pixel", "round_prefer_floor", 2, true},
      {"linear", "pytorch_half_pixel", "round_prefer_floor", 2, true},
      {"linear", "asymmetric", "round_prefer_floor", 4, true},
      {"linear", "align_corners", "round_prefer_floor", 2, false},
      {"cubic", "half_pixel", "round_prefer_floor", 2, false},
      {"nearest", "asymmetric", "floor", 1.5f, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.mode, " ", c.coordinate, " ", c.nearest, " x", c.scale));
    auto build = [&](testing::Dim h, testing::Dim w) {
      ModelBuilder m;
      m.Input("x", kF32, {int64_t{1}, int64_t{2}, h, w}).Output("y", kF32);
      m.Initializer(F32Tensor("scales", {4}, {1, 1, c.scale, c.scale}));
      auto* n = m.Node("Resize", {"x", "", "scales"}, {"y"});
      SetString(n, "mode", c.mode);
      SetString(n, "coordinate_transformation_mode", c.coordinate);
      SetString(n, "nearest_mode", c.nearest);
      return m;
    };
    absl::StatusOr<ImportedModel> symbolic =
        ImportFromBytes(build(std::string("H"), std::string("W")).Bytes(), "test.onnx");
    if (!c.imports) {
      ASSERT_FALSE(symbolic.ok());
      EXPECT_THAT(symbolic.status().message(), HasSubstr("resizing the symbolic dim"));
      continue;
    }
    ASSERT_TRUE(symbolic.ok()) << symbolic.status();
    for (auto [h, w] : {std::pair<int64_t, int64_t>{1, 1}, {3, 5}, {4, 2}}) {
      ImportedModel fixed = MustImport(build(h, w));
      runtime::TensorMap inputs = {{"x", Iota({1, 2, h, w})}};
      absl::StatusOr<std::vector<runtime::Tensor>> a =
          runtime::Interpret(symbolic->graph, inputs, symbolic->params);
      absl::StatusOr<std::vector<runtime::Tensor>> b =
          runtime::Interpret(fixed.graph, inputs, fixed.params);
      ASSERT_TRUE(a.ok()) << a.status();
      ASSERT_TRUE(b.ok()) << b.status();
      ASSERT_EQ((*a)[0].shape(), (*b)[0].shape());
      for (int64_t i = 0; i < (*b)[0].numel(); ++i) {
        ASSERT_EQ((*a)[0].ValueAt(i), (*b)[0].ValueAt(i)) << h << "x" << w << " at " << i;
      }
    }
  }
}

TEST(OnnxImport, ReshapeZeroCopiesADimAndMinusOneInfersIt) {
  ModelBuilder m;
  m.Input("x", kF32, {std::string("B"), int64_t{6}, int64_t{4}}).Output("y", kF32);
  m.Initializer(I64Tensor("target", {3}, {0, -1, 2}));
  m.Node("Reshape", {"x", "target"}, {"y"});
  ImportedModel model = MustImport(m);
  EXPECT_EQ(ir::TypeToString(model.graph.type(model.graph.outputs()[0])), "f32[B, 12, 2]");
}

TEST(OnnxImport, ShapeArithmeticThroughInt32CastsFolds) {
  // Shape -> Slice -> Cast(int32) -> Div -> Cast(int64) -> Concat -> ConstantOfShape: W/2.
  ModelBuilder m;
  m.Input("x", kF32, {int64_t{3}, std::string("W")}).Output("y", kF32);
  m.Initializer(I64Tensor("one", {1}, {1}));
  m.Initializer(I64Tensor("two", {1}, {2}));
  m.Initializer(I64Tensor("end", {1}, {INT64_MAX}));
  m.Initializer(I64Tensor("head", {2}, {3, 2}));
  m.Node("Shape", {"x"}, {"shape"});
  m.Node("Slice", {"shape", "one", "end"}, {"w"});
  SetInt(m.Node("Cast", {"w"}, {"w32"}), "to", ::onnx::TensorProto::INT32);
  SetInt(m.Node("Cast", {"two"}, {"two32"}), "to", ::onnx::TensorProto::INT32);
  m.Node("Div", {"w32", "two32"}, {"half32"});
  SetInt(m.Node("Cast", {"half32"}, {"half"}), "to", kI64);
  SetInt(m.Node("Concat", {"head", "half"}, {"target"}), "axis", 0);
  m.Node("ConstantOfShape", {"target"}, {"y"});
  ImportedModel model = MustImport(m);
  EXPECT_EQ(ir::TypeToString(model.graph.type(model.graph.outputs()[0])), "f32[3, 2, W/2]");
}

TEST(OnnxImport, Int32InputsAndOutputsAreI32AndItsArithmeticWraps) {
  // INT32 data computes in i64 and wraps to 32 bits as ONNX's int32 arithmetic does; the
  // graph's INT32 inputs and outputs are i32.
  constexpr int32_t kI32 = ::onnx::TensorProto::INT32;
  ModelBuilder m;
  m.Input("idx", kI32, {int64_t{3}}).Input("a", kI32, {int64_t{2}}).Input("b", kI32, {int64_t{2}});
  m.Output("picked", kF32).Output("sum", kI32).Output("sum64", kI64).Output("max", kI32);
  m.Initializer(testing::F32Tensor("table", {4}, {10, 11, 12, 13}));
  m.Node("Gather", {"table", "idx"}, {"picked"});
  m.Node("Add", {"a", "b"}, {"sum"});
  SetInt(m.Node("Cast", {"sum"}, {"sum64"}), "to", kI64);
  m.Node("Max", {"a", "b"}, {"max"});
  ImportedModel model = MustImport(m);
  EXPECT_EQ(ir::TypeToString(model.graph.type(model.graph.FindInput("idx"))), "i32[3]");
  EXPECT_EQ(ir::TypeToString(model.graph.type(model.graph.outputs()[1])), "i32[2]");
  EXPECT_EQ(ir::TypeToString(model.graph.type(model.graph.outputs()[2])), "i64[2]");

  runtime::TensorMap in = {
      {"idx", *runtime::Tensor::FromVector<int32_t>({3}, std::vector<int32_t>{3, 0, 2})},
      {"a", *runtime::Tensor::FromVector<int32_t>({2}, std::vector<int32_t>{INT32_MAX, -5})},
      {"b", *runtime::Tensor::FromVector<int32_t>({2}, std::vector<int32_t>{1, 3})}};
  absl::StatusOr<std::vector<runtime::Tensor>> out =
      runtime::Interpret(model.graph, in, model.params);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToDoubles(), (std::vector<double>{13, 10, 12}));
  EXPECT_EQ((*out)[1].ToDoubles(), (std::vector<double>{INT32_MIN, -2}));  // wrapped
  EXPECT_EQ((*out)[2].ToDoubles(), (std::vector<double>{INT32_MIN, -2}));
  EXPECT_EQ((*out)[3].ToDoubles(), (std::vector<double>{INT32_MAX, 3}));

  // An i64 where the model says INT32 is refused by the interpreter, naming the input.
  in["a"] = *runtime::Tensor::FromVector<int64_t>({2}, std::vector<int64_t>{1, 2});
  absl::StatusOr<std::vector<runtime::Tensor>> bad =
      runtime::Interpret(model.graph, in, model.params);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("a"));
}

TEST(OnnxImport, SliceAndGatherStaySymbolic) {
  // Gather's -1 on the symbolic W cannot be wrapped at import: refused, naming the node.
  ModelBuilder m;
  m.Input("x", kF32, {std::string("N"), std::string("W")}).Output("cols", kF32);
  m.Initializer(I64Tensor("idx", {2}, {0, -1}));
  SetInt(m.Node("Gather", {"x", "idx"}, {"cols"}), "axis", 1);
  absl::StatusOr<ImportedModel> refused = ImportFromBytes(m.Bytes(), "gather.onnx");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(refused.status().message(), HasSubstr("(Gather)"));

  // x[:, 1:] and x[:, [0, 1]].
  ModelBuilder ok;
  ok.Input("x", kF32, {std::string("N"), std::string("W")})
      .Output("tail", kF32)
      .Output("cols", kF32);
  ok.Initializer(I64Tensor("one", {1}, {1}));
  ok.Initializer(I64Tensor("end", {1}, {INT64_MAX}));
  ok.Initializer(I64Tensor("idx", {2}, {0, 1}));
  ok.Node("Slice", {"x", "one", "end", "one"}, {"tail"});
  SetInt(ok.Node("Gather", {"x", "idx"}, {"cols"}), "axis", 1);
  ImportedModel model = MustImport(ok);
  EXPECT_EQ(ir::TypeToString(model.graph.type(model.graph.outputs()[0])), "f32[N, W-1]");
  EXPECT_EQ(ir::TypeToString(model.graph.type(model.graph.outputs()[1])), "f32[N, 2]");
  runtime::TensorMap inputs = {{"x", Iota({2, 3})}};  // [[0, 1, 2], [3, 4, 5]]
  absl::StatusOr<std::vector<runtime::Tensor>> out =
      runtime::Interpret(model.graph, inputs, model.params);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToDoubles(), (std::vector<double>{1, 2, 4, 5}));
  EXPECT_EQ((*out)[1].ToDoubles(), (std::vector<double>{0, 1, 3, 4}));
  // A W too small for the constant start is an error when W is bound, not another shape.
  EXPECT_FALSE(runtime::Interpret(model.graph, {{"x", Iota({2, 0})}}, model.params).ok());
}

TEST(OnnxImport, KnownIntegersBeyondADoublesPrecisionStayExactAsData) {
  // Concat folds [2^62 + 1, 1] at import; read as data it must not round through a double.
  ModelBuilder m;
  m.Input("x", kI64, {int64_t{2}}).Output("y", kI64);
  m.Initializer(I64Tensor("big", {1}, {(int64_t{1} << 62) + 1}));
  m.Initializer(I64Tensor("one", {1}, {1}));
  SetInt(m.Node("Concat", {"big", "one"}, {"both"}), "axis", 0);
  m.Node("Add", {"x", "both"}, {"y"});
  ImportedModel model = MustImport(m);
  runtime::TensorMap inputs = {{"x", *runtime::Tensor::FromVector<int64_t>({2}, {{0, 0}})}};
  absl::StatusOr<std::vector<runtime::Tensor>> out =
      runtime::Interpret(model.graph, inputs, model.params);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<int64_t>()[0], (int64_t{1} << 62) + 1);
}

TEST(OnnxImport, InitializersAndConstantNodesBecomeParams) {
  ModelBuilder m;
  m.Input("x", kF32, {std::string("N"), int64_t{2}}).Output("y", kF32);
  m.Initializer(testing::F32Tensor("w", {2, 2}, {1, 2, 3, 4}));
  testing::SetTensor(m.Node("Constant", {}, {"b"}), "value", testing::F32Tensor("", {2}, {10, 20}));
  m.Node("MatMul", {"x", "w"}, {"xw"});
  m.Node("Add", {"xw", "b"}, {"y"});
  ImportedModel model = MustImport(m);
  ASSERT_EQ(model.params.size(), 2u);
  EXPECT_EQ(model.params.at("w").TypeString(), "f32[2, 2]");
  EXPECT_EQ(model.params.at("b").TypeString(), "f32[2]");
  EXPECT_NE(model.graph.FindParam("w"), ir::kInvalidValue);

  runtime::TensorMap inputs = {{"x", Iota({1, 2})}};  // [0, 1]
  absl::StatusOr<std::vector<runtime::Tensor>> out =
      runtime::Interpret(model.graph, inputs, model.params);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToDoubles(), (std::vector<double>{13, 24}));  // [3, 4] + [10, 20]
}

TEST(OnnxImport, AMalformedFileIsInvalidArgumentNamingTheFile) {
  const std::string path = ::testing::TempDir() + "/not_a_model.onnx";
  {
    std::ofstream f(path, std::ios::binary);
    f << "\xff\xff\xff this is not a protobuf";
  }
  absl::StatusOr<ImportedModel> model = Import(path);
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument) << model.status();
  EXPECT_THAT(model.status().message(), HasSubstr(path));
  std::remove(path.c_str());

  EXPECT_EQ(Import(path).status().code(), absl::StatusCode::kNotFound);
}

TEST(OnnxImport, AnUnknownOpIsUnimplementedNamingOpAndNode) {
  ModelBuilder m;
  m.Input("x", kF32, {int64_t{2}}).Output("y", kF32);
  m.Node("Frobnicate", {"x"}, {"y"}, "frob_1");
  absl::StatusOr<ImportedModel> model = ImportFromBytes(m.Bytes(), "frob.onnx");
  EXPECT_EQ(model.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(model.status().message(), HasSubstr("node 'frob_1' (Frobnicate)"));
  EXPECT_THAT(model.status().message(), HasSubstr("frob.onnx"));
}

TEST(OnnxImport, BeforeOpset7OnlyOpsWhoseMeaningDidNotChangeImport) {
  ModelBuilder relu(/*opset=*/6);
  relu.Input("x", kF32, {int64_t{2}}).Output("y", kF32);
  relu.Node("Relu", {"x"}, {"y"});
  EXPECT_TRUE(ImportFromBytes(relu.Bytes(), "relu6.onnx").ok());
  // Add had a `broadcast` attribute instead of numpy's rules before opset 7.
  ModelBuilder add(/*opset=*/6);
  add.Input("x", kF32, {int64_t{2}}).Output("y", kF32);
  add.Node("Add", {"x", "x"}, {"y"}, "old_add");
  absl::StatusOr<ImportedModel> model = ImportFromBytes(add.Bytes(), "add6.onnx");
  EXPECT_EQ(model.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(model.status().message(), HasSubstr("node 'old_add' (Add)"));
  EXPECT_THAT(model.status().message(), HasSubstr("at opset 6"));
}

TEST(OnnxImport, ADataDependentShapeIsUnimplementedNamingTheNode) {
  ModelBuilder m;
  m.Input("x", kF32, {int64_t{6}}).Input("s", kI64, {int64_t{2}}).Output("y", kF32);
  m.Node("Reshape", {"x", "s"}, {"y"}, "reshape_by_data");
  absl::StatusOr<ImportedModel> model = ImportFromBytes(m.Bytes(), "dyn.onnx");
  EXPECT_EQ(model.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(model.status().message(), HasSubstr("node 'reshape_by_data' (Reshape)"));
  EXPECT_THAT(model.status().message(), HasSubstr("depends on tensor data"));
}

TEST(OnnxImport, ASymbolicDimUsedAsDataStaysSymbolic) {
  // x / Cast(Shape(x)[0]): the length becomes a sum of ones over [N], not a constant.
  ModelBuilder m;
  m.Input("x", kF32, {std::string("N")}).Output("y", kF32);
  m.Node("Shape", {"x"}, {"shape"});
  SetInt(m.Node("Cast", {"shape"}, {"n"}), "to", kF32);
  m.Node("Div", {"x", "n"}, {"y"});
  ImportedModel model = MustImport(m);
  EXPECT_THAT(ir::PrintGraph(model.graph), Not(HasSubstr("shape=[3]")));
  runtime::TensorMap inputs = {{"x", Iota({4})}};
  absl::StatusOr<std::vector<runtime::Tensor>> out =
      runtime::Interpret(model.graph, inputs, model.params);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToDoubles(), (std::vector<double>{0, 0.25, 0.5, 0.75}));
}

}  // namespace
}  // namespace graphjit::onnx
