// Tests of InferType's errors: every op's invalid operands and attributes fail with
// InvalidArgument and a message naming the op, never an abort; the generic arity and
// attribute-schema checks; NormalizeAxis.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/op.h"
#include "ir/shape_rules.h"
#include "tests/ir/shape_rules_test_util.h"

namespace graphjit::ir::shape_rules_testutil {
namespace {

using ::testing::HasSubstr;

// ---------------------------------------------------------------------------------------
// Errors. Every message names the op, and InferType never aborts.

struct ErrorCase {
  OpCode op;
  std::vector<ValueType> in;
  Attrs attrs;
  std::string want;  // a substring of the message
};

Attrs NmsAttrs(int64_t center_point_box) {
  return {{"max_per_class", int64_t{3}},
          {"iou_threshold", 0.5},
          {"score_threshold", 0.0},
          {"center_point_box", center_point_box},
          {"symbol", std::string("k")}};
}

std::vector<ErrorCase> ErrorCases() {
  return {
      // i32 is a storage type: only inputs, params and casts make it, only casts read it.
      {OpCode::kAdd, {I32({2}), I32({2})}, {}, "i32, a storage type: cast it to i64"},
      {OpCode::kReshape, {I32({2})}, Attrs{{"shape", Shape{2}}}, "is i32, a storage type"},
      {OpCode::kConstant,
       {},
       Attrs{{"value", std::vector<double>{1}}, {"dtype", DType::kI32}, {"shape", Shape{}}},
       "i32 is a storage type"},
      {OpCode::kFull,
       {},
       Attrs{{"value", 1.0}, {"dtype", DType::kI32}, {"shape", Shape{2}}},
       "i32 is a storage type"},
      // Sources.
      {OpCode::kInput, {}, Source(DType::kF32, {2, -1}), "negative dim -1"},
      {OpCode::kInput,
       {},
       Attrs{{"name", std::string()}, {"dtype", DType::kF32}, {"shape", Shape{2}}},
       "name must not be empty"},
      {OpCode::kConstant,
       {},
       Attrs{
           {"value", std::vector<double>{1, 2, 3}}, {"dtype", DType::kF32}, {"shape", Shape{2, 2}}},
       "3 value(s) for shape [2, 2]"},
      {OpCode::kConstant,
       {},
       Attrs{{"value", std::vector<double>{1}}, {"dtype", DType::kF32}, {"shape", Shape{S}}},
       "shape must be constant"},
      {OpCode::kFull,
       {},
       Attrs{{"value", 1.0}, {"dtype", DType::kF32}, {"shape", Shape{S, -3}}},
       "negative dim"},
      {OpCode::kIota,
       {},
       Attrs{{"axis", int64_t{0}}, {"dtype", DType::kBool}, {"shape", Shape{S}}},
       "dtype must be numeric"},
      {OpCode::kIota,
       {},
       Attrs{{"axis", int64_t{2}}, {"dtype", DType::kI64}, {"shape", Shape{2, S}}},
       "iota axis 2 is out of range for rank 2"},
      {OpCode::kIota,
       {},
       Attrs{{"axis", int64_t{0}}, {"dtype", DType::kI64}, {"shape", Shape{}}},
       "out of range for rank 0"},
      {OpCode::kIota,
       {},
       Attrs{{"axis", int64_t{0}}, {"dtype", DType::kI64}, {"shape", Shape{-4}}},
       "negative dim"},
      // Broadcasting: a symbol is assumed not to be 1.
      {OpCode::kAdd, {F32({S}), F32({4})}, {}, "cannot broadcast [S] with [4]"},
      {OpCode::kMul, {F32({S}), F32({T})}, {}, "cannot broadcast"},
      {OpCode::kSub, {F32({2, 3}), F32({3, 3, 2})}, {}, "cannot broadcast"},
      {OpCode::kAdd, {F32({S}), F32({S + 1})}, {}, "S vs S+1"},
      // Dtypes.
      {OpCode::kAdd, {F32({2}), F64({2})}, {}, "operand dtypes differ"},
      {OpCode::kDiv, {Bool({2}), Bool({2})}, {}, "bool"},
      {OpCode::kPow, {I64({2}), I64({2})}, {}, "must be f32 or f64"},
      {OpCode::kPow, {F32({2}), F64({2})}, {}, "operand dtypes differ"},
      {OpCode::kLt, {F32({2}), I64({2})}, {}, "operand dtypes differ"},
      {OpCode::kExp, {I64({2})}, {}, "must be f32 or f64, got i64[2]"},
      {OpCode::kSigmoid, {Bool({2})}, {}, "must be f32 or f64"},
      {OpCode::kNeg, {Bool({2})}, {}, "numeric"},
      {OpCode::kAbs, {Bool({})}, {}, "numeric"},
      {OpCode::kWhere, {F32({2}), F32({2}), F32({2})}, {}, "condition must be bool"},
      {OpCode::kWhere, {Bool({2}), F32({2}), I64({2})}, {}, "operand dtypes differ"},
      {OpCode::kWhere, {Bool({3}), F32({2}), F32({2})}, {}, "cannot broadcast"},
      {OpCode::kGather, {F32({10, 4}), F64({2})}, {}, "indices must be i64"},
      {OpCode::kGather, {F32({}), I64({2})}, {}, "rank >= 1"},
      {OpCode::kScatterAdd, {F32({10, 4}), I64({2}), F32({2, 5})}, {}, "updates must be f32[2, 4]"},
      {OpCode::kScatterAdd, {Bool({10}), I64({2}), Bool({2})}, {}, "must be numeric"},
      {OpCode::kScatterAdd, {F32({10, 4}), F32({2}), F32({2, 4})}, {}, "indices must be i64"},
      {OpCode::kReduceMean, {I64({2, 3})}, Reduce(0, false), "must be f32 or f64"},
      {OpCode::kReduceSum, {Bool({2, 3})}, Reduce(0, false), "numeric"},
      {OpCode::kSoftmax, {I64({2})}, Axis(0), "must be f32 or f64"},
      {OpCode::kCrossEntropy, {F32({S, 10}), I64({T})}, {}, "without its last dim"},
      {OpCode::kCrossEntropy, {F32({S, 10}), F32({S})}, {}, "targets must be i64"},
      {OpCode::kCrossEntropy, {F32({}), I64({})}, {}, "without its last dim"},
      {OpCode::kCrossEntropy, {I64({S, 10}), I64({S})}, {}, "logits must be f32 or f64"},
      {OpCode::kCausalMask, {F32({S})}, {}, "rank >= 2"},
      {OpCode::kCausalMask, {I64({S, S})}, {}, "must be f32 or f64"},
      // Matmul.
      {OpCode::kMatmul, {F32({2, 3}), F32({4, 5})}, {}, "contraction dims differ"},
      {OpCode::kMatmul, {F32({S, T}), F32({S, 5})}, {}, "(T vs S)"},
      {OpCode::kMatmul, {F32({3}), F32({3, 5})}, {}, "rank >= 2"},
      {OpCode::kMatmul, {F32({2, 4, 1, 16}), F32({3, 1, 16, S})}, {}, "batch dims"},
      {OpCode::kMatmul, {I64({2, 2}), I64({2, 2})}, {}, "must be f32 or f64"},
      {OpCode::kMatmul, {F32({2, 2}), F64({2, 2})}, {}, "operand dtypes differ"},
      // Layout.
      {OpCode::kTranspose,
       {F32({2, 3, 4})},
       Attrs{{"perm", std::vector<int64_t>{0, 1}}},
       "does not match rank 3"},
      {OpCode::kTranspose,
       {F32({2, 3, 4})},
       Attrs{{"perm", std::vector<int64_t>{0, 1, 1}}},
       "not a permutation"},
      {OpCode::kTranspose,
       {F32({2, 3, 4})},
       Attrs{{"perm", std::vector<int64_t>{0, 1, 3}}},
       "not a permutation"},
      {OpCode::kTranspose,
       {F32({2, 3, 4})},
       Attrs{{"perm", std::vector<int64_t>{0, -1, 1}}},
       "not a permutation"},
      {OpCode::kReshape, {F32({2, S, 16})}, Attrs{{"shape", Shape{S, 16}}}, "element counts"},
      {OpCode::kReshape, {F32({2, 3})}, Attrs{{"shape", Shape{7}}}, "cannot reshape"},
      {OpCode::kReshape, {F32({0})}, Attrs{{"shape", Shape{-1, 0}}}, "negative dim"},
      {OpCode::kExpand, {F32({S})}, Attrs{{"shape", Shape{4}}}, "cannot expand"},
      {OpCode::kExpand, {F32({2, 3})}, Attrs{{"shape", Shape{3}}}, "cannot expand"},
      {OpCode::kExpand, {F32({3})}, Attrs{{"shape", Shape{3, 1}}}, "cannot expand"},
      {OpCode::kExpand, {F32({1})}, Attrs{{"shape", Shape{-2}}}, "negative dim"},
      {OpCode::kConcat, {F32({2, S}), F32({3, S})}, Axis(1), "dim 0 must be 2"},
      {OpCode::kConcat, {F32({2, S}), F64({2, S})}, Axis(1), "expected dtype and rank"},
      {OpCode::kConcat, {F32({2, S}), F32({2})}, Axis(0), "expected dtype and rank"},
      {OpCode::kConcat, {F32({2, S}), F32({2, S})}, Axis(2), "axis 2 is out of range"},
      {OpCode::kConcat, {F32({})}, Axis(0), "out of range for rank 0"},
      {OpCode::kSlice,
       {F32({2, 8})},
       Attrs{{"axis", int64_t{1}}, {"start", SymExpr(2)}, {"end", SymExpr(9)}},
       "not within dim 1"},
      {OpCode::kWindow,
       {F32({2, 4})},
       Attrs{{"kernel", std::vector<int64_t>{3}},
             {"strides", std::vector<int64_t>{1}},
             {"dilations", std::vector<int64_t>{2}}},
       "shorter than the window's span 5"},
      {OpCode::kWindow,
       {F32({4})},
       Attrs{{"kernel", std::vector<int64_t>{1, 1}},
             {"strides", std::vector<int64_t>{1, 1}},
             {"dilations", std::vector<int64_t>{1, 1}}},
       "needs rank >= 2"},
      {OpCode::kWindow,
       {F32({4})},
       Attrs{{"kernel", std::vector<int64_t>{}},
             {"strides", std::vector<int64_t>{}},
             {"dilations", std::vector<int64_t>{}}},
       "non-empty"},
      {OpCode::kSlice,
       {F32({2, 8})},
       Attrs{{"axis", int64_t{1}}, {"start", SymExpr(-1)}, {"end", SymExpr(3)}},
       "not within"},
      {OpCode::kSlice,
       {F32({2, 8})},
       Attrs{{"axis", int64_t{1}}, {"start", SymExpr(5)}, {"end", SymExpr(3)}},
       "not within"},
      {OpCode::kSlice,
       {F32({2, S})},
       Attrs{{"axis", int64_t{1}}, {"start", SymExpr(0)}, {"end", S + 1}},
       "not within"},
      // A start past a constant dim is out of range whatever the (symbolic) end is.
      {OpCode::kSlice,
       {F32({2, 4})},
       Attrs{{"axis", int64_t{1}}, {"start", SymExpr(5)}, {"end", S}},
       "not within"},
      // So is a negative end, whatever the start is.
      {OpCode::kSlice,
       {F32({2, 4})},
       Attrs{{"axis", int64_t{1}}, {"start", P}, {"end", SymExpr(-1)}},
       "not within"},
      {OpCode::kSlice,
       {F32({2, 4})},
       Attrs{{"axis", int64_t{2}}, {"start", SymExpr(0)}, {"end", SymExpr(1)}},
       "slice axis 2 is out of range for rank 2"},
      // Reductions and axes.
      {OpCode::kReduceSum, {F32({2, 3})}, Reduce(2, false), "reduce_sum axis 2 is out of range"},
      {OpCode::kReduceMax, {F32({2, 3})}, Reduce(-3, true), "out of range"},
      {OpCode::kReduceSum, {F32({})}, Reduce(0, true), "out of range for rank 0"},
      {OpCode::kArgMin, {Bool({2, 3})}, Reduce(1, false), "argmin: operand must be numeric"},
      {OpCode::kArgMax, {F32({2, 3})}, Reduce(2, false), "argmax axis 2 is out of range"},
      {OpCode::kArgMin, {F64({4, 0})}, Reduce(1, true), "axis 1 of f64[4, 0] is empty"},
      {OpCode::kArgMax, {F64({0, S})}, Reduce(-2, false), "is empty"},
      {OpCode::kCumSum, {Bool({3})}, Axis(0), "cumsum: operand must be numeric"},
      {OpCode::kCumSum, {F32({})}, Axis(0), "cumsum axis 0 is out of range for rank 0"},
      {OpCode::kCumSum, {F32({2, 3})}, Axis(-3), "out of range"},
      {OpCode::kSoftmax, {F32({2, 3})}, Axis(5), "softmax axis 5"},
      // Norms and rope.
      {OpCode::kRmsNorm, {F32({S, 64}), F32({32})}, Attrs{{"eps", 1e-6}}, "weight must be f32[64]"},
      {OpCode::kRmsNorm, {F32({S, 64}), F64({64})}, Attrs{{"eps", 1e-6}}, "weight"},
      {OpCode::kRmsNorm, {F32({})}, Attrs{{"eps", 1e-6}}, "rank >= 1"},
      {OpCode::kRmsNorm, {I64({2, 4})}, Attrs{{"eps", 1e-6}}, "must be f32 or f64"},
      {OpCode::kLayerNorm,
       {F32({S, 64}), F32({64}), F32({1, 64})},
       Attrs{{"eps", 1e-5}},
       "bias must be f32[64]"},
      {OpCode::kRope, {F32({S, 7}), F32({S, 7}), F32({S, 7})}, {}, "even constant"},
      {OpCode::kRope, {F32({S, T}), F32({S, T}), F32({S, T})}, {}, "even constant"},
      {OpCode::kRope, {F32({S, 8}), F32({2, S, 8}), F32({S, 8})}, {}, "cos"},
      {OpCode::kRope, {F32({S, 8}), F32({S, 8}), F32({S, 4})}, {}, "sin"},
      {OpCode::kRope, {F32({S, 8}), F64({S, 8}), F32({S, 8})}, {}, "operand dtypes differ"},
      {OpCode::kRope, {I64({S, 8}), I64({S, 8}), I64({S, 8})}, {}, "must be f32 or f64"},
      // kv_write bounds.
      {OpCode::kKvWrite,
       {F32({2, 8, 16}), F32({2, 1, 16})},
       Attrs{{"pos", SymExpr(8)}},
       "rows [8, 9) are outside cache dim 1"},
      {OpCode::kKvWrite,
       {F32({2, 8, 16}), F32({2, 1, 16})},
       Attrs{{"pos", SymExpr(-1)}},
       "outside cache"},
      {OpCode::kKvWrite, {F32({2, S, 16}), F32({2, 1, 16})}, Attrs{{"pos", S}}, "outside cache"},
      // More new rows than the cache has room for, wherever they go.
      {OpCode::kKvWrite, {F32({2, 4, 16}), F32({2, 8, 16})}, Attrs{{"pos", P}}, "outside cache"},
      // A constant position past a constant cache, whatever the number of rows.
      {OpCode::kKvWrite,
       {F32({2, 4, 16}), F32({2, T, 16})},
       Attrs{{"pos", SymExpr(5)}},
       "outside cache"},
      {OpCode::kKvWrite,
       {F32({2, S, 16}), F32({2, 1, 8})},
       Attrs{{"pos", P}},
       "do not match cache"},
      {OpCode::kKvWrite, {F32({S, 16}), F32({1, 1, 16})}, Attrs{{"pos", P}}, "same rank >= 2"},
      {OpCode::kKvWrite, {F32({16}), F32({16})}, Attrs{{"pos", P}}, "same rank >= 2"},
      {OpCode::kKvWrite,
       {F32({2, S, 16}), F64({2, 1, 16})},
       Attrs{{"pos", P}},
       "operand dtypes differ"},
      // Data-dependent ops: a symbol name, a rank, the condition, the boxes' layout.
      {OpCode::kNonZero, {F32({3})}, Attrs{{"symbol", std::string("2k")}}, "not a symbol name"},
      {OpCode::kNonZero, {F32({})}, Attrs{{"symbol", std::string("k")}}, "rank >= 1"},
      {OpCode::kCompress,
       {F32({S, 3}), I64({S})},
       Attrs{{"axis", int64_t{0}}, {"symbol", std::string("k")}},
       "condition must be bool of rank 1"},
      {OpCode::kCompress,
       {F32({S, 3}), Bool({S})},
       Attrs{{"axis", int64_t{2}}, {"symbol", std::string("k")}},
       "axis"},
      {OpCode::kNonMaxSuppression,
       {F32({1, S, 5}), F32({1, 2, S})},
       NmsAttrs(0),
       "boxes must be f32 [B, N, 4]"},
      {OpCode::kNonMaxSuppression,
       {F32({1, S, 4}), F32({1, 2, T})},
       NmsAttrs(0),
       "scores must be f32 [B, C, N]"},
      {OpCode::kFactorDim,
       {F32({S, 48})},
       Attrs{{"axis", int64_t{1}}, {"factor", int64_t{32}}, {"symbol", std::string("w")}},
       "dim 1 of f32[S, 48] is not a multiple of 32"},
      {OpCode::kFactorDim,
       {F32({S, 48})},
       Attrs{{"axis", int64_t{0}}, {"factor", int64_t{0}}, {"symbol", std::string("w")}},
       "factor=0 is not positive"},
      {OpCode::kTopK,
       {F32({S, 5})},
       Attrs{{"k", SymExpr(6)}, {"axis", int64_t{1}}, {"largest", true}},
       "k=6 is more than axis 1 of f32[S, 5] holds"},
      {OpCode::kUnique,
       {F32({S, 5})},
       Attrs{{"axis", int64_t{2}}, {"sorted", true}, {"symbol", std::string("u")}},
       "axis 2 is out of range for rank 2"},
      {OpCode::kUniqueCounts,
       {F32({S, 5}), F32({S, 4})},
       Attrs{{"axis", int64_t{0}}, {"sorted", true}},
       "values f32[S, 4] are not a unique of f32[S, 5] along axis 0"},
      {OpCode::kUniqueInverse,
       {F32({S, 5}), I64({S, 5})},
       Attrs{{"axis", int64_t{0}}, {"sorted", true}},
       "are not a unique of"},
      {OpCode::kTopKIndices,
       {Bool({5})},
       Attrs{{"k", SymExpr(1)}, {"axis", int64_t{0}}, {"largest", true}},
       "numeric"},
      {OpCode::kNonMaxSuppression,
       {F32({1, S, 4}), F32({1, 2, S})},
       NmsAttrs(2),
       "center_point_box must be 0 or 1"},
  };
}

TEST(ShapeRulesTest, ErrorCasesFailWithAMessageNamingTheOp) {
  for (const ErrorCase& c : ErrorCases()) {
    absl::StatusOr<ValueType> got = InferType(c.op, c.in, c.attrs);
    if (got.ok()) {
      ADD_FAILURE() << OpName(c.op) << " unexpectedly gave " << TypeToString(*got)
                    << " (wanted error '" << c.want << "')";
      continue;
    }
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << got.status();
    std::string message(got.status().message());
    EXPECT_THAT(message, HasSubstr(c.want)) << OpName(c.op);
    EXPECT_THAT(message, HasSubstr(std::string(OpName(c.op))));
  }
}

// ---------------------------------------------------------------------------------------
// Arity and attribute schemas (checked before any shape rule runs).

TEST(ShapeRulesTest, ArityErrors) {
  struct Case {
    OpCode op;
    int operands;
    std::string want;
  };
  for (const Case& c : std::vector<Case>{{OpCode::kAdd, 1, "add takes 2 operand(s), got 1"},
                                         {OpCode::kAdd, 3, "add takes 2 operand(s), got 3"},
                                         {OpCode::kExp, 0, "exp takes 1 operand(s), got 0"},
                                         {OpCode::kWhere, 2, "where takes 3 operand(s)"},
                                         {OpCode::kConcat, 0, "concat takes at least 1"},
                                         {OpCode::kRmsNorm, 3, "rmsnorm takes 1 to 2"},
                                         {OpCode::kInput, 1, "input takes 0 operand(s)"}}) {
    std::vector<ValueType> in(c.operands, F32({2}));
    Attrs attrs;
    if (c.op == OpCode::kConcat) attrs = Axis(0);
    if (c.op == OpCode::kRmsNorm) attrs = Attrs{{"eps", 1e-6}};
    if (c.op == OpCode::kInput) attrs = Source(DType::kF32, {2});
    absl::StatusOr<ValueType> got = InferType(c.op, in, attrs);
    ASSERT_FALSE(got.ok()) << OpName(c.op);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(got.status().message()), HasSubstr(c.want));
  }
  // Concat is variadic.
  std::vector<ValueType> many(7, F32({S, 2}));
  absl::StatusOr<ValueType> got = InferType(OpCode::kConcat, many, Axis(1));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, F32({S, 14}));
}

TEST(ShapeRulesTest, AttributeSchemaErrors) {
  struct Case {
    OpCode op;
    std::vector<ValueType> in;
    Attrs attrs;
    std::string want;
  };
  const ValueType x = F32({2, S});
  const std::vector<Case> cases = {
      {OpCode::kSoftmax, {x}, {}, "softmax requires attribute 'axis' (int)"},
      {OpCode::kSoftmax,
       {x},
       Attrs{{"axis", 1.0}},
       "softmax attribute 'axis' must be int, got float"},
      {OpCode::kSoftmax,
       {x},
       Attrs{{"axis", int64_t{1}}, {"dim", int64_t{1}}},
       "softmax has no attribute 'dim'"},
      {OpCode::kExp, {x}, Attrs{{"axis", int64_t{1}}}, "exp has no attribute 'axis'"},
      {OpCode::kTranspose, {x}, Attrs{{"perm", int64_t{1}}}, "'perm' must be ints, got int"},
      {OpCode::kReshape,
       {x},
       Attrs{{"shape", std::vector<int64_t>{2, 3}}},
       "'shape' must be dims, got ints"},
      {OpCode::kSlice,
       {x},
       Attrs{{"axis", int64_t{1}}, {"start", int64_t{0}}, {"end", S}},
       "'start' must be dim, got int"},
      {OpCode::kSlice,
       {x},
       Attrs{{"axis", int64_t{1}}, {"start", SymExpr(0)}},
       "slice requires attribute 'end' (dim)"},
      {OpCode::kReduceSum,
       {x},
       Attrs{{"axis", int64_t{1}}, {"keepdim", int64_t{1}}},
       "'keepdim' must be bool, got int"},
      {OpCode::kCast,
       {x},
       Attrs{{"dtype", std::string("f64")}},
       "'dtype' must be dtype, got string"},
      {OpCode::kCast, {x}, {}, "cast requires attribute 'dtype'"},
      {OpCode::kKvWrite,
       {F32({2, S, 4}), F32({2, 1, 4})},
       Attrs{{"pos", std::vector<SymExpr>{P}}},
       "'pos' must be dim, got dims"},
      {OpCode::kRmsNorm,
       {x},
       Attrs{{"eps", std::vector<double>{1e-6}}},
       "'eps' must be float, got floats"},
      {OpCode::kInput,
       {},
       Attrs{{"name", std::string("x")}, {"dtype", DType::kF32}},
       "input requires attribute 'shape' (dims)"},
      {OpCode::kInput,
       {},
       Attrs{{"name", int64_t{3}}, {"dtype", DType::kF32}, {"shape", Shape{2}}},
       "'name' must be string, got int"},
      {OpCode::kConstant,
       {},
       Attrs{{"value", 1.0}, {"dtype", DType::kF32}, {"shape", Shape{}}},
       "'value' must be floats, got float"},
      {OpCode::kFull,
       {},
       Attrs{
           {"value", 1.0}, {"dtype", DType::kF32}, {"shape", Shape{}}, {"name", std::string("x")}},
       "full has no attribute 'name'"},
      {OpCode::kAdd, {x, x}, Attrs{{"axis", int64_t{0}}}, "add has no attribute 'axis'"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ValueType> got = InferType(c.op, c.in, c.attrs);
    ASSERT_FALSE(got.ok()) << OpName(c.op) << ": wanted '" << c.want << "'";
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(got.status().message()), HasSubstr(c.want));
    // CheckOperandsAndAttrs reports the same without the shape rule.
    EXPECT_FALSE(CheckOperandsAndAttrs(c.op, static_cast<int>(c.in.size()), c.attrs).ok());
  }
}

TEST(ShapeRulesTest, NormalizeAxis) {
  EXPECT_EQ(NormalizeAxis(0, 3, "x").value(), 0);
  EXPECT_EQ(NormalizeAxis(-1, 3, "x").value(), 2);
  EXPECT_EQ(NormalizeAxis(-3, 3, "x").value(), 0);
  EXPECT_FALSE(NormalizeAxis(3, 3, "x").ok());
  EXPECT_FALSE(NormalizeAxis(-4, 3, "x").ok());
  EXPECT_FALSE(NormalizeAxis(0, 0, "x").ok());
  EXPECT_FALSE(NormalizeAxis(INT64_MIN, 3, "x").ok());
  EXPECT_FALSE(NormalizeAxis(INT64_MAX, 3, "x").ok());
  EXPECT_THAT(std::string(NormalizeAxis(7, 2, "concat").status().message()),
              HasSubstr("concat axis 7 is out of range for rank 2"));
}

}  // namespace
}  // namespace graphjit::ir::shape_rules_testutil
