// Tests of InferType: the shape rule of every op in ir/ops.def with a valid case, symbolic
// dims, broadcasting, reductions, transposes and kv_write positions, and the op table.
#include "ir/shape_rules.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "ir/op.h"
#include "tests/ir/float_unary_ops.h"
#include "tests/ir/shape_rules_test_util.h"

namespace graphjit::ir::shape_rules_testutil {
namespace {

// One call of InferType that must succeed with `want`.
struct ValidCase {
  OpCode op;
  std::vector<ValueType> in;
  Attrs attrs;
  ValueType want;
};

// Every op at least once; ShapeRulesTest.EveryOpHasAValidCase checks that.
std::vector<ValidCase> ValidCases() {
  std::vector<ValidCase> cases = {
      {OpCode::kInput, {}, Source(DType::kF64, {2, S, 16}), F64({2, S, 16})},
      {OpCode::kParam, {}, Source(DType::kF32, {16, 64}), F32({16, 64})},
      // i32, the storage type: made by inputs, params and casts, read by casts.
      {OpCode::kInput, {}, Source(DType::kI32, {S}), I32({S})},
      {OpCode::kParam, {}, Source(DType::kI32, {4}), I32({4})},
      {OpCode::kCast, {I32({S})}, Attrs{{"dtype", DType::kI64}}, I64({S})},
      {OpCode::kCast, {F32({S})}, Attrs{{"dtype", DType::kI32}}, I32({S})},
      {OpCode::kConstant,
       {},
       Attrs{{"value", std::vector<double>{1, 2, 3, 4, 5, 6}},
             {"dtype", DType::kI64},
             {"shape", Shape{2, 3}}},
       I64({2, 3})},
      {OpCode::kConstant,
       {},
       Attrs{{"value", std::vector<double>{1.5}}, {"dtype", DType::kF32}, {"shape", Shape{}}},
       F32({})},
      {OpCode::kFull,
       {},
       Attrs{{"value", 0.5}, {"dtype", DType::kF64}, {"shape", Shape{S, 4}}},
       F64({S, 4})},
      {OpCode::kIota,
       {},
       Attrs{{"axis", int64_t{1}}, {"dtype", DType::kI64}, {"shape", Shape{2, S}}},
       I64({2, S})},
      {OpCode::kIota,
       {},
       Attrs{{"axis", int64_t{-1}}, {"dtype", DType::kF32}, {"shape", Shape{S}}},
       F32({S})},
      {OpCode::kWhere, {Bool({S, 1}), F32({1, 4}), F32({S, 4})}, {}, F32({S, 4})},
      {OpCode::kWhere, {Bool({}), I64({3}), I64({2, 1})}, {}, I64({2, 3})},
      {OpCode::kCast, {I64({2, S})}, Attrs{{"dtype", DType::kF32}}, F32({2, S})},
      {OpCode::kCast, {F64({S})}, Attrs{{"dtype", DType::kBool}}, Bool({S})},
      {OpCode::kMatmul, {F32({2, S, 16}), F32({16, 8})}, {}, F32({2, S, 8})},
      {OpCode::kMatmul, {F32({2, 4, 1, 16}), F32({2, 1, 16, S})}, {}, F32({2, 4, 1, S})},
      {OpCode::kMatmul, {F64({S, T}), F64({3, 1, T, 5})}, {}, F64({3, 1, S, 5})},
      {OpCode::kTranspose,
       {F32({2, S, 16})},
       Attrs{{"perm", std::vector<int64_t>{0, 2, 1}}},
       F32({2, 16, S})},
      {OpCode::kTranspose, {F32({})}, Attrs{{"perm", std::vector<int64_t>{}}}, F32({})},
      {OpCode::kReshape, {F32({2, S, 16})}, Attrs{{"shape", Shape{2 * S, 16}}}, F32({2 * S, 16})},
      {OpCode::kReshape, {F32({2, S, 16})}, Attrs{{"shape", Shape{S, 32}}}, F32({S, 32})},
      {OpCode::kReshape, {F32({1, 1})}, Attrs{{"shape", Shape{}}}, F32({})},
      {OpCode::kExpand, {F32({S, 1})}, Attrs{{"shape", Shape{2, S, 4}}}, F32({2, S, 4})},
      {OpCode::kConcat, {F32({2, S}), F32({2, T}), F32({2, 3})}, Axis(1), F32({2, S + T + 3})},
      {OpCode::kConcat, {F32({S, 4}), F32({S, 4})}, Axis(-2), F32({2 * S, 4})},
      {OpCode::kConcat, {I64({S})}, Axis(0), I64({S})},
      {OpCode::kSlice,
       {F32({2, S, 16})},
       Attrs{{"axis", int64_t{1}}, {"start", SymExpr(1)}, {"end", S}},
       F32({2, S - 1, 16})},
      {OpCode::kSlice,
       {F32({2, 8})},
       Attrs{{"axis", int64_t{-1}}, {"start", SymExpr(2)}, {"end", SymExpr(8)}},
       F32({2, 6})},
      {OpCode::kSlice,
       {F32({2, S + 1})},
       Attrs{{"axis", int64_t{1}}, {"start", P}, {"end", P + 1}},
       F32({2, 1})},
      {OpCode::kWindow,
       {F32({2, 3, S, 9})},
       Attrs{{"kernel", std::vector<int64_t>{3, 2}},
             {"strides", std::vector<int64_t>{2, 3}},
             {"dilations", std::vector<int64_t>{1, 2}}},
       F32({2, 3, 3, 2, (S - 3) / 2 + 1, 3})},
      {OpCode::kGather, {F32({1000, 64}), I64({2, S})}, {}, F32({2, S, 64})},
      {OpCode::kGather, {I64({T}), I64({})}, {}, I64({})},
      {OpCode::kScatterAdd, {F32({1000, 64}), I64({2, S}), F32({2, S, 64})}, {}, F32({1000, 64})},
      {OpCode::kScatterAdd, {I64({T}), I64({}), I64({})}, {}, I64({T})},
      {OpCode::kReduceSum, {F32({2, S, 16})}, Reduce(1, false), F32({2, 16})},
      {OpCode::kReduceSum, {I64({2, S, 16})}, Reduce(-1, true), I64({2, S, 1})},
      {OpCode::kReduceMax, {F64({S, 4})}, Reduce(0, true), F64({1, 4})},
      {OpCode::kReduceMean, {F32({S})}, Reduce(0, false), F32({})},
      {OpCode::kArgMin, {F64({500, S})}, Reduce(1, false), I64({500})},
      {OpCode::kArgMin, {I64({S, 3})}, Reduce(0, true), I64({1, 3})},
      {OpCode::kArgMax, {F32({2, S, 16})}, Reduce(-1, false), I64({2, S})},
      {OpCode::kCumSum, {F64({1000000})}, Axis(0), F64({1000000})},
      {OpCode::kCumSum, {I64({S, 4})}, Axis(-2), I64({S, 4})},
      {OpCode::kSoftmax, {F32({2, S, S})}, Axis(-1), F32({2, S, S})},
      {OpCode::kRmsNorm, {F32({2, S, 64})}, Attrs{{"eps", 1e-6}}, F32({2, S, 64})},
      {OpCode::kRmsNorm, {F64({S, 64}), F64({64})}, Attrs{{"eps", 1e-5}}, F64({S, 64})},
      {OpCode::kLayerNorm,
       {F32({S, 64}), F32({64}), F32({64})},
       Attrs{{"eps", 1e-5}},
       F32({S, 64})},
      {OpCode::kRope, {F32({2, 4, S, 8}), F32({S, 8}), F32({S, 8})}, {}, F32({2, 4, S, 8})},
      {OpCode::kRope, {F64({S, 2}), F64({1, 2}), F64({S, 1})}, {}, F64({S, 2})},
      {OpCode::kCrossEntropy, {F32({2, S, 100}), I64({2, S})}, {}, F32({})},
      {OpCode::kCausalMask, {F32({2, S, S + P})}, {}, F32({2, S, S + P})},
      {OpCode::kKvWrite, {F32({2, S, 16}), F32({2, 1, 16})}, Attrs{{"pos", P}}, F32({2, S, 16})},
      {OpCode::kKvWrite,
       {F64({4, 8, 16}), F64({4, 3, 16})},
       Attrs{{"pos", SymExpr(5)}},
       F64({4, 8, 16})},
      // A while is typed like its first carried value (the regions are checked by
      // ir/regions.h), loop_result like the carried value it names.
      {OpCode::kWhile,
       {F64({S, 4}), I64({}), F64({4, 4})},
       Attrs{{"carried", int64_t{2}}},
       F64({S, 4})},
      {OpCode::kLoopResult, {F64({S, 4}), I64({})}, Attrs{{"index", int64_t{1}}}, I64({})},
      // A scan is typed like its first carried value; scan_output as it declares.
      {OpCode::kScan,
       {F64({4}), F32({S, 3}), F32({3})},
       Attrs{{"carried", int64_t{1}}, {"scanned", int64_t{1}}},
       F64({4})},
      {OpCode::kScanOutput,
       {F64({4})},
       Attrs{{"index", int64_t{0}}, {"dtype", DType::kF32}, {"shape", Shape{S, 3}}},
       F32({S, 3})},
      // An if is typed as it declares (its branches must return that type).
      {OpCode::kIf,
       {Bool({}), F32({S})},
       Attrs{{"dtype", DType::kF64}, {"shape", Shape{2, S}}},
       F64({2, S})},
      // Data-dependent ops: the count is the symbol they define.
      {OpCode::kNonZero,
       {Bool({S, 3})},
       Attrs{{"symbol", std::string("k")}},
       I64({2, SymExpr::Symbol("k")})},
      {OpCode::kCompress,
       {F32({S, 3}), Bool({T})},
       Attrs{{"axis", int64_t{-1}}, {"symbol", std::string("k")}},
       F32({S, SymExpr::Symbol("k")})},
      {OpCode::kNonMaxSuppression,
       {F32({2, S, 4}), F32({2, 3, S})},
       Attrs{{"max_per_class", int64_t{5}},
             {"iou_threshold", 0.5},
             {"score_threshold", 0.0},
             {"center_point_box", int64_t{1}},
             {"symbol", std::string("k")}},
       I64({SymExpr::Symbol("k"), 3})},
      {OpCode::kTopK,
       {F32({S, 5})},
       Attrs{{"k", SymExpr(3)}, {"axis", int64_t{-1}}, {"largest", true}},
       F32({S, 3})},
      {OpCode::kTopKIndices,
       {I64({4, S})},
       Attrs{{"k", S}, {"axis", int64_t{1}}, {"largest", false}},
       I64({4, S})},
      {OpCode::kUnique,
       {F32({S, 5})},
       Attrs{{"axis", int64_t{0}}, {"sorted", true}, {"symbol", std::string("u")}},
       F32({SymExpr::Symbol("u"), 5})},
      {OpCode::kUniqueIndices,
       {F32({S, 5}), F32({SymExpr::Symbol("u"), 5})},
       Attrs{{"axis", int64_t{0}}, {"sorted", true}},
       I64({SymExpr::Symbol("u")})},
      {OpCode::kUniqueInverse,
       {F32({S, 5}), F32({SymExpr::Symbol("u"), 5})},
       Attrs{{"axis", int64_t{0}}, {"sorted", false}},
       I64({S})},
      {OpCode::kUniqueCounts,
       {I64({4, S}), I64({4, SymExpr::Symbol("u")})},
       Attrs{{"axis", int64_t{-1}}, {"sorted", true}},
       I64({SymExpr::Symbol("u")})},
      {OpCode::kFactorDim,
       {F32({1, S, 64})},
       Attrs{{"axis", int64_t{1}}, {"factor", int64_t{32}}, {"symbol", std::string("h")}},
       F32({1, SymExpr::Symbol("h") * 32, 64})},
      {OpCode::kFactorDim,
       {F32({1, S, 64})},
       Attrs{{"axis", int64_t{2}}, {"factor", int64_t{32}}, {"symbol", std::string("w")}},
       F32({1, S, 64})},
      {OpCode::kAssertDim,
       {F32({S, 3})},
       Attrs{{"axis", int64_t{0}}, {"dim", SymExpr::Symbol("k")}},
       F32({SymExpr::Symbol("k"), 3})},
  };
  // Elementwise binary ops: `[2, 1, S]` with `[3, 1]` broadcasts to `[2, 3, S]`.
  for (OpCode op : {OpCode::kAdd, OpCode::kSub, OpCode::kMul, OpCode::kDiv, OpCode::kMaximum,
                    OpCode::kMinimum}) {
    cases.push_back({op, {F32({2, 1, S}), F32({3, 1})}, {}, F32({2, 3, S})});
    cases.push_back({op, {I64({S}), I64({1})}, {}, I64({S})});
  }
  cases.push_back({OpCode::kPow, {F64({S, 4}), F64({})}, {}, F64({S, 4})});
  for (OpCode op : {OpCode::kEq, OpCode::kNe, OpCode::kLt, OpCode::kLe, OpCode::kGt, OpCode::kGe}) {
    cases.push_back({op, {I64({S, 1}), I64({1, T})}, {}, Bool({S, T})});
  }
  cases.push_back({OpCode::kEq, {Bool({2}), Bool({2})}, {}, Bool({2})});
  for (OpCode op : {OpCode::kNeg, OpCode::kAbs}) {
    cases.push_back({op, {I64({S, 3})}, {}, I64({S, 3})});
    cases.push_back({op, {F32({})}, {}, F32({})});
  }
  for (OpCode op : FloatUnaryOps()) cases.push_back({op, {F64({2, S})}, {}, F64({2, S})});
  return cases;
}

TEST(ShapeRulesTest, ValidCasesInferTheExpectedType) {
  for (const ValidCase& c : ValidCases()) {
    absl::StatusOr<ValueType> got = InferType(c.op, c.in, c.attrs);
    ASSERT_TRUE(got.ok()) << OpName(c.op) << ": " << got.status();
    EXPECT_EQ(*got, c.want) << OpName(c.op) << " gave " << TypeToString(*got);
  }
}

TEST(ShapeRulesTest, EveryOpHasAValidCase) {
  std::set<OpCode> covered;
  for (const ValidCase& c : ValidCases()) covered.insert(c.op);
  for (int i = 0; i < kNumOps; ++i) {
    OpCode op = static_cast<OpCode>(i);
    EXPECT_TRUE(covered.contains(op)) << "no shape-rule test for " << OpName(op);
  }
}

TEST(ShapeRulesTest, OpTableIsConsistent) {
  std::set<std::string> spellings;
  for (int i = 0; i < kNumOps; ++i) {
    OpCode op = static_cast<OpCode>(i);
    const OpInfo& info = GetOpInfo(op);
    EXPECT_EQ(info.code, op);
    EXPECT_TRUE(spellings.insert(info.spelling).second) << info.spelling;
    EXPECT_EQ(OpFromName(info.spelling), op) << info.spelling;
    EXPECT_NE(info.shape_rule, nullptr) << info.spelling;
    EXPECT_TRUE(info.max_arity < 0 || info.max_arity >= info.min_arity) << info.spelling;
  }
  EXPECT_EQ(OpFromName("no_such_op"), std::nullopt);
  EXPECT_EQ(OpFromName(""), std::nullopt);
  EXPECT_EQ(OpName(OpCode::kKvWrite), "kv_write");
}

// ---------------------------------------------------------------------------------------
// Broadcasting details.

TEST(ShapeRulesTest, BroadcastShapes) {
  auto broadcast = [](const Shape& a, const Shape& b) -> std::string {
    absl::StatusOr<Shape> s = BroadcastShapes(a, b);
    return s.ok() ? ShapeToString(*s) : "error";
  };
  EXPECT_EQ(broadcast({2, 1, S}, {3, 1}), "[2, 3, S]");
  EXPECT_EQ(broadcast({3, 1}, {2, 1, S}), "[2, 3, S]");
  EXPECT_EQ(broadcast({S}, {1}), "[S]");
  EXPECT_EQ(broadcast({1}, {S}), "[S]");
  EXPECT_EQ(broadcast({S}, {4}), "error");
  EXPECT_EQ(broadcast({S}, {T}), "error");
  EXPECT_EQ(broadcast({S}, {S}), "[S]");
  EXPECT_EQ(broadcast({2 * S}, {S + S}), "[2*S]");
  EXPECT_EQ(broadcast({}, {}), "[]");
  EXPECT_EQ(broadcast({}, {S, 2}), "[S, 2]");
  EXPECT_EQ(broadcast({0}, {1}), "[0]");
  EXPECT_EQ(broadcast({0}, {2}), "error");
  EXPECT_EQ(broadcast({1, 1}, {1}), "[1, 1]");
}

TEST(ShapeRulesTest, SymbolicDimsAreComparedCanonically) {
  // `2*S` written two ways is one dim.
  absl::StatusOr<ValueType> t = InferType(OpCode::kAdd, {F32({S + S}), F32({2 * S})}, {});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->shape[0], 2 * S);
  // Matmul contraction over `S*T` vs `T*S`.
  t = InferType(OpCode::kMatmul, {F32({4, S * T}), F32({T * S, 2})}, {});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, F32({4, 2}));
  // Reshape counts elements symbolically: [S, T] -> [T, S] and [S*T] are fine.
  t = InferType(OpCode::kReshape, {F32({S, T})}, Attrs{{"shape", Shape{T, S}}});
  EXPECT_TRUE(t.ok()) << t.status();
  t = InferType(OpCode::kReshape, {F32({S, T})}, Attrs{{"shape", Shape{S * T}}});
  EXPECT_TRUE(t.ok()) << t.status();
  t = InferType(OpCode::kReshape, {F32({S, T})}, Attrs{{"shape", Shape{S * S}}});
  EXPECT_FALSE(t.ok());
  // Concat of a slice back together gives the original dim.
  t = InferType(OpCode::kConcat, {F32({P, 4}), F32({S - P, 4})}, Axis(0));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, F32({S, 4}));
}

TEST(ShapeRulesTest, ReduceKeepdim) {
  ValueType x = F32({2, S, 16});
  for (int64_t axis = -3; axis < 3; ++axis) {
    int normalized = static_cast<int>(axis < 0 ? axis + 3 : axis);
    for (OpCode op : {OpCode::kReduceSum, OpCode::kReduceMax, OpCode::kReduceMean}) {
      absl::StatusOr<ValueType> kept = InferType(op, {x}, Reduce(axis, true));
      ASSERT_TRUE(kept.ok()) << kept.status();
      Shape want_kept = x.shape;
      want_kept[normalized] = 1;
      EXPECT_EQ(*kept, F32(want_kept)) << OpName(op) << " axis " << axis;
      absl::StatusOr<ValueType> dropped = InferType(op, {x}, Reduce(axis, false));
      ASSERT_TRUE(dropped.ok()) << dropped.status();
      Shape want_dropped = x.shape;
      want_dropped.erase(want_dropped.begin() + normalized);
      EXPECT_EQ(*dropped, F32(want_dropped)) << OpName(op) << " axis " << axis;
    }
  }
}

TEST(ShapeRulesTest, TransposeAppliesThePermutation) {
  ValueType x = F32({2, S, 16, T});
  absl::StatusOr<ValueType> t =
      InferType(OpCode::kTranspose, {x}, Attrs{{"perm", std::vector<int64_t>{3, 0, 2, 1}}});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, F32({T, 2, 16, S}));
}

TEST(ShapeRulesTest, KvWriteWithSymbolicPositions) {
  const ValueType cache = F32({2, S, 16});
  // P unknown: accepted (checked at run time).
  EXPECT_TRUE(InferType(OpCode::kKvWrite, {cache, F32({2, 1, 16})}, Attrs{{"pos", P}}).ok());
  // S-1 leaves room for exactly one row.
  EXPECT_TRUE(InferType(OpCode::kKvWrite, {cache, F32({2, 1, 16})}, Attrs{{"pos", S - 1}}).ok());
  EXPECT_FALSE(InferType(OpCode::kKvWrite, {cache, F32({2, 2, 16})}, Attrs{{"pos", S - 1}}).ok());
  // Writing all of it at 0 is fine; at 1 it is not.
  EXPECT_TRUE(InferType(OpCode::kKvWrite, {cache, cache}, Attrs{{"pos", SymExpr(0)}}).ok());
  EXPECT_FALSE(InferType(OpCode::kKvWrite, {cache, cache}, Attrs{{"pos", SymExpr(1)}}).ok());
  // Zero new rows fit anywhere within the cache.
  EXPECT_TRUE(
      InferType(OpCode::kKvWrite, {F32({2, 8, 16}), F32({2, 0, 16})}, Attrs{{"pos", SymExpr(8)}})
          .ok());
}

TEST(ShapeRulesTest, TypeToString) {
  EXPECT_EQ(TypeToString(F64({2, S, 16})), "f64[2, S, 16]");
  EXPECT_EQ(TypeToString(Bool({})), "bool[]");
  EXPECT_EQ(TypeToString(I64({S + 1})), "i64[S+1]");
}

}  // namespace
}  // namespace graphjit::ir::shape_rules_testutil
