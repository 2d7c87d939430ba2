// Tests of VerifyGraph and GraphBuilder: good graphs pass; each broken rule is reported
// with the node (`%N (op)`) and the rule; the builder keeps the first error.
#include "ir/verifier.h"

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/graph.h"

namespace graphjit::ir {

[[maybe_unused]] static void PrintTo(const ValueType& t, std::ostream* os) {
  *os << TypeToString(t);
}

namespace {

using ::testing::HasSubstr;

const SymExpr S = SymExpr::Symbol("S");
const SymExpr P = SymExpr::Symbol("P");

Attrs SourceAttrs(const std::string& name, DType dtype, Shape shape) {
  return Attrs{{"name", name}, {"dtype", dtype}, {"shape", std::move(shape)}};
}

// %0 = input x f64[2, S, 16]; %1 = param w f64[16, 8]; %2 = matmul; %3 = softmax;
// %4 = transpose; return %3, %4.
Graph GoodGraph() {
  GraphBuilder b("good");
  ValueId x = b.Input("x", DType::kF64, {2, S, 16});
  ValueId w = b.Param("w", DType::kF64, {16, 8});
  ValueId y = b.Add(OpCode::kMatmul, {x, w});
  ValueId z = b.Add(OpCode::kSoftmax, {y}, Attrs{{"axis", int64_t{-1}}});
  ValueId t = b.Add(OpCode::kTranspose, {z}, Attrs{{"perm", std::vector<int64_t>{0, 2, 1}}});
  b.Output(z);
  b.Output(t);
  absl::StatusOr<Graph> g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : Graph();
}

// Expects `status` to be an InvalidArgument whose message contains every one of `parts`.
void ExpectError(const absl::Status& status, const std::vector<std::string>& parts) {
  ASSERT_FALSE(status.ok()) << "expected an error containing '" << parts.front() << "'";
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  for (const std::string& part : parts) {
    EXPECT_THAT(std::string(status.message()), HasSubstr(part));
  }
}

// ---------------------------------------------------------------------------------------
// VerifyGraph.

TEST(VerifierTest, AcceptsGoodGraphs) {
  Graph g = GoodGraph();
  ASSERT_EQ(g.num_nodes(), 5);
  EXPECT_TRUE(VerifyGraph(g).ok()) << VerifyGraph(g);
  // Graphs are values: a copy verifies too.
  Graph copy = g;
  EXPECT_TRUE(VerifyGraph(copy).ok());

  // Hand-built with Graph::Append, types inferred by the test.
  Graph h("by_hand");
  ValueId a =
      h.Append(OpCode::kInput, {}, SourceAttrs("a", DType::kF32, {S}), ValueType{DType::kF32, {S}});
  ValueId c = h.Append(
      OpCode::kConstant, {},
      Attrs{{"value", std::vector<double>{2.0}}, {"dtype", DType::kF32}, {"shape", Shape{}}},
      ValueType{DType::kF32, {}});
  ValueId m = h.Append(OpCode::kMul, {a, c}, {}, ValueType{DType::kF32, {S}});
  ValueId l = h.Append(OpCode::kLt, {m, a}, {}, ValueType{DType::kBool, {S}});
  h.AddOutput(l);
  h.AddOutput(m);
  h.AddOutput(m);  // the same value may be returned twice
  EXPECT_TRUE(VerifyGraph(h).ok()) << VerifyGraph(h);
}

TEST(VerifierTest, AnInputAndAParamMayShareAName) {
  // Inputs and params are looked up separately (FindInput / FindParam).
  Graph g;
  ValueId x =
      g.Append(OpCode::kInput, {}, SourceAttrs("x", DType::kF32, {2}), ValueType{DType::kF32, {2}});
  ValueId w =
      g.Append(OpCode::kParam, {}, SourceAttrs("x", DType::kF32, {2}), ValueType{DType::kF32, {2}});
  g.AddOutput(g.Append(OpCode::kAdd, {x, w}, {}, ValueType{DType::kF32, {2}}));
  EXPECT_TRUE(VerifyGraph(g).ok()) << VerifyGraph(g);
}

// Builder-made graphs skip re-inferring types; any way of setting a type by hand turns
// the full check back on (the rejections below rely on it).
TEST(VerifierTest, TypesInferredOnlyWhileEveryNodeCameThroughTheBuilder) {
  Graph g = GoodGraph();
  EXPECT_TRUE(g.types_inferred());
  Graph copy = g;
  EXPECT_TRUE(copy.types_inferred());
  copy.mutable_node(2);
  EXPECT_FALSE(copy.types_inferred());
  copy = g;
  copy.Append(OpCode::kInput, {}, SourceAttrs("y", DType::kF32, {2}), ValueType{DType::kF32, {2}});
  EXPECT_FALSE(copy.types_inferred());
  EXPECT_TRUE(VerifyGraph(copy).ok()) << VerifyGraph(copy);
  copy.Append(OpCode::kInput, {}, SourceAttrs("z", DType::kF32, {2}), ValueType{DType::kF64, {2}});
  ExpectError(VerifyGraph(copy), {"(input)", "stored type f64[2]"});
}

TEST(VerifierTest, RejectsStoredTypeDifferentFromInferred) {
  Graph g = GoodGraph();
  g.mutable_node(2).type = ValueType{DType::kF64, {2, S, 9}};
  ExpectError(VerifyGraph(g), {"%2 (matmul)", "stored type f64[2, S, 9]",
                               "differs from inferred type f64[2, S, 8]"});

  g = GoodGraph();
  g.mutable_node(3).type.dtype = DType::kF32;
  ExpectError(VerifyGraph(g), {"%3 (softmax)", "stored type f32[2, S, 8]"});

  // A source node's type must match its attributes too.
  g = GoodGraph();
  g.mutable_node(0).type.shape = {2, S + 1, 16};
  ExpectError(VerifyGraph(g), {"%0 (input)", "stored type f64[2, S+1, 16]"});

  // Appending with a bogus type is caught the same way.
  Graph h;
  ValueId a =
      h.Append(OpCode::kInput, {}, SourceAttrs("a", DType::kF32, {S}), ValueType{DType::kF32, {S}});
  h.AddOutput(h.Append(OpCode::kExp, {a}, {}, ValueType{DType::kF64, {S}}));
  ExpectError(VerifyGraph(h), {"%1 (exp)", "stored type f64[S]", "inferred type f32[S]"});
}

TEST(VerifierTest, RejectsOperandsNotDefinedBefore) {
  Graph g = GoodGraph();
  g.mutable_node(2).operands[1] = 3;  // forward
  ExpectError(VerifyGraph(g), {"%2 (matmul)", "operand %3 is not defined before use"});

  g = GoodGraph();
  g.mutable_node(3).operands[0] = 3;  // itself
  ExpectError(VerifyGraph(g), {"%3 (softmax)", "operand %3"});

  g = GoodGraph();
  g.mutable_node(4).operands[0] = 99;  // out of range
  ExpectError(VerifyGraph(g), {"%4 (transpose)", "operand %99"});

  g = GoodGraph();
  g.mutable_node(2).operands[0] = -1;
  ExpectError(VerifyGraph(g), {"%2 (matmul)", "operand %-1"});

  g = GoodGraph();
  g.mutable_node(2).operands[0] = kInvalidValue - 5;
  ExpectError(VerifyGraph(g), {"%2 (matmul)", "not defined before use"});
}

TEST(VerifierTest, RejectsWrongArity) {
  Graph g = GoodGraph();
  g.mutable_node(3).operands.push_back(2);
  ExpectError(VerifyGraph(g), {"%3 (softmax)", "softmax takes 1 operand(s), got 2"});

  g = GoodGraph();
  g.mutable_node(2).operands.pop_back();
  ExpectError(VerifyGraph(g), {"%2 (matmul)", "takes 2 operand(s), got 1"});
}

TEST(VerifierTest, RejectsBadAttributes) {
  Graph g = GoodGraph();
  g.mutable_node(4).attrs.Set("perm", int64_t{1});
  ExpectError(VerifyGraph(g), {"%4 (transpose)", "attribute 'perm' must be ints, got int"});

  g = GoodGraph();
  g.mutable_node(3).attrs = Attrs{};
  ExpectError(VerifyGraph(g), {"%3 (softmax)", "requires attribute 'axis'"});

  g = GoodGraph();
  g.mutable_node(3).attrs.Set("keepdim", true);
  ExpectError(VerifyGraph(g), {"%3 (softmax)", "has no attribute 'keepdim'"});

  g = GoodGraph();
  g.mutable_node(3).attrs.Set("axis", int64_t{3});
  ExpectError(VerifyGraph(g), {"%3 (softmax)", "axis 3 is out of range"});

  g = GoodGraph();
  g.mutable_node(4).attrs.Set("perm", std::vector<int64_t>{0, 0, 1});
  ExpectError(VerifyGraph(g), {"%4 (transpose)", "not a permutation"});

  g = GoodGraph();
  g.mutable_node(1).attrs.Set("name", std::string());
  ExpectError(VerifyGraph(g), {"%1 (param)", "name must not be empty"});
}

TEST(VerifierTest, RejectsDuplicateNames) {
  Graph g;
  ValueType t{DType::kF32, {2}};
  ValueId a = g.Append(OpCode::kInput, {}, SourceAttrs("x", DType::kF32, {2}), t);
  ValueId b = g.Append(OpCode::kInput, {}, SourceAttrs("x", DType::kF32, {2}), t);
  g.AddOutput(g.Append(OpCode::kAdd, {a, b}, {}, t));
  ExpectError(VerifyGraph(g), {"%1 (input)", "duplicate name 'x'"});

  Graph h;
  ValueId x = h.Append(OpCode::kInput, {}, SourceAttrs("x", DType::kF32, {2}), t);
  ValueId w1 = h.Append(OpCode::kParam, {}, SourceAttrs("w", DType::kF32, {2}), t);
  ValueId w2 = h.Append(OpCode::kParam, {}, SourceAttrs("w", DType::kF32, {2}), t);
  h.AddOutput(h.Append(OpCode::kAdd, {x, w1}, {}, t));
  h.AddOutput(w2);
  ExpectError(VerifyGraph(h), {"%2 (param)", "duplicate name 'w'"});
}

TEST(VerifierTest, RejectsMissingOrBogusOutputs) {
  Graph g = GoodGraph();
  g.set_outputs({});
  ExpectError(VerifyGraph(g), {"graph good has no outputs"});

  g = GoodGraph();
  g.set_outputs({3, 5});
  ExpectError(VerifyGraph(g), {"output %5 does not exist"});

  g = GoodGraph();
  g.set_outputs({-1});
  ExpectError(VerifyGraph(g), {"output %-1 does not exist"});

  Graph empty("empty");
  ExpectError(VerifyGraph(empty), {"graph empty has no outputs"});
}

TEST(VerifierTest, ReportsTheFirstBadNode) {
  Graph g = GoodGraph();
  g.mutable_node(4).attrs = Attrs{};
  g.mutable_node(2).type.dtype = DType::kF32;
  ExpectError(VerifyGraph(g), {"%2 (matmul)"});
  EXPECT_THAT(std::string(VerifyGraph(g).message()), ::testing::Not(HasSubstr("%4")));
}

// ---------------------------------------------------------------------------------------
// GraphBuilder.

TEST(BuilderTest, BuildsAVerifiedGraph) {
  GraphBuilder b("decode");
  ValueId cache = b.Input("cache", DType::kF32, {2, S, 16});
  ValueId rows = b.Input("rows", DType::kF32, {2, 1, 16});
  ValueId w = b.Param("w", DType::kF32, {16});
  ValueId half = b.Scalar(0.5, DType::kF32);
  ValueId updated = b.Add(OpCode::kKvWrite, {cache, rows}, Attrs{{"pos", P}});
  ValueId scaled = b.Add(OpCode::kMul, {updated, half});
  ValueId normed = b.Add(OpCode::kRmsNorm, {scaled, w}, Attrs{{"eps", 1e-6}});
  b.Output(normed);
  EXPECT_TRUE(b.status().ok()) << b.status();
  EXPECT_EQ(b.type(normed), (ValueType{DType::kF32, {2, S, 16}}));
  EXPECT_EQ(b.type(half), (ValueType{DType::kF32, {}}));
  EXPECT_EQ(b.graph().num_nodes(), 7);

  absl::StatusOr<Graph> g = std::move(b).Build();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->name(), "decode");
  EXPECT_EQ(g->num_nodes(), 7);
  EXPECT_EQ(g->outputs(), std::vector<ValueId>{normed});
  EXPECT_EQ(g->Inputs(), (std::vector<ValueId>{cache, rows}));
  EXPECT_EQ(g->Params(), std::vector<ValueId>{w});
  EXPECT_EQ(g->FindInput("rows"), rows);
  EXPECT_EQ(g->FindInput("w"), kInvalidValue);
  EXPECT_EQ(g->FindParam("w"), w);
  EXPECT_EQ(g->FindParam("cache"), kInvalidValue);
  EXPECT_EQ(g->node(w).name(), "w");
  EXPECT_EQ(g->node(updated).name(), "");
  EXPECT_EQ(g->Symbols(), (std::set<std::string>{"P", "S"}));  // P only in an attribute
  EXPECT_EQ(g->NumComputeNodes(), 3);
  EXPECT_TRUE(VerifyGraph(*g).ok());
}

TEST(BuilderTest, KeepsTheFirstErrorWithTheOpName) {
  GraphBuilder b;
  ValueId x = b.Input("x", DType::kF32, {2, S});
  ValueId y = b.Input("y", DType::kF64, {2, S});
  ValueId bad = b.Add(OpCode::kAdd, {x, y});  // %2 would be the add
  EXPECT_EQ(bad, kInvalidValue);
  ExpectError(b.status(), {"%2 (add)", "operand dtypes differ", "f32[2, S]", "f64[2, S]"});
  const std::string first(b.status().message());

  // Later ops on the invalid value fail quietly...
  EXPECT_EQ(b.Add(OpCode::kExp, {bad}), kInvalidValue);
  EXPECT_EQ(b.Add(OpCode::kMatmul, {bad, x}), kInvalidValue);
  // ...and so does a later, unrelated error: the first one is kept.
  EXPECT_EQ(b.Add(OpCode::kExp, {b.Input("i", DType::kI64, {3})}), kInvalidValue);
  b.Output(bad);
  EXPECT_EQ(std::string(b.status().message()), first);
  // Valid ops still append, so model code can keep going.
  ValueId ok = b.Add(OpCode::kExp, {x});
  EXPECT_NE(ok, kInvalidValue);
  b.Output(ok);

  absl::StatusOr<Graph> g = std::move(b).Build();
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(g.status().message()), first);
}

TEST(BuilderTest, RejectsOperandsThatAreNotValues) {
  GraphBuilder b;
  ValueId x = b.Input("x", DType::kF32, {2});
  EXPECT_EQ(b.Add(OpCode::kAdd, {x, 7}), kInvalidValue);
  ExpectError(b.status(), {"%1 (add): operand %7 is not a value of this graph"});

  GraphBuilder c;
  EXPECT_EQ(c.Add(OpCode::kNeg, {kInvalidValue}), kInvalidValue);
  ExpectError(c.status(), {"%0 (neg): operand %-1"});
}

TEST(BuilderTest, ReportsSchemaAndShapeErrorsWithTheNodeIndex) {
  GraphBuilder b;
  ValueId x = b.Input("x", DType::kF32, {2, S, 16});
  b.Add(OpCode::kReshape, {x}, Attrs{{"shape", Shape{S, 16}}});
  ExpectError(b.status(), {"%1 (reshape)", "element counts"});

  GraphBuilder c;
  ValueId y = c.Input("y", DType::kF32, {2, 3});
  c.Add(OpCode::kTranspose, {y}, Attrs{{"perm", std::vector<SymExpr>{0, 1}}});
  ExpectError(c.status(), {"%1 (transpose)", "'perm' must be ints, got dims"});

  GraphBuilder d;
  d.Input("", DType::kF32, {2});
  ExpectError(d.status(), {"%0 (input)", "name must not be empty"});

  GraphBuilder e;
  e.Input("z", DType::kF32, {-2});
  ExpectError(e.status(), {"%0 (input)", "negative dim -2"});
}

TEST(BuilderTest, BuildRunsTheVerifier) {
  // Every op type-checks, but the graph breaks a graph-level rule.
  GraphBuilder b;
  b.Input("x", DType::kF32, {2});
  EXPECT_TRUE(b.status().ok());
  ExpectError(std::move(b).Build().status(), {"has no outputs"});

  GraphBuilder c;
  ValueId x1 = c.Input("x", DType::kF32, {2});
  ValueId x2 = c.Input("x", DType::kF32, {2});
  c.Output(c.Add(OpCode::kAdd, {x1, x2}));
  EXPECT_TRUE(c.status().ok());
  ExpectError(std::move(c).Build().status(), {"%1 (input)", "duplicate name 'x'"});
}

TEST(BuilderTest, OutputOfAnInvalidValueIsAnError) {
  GraphBuilder b;
  b.Input("x", DType::kF32, {2});
  b.Output(kInvalidValue);
  ExpectError(b.status(), {"output %-1 is not a value of this graph"});
  b.Output(12);
  EXPECT_THAT(std::string(b.status().message()), HasSubstr("%-1"));  // still the first
  ExpectError(std::move(b).Build().status(), {"output %-1"});
}

}  // namespace
}  // namespace graphjit::ir
