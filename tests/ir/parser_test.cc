// Tests of the textual IR parser: print/parse round trips over every op, golden text, errors
// with their line:col, and truncated or randomly mutated text that must fail cleanly.
#include "ir/parser.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/printer.h"
#include "ir/shape_rules.h"
#include "tests/ir/float_unary_ops.h"

namespace graphjit::ir {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const SymExpr S = SymExpr::Symbol("S");
const SymExpr P = SymExpr::Symbol("P");
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// True if `message` starts with `line:col: ` (both 1-based numbers).
bool HasLocation(absl::string_view message) {
  size_t i = 0;
  for (int part = 0; part < 2; ++part) {
    size_t start = i;
    while (i < message.size() && absl::ascii_isdigit(static_cast<unsigned char>(message[i]))) {
      ++i;
    }
    if (i == start || message[start] == '0') return false;
    if (i >= message.size() || message[i] != ':') return false;
    ++i;
  }
  return i < message.size() && message[i] == ' ';
}

// The regions of AllOpsGraph's while over (y: f64[2, S, 16], n: i64[], w: f64[16]):
// `n < limit`, and (tanh(y) * w, n + 1).
Graph CountBelow(double limit) {
  GraphBuilder b("cond");
  b.Input("y", DType::kF64, {2, S, 16});
  ValueId n = b.Input("n", DType::kI64, {});
  b.Input("w", DType::kF64, {16});
  b.Output(b.Add(OpCode::kLt, {n, b.Scalar(limit, DType::kI64)}));
  return *std::move(b).Build();
}
Graph TanhStep() {
  GraphBuilder b("body");
  ValueId y = b.Input("y", DType::kF64, {2, S, 16});
  ValueId n = b.Input("n", DType::kI64, {});
  ValueId w = b.Input("w", DType::kF64, {16});
  b.Output(b.Add(OpCode::kMul, {b.Add(OpCode::kTanh, {y}), w}));
  b.Output(b.Add(OpCode::kAdd, {n, b.Scalar(1, DType::kI64)}));
  return *std::move(b).Build();
}

// The body of AllOpsGraph's scan over (acc: f64[16], row: f64[S, 16]): acc + the row's
// column sums, twice (the next acc and the row's output).
Graph RowSum() {
  GraphBuilder b("body");
  ValueId acc = b.Input("acc", DType::kF64, {16});
  ValueId row = b.Input("row", DType::kF64, {S, 16});
  ValueId next =
      b.Add(OpCode::kAdd,
            {acc, b.Add(OpCode::kReduceSum, {row}, {{"axis", int64_t{0}}, {"keepdim", false}})});
  b.Output(next);
  b.Output(next);
  return *std::move(b).Build();
}

// A branch of AllOpsGraph's if over (n: i64[]): n < 1 (then) or n == 0 (else).
Graph Branch(bool then) {
  GraphBuilder b(then ? "then" : "else");
  ValueId n = b.Input("n", DType::kI64, {});
  b.Output(b.Add(then ? OpCode::kLt : OpCode::kEq, {n, b.Scalar(then ? 1 : 0, DType::kI64)}));
  return *std::move(b).Build();
}

// A graph that uses every op in ir/ops.def, with symbolic dims (S, S+1, 2*S and odder
// ones), kv_write at a symbolic position P, constants with non-finite and negative values,
// a name that needs escapes, and all four dtypes.
Graph AllOpsGraph() {
  GraphBuilder b("all_ops");
  ValueId x = b.Input("x", DType::kF64, {2, S, 16});
  ValueId w = b.Param("w", DType::kF64, {16});
  ValueId bias = b.Param("layer.0/b\"\\", DType::kF64, {16});
  ValueId ids = b.Input("ids", DType::kI64, {S});
  ValueId emb = b.Param("emb", DType::kF64, {100, 16});
  ValueId head = b.Param("head", DType::kF64, {16, 100});
  ValueId proj = b.Param("proj", DType::kF64, {16, 2 * S});
  ValueId cos = b.Param("cos", DType::kF64, {S, 16});
  ValueId sin = b.Param("sin", DType::kF64, {S, 16});
  ValueId cache = b.Input("cache", DType::kF64, {2, 2 * S, 16});
  ValueId odd = b.Input("odd", DType::kF32,
                        {(S + 1) / 2, SymExpr::Max(S, 4), S % 3, S * P - 1, SymExpr::Min(S, P)});
  ValueId half = b.Scalar(0.5, DType::kF64);
  b.Add(OpCode::kConstant, {},
        {{"value", std::vector<double>{kInf, -kInf, kNan, -1.5, -0.0, 1e-300}},
         {"dtype", DType::kF64},
         {"shape", Shape{2, 3}}});
  ValueId full32 = b.Add(OpCode::kFull, {},
                         {{"value", -2.5}, {"dtype", DType::kF32}, {"shape", Shape{S + 1, 4}}});
  ValueId flags = b.Add(OpCode::kFull, {},
                        {{"value", 1.0}, {"dtype", DType::kBool}, {"shape", Shape{2, S, 16}}});
  ValueId counts =
      b.Add(OpCode::kFull, {}, {{"value", 3.0}, {"dtype", DType::kI64}, {"shape", Shape{S}}});
  b.Add(OpCode::kIota, {}, {{"axis", int64_t{1}}, {"dtype", DType::kF32}, {"shape", Shape{2, S}}});

  for (OpCode op : {OpCode::kAdd, OpCode::kSub, OpCode::kMul, OpCode::kDiv, OpCode::kPow,
                    OpCode::kMaximum, OpCode::kMinimum}) {
    b.Add(op, {x, half});
  }
  ValueId cond = kInvalidValue;
  for (OpCode op : {OpCode::kEq, OpCode::kNe, OpCode::kLt, OpCode::kLe, OpCode::kGt, OpCode::kGe}) {
    cond = b.Add(op, {x, w});
  }
  b.Add(OpCode::kWhere, {cond, x, w});
  b.Add(OpCode::kMaximum, {flags, cond});
  b.Add(OpCode::kNeg, {counts});
  b.Add(OpCode::kAbs, {x});
  for (OpCode op : FloatUnaryOps()) b.Add(op, {full32});
  b.Add(OpCode::kExp, {odd});
  for (DType to : {DType::kI64, DType::kBool, DType::kF32}) {
    b.Add(OpCode::kCast, {x}, {{"dtype", to}});
  }
  ValueId scores = b.Add(OpCode::kMatmul, {x, proj});
  b.Add(OpCode::kCausalMask, {scores});
  b.Add(OpCode::kTranspose, {scores}, {{"perm", std::vector<int64_t>{0, 2, 1}}});
  b.Add(OpCode::kReshape, {x}, {{"shape", Shape{2 * S, 16}}});
  b.Add(OpCode::kExpand, {w}, {{"shape", Shape{2, S, 16}}});
  ValueId joined = b.Add(OpCode::kConcat, {x, x}, {{"axis", int64_t{1}}});
  b.Add(OpCode::kSlice, {joined}, {{"axis", int64_t{1}}, {"start", SymExpr(1)}, {"end", S + 1}});
  b.Add(OpCode::kWindow, {x},
        {{"kernel", std::vector<int64_t>{2, 3}},
         {"strides", std::vector<int64_t>{1, 2}},
         {"dilations", std::vector<int64_t>{2, 1}}});
  ValueId rows = b.Add(OpCode::kGather, {emb, ids});
  b.Add(OpCode::kScatterAdd, {emb, ids, rows});
  b.Add(OpCode::kReduceSum, {x}, {{"axis", int64_t{-1}}, {"keepdim", true}});
  b.Add(OpCode::kReduceMax, {x}, {{"axis", int64_t{0}}, {"keepdim", false}});
  b.Add(OpCode::kReduceMean, {x}, {{"axis", int64_t{1}}, {"keepdim", true}});
  b.Add(OpCode::kArgMin, {x}, {{"axis", int64_t{-1}}, {"keepdim", false}});
  b.Add(OpCode::kArgMax, {counts}, {{"axis", int64_t{0}}, {"keepdim", true}});
  b.Add(OpCode::kCumSum, {x}, {{"axis", int64_t{1}}});
  b.Add(OpCode::kCumSum, {counts}, {{"axis", int64_t{-1}}});
  b.Add(OpCode::kSoftmax, {x}, {{"axis", int64_t{-1}}});
  ValueId normed = b.Add(OpCode::kRmsNorm, {x, w}, {{"eps", 1e-6}});
  b.Add(OpCode::kRmsNorm, {x}, {{"eps", 1e-5}});
  b.Add(OpCode::kLayerNorm, {x, w, bias}, {{"eps", 1e-5}});
  b.Add(OpCode::kSilu, {x});
  b.Add(OpCode::kGeluTanh, {x});
  b.Add(OpCode::kRope, {x, cos, sin});
  ValueId logits = b.Add(OpCode::kMatmul, {rows, head});
  ValueId loss = b.Add(OpCode::kCrossEntropy, {logits, ids});
  ValueId updated = b.Add(OpCode::kKvWrite, {cache, x}, {{"pos", P}});
  // Data-dependent sizes: each defines its count's symbol.
  ValueId hits = b.Add(OpCode::kNonZero, {flags}, {{"symbol", std::string("hits")}});
  ValueId pick =
      b.Add(OpCode::kFull, {}, {{"value", 1.0}, {"dtype", DType::kBool}, {"shape", Shape{2}}});
  ValueId kept =
      b.Add(OpCode::kCompress, {x, pick}, {{"axis", int64_t{0}}, {"symbol", std::string("kept")}});
  ValueId boxes =
      b.Add(OpCode::kFull, {}, {{"value", 0.5}, {"dtype", DType::kF32}, {"shape", Shape{1, S, 4}}});
  b.Add(OpCode::kNonMaxSuppression,
        {boxes, b.Add(OpCode::kFull, {},
                      {{"value", 0.5}, {"dtype", DType::kF32}, {"shape", Shape{1, 3, S}}})},
        {{"max_per_class", int64_t{2}},
         {"iou_threshold", 0.5},
         {"score_threshold", -1e30},
         {"center_point_box", int64_t{0}},
         {"symbol", std::string("boxes_kept")}});
  b.Add(OpCode::kReshape, {hits}, {{"shape", Shape{SymExpr::Symbol("hits"), 3}}});
  b.Add(OpCode::kAssertDim, {kept}, {{"axis", int64_t{0}}, {"dim", SymExpr::Symbol("hits")}});
  b.Add(OpCode::kFactorDim, {x},
        {{"axis", int64_t{1}}, {"factor", int64_t{4}}, {"symbol", std::string("quarter")}});
  for (OpCode op : {OpCode::kTopK, OpCode::kTopKIndices}) {
    b.Add(op, {x}, {{"k", SymExpr(2)}, {"axis", int64_t{-1}}, {"largest", op == OpCode::kTopK}});
  }
  ir::Attrs unique_attrs{{"axis", int64_t{1}}, {"sorted", false}};
  ValueId distinct = b.Add(OpCode::kUnique, {x},
                           {{"axis", int64_t{1}}, {"sorted", false}, {"symbol", std::string("u")}});
  for (OpCode op : {OpCode::kUniqueIndices, OpCode::kUniqueInverse, OpCode::kUniqueCounts}) {
    b.Add(op, {x, distinct}, unique_attrs);
  }
  // A while carrying x and a trip count, with w as an invariant, at most 5 trips.
  ValueId zero =
      b.Add(OpCode::kFull, {}, {{"value", 0.0}, {"dtype", DType::kI64}, {"shape", Shape{}}});
  ValueId loop = b.Add(
      OpCode::kWhile, {x, zero, w}, {{"carried", int64_t{2}}, {"max_trips", int64_t{5}}},
      {std::make_shared<const Graph>(CountBelow(3)), std::make_shared<const Graph>(TanhStep())});
  ValueId trips = b.Add(OpCode::kLoopResult, {loop, zero}, {{"index", int64_t{1}}});
  b.Output(trips);
  // A running sum over the rows of x ([2, S, 16]: two rows), stacked.
  ValueId sums = b.Add(OpCode::kScan, {w, x}, {{"carried", int64_t{1}}, {"scanned", int64_t{1}}},
                       {std::make_shared<const Graph>(RowSum())});
  b.Output(b.Add(OpCode::kScanOutput, {sums},
                 {{"index", int64_t{0}}, {"dtype", DType::kF64}, {"shape", Shape{2, 16}}}));
  // An if on that count.
  ValueId small = b.Add(OpCode::kLt, {trips, b.Scalar(2, DType::kI64)});
  b.Output(b.Add(
      OpCode::kIf, {small, trips}, {{"dtype", DType::kBool}, {"shape", Shape{}}},
      {std::make_shared<const Graph>(Branch(true)), std::make_shared<const Graph>(Branch(false))}));
  b.Output(normed);
  b.Output(loss);
  b.Output(updated);
  absl::StatusOr<Graph> g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : Graph();
}

// A hand-written text using what the printer never writes: names, comments, blank lines,
// spacing, attributes out of order, integers where floats are expected.
constexpr absl::string_view kHandWritten = R"(# An rmsnorm + matmul + softmax block.
graph block {
  %x = input {name="x"} : f64[S, 64]   # activations

  %w    = param {name="norm.w"} : f64[64]
  %proj = param{name = "proj"}:f64[64,2*S]
  %n = rmsnorm(%x, %w) {eps=1e-6} : f64[S, 64]
  %s = matmul(%n, %proj) : f64[S, S*2]
  %m = causal_mask(%s) : f64[S, 2*S]
  %p = softmax(%m) {axis=-1} : f64[S, 2 * S]
  %t = slice(%p) {end=S + 1 - 1, start=1, axis=0} : f64[S-1, S+S]
  %c = constant {value=[1, -0.0, inf, -inf, nan, 2.5e-3]} : f32[2, 3]
  %7 = kv_write(%p, %t) {pos=P} : f64[S, 2*S]
  return %p, %c, %7
}
)";

constexpr absl::string_view kHandWrittenPrinted = R"(graph block {
  %0 = input {name="x"} : f64[S, 64]
  %1 = param {name="norm.w"} : f64[64]
  %2 = param {name="proj"} : f64[64, 2*S]
  %3 = rmsnorm(%0, %1) {eps=1e-06} : f64[S, 64]
  %4 = matmul(%3, %2) : f64[S, 2*S]
  %5 = causal_mask(%4) : f64[S, 2*S]
  %6 = softmax(%5) {axis=-1} : f64[S, 2*S]
  %7 = slice(%6) {axis=0, end=S, start=1} : f64[S-1, 2*S]
  %8 = constant {value=[1.0, -0.0, inf, -inf, nan, 0.0025]} : f32[2, 3]
  %9 = kv_write(%6, %7) {pos=P} : f64[S, 2*S]
  return %6, %8, %9
}
)";

// The examples in docs/IR.md, as the printer writes them.
constexpr absl::string_view kDocBlockExample = R"(graph block {
  %0 = input {name="x"} : f32[S, 64]
  %1 = param {name="norm.w"} : f32[64]
  %2 = param {name="wq"} : f32[64, 64]
  %3 = param {name="wk"} : f32[64, 64]
  %4 = rmsnorm(%0, %1) {eps=1e-06} : f32[S, 64]
  %5 = matmul(%4, %2) : f32[S, 64]
  %6 = matmul(%4, %3) : f32[S, 64]
  %7 = transpose(%6) {perm=[1, 0]} : f32[64, S]
  %8 = matmul(%5, %7) : f32[S, S]
  %9 = constant {value=[0.125]} : f32[]
  %10 = mul(%8, %9) : f32[S, S]
  %11 = causal_mask(%10) : f32[S, S]
  %12 = softmax(%11) {axis=-1} : f32[S, S]
  return %12
}
)";
constexpr absl::string_view kDocDecodeExample = R"(graph decode {
  %0 = input {name="k_cache"} : f32[4, 2*S, 16]
  %1 = input {name="k_new"} : f32[4, 1, 16]
  %2 = kv_write(%0, %1) {pos=P} : f32[4, 2*S, 16]
  %3 = slice(%2) {axis=1, end=P+1, start=0} : f32[4, P+1, 16]
  return %2, %3
}
)";

// --- Round trips.

TEST(ParserTest, AllOpsGraphRoundTrips) {
  Graph g = AllOpsGraph();
  std::string text = PrintGraph(g);
  absl::StatusOr<Graph> parsed = ParseGraph(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << text;
  EXPECT_EQ(PrintGraph(*parsed), text);
  EXPECT_EQ(parsed->name(), "all_ops");
  EXPECT_EQ(parsed->num_nodes(), g.num_nodes());
  EXPECT_EQ(parsed->outputs(), g.outputs());
  for (ValueId id = 0; id < g.num_nodes(); ++id) {
    EXPECT_EQ(parsed->node(id).op, g.node(id).op) << id;
    EXPECT_EQ(parsed->node(id).operands, g.node(id).operands) << id;
    EXPECT_EQ(parsed->node(id).type, g.node(id).type) << id;
  }
  EXPECT_EQ(parsed->Symbols(),
            (std::set<std::string>{"P", "S", "boxes_kept", "hits", "kept", "quarter", "u"}));
  EXPECT_EQ(parsed->DefinedSymbols(),
            (std::set<std::string>{"boxes_kept", "hits", "kept", "quarter", "u"}));
  EXPECT_EQ(parsed->node(parsed->FindParam("layer.0/b\"\\")).op, OpCode::kParam);
}

// A new op in ops.def must be added to AllOpsGraph, or this fails.
TEST(ParserTest, AllOpsGraphCoversEveryOp) {
  Graph g = AllOpsGraph();
  for (int i = 0; i < kNumOps; ++i) {
    OpCode op = static_cast<OpCode>(i);
    bool found = false;
    for (const Node& n : g.nodes()) found |= n.op == op;
    EXPECT_TRUE(found) << "AllOpsGraph has no '" << OpName(op) << "' node";
  }
}

TEST(ParserTest, SymbolicDimsRoundTrip) {
  const SymExpr T = SymExpr::Symbol("T_2");
  const std::vector<SymExpr> dims = {
      S,
      S + 1,
      2 * S,
      S - 1,
      -S + 8,
      S * S,
      S * T,
      (S + 1) / 2,
      S / (-2),
      (-S) / 3,
      S % 3,
      2 * (S / 3),
      (S / 3) * T,
      SymExpr::Max(S, 4),
      SymExpr::Min(S, T) + 1,
      3 * SymExpr::Max(S + T, 2 * P),
      (S + P) % (T + 1),
      SymExpr::Max(S / 2, T % 4) - SymExpr::Min(-S, P),
      SymExpr::Symbol("max"),
  };
  for (const SymExpr& d : dims) {
    GraphBuilder b("dims");
    b.Output(b.Input("x", DType::kF32, {d, 3}));
    b.Output(
        b.Add(OpCode::kFull, {}, {{"value", 0.0}, {"dtype", DType::kI64}, {"shape", Shape{d}}}));
    absl::StatusOr<Graph> g = std::move(b).Build();
    ASSERT_TRUE(g.ok()) << g.status();
    std::string text = PrintGraph(*g);
    absl::StatusOr<Graph> parsed = ParseGraph(text);
    ASSERT_TRUE(parsed.ok()) << d.ToString() << ": " << parsed.status();
    EXPECT_EQ(PrintGraph(*parsed), text);
    EXPECT_EQ(parsed->type(0).shape[0], d) << d.ToString();
  }
}

TEST(ParserTest, FloatAttributesRoundTripExactly) {
  const std::vector<double> values = {0.1,   -0.0, 1e-300,  5e-324,      1.7976931348623157e308,
                                      -kInf, kInf, 1.0 / 3, 123456789.0, -2.5e-7};
  GraphBuilder b("floats");
  ValueId c = b.Add(OpCode::kConstant, {},
                    {{"value", values},
                     {"dtype", DType::kF64},
                     {"shape", Shape{static_cast<int64_t>(values.size())}}});
  b.Output(c);
  absl::StatusOr<Graph> g = std::move(b).Build();
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<Graph> parsed = ParseGraph(PrintGraph(*g));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const auto& got = parsed->node(0).attrs.Get<std::vector<double>>("value");
  ASSERT_EQ(got.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(got[i], values[i]) << i;
    EXPECT_EQ(std::signbit(got[i]), std::signbit(values[i])) << i;
  }
}

// --- Golden text.

TEST(ParserTest, HandWrittenTextPrintsCanonically) {
  absl::StatusOr<Graph> g = ParseGraph(kHandWritten);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(PrintGraph(*g), kHandWrittenPrinted);
  absl::StatusOr<Graph> again = ParseGraph(kHandWrittenPrinted);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(PrintGraph(*again), kHandWrittenPrinted);
}

TEST(ParserTest, DocExamplesAreCanonical) {
  for (absl::string_view text : {kDocBlockExample, kDocDecodeExample}) {
    absl::StatusOr<Graph> g = ParseGraph(text);
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_EQ(PrintGraph(*g), text);
  }
}

TEST(ParserTest, SourceOpsTakeDtypeAndShapeFromTheirType) {
  absl::StatusOr<Graph> g =
      ParseGraph("graph g {\n  %0 = full {value=-1} : i64[S+1, 2]\n  return %0\n}\n");
  ASSERT_TRUE(g.ok()) << g.status();
  const Node& n = g->node(0);
  EXPECT_EQ(n.attrs.Get<DType>("dtype"), DType::kI64);
  EXPECT_EQ(n.attrs.GetDims("shape"), (Shape{S + 1, 2}));
  EXPECT_EQ(n.attrs.GetFloat("value"), -1.0);
}

TEST(ParserTest, ValueNamesAreRenumberedInOrderOfDefinition) {
  absl::StatusOr<Graph> g = ParseGraph(R"(graph g {
  %7 = input {name="a"} : f32[]
  %a = input {name="b"} : f32[]
  %_b9 = add(%a, %7) : f32[]
  return %_b9, %7
})");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->node(2).operands, (std::vector<ValueId>{1, 0}));
  EXPECT_EQ(g->outputs(), (std::vector<ValueId>{2, 0}));
}

TEST(ParserTest, StringsKeepEscapedAndRawBytes) {
  std::string text = "graph g {\n  %0 = input {name=\"a\\\"b\\\\c\n#d\"} : bool[]\n  return %0\n}";
  absl::StatusOr<Graph> g = ParseGraph(text);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->node(0).name(), "a\"b\\c\n#d");
  absl::StatusOr<Graph> again = ParseGraph(PrintGraph(*g));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->node(0).name(), "a\"b\\c\n#d");
}

// --- Errors.

struct ErrorCase {
  std::string text;
  std::string location;  // the expected `line:col: ` prefix
  std::string substring;
};

// A small valid graph with one line replaced (1-based; line 1 is `graph g {`).
std::string WithLine(int line, absl::string_view replacement) {
  std::vector<std::string> lines = {"graph g {", "  %0 = input {name=\"x\"} : f64[2, S]",
                                    "  %1 = exp(%0) : f64[2, S]", "  return %1", "}"};
  lines[line - 1] = std::string(replacement);
  std::string text;
  for (const std::string& l : lines) absl::StrAppend(&text, l, "\n");
  return text;
}

TEST(ParserTest, ErrorsNameLineColumnAndWhatWasExpected) {
  const std::vector<ErrorCase> cases = {
      {WithLine(3, "  %1 = frob(%0) : f64[2, S]"), "3:8: ", "unknown op 'frob'"},
      {WithLine(2, "  %0 = input {name=\"x\"} : f64[2, S+]"), "2:36: ", "found ']'"},
      {WithLine(3, "  %1 = add(%0) : f64[2, S]"), "3:8: ", "add takes 2 operand(s), got 1"},
      {WithLine(3, "  %1 = exp(%0) {axis=1} : f64[2, S]"),
       "3:17: ", "op 'exp' has no attribute 'axis'"},
      {WithLine(3, "  %1 = softmax(%0) {axes=1} : f64[2, S]"), "3:21: ", "(expected axis)"},
      {WithLine(3, "  %1 = softmax(%0) : f64[2, S]"),
       "3:8: ", "softmax requires attribute 'axis' (int)"},
      {WithLine(3, "  %1 = softmax(%0) {axis=1, axis=1} : f64[2, S]"),
       "3:29: ", "attribute 'axis' is given twice"},
      {WithLine(3, "  %1 = exp(%0) : f64[2, S+1]"),
       "3:18: ", "declared type f64[2, S+1] of %1 differs from the type exp infers, f64[2, S]"},
      {WithLine(3, "  %1 = exp(%0) : f32[2, S]"), "3:18: ", "f64[2, S]"},
      {WithLine(3, "  %1 = exp(%7) : f64[2, S]"), "3:12: ", "undefined value %7"},
      {WithLine(3, "  %1 = exp(%1) : f64[2, S]"), "3:12: ", "undefined value %1"},
      {WithLine(3, "  %0 = exp(%0) : f64[2, S]"), "3:3: ", "value %0 is already defined at 2:3"},
      {WithLine(4, ""), "5:1: ", "expected a node ('%name = op ...') or 'return', found '}'"},
      {WithLine(4, "  return"), "5:1: ", "expected a value name ('%name'), found '}'"},
      {WithLine(4, "  return %1,"), "5:1: ", "found '}'"},
      {WithLine(5, ""), "6:1: ", "expected ',' or '}' after a returned value, found end of input"},
      {WithLine(5, "} }"), "5:3: ", "expected end of input after the graph, found '}'"},
      {WithLine(1, "grph g {"), "1:1: ", "expected 'graph', found 'grph'"},
      {WithLine(1, "graph {"), "1:7: ", "expected a graph name, found '{'"},
      {WithLine(3, "  %1 = exp(%0)  f64[2, S]"), "3:17: ", "'{' or ':'"},
      {WithLine(3, "  %1 = exp %0 : f64[2, S]"), "3:12: ", "expected '(', '{' or ':'"},
      {WithLine(3, "  %1 = exp(%0 : f64[2, S]"), "3:15: ", "expected ',' or ')' after an operand"},
      {WithLine(3, "  %1 = exp(%0) : f65[2, S]"),
       "3:18: ", "expected a dtype (f32, f64, i64 or bool), found 'f65'"},
      {WithLine(3, "  %1 = exp(%0) : f64[2 S]"), "3:24: ", "expected ',' or ']' after a dim"},
      {WithLine(3, "  %1 = exp(%0) : f64[2, S/0]"), "3:28: ", "division by zero"},
      {WithLine(3, "  %1 = softmax(%0) {axis=1.5} : f64[2, S]"),
       "3:26: ", "expected an integer, found '1.5'"},
      {WithLine(3, "  %1 = softmax(%0) {axis=99999999999999999999} : f64[2, S]"),
       "3:26: ", "integer 99999999999999999999 is out of range"},
      {WithLine(3, "  %1 = softmax(%0) {axis=5} : f64[2, S]"),
       "3:8: ", "softmax axis 5 is out of range for rank 2"},
      {WithLine(3, "  %1 = rmsnorm(%0) {eps=1e999} : f64[2, S]"), "3:25: ", "out of the range"},
      {WithLine(3, "  %1 = rmsnorm(%0) {eps=fast} : f64[2, S]"),
       "3:25: ", "expected a number, found 'fast'"},
      {WithLine(3, "  %1 = cast(%0) {dtype=f16} : f64[2, S]"), "3:24: ", "expected a dtype"},
      {WithLine(3, "  %1 = reduce_sum(%0) {axis=0, keepdim=yes} : f64[S]"),
       "3:40: ", "expected true or false, found 'yes'"},
      {WithLine(3, "  %1 = transpose(%0) {perm=[1, 0} : f64[S, 2]"),
       "3:33: ", "expected ',' or ']' after an integer, found '}'"},
      {WithLine(3, "  %1 = matmul(%0, %0) : f64[2, S]"), "3:8: ", "contraction dims differ"},
      {WithLine(2, "  %0 = input {name=\"x\\n\"} : f64[2, S]"),
       "2:22: ", "expected \\\" or \\\\ in a string, found '\\n'"},
      {WithLine(2, "  %0 = input {name=\"x} : f64[2, S]"), "2:20: ", "unterminated string"},
      {WithLine(2, "  %0 = input {name=\"\"} : f64[2, S]"), "2:8: ", "name must not be empty"},
      {WithLine(2, "  %0 = input : f64[2, S]"), "2:8: ", "input requires attribute 'name'"},
      {WithLine(2, "  %0 = input {name=\"x\"} : f64[2, -1]"), "2:8: ", "negative dim -1"},
      {WithLine(3, "  %1 = input {name=\"x\"} : f64[2, S]"),
       "3:3: ", "duplicate input name \"x\" (first defined at 2:3)"},
      {WithLine(3, "  %1 = constant {value=[1, 2]} : f64[3]"), "3:8: ", "has 2 value(s)"},
      {WithLine(3, "  %1a = exp(%0) : f64[2, S]"),
       "3:3: ", "value name %1a is neither all digits nor an identifier"},
      {WithLine(3, "  % = exp(%0) : f64[2, S]"), "3:4: ", "expected digits or an identifier"},
      {WithLine(3, "  %1 = exp(%0) : f64[2, S] \x01"), "3:28: ", "found '\\x01'"},
      {WithLine(3, std::string("  %1 = exp(%0) : f64[2, S]\0", 27)), "3:27: ", "'\\x00'"},
      {"", "1:1: ", "expected 'graph', found end of input"},
      {"graph g {\n  %0 = input {name=\"x\"} : f64[2,", "2:33: ", "found end of input"},
      {"graph g { %0 = input {name=\"x\"} : f64[2, S] return %0 }\n", "", ""},
  };
  for (const ErrorCase& c : cases) {
    absl::StatusOr<Graph> g = ParseGraph(c.text);
    if (c.location.empty()) {
      EXPECT_TRUE(g.ok()) << c.text << g.status();
      continue;
    }
    ASSERT_FALSE(g.ok()) << c.text;
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    std::string message(g.status().message());
    EXPECT_THAT(message, StartsWith(c.location)) << c.text;
    EXPECT_THAT(message, HasSubstr(c.substring)) << c.text;
  }
}

TEST(ParserTest, LimitsAreErrorsNotCrashes) {
  std::string rank65 = "graph g {\n  %0 = input {name=\"x\"} : f32[1";
  for (int i = 0; i < 64; ++i) rank65 += ", 1";
  rank65 += "]\n  return %0\n}\n";
  absl::StatusOr<Graph> g = ParseGraph(rank65);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("65 dims, more than the 64"));

  // The element count of [A+B, C+D, ...] has 2^rank terms.
  std::string sums = "graph g {\n  %0 = input {name=\"x\"} : f32[";
  for (int i = 0; i < 20; ++i) absl::StrAppend(&sums, i > 0 ? ", " : "", "A", i, "+B", i);
  sums += "]\n  %1 = reshape(%0) {shape=[1]} : f32[1]\n  return %1\n}\n";
  g = ParseGraph(sums);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("too complex"));

  // Within one dim, a product of sums multiplies out exponentially.
  std::string product = "graph g {\n  %0 = input {name=\"x\"} : f32[1";
  for (int i = 0; i < 40; ++i) absl::StrAppend(&product, "*(A", i, "+B", i, ")");
  product += "]\n  return %0\n}\n";
  g = ParseGraph(product);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()), StartsWith("2:"));

  std::string deep = "graph g {\n  %0 = input {name=\"x\"} : f32[" + std::string(100000, '(');
  g = ParseGraph(deep);
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(HasLocation(g.status().message())) << g.status();
}

TEST(ParserTest, ParseGraphFile) {
  std::string path = testing::TempDir() + "/parser_test_graph.gir";
  {
    std::ofstream out(path, std::ios::binary);
    out << kHandWritten;
  }
  absl::StatusOr<Graph> g = ParseGraphFile(path);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(PrintGraph(*g), kHandWrittenPrinted);

  {
    std::ofstream out(path, std::ios::binary);
    out << WithLine(3, "  %1 = frob(%0) : f64[2, S]");
  }
  g = ParseGraphFile(path);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()), StartsWith(path + ":3:8: unknown op"));
  std::remove(path.c_str());

  g = ParseGraphFile(path);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr(path));

  g = ParseGraphFile(testing::TempDir());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
}

// --- Robustness: every input gives a graph or a located InvalidArgument.

// Parses `text` and returns whether it parsed; an error must be a located InvalidArgument,
// and a graph must print to text that parses back to the same text.
bool ExpectCleanResult(const std::string& text) {
  absl::StatusOr<Graph> g = ParseGraph(text);
  if (!g.ok()) {
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_TRUE(HasLocation(g.status().message())) << g.status() << "\n" << text;
    return false;
  }
  std::string printed = PrintGraph(*g);
  absl::StatusOr<Graph> again = ParseGraph(printed);
  EXPECT_TRUE(again.ok()) << again.status() << "\nfrom\n" << text;
  if (again.ok()) {
    EXPECT_EQ(PrintGraph(*again), printed);
  }
  return true;
}

TEST(ParserTest, EveryTruncationIsAnErrorOrAGraph) {
  for (const std::string& text : {PrintGraph(AllOpsGraph()), std::string(kHandWritten)}) {
    int parsed = 0;
    for (size_t cut = 0; cut < text.size(); ++cut) {
      parsed += ExpectCleanResult(text.substr(0, cut)) ? 1 : 0;
    }
    // Only the whole text minus its final newline parses.
    EXPECT_EQ(parsed, 1);
  }
}

TEST(ParserTest, RandomMutationsAreErrorsOrGraphs) {
  const std::vector<std::string> bases = {PrintGraph(AllOpsGraph()), std::string(kHandWritten),
                                          WithLine(3, "  %1 = exp(%0) : f64[2, S]")};
  std::string alphabet = "%=(){}[],:#\"\\ \n\t-+*/.0123456789eSPx_maxin";
  alphabet.push_back('\0');
  std::mt19937 rng(20240601);
  int ok = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::string text = bases[rng() % bases.size()];
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % (text.size() + 1);
      char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          text.insert(text.begin() + at, c);
          break;
        case 1:
          if (at < text.size()) text.erase(at, 1);
          break;
        default:
          if (at < text.size()) text[at] = c;
          break;
      }
    }
    ok += ExpectCleanResult(text) ? 1 : 0;
  }
  // Some mutations (in comments, spacing, numbers) keep the text valid.
  EXPECT_GT(ok, 0);
}

}  // namespace
}  // namespace graphjit::ir
