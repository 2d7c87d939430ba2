// The parts of lowering, each on its own: index algebra (golden expressions), fusion
// decisions (what gets a buffer, and what must not) and the matmul strategy (the workspace
// plan: buffer_plan_test.cc).
#include <string>
#include <vector>

#include "compiler/lower/fusion.h"
#include "compiler/lower/index_exprs.h"
#include "compiler/lower/matmul_strategy.h"
#include "gtest/gtest.h"
#include "ir/parser.h"

namespace graphjit::compiler {
namespace {

const ir::SymExpr kS = ir::SymExpr::Symbol("S");

std::vector<std::string> Strings(const std::vector<ExprPtr>& es) {
  std::vector<std::string> out;
  for (const ExprPtr& e : es) out.push_back(ExprToString(e));
  return out;
}

ir::Graph Parse(const char* text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : ir::Graph();
}

TEST(IndexExprs, SymbolsReadTheSymbolsArray) {
  const std::vector<std::string> symbols = {"P", "S"};
  EXPECT_EQ(ExprToString(SymToExpr(2 * kS + 1, symbols)), "((2 * s1) + 1)");
  EXPECT_EQ(ExprToString(SymToExpr(ir::SymExpr(7), symbols)), "7");
  EXPECT_EQ(ExprToString(SymToExpr(ir::SymExpr::FloorDiv(kS, 4), symbols)), "(s1 / 4)");
}

TEST(IndexExprs, BroadcastReadsElementZeroOfSizeOneDims) {
  const std::vector<ExprPtr> idx = LoopVars(3);
  // [1, S] against [4, 1, S]: the leading dim is dropped, the size-1 dim reads 0.
  EXPECT_EQ(Strings(BroadcastIndex({1, kS}, {4, 1, kS}, idx)),
            (std::vector<std::string>{"i1", "i2"}));
  EXPECT_EQ(Strings(BroadcastIndex({4, 1, kS}, {4, 5, kS}, idx)),
            (std::vector<std::string>{"i0", "0", "i2"}));
  // Must not fire: a size-1 dim against a size-1 result dim is the loop variable.
  EXPECT_EQ(Strings(BroadcastIndex({1}, {1}, LoopVars(1))), (std::vector<std::string>{"i0"}));
}

TEST(IndexExprs, WindowReadsPositionTimesStridePlusOffsetTimesDilation) {
  // [n, c, k0, k1, o0, o1] of a 2-D window, strides 2 x 1, dilations 1 x 3 (Op drops the
  // products by 1).
  EXPECT_EQ(Strings(WindowIndex(LoopVars(6), {3, 3}, {2, 1}, {1, 3})),
            (std::vector<std::string>{"i0", "i1", "((i4 * 2) + i2)", "(i5 + (i3 * 3))"}));
}

TEST(IndexExprs, ReshapeMapsEqualDimsDirectlyAndOthersThroughTheFlatIndex) {
  const std::vector<std::string> symbols = {"S"};
  // [S, 4] -> [S, 1, 4]: same non-1 dims, no arithmetic.
  EXPECT_EQ(Strings(ReshapeIndex({kS, 4}, {kS, 1, 4}, LoopVars(3), symbols)),
            (std::vector<std::string>{"i0", "i2"}));
  // [2, 6] -> [3, 4]: through the flat index i0 * 4 + i1.
  EXPECT_EQ(Strings(ReshapeIndex({2, 6}, {3, 4}, LoopVars(2), symbols)),
            (std::vector<std::string>{"(((i0 * 4) + i1) / 6)", "(((i0 * 4) + i1) % 6)"}));
}

TEST(Fusion, CheapChainsAndValuesReadTwiceByOneNodeInline) {
  ir::Graph g = Parse(R"(graph f {
    %x = input {name="x"} : f32[8]
    %n = neg(%x) : f32[8]
    %a = add(%n, %n) : f32[8]
    %e = exp(%x) : f32[8]
    %m = mul(%e, %e) : f32[8]
    %r = reduce_sum(%m) {axis=0, keepdim=false} : f32[]
    %o = add(%a, %r) : f32[8]
    return %o
  })");
  FusionPolicy policy(g);
  std::vector<int> buffer_of(g.num_nodes(), -1);
  buffer_of[0] = 0;  // the input
  std::vector<bool> decided;
  for (ir::ValueId id = 1; id < g.num_nodes(); ++id) {
    const bool materialize = policy.Decide(id, buffer_of);
    decided.push_back(materialize);
    if (materialize) {
      buffer_of[id] = static_cast<int>(id);
      policy.Materialized(id);
    }
  }
  // neg (cost 1) is read twice but inlined; add of it (cost 3) has one user: inlined.
  EXPECT_FALSE(decided[0]) << "neg";
  EXPECT_FALSE(decided[1]) << "add";
  // exp (cost 8) is read twice, both times by the mul: inlined there, built once.
  EXPECT_FALSE(decided[2]) << "exp";
  EXPECT_FALSE(decided[3]) << "mul";
  EXPECT_TRUE(decided[4]) << "reduce_sum has a kernel of its own";
  EXPECT_TRUE(decided[5]) << "the output";
  EXPECT_EQ(policy.cost(1), 1);
  EXPECT_EQ(policy.cost(2), 3);
}

// Decisions in node order, each materialized value then read from its buffer.
std::vector<bool> DecideAll(const ir::Graph& g, int inputs) {
  FusionPolicy policy(g);
  std::vector<int> buffer_of(g.num_nodes(), -1);
  std::vector<bool> decided(g.num_nodes(), true);
  for (ir::ValueId id = 0; id < g.num_nodes(); ++id) {
    if (id >= inputs) decided[id] = policy.Decide(id, buffer_of);
    if (decided[id]) {
      buffer_of[id] = static_cast<int>(id);
      policy.Materialized(id);
    }
  }
  return decided;
}

TEST(Fusion, UsersMeetingInOneCheapConsumerShareTheInlinedValue) {
  ir::Graph g = Parse(R"(graph f {
    %x = input {name="x"} : f32[8]
    %w = input {name="w"} : f32[8]
    %p = mul(%x, %w) : f32[8]
    %d = add(%p, %x) : f32[8]
    %t = add(%d, %w) : f32[8]
    %u = maximum(%t, %x) : f32[8]
    %h = mul(%d, %u) : f32[8]
    %q = mul(%x, %w) : f32[8]
    %e = add(%q, %w) : f32[8]
    %s = sigmoid(%e) : f32[8]
    %y = mul(%e, %s) : f32[8]
    %k = mul(%w, %x) : f32[8]
    %f = add(%k, %w) : f32[8]
    %r = reduce_sum(%f) {axis=0, keepdim=false} : f32[]
    %z = add(%f, %r) : f32[8]
    %o1 = add(%h, %y) : f32[8]
    %o = add(%o1, %z) : f32[8]
    return %o
  })");
  const std::vector<bool> decided = DecideAll(g, 2);
  // %d's users (%t and %h) meet at %h through cheap ops (hardswish's shape): inlined.
  EXPECT_FALSE(decided[3]) << "d";
  // Must not fire: %e's users meet past a sigmoid (x * sigmoid(x)), whose constants would
  // crowd the producer's out of the registers; %f's never meet (a reduction reads it).
  EXPECT_TRUE(decided[8]) << "e";
  EXPECT_TRUE(decided[12]) << "f";
}

TEST(Fusion, ExpensiveMatmulRhsIsMaterializedButAnAxpyLhsIsNot) {
  ir::Graph g = Parse(R"(graph m {
    %a = input {name="a"} : f32[4, 8]
    %b = input {name="b"} : f32[8, 4]
    %ea = exp(%a) : f32[4, 8]
    %eb = exp(%b) : f32[8, 4]
    %c = matmul(%ea, %eb) : f32[4, 4]
    return %c
  })");
  FusionPolicy policy(g);
  std::vector<int> buffer_of = {0, 1, -1, -1, -1};
  EXPECT_FALSE(policy.Decide(2, buffer_of)) << "the lhs is evaluated once per (m, k)";
  EXPECT_TRUE(policy.Decide(3, buffer_of)) << "the rhs would be recomputed per element";
  EXPECT_TRUE(policy.Decide(4, buffer_of));
}

TEST(MatmulStrategy, BlasFromTheThresholdAndNeverForMatrixVector) {
  auto uses_blas = [](const char* a, const char* b, const char* c) {
    ir::Graph g = Parse(absl::StrCat("graph m {\n  %a = input {name=\"a\"} : ", a,
                                     "\n  %b = input {name=\"b\"} : ", b,
                                     "\n  %c = matmul(%a, %b) : ", c, "\n  return %c\n}")
                            .c_str());
    return UseExternMatmul(g, 2);
  };
  EXPECT_TRUE(uses_blas("f32[16, 16]", "f32[16, 16]", "f32[16, 16]"));   // 4096 MACs
  EXPECT_FALSE(uses_blas("f32[16, 16]", "f32[16, 15]", "f32[16, 15]"));  // 3840
  EXPECT_FALSE(uses_blas("f32[1, 512]", "f32[512, 512]", "f32[1, 512]")) << "M = 1";
  EXPECT_FALSE(uses_blas("f32[S, 16]", "f32[16, 16]", "f32[S, 16]")) << "S counts as 1";
  EXPECT_TRUE(SwapsLastTwoAxes({0, 2, 1}));
  EXPECT_FALSE(SwapsLastTwoAxes({1, 0, 2}));
  EXPECT_FALSE(SwapsLastTwoAxes({0}));
  // n (loop variable 1) innermost when the rhs load is contiguous along it.
  EXPECT_EQ(ChooseMatmulOrder(Load(0, ir::DType::kF32, {LoopVar(2), LoopVar(1)}), 1),
            MatmulOrder::kAxpy);
  EXPECT_EQ(ChooseMatmulOrder(Load(0, ir::DType::kF32, {LoopVar(1), LoopVar(2)}), 1),
            MatmulOrder::kDot);
}

}  // namespace
}  // namespace graphjit::compiler
