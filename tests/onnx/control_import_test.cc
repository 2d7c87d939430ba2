// Control flow at import: an If decided by a known condition (a constant, a dim fixed by
// importing at the call's shapes, an input fixed by ImportSpecialized), Loop and Scan
// unrolled over a known number of iterations, recurrent layers unrolled over a known
// sequence length (sequence_lens checked against runs of each entry's own length), and the
// errors for malformed ones and for those that cannot be decided at import.
#include <cmath>
#include <fstream>
#include <functional>
#include <tuple>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/import.h"
#include "onnx/specialize.h"
#include "runtime/interpreter.h"
#include "tests/onnx/model_builder.h"

namespace graphjit::onnx {
namespace {

using testing::AddNode;
using ::testing::ElementsAre;
using testing::F32Tensor;
using ::testing::HasSubstr;
using testing::ModelBuilder;
using ::testing::Not;
using testing::SetGraph;
using testing::SetInt;
using testing::SetString;
using testing::SetStrings;

constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;
constexpr int32_t kBool = ::onnx::TensorProto::BOOL;

std::string Write(const ModelBuilder& m, const std::string& name) {
  const std::string path = ::testing::TempDir() + "/" + name + ".onnx";
  std::ofstream(path, std::ios::binary) << m.Bytes();
  return path;
}

::onnx::TensorProto BoolTensor(const std::string& name, std::vector<int64_t> dims,
                               std::vector<bool> values) {
  ::onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(kBool);
  for (int64_t d : dims) t.add_dims(d);
  for (bool v : values) t.add_int32_data(v);
  return t;
}

runtime::Tensor F32(std::vector<int64_t> shape, std::vector<double> values) {
  return *runtime::Tensor::FromDoubles(ir::DType::kF32, shape, values);
}

// y = If(cond, -x, x + x).
void AddBranches(::onnx::NodeProto* n) {
  AddNode(SetGraph(n, "then_branch", {"neg"}), "Neg", {"x"}, {"neg"});
  AddNode(SetGraph(n, "else_branch", {"twice"}), "Add", {"x", "x"}, {"twice"});
}

TEST(OnnxIf, AConditionOnAnInputIsDecidedByFixingThatInput) {
  ModelBuilder m;
  m.Input("x", kF32, {int64_t{2}}).Input("flag", kBool, {}).Output("y", kF32);
  AddBranches(m.Node("If", {"flag"}, {"y"}, "branch"));
  absl::StatusOr<ImportedModel> plain = ImportFromBytes(m.Bytes(), "if.onnx");
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(plain.status().message(), HasSubstr("input 'flag' must be known at import"));
  const std::string path = Write(m, "if_flag");
  const runtime::Tensor x = F32({2}, {1.5, -2});
  for (const bool flag : {true, false}) {
    runtime::TensorMap inputs = {
        {"x", x},
        {"flag", *runtime::Tensor::FromDoubles(ir::DType::kBool, {}, {flag ? 1.0 : 0.0})}};
    absl::StatusOr<SpecializedImport> got = ImportSpecialized(path, inputs);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_THAT(got->specialized, ElementsAre("flag"));
    EXPECT_THAT(got->model.input_names, ElementsAre("x"));
    absl::StatusOr<std::vector<runtime::Tensor>> y =
        runtime::Interpret(got->model.graph, {{"x", x}}, got->model.params);
    ASSERT_TRUE(y.ok()) << y.status();
    const std::vector<double> want =
        flag ? std::vector<double>{-1.5, 2} : std::vector<double>{3, -4};
    EXPECT_EQ(y->at(0).ToDoubles(), want);
  }
}

TEST(OnnxIf, AConditionOnDimsIsDecidedAtTheCallsShapes) {
  // y = If(Shape(x)[0] == 1, -x, x + x): undecided for a symbolic N, decided at N's value.
  ModelBuilder m;
  m.Input("x", kF32, {std::string("N")}).Output("y", kF32);
  m.Initializer(testing::I64Tensor("zero", {}, {0}))
      .Initializer(testing::I64Tensor("one", {}, {1}));
  m.Node("Shape", {"x"}, {"shape"});
  m.Node("Gather", {"shape", "zero"}, {"n"});
  m.Node("Equal", {"n", "one"}, {"is_one"});
  AddBranches(m.Node("If", {"is_one"}, {"y"}, "on_dims"));
  absl::StatusOr<ImportedModel> plain = ImportFromBytes(m.Bytes(), "if.onnx");
  ASSERT_FALSE(plain.ok());
  EXPECT_THAT(plain.status().message(), HasSubstr("depends on the model's dims"));
  EXPECT_THAT(plain.status().message(), Not(HasSubstr("must be known at import")));
  const std::string path = Write(m, "if_dims");
  for (const auto& [x, want] : {std::pair{F32({1}, {3}), std::vector<double>{-3}},
                                std::pair{F32({2}, {3, 4}), std::vector<double>{6, 8}}}) {
    absl::StatusOr<SpecializedImport> got = ImportSpecialized(path, {{"x", x}});
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(got->shapes_fixed);
    absl::StatusOr<std::vector<runtime::Tensor>> y =
        runtime::Interpret(got->model.graph, {{"x", x}}, got->model.params);
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(y->at(0).ToDoubles(), want);
  }
}

TEST(OnnxIf, AConditionOnALargeInputsDataSelectsBetweenBothBranches) {
  // y = If(sum(x) > 0, -x, x + x) for x of 100 elements (too many to fix at import).
  ModelBuilder m;
  m.Input("x", kF32, {int64_t{100}}).Output("y", kF32);
  m.Initializer(F32Tensor("zero", {}, {0}));
  m.Node("ReduceSum", {"x"}, {"total"});
  m.Node("Greater", {"total", "zero"}, {"positive"});
  AddBranches(m.Node("If", {"positive"}, {"y"}, "on_data"));
  absl::StatusOr<ImportedModel> model = ImportFromBytes(m.Bytes(), "if.onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  for (double sign : {1.0, -1.0}) {
    std::vector<double> x(100);
    for (int i = 0; i < 100; ++i) x[i] = sign * (i + 1) * 0.5;
    absl::StatusOr<std::vector<runtime::Tensor>> y =
        runtime::Interpret(model->graph, {{"x", F32({100}, x)}}, model->params);
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(y->at(0).ToDoubles()[7], sign > 0 ? -x[7] : 2 * x[7]);
  }
  // Branches whose outputs differ in shape cannot be selected between.
  ::onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(m.Bytes()));
  ::onnx::GraphProto* then_branch =
      proto.mutable_graph()->mutable_node(2)->mutable_attribute(0)->mutable_g();
  then_branch->mutable_node(0)->set_op_type("ReduceSum");
  absl::Status s = ImportFromBytes(proto.SerializeAsString(), "if.onnx").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("its branches give output 0 as f32[1] and f32[100]"));
}

TEST(OnnxIf, CostlyBranchesOnDataBecomeAnIfOp) {
  // y = If(sum(x) > 0, x @ a, x @ b) for x [1, 100]: products are too costly to compute
  // both, so the If is an if op whose branches read x (an operand) and a, b (weights).
  ModelBuilder m;
  m.Input("x", kF32, {int64_t{1}, int64_t{100}}).Output("y", kF32);
  m.Initializer(F32Tensor("zero", {}, {0}));
  std::vector<float> a(200), b(200);
  for (int i = 0; i < 200; ++i) {
    a[i] = 0.01f * (i % 7);
    b[i] = -0.02f * (i % 5);
  }
  m.Initializer(F32Tensor("a", {100, 2}, a)).Initializer(F32Tensor("b", {100, 2}, b));
  m.Node("ReduceSum", {"x"}, {"total"});
  m.Node("Greater", {"total", "zero"}, {"positive"});
  auto* n = m.Node("If", {"positive"}, {"y"}, "costly");
  AddNode(SetGraph(n, "then_branch", {"ya"}), "MatMul", {"x", "a"}, {"ya"});
  AddNode(SetGraph(n, "else_branch", {"yb"}), "MatMul", {"x", "b"}, {"yb"});
  absl::StatusOr<ImportedModel> model = ImportFromBytes(m.Bytes(), "if.onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  int ifs = 0;
  for (const ir::Node& node : model->graph.nodes()) ifs += node.op == ir::OpCode::kIf;
  EXPECT_EQ(ifs, 1);
  for (double sign : {1.0, -1.0}) {
    std::vector<double> x(100, sign);
    absl::StatusOr<std::vector<runtime::Tensor>> y =
        runtime::Interpret(model->graph, {{"x", F32({1, 100}, x)}}, model->params);
    ASSERT_TRUE(y.ok()) << y.status();
    double want = 0;
    for (int k = 0; k < 100; ++k) want += sign * (sign > 0 ? a[2 * k] : b[2 * k]);
    EXPECT_NEAR(y->at(0).ToDoubles()[0], want, 1e-4);
  }
}

TEST(OnnxIf, MalformedIfsAreInvalidArgumentNamingTheNode) {
  auto import_with = [](const std::function<void(ModelBuilder&)>& edit) {
    ModelBuilder m;
    m.Input("x", kF32, {int64_t{2}}).Output("y", kF32);
    edit(m);
    return ImportFromBytes(m.Bytes(), "if.onnx").status();
  };
  // Two elements in the condition.
  absl::Status s = import_with([](ModelBuilder& m) {
    m.Initializer(BoolTensor("c", {2}, {true, false}));
    AddBranches(m.Node("If", {"c"}, {"y"}, "two"));
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("node 'two' (If): the condition has 2 elements"));
  // No else branch, when it is the one taken.
  s = import_with([](ModelBuilder& m) {
    m.Initializer(BoolTensor("c", {}, {false}));
    AddNode(SetGraph(m.Node("If", {"c"}, {"y"}, "half"), "then_branch", {"neg"}), "Neg", {"x"},
            {"neg"});
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("has no graph attribute else_branch"));
  // A branch with more outputs than the node.
  s = import_with([](ModelBuilder& m) {
    m.Initializer(BoolTensor("c", {}, {true}));
    auto* n = m.Node("If", {"c"}, {"y"}, "wide");
    AddNode(SetGraph(n, "then_branch", {"neg", "x"}), "Neg", {"x"}, {"neg"});
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("has 2 outputs, the node 1"));
  // Ifs nested past the limit (each then_branch holds the next If): refused, no overflow.
  s = import_with([](ModelBuilder& m) {
    m.Initializer(BoolTensor("c", {}, {true}));
    ::onnx::NodeProto* n = m.Node("If", {"c"}, {"y"}, "deep");
    for (int depth = 0; depth < 40; ++depth) {
      ::onnx::GraphProto* g = SetGraph(n, "then_branch", {"y"});
      n = AddNode(g, "If", {"c"}, {"y"});
    }
    AddBranches(n);
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

// y_{t+1} = y_t + x * c (c a constant of the body, one param however many iterations),
// every y_{t+1} also a scan output; the body's condition is iteration < `stop_after` - 1.
ModelBuilder CountingLoop(int64_t trips, int64_t stop_after) {
  ModelBuilder m;
  m.Input("x", kF32, {int64_t{2}}).Output("y_final", kF32).Output("ys", kF32);
  m.Initializer(testing::I64Tensor("M", {}, {trips}))
      .Initializer(BoolTensor("go", {}, {true}))
      .Initializer(F32Tensor("y0", {2}, {0, 10}));
  auto* loop = m.Node("Loop", {"M", "go", "y0"}, {"y_final", "ys"}, "count");
  auto* a = loop->add_attribute();
  a->set_name("body");
  a->set_type(::onnx::AttributeProto::GRAPH);
  ::onnx::GraphProto* body = a->mutable_g();
  for (const char* in : {"i", "cond_in", "y"}) body->add_input()->set_name(in);
  for (const char* out : {"cond_out", "y_next", "y_scan"}) body->add_output()->set_name(out);
  testing::SetTensor(AddNode(body, "Constant", {}, {"c"}), "value", F32Tensor("", {}, {2}));
  *body->add_initializer() = testing::I64Tensor("last", {}, {stop_after - 1});
  AddNode(body, "Mul", {"x", "c"}, {"xc"});
  AddNode(body, "Add", {"y", "xc"}, {"y_next"});
  AddNode(body, "Identity", {"y_next"}, {"y_scan"});
  AddNode(body, "Less", {"i", "last"}, {"cond_out"});
  return m;
}

TEST(OnnxLoop, AKnownTripCountAndFoldedConditionsAreUnrolled) {
  const runtime::Tensor x = F32({2}, {1, -1});
  for (const auto& [trips, stop_after, iterations] :
       {std::tuple{int64_t{3}, int64_t{100}, 3}, std::tuple{int64_t{5}, int64_t{2}, 2}}) {
    absl::StatusOr<ImportedModel> model =
        ImportFromBytes(CountingLoop(trips, stop_after).Bytes(), "loop.onnx");
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_EQ(model->params.size(), 2u) << "y0, and the body's constant once";
    absl::StatusOr<std::vector<runtime::Tensor>> y =
        runtime::Interpret(model->graph, {{"x", x}}, model->params);
    ASSERT_TRUE(y.ok()) << y.status();
    std::vector<double> final_y = {0, 10}, ys;
    for (int t = 0; t < iterations; ++t) {
      final_y = {final_y[0] + 2, final_y[1] - 2};
      ys.insert(ys.end(), final_y.begin(), final_y.end());
    }
    EXPECT_EQ(y->at(0).ToDoubles(), final_y);
    EXPECT_EQ(y->at(1).shape(), (std::vector<int64_t>{iterations, 2}));
    EXPECT_EQ(y->at(1).ToDoubles(), ys);
  }
}

TEST(OnnxLoop, LoopsThatCannotBeUnrolledAreRefusedNamingTheNode) {
  // More iterations than are unrolled.
  absl::Status s = ImportFromBytes(CountingLoop(5000, 6000).Bytes(), "loop.onnx").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), HasSubstr("node 'count' (Loop): more than 4096 iterations"));
  // A condition computed from data: while (sum(y) < 100).
  ModelBuilder m = CountingLoop(10, 100);
  ::onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(m.Bytes()));
  ::onnx::GraphProto* body =
      proto.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  body->mutable_node()->RemoveLast();  // the Less on the iteration
  AddNode(body, "ReduceSum", {"y_next"}, {"total"});
  *body->add_initializer() = F32Tensor("hundred", {}, {100});
  AddNode(body, "Less", {"total", "hundred"}, {"cond_out"});
  s = ImportFromBytes(proto.SerializeAsString(), "loop.onnx").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), HasSubstr("the loop's condition 'cond_out' depends on tensor data"));
  EXPECT_THAT(s.message(), HasSubstr("input 'x' must be known at import"));
}

// y_{t+1} = y_t + x * 2 while sum(y_{t+1}) < 100 (a condition on data), at most `trips`
// trips (an initializer, or the graph input "M" when `trips` < 0); no scan outputs, so the
// Loop imports as one while op.
ModelBuilder UntilHundred(int64_t trips) {
  ModelBuilder m;
  m.Input("x", kF32, {int64_t{2}}).Output("y_final", kF32);
  if (trips >= 0) {
    m.Initializer(testing::I64Tensor("M", {}, {trips}));
  } else {
    m.Input("M", ::onnx::TensorProto::INT64, {});
  }
  m.Initializer(BoolTensor("go", {}, {true})).Initializer(F32Tensor("y0", {2}, {0, 10}));
  auto* loop = m.Node("Loop", {"M", "go", "y0"}, {"y_final"}, "until");
  auto* a = loop->add_attribute();
  a->set_name("body");
  a->set_type(::onnx::AttributeProto::GRAPH);
  ::onnx::GraphProto* body = a->mutable_g();
  for (const char* in : {"i", "cond_in", "y"}) body->add_input()->set_name(in);
  for (const char* out : {"cond_out", "y_next"}) body->add_output()->set_name(out);
  testing::SetTensor(AddNode(body, "Constant", {}, {"c"}), "value", F32Tensor("", {}, {2}));
  AddNode(body, "Mul", {"x", "c"}, {"xc"});
  AddNode(body, "Add", {"y", "xc"}, {"y_next"});
  AddNode(body, "ReduceSum", {"y_next"}, {"total"});
  *body->add_initializer() = F32Tensor("hundred", {}, {100});
  AddNode(body, "Less", {"total", "hundred"}, {"cond_out"});
  return m;
}

// What UntilHundred computes, trip by trip, for at most `trips` trips.
std::vector<double> UntilHundredReference(std::vector<double> x, int64_t trips) {
  std::vector<double> y = {0, 10};
  for (int64_t t = 0; t < trips; ++t) {
    y = {y[0] + 2 * x[0], y[1] + 2 * x[1]};
    if (y[0] + y[1] >= 100) break;
  }
  return y;
}

TEST(OnnxLoop, ADataDependentConditionImportsAsOneWhile) {
  for (int64_t trips : {int64_t{3}, int64_t{10000}, int64_t{-1}}) {
    SCOPED_TRACE(trips);
    absl::StatusOr<ImportedModel> model =
        ImportFromBytes(UntilHundred(trips).Bytes(), "until.onnx");
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_TRUE(model->graph.HasRegions());
    int whiles = 0;
    for (const ir::Node& n : model->graph.nodes()) whiles += n.op == ir::OpCode::kWhile;
    EXPECT_EQ(whiles, 1) << "one loop, not unrolled";
    for (const std::vector<double>& x : {std::vector<double>{1, 2}, {0.5, 0.25}}) {
      const int64_t m = trips >= 0 ? trips : 7;
      runtime::TensorMap in = {{"x", F32({2}, x)}};
      if (trips < 0) in["M"] = *runtime::Tensor::FromDoubles(ir::DType::kI64, {}, {double(m)});
      absl::StatusOr<std::vector<runtime::Tensor>> y =
          runtime::Interpret(model->graph, in, model->params);
      ASSERT_TRUE(y.ok()) << y.status();
      EXPECT_EQ(y->at(0).ToDoubles(), UntilHundredReference(x, m));
    }
  }
}

TEST(OnnxLoop, AWhileLoopsBadTripCountOrChangingShapeIsAnError) {
  ::onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(UntilHundred(0).Bytes()));
  *proto.mutable_graph()->mutable_initializer(0) = testing::I64Tensor("M", {}, {-3});
  absl::Status s = ImportFromBytes(proto.SerializeAsString(), "until.onnx").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("node 'until' (Loop): the trip count is -3"));
  // A carried value that grows each trip.
  ASSERT_TRUE(proto.ParseFromString(UntilHundred(10).Bytes()));
  ::onnx::GraphProto* body =
      proto.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  body->mutable_node(2)->set_op_type("Concat");  // y_next = concat(y, xc)
  SetInt(body->mutable_node(2), "axis", 0);
  s = ImportFromBytes(proto.SerializeAsString(), "until.onnx").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), HasSubstr("a carried value must keep its shape"));
}

// Running sums of the rows of x [T, 2], scanned in `direction`, stacked along axis 1.
ModelBuilder RowSums(testing::Dim steps, int64_t direction) {
  ModelBuilder m;
  m.Input("x", kF32, {steps, int64_t{2}}).Output("total", kF32).Output("sums", kF32);
  m.Initializer(F32Tensor("zero", {2}, {0, 0}));
  auto* scan = m.Node("Scan", {"zero", "x"}, {"total", "sums"}, "sums");
  SetInt(scan, "num_scan_inputs", 1);
  testing::SetInts(scan, "scan_input_directions", {direction});
  testing::SetInts(scan, "scan_output_axes", {1});
  auto* a = scan->add_attribute();
  a->set_name("body");
  a->set_type(::onnx::AttributeProto::GRAPH);
  ::onnx::GraphProto* body = a->mutable_g();
  for (const char* in : {"acc", "row"}) body->add_input()->set_name(in);
  for (const char* out : {"acc_next", "acc_out"}) body->add_output()->set_name(out);
  AddNode(body, "Add", {"acc", "row"}, {"acc_next"});
  AddNode(body, "Identity", {"acc_next"}, {"acc_out"});
  return m;
}

TEST(OnnxScan, AScannedAxisOfKnownLengthIsUnrolledInEitherDirection) {
  const runtime::Tensor x = F32({3, 2}, {1, 2, 3, 4, 5, 6});
  for (const int64_t direction : {0, 1}) {
    absl::StatusOr<ImportedModel> model =
        ImportFromBytes(RowSums(int64_t{3}, direction).Bytes(), "scan.onnx");
    ASSERT_TRUE(model.ok()) << model.status();
    absl::StatusOr<std::vector<runtime::Tensor>> y =
        runtime::Interpret(model->graph, {{"x", x}}, model->params);
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(y->at(0).ToDoubles(), (std::vector<double>{9, 12}));
    // [2, 3]: the running sums of each column, in scan order.
    const std::vector<double> want = direction == 0 ? std::vector<double>{1, 4, 9, 2, 6, 12}
                                                    : std::vector<double>{5, 8, 9, 6, 10, 12};
    EXPECT_EQ(y->at(1).ToDoubles(), want);
  }
}

TEST(OnnxScan, ASymbolicLengthIsOneScanOpInEitherDirection) {
  for (const int64_t direction : {0, 1}) {
    SCOPED_TRACE(direction);
    absl::StatusOr<ImportedModel> model =
        ImportFromBytes(RowSums(std::string("T"), direction).Bytes(), "scan.onnx");
    ASSERT_TRUE(model.ok()) << model.status();
    int scans = 0;
    for (const ir::Node& n : model->graph.nodes()) scans += n.op == ir::OpCode::kScan;
    EXPECT_EQ(scans, 1);
    for (int64_t t : {0, 1, 3}) {
      std::vector<double> x;
      for (int64_t i = 0; i < 2 * t; ++i) x.push_back(i + 1);
      absl::StatusOr<std::vector<runtime::Tensor>> y =
          runtime::Interpret(model->graph, {{"x", F32({t, 2}, x)}}, model->params);
      ASSERT_TRUE(y.ok()) << y.status();
      // The running sums of each column in scan order, stacked on axis 1: [2, T].
      std::vector<double> sums(2 * t), total = {0, 0};
      for (int64_t step = 0; step < t; ++step) {
        const int64_t row = direction == 0 ? step : t - 1 - step;
        for (int c = 0; c < 2; ++c) {
          total[c] += x[2 * row + c];
          sums[c * t + step] = total[c];
        }
      }
      EXPECT_EQ(y->at(0).ToDoubles(), total);
      EXPECT_EQ(y->at(1).shape(), (std::vector<int64_t>{2, t}));
      EXPECT_EQ(y->at(1).ToDoubles(), sums);
    }
  }
}

// Weights of a recurrent layer: small values that vary, so every gate matters.
::onnx::TensorProto Weights(const std::string& name, std::vector<int64_t> dims, double phase) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(0.4 * std::sin(0.7 * i + phase));
  return F32Tensor(name, dims, v);
}

// A bidirectional RNN (hidden 5, input 3) over X [T, B, 3], with sequence_lens if given.
ModelBuilder BidirectionalRnn(testing::Dim steps, int64_t batch, std::vector<int64_t> lens = {}) {
  ModelBuilder m;
  m.Input("X", kF32, {steps, batch, int64_t{3}}).Output("Y", kF32).Output("Y_h", kF32);
  m.Initializer(Weights("W", {2, 5, 3}, 0.1))
      .Initializer(Weights("R", {2, 5, 5}, 0.2))
      .Initializer(Weights("B", {2, 10}, 0.3));
  std::vector<std::string> inputs = {"X", "W", "R", "B"};
  if (!lens.empty()) {
    ::onnx::TensorProto t;
    t.set_name("lens");
    t.set_data_type(::onnx::TensorProto::INT32);
    t.add_dims(static_cast<int64_t>(lens.size()));
    for (int64_t l : lens) t.add_int32_data(static_cast<int32_t>(l));
    m.Initializer(t);
    inputs.push_back("lens");
  }
  auto* n = m.Node("RNN", inputs, {"Y", "Y_h"}, "rnn");
  SetInt(n, "hidden_size", 5);
  SetString(n, "direction", "bidirectional");
  SetStrings(n, "activations", {"Tanh", "LeakyRelu"});
  return m;
}

std::vector<runtime::Tensor> Interpreted(const ModelBuilder& m, const runtime::Tensor& x) {
  absl::StatusOr<ImportedModel> model = ImportFromBytes(m.Bytes(), "rnn.onnx");
  EXPECT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::vector<runtime::Tensor>> out =
      runtime::Interpret(model->graph, {{"X", x}}, model->params);
  EXPECT_TRUE(out.ok()) << out.status();
  return *std::move(out);
}

TEST(OnnxRecurrent, SequenceLensEqualRunsOfEachEntrysOwnLength) {
  constexpr int64_t kSteps = 4, kBatch = 2, kHidden = 5;
  const std::vector<int64_t> lens = {4, 2};
  std::vector<double> xs(kSteps * kBatch * 3);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::cos(1.3 * static_cast<double>(i));
  const std::vector<runtime::Tensor> both =
      Interpreted(BidirectionalRnn(kSteps, kBatch, lens), F32({kSteps, kBatch, 3}, xs));
  const std::vector<double> y = both[0].ToDoubles(), h = both[1].ToDoubles();  // [T,2,B,H], [2,B,H]
  for (int64_t b = 0; b < kBatch; ++b) {
    std::vector<double> own;  // entry b's first lens[b] steps
    for (int64_t t = 0; t < lens[b]; ++t)
      for (int64_t i = 0; i < 3; ++i) own.push_back(xs[(t * kBatch + b) * 3 + i]);
    const std::vector<runtime::Tensor> alone =
        Interpreted(BidirectionalRnn(lens[b], 1), F32({lens[b], 1, 3}, own));
    const std::vector<double> ya = alone[0].ToDoubles(), ha = alone[1].ToDoubles();
    for (int64_t t = 0; t < kSteps; ++t) {
      for (int64_t d = 0; d < 2; ++d) {
        for (int64_t k = 0; k < kHidden; ++k) {
          const double got = y[((t * 2 + d) * kBatch + b) * kHidden + k];
          const double want = t < lens[b] ? ya[(t * 2 + d) * kHidden + k] : 0.0;
          EXPECT_NEAR(got, want, 1e-6) << "Y at t " << t << " direction " << d << " entry " << b;
        }
      }
    }
    for (int64_t d = 0; d < 2; ++d)
      for (int64_t k = 0; k < kHidden; ++k)
        EXPECT_NEAR(h[(d * kBatch + b) * kHidden + k], ha[d * kHidden + k], 1e-6)
            << "Y_h direction " << d << " entry " << b;
  }
}

TEST(OnnxRecurrent, ASymbolicSequenceLengthIsAScanPerDirection) {
  absl::StatusOr<ImportedModel> symbolic =
      ImportFromBytes(BidirectionalRnn(std::string("T"), 2).Bytes(), "rnn.onnx");
  ASSERT_TRUE(symbolic.ok()) << symbolic.status();
  int scans = 0;
  for (const ir::Node& n : symbolic->graph.nodes()) scans += n.op == ir::OpCode::kScan;
  EXPECT_EQ(scans, 2) << "one per direction";
  for (int64_t steps : {1, 3, 4}) {
    std::vector<double> xs(steps * 2 * 3);
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(0.9 * static_cast<double>(i));
    const runtime::Tensor x = F32({steps, 2, 3}, xs);
    absl::StatusOr<std::vector<runtime::Tensor>> got =
        runtime::Interpret(symbolic->graph, {{"X", x}}, symbolic->params);
    ASSERT_TRUE(got.ok()) << got.status();
    const std::vector<runtime::Tensor> unrolled = Interpreted(BidirectionalRnn(steps, 2), x);
    for (size_t k = 0; k < 2; ++k) {
      ASSERT_EQ(got->at(k).shape(), unrolled[k].shape()) << k;
      EXPECT_LE(runtime::MaxAbsDiff(got->at(k), unrolled[k]), 1e-6) << "output " << k;
    }
  }
}

TEST(OnnxRecurrent, MalformedLayersAreRefusedNamingTheNode) {
  auto status = [](const std::function<void(::onnx::NodeProto*)>& edit, int64_t hidden = 5,
                   testing::Dim steps = int64_t{4}) {
    ModelBuilder m;
    m.Input("X", kF32, {steps, int64_t{2}, int64_t{3}}).Output("Y", kF32);
    m.Initializer(Weights("W", {1, 4 * hidden, 3}, 0))
        .Initializer(Weights("R", {1, 4 * hidden, hidden}, 0));
    auto* n = m.Node("LSTM", {"X", "W", "R"}, {"Y"}, "lstm");
    SetInt(n, "hidden_size", 5);
    edit(n);
    return ImportFromBytes(m.Bytes(), "lstm.onnx").status();
  };
  EXPECT_TRUE(status([](auto*) {}).ok());
  absl::Status s = status([](auto*) {}, /*hidden=*/6);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(
      s.message(),
      HasSubstr("node 'lstm' (LSTM): W [1, 24, 3] and R [1, 24, 6] do not fit hidden_size 5"));
  s = status([](auto* n) { SetString(n, "direction", "sideways"); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("direction 'sideways'"));
  s = status([](auto* n) { SetStrings(n, "activations", {"Sigmoid", "Gelu", "Tanh"}); });
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), HasSubstr("activation 'gelu'"));
  s = status([](auto* n) { SetStrings(n, "activations", {"Sigmoid", "Tanh"}); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("has 2 activations, expected 3"));
  // A symbolic length imports (a scan), the wrong hidden size is still named.
  s = status([](auto*) {}, 5, std::string("T"));
  EXPECT_TRUE(s.ok()) << s;
}

TEST(OnnxRecurrent, MisshapenBiasStatesAndLengthsAreErrorsNotCrashes) {
  // An LSTM of hidden 5 over X [4, 2, 3] given a bias, initial state or sequence_lens of
  // the wrong shape: an error naming the node, whatever the input.
  struct Bad {
    const char* input;
    ::onnx::TensorProto tensor;
  };
  ::onnx::TensorProto lens;
  lens.set_name("lens");
  lens.set_data_type(::onnx::TensorProto::INT32);
  lens.add_dims(3);
  for (int v : {4, 2, 1}) lens.add_int32_data(v);
  const Bad cases[] = {{"B", Weights("B", {1, 10}, 0)},
                       {"h0", Weights("h0", {1, 3, 5}, 0)},
                       {"c0", Weights("c0", {2, 2, 5}, 0)},
                       {"lens", lens},
                       {"P", Weights("P", {1, 7}, 0)}};
  for (const Bad& bad : cases) {
    SCOPED_TRACE(bad.input);
    ModelBuilder m;
    m.Input("X", kF32, {int64_t{4}, int64_t{2}, int64_t{3}}).Output("Y", kF32);
    m.Initializer(Weights("W", {1, 20, 3}, 0)).Initializer(Weights("R", {1, 20, 5}, 0));
    m.Initializer(bad.tensor);
    std::vector<std::string> inputs = {"X", "W", "R", "", "", "", "", ""};
    const std::string name = bad.input;
    const int at = name == "B" ? 3 : name == "lens" ? 4 : name == "h0" ? 5 : name == "c0" ? 6 : 7;
    inputs[at] = name;
    SetInt(m.Node("LSTM", inputs, {"Y"}, "lstm"), "hidden_size", 5);
    absl::Status s = ImportFromBytes(m.Bytes(), "lstm.onnx").status();
    EXPECT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("node 'lstm' (LSTM)")) << s;
  }
}

}  // namespace
}  // namespace graphjit::onnx
