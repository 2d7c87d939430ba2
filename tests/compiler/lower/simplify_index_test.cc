// Index simplification (compiler/lower/simplify_index.h): golden rewrites, cases where a
// rule must not fire (negative values, symbolic extents, values read from buffers), a
// brute-force soundness check over random expressions, and whole programs (the decode
// layer, TinyGPT) evaluated with and without simplification.
#include "compiler/lower/simplify_index.h"

#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/compiled/call_frame.h"
#include "compiler/lower/lower.h"
#include "compiler/lower/program_eval.h"
#include "compiler/passes/pipeline.h"
#include "gtest/gtest.h"
#include "models/model.h"
#include "runtime/scalar_semantics.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using runtime::TensorMap;

ExprPtr V(int i) { return LoopVar(i); }
ExprPtr C(int64_t v) { return ConstI(v); }
ExprPtr S(int i) { return SymbolValue(i); }
ExprPtr Add(ExprPtr a, ExprPtr b) { return Op(ScalarOp::kAdd, std::move(a), std::move(b)); }
ExprPtr Sub(ExprPtr a, ExprPtr b) { return Op(ScalarOp::kSub, std::move(a), std::move(b)); }
ExprPtr Mul(ExprPtr a, ExprPtr b) { return Op(ScalarOp::kMul, std::move(a), std::move(b)); }
ExprPtr Div(ExprPtr a, ExprPtr b) { return Op(ScalarOp::kDiv, std::move(a), std::move(b)); }
ExprPtr Mod(ExprPtr a, ExprPtr b) { return Op(ScalarOp::kMod, std::move(a), std::move(b)); }
ExprPtr Min(ExprPtr a, ExprPtr b) { return Op(ScalarOp::kMin, std::move(a), std::move(b)); }
ExprPtr Max(ExprPtr a, ExprPtr b) { return Op(ScalarOp::kMax, std::move(a), std::move(b)); }
ExprPtr Lt(ExprPtr a, ExprPtr b) { return Op(ScalarOp::kLt, std::move(a), std::move(b)); }
ExprPtr Clamp(ExprPtr x, int64_t hi) { return Max(Min(std::move(x), C(hi)), C(0)); }

// `e` simplified with loop variable k in [0, extents[k]), as text.
std::string SimpE(const ExprPtr& e, const std::vector<ExprPtr>& extents) {
  return ExprToString(SimplifyIndexExpr(e, extents));
}
std::string Simp(const ExprPtr& e, const std::vector<int64_t>& extents) {
  std::vector<ExprPtr> x;
  for (int64_t n : extents) x.push_back(C(n));
  return SimpE(e, x);
}

// The flat index of k7 in the decode layer (a reshape of a transpose of a reshape):
// ((i0 * 4 + i1 + i2) * 16 + i3) split by 16 and joined again, then split by 128.
ExprPtr K7Flat() {
  ExprPtr f = Add(Mul(Add(Add(Mul(V(0), C(4)), V(1)), V(2)), C(16)), V(3));
  return Add(Mul(Div(f, C(16)), C(16)), Mod(f, C(16)));
}

TEST(SimplifyIndex, DecodeK7PatternCollapses) {
  ExprPtr row = Div(K7Flat(), C(128)), col = Mod(K7Flat(), C(128));
  ASSERT_EQ(ExprToString(row),
            "(((((((((i0 * 4) + i1) + i2) * 16) + i3) / 16) * 16) + ((((((i0 * 4) + i1) + i2) * "
            "16) + i3) % 16)) / 128)");
  // i0 < 2, i1 < 4, i2 < 1, i3 < 16: the flat index is below 128.
  EXPECT_EQ(Simp(row, {2, 4, 1, 16}), "0");
  EXPECT_EQ(Simp(col, {2, 4, 1, 16}), "(((i0 * 64) + (i1 * 16)) + i3)");
  // Bigger ranges: (x / 16) * 16 + x % 16 still collapses to x, the split by 128 stays.
  EXPECT_EQ(Simp(row, {4, 4, 3, 16}), "(((((i0 * 64) + (i1 * 16)) + (i2 * 16)) + i3) / 128)");
  EXPECT_EQ(Simp(col, {4, 4, 3, 16}), "(((((i0 * 64) + (i1 * 16)) + (i2 * 16)) + i3) % 128)");
  // i3 < 17: x % 16 is no longer i3, but the identity needs no range.
  EXPECT_EQ(Simp(K7Flat(), {2, 4, 1, 17}), "(((i0 * 64) + (i1 * 16)) + i3)");
}

TEST(SimplifyIndex, LinearFormsAreCollectedInCanonicalOrder) {
  EXPECT_EQ(Simp(Add(V(1), V(0)), {3, 3}), "(i0 + i1)");
  EXPECT_EQ(Simp(Add(V(0), V(1)), {3, 3}), "(i0 + i1)");
  EXPECT_EQ(Simp(Sub(Add(Mul(V(0), C(3)), V(1)), Mul(C(2), V(0))), {3, 3}), "(i0 + i1)");
  EXPECT_EQ(Simp(Sub(V(0), V(0)), {3}), "0");
  EXPECT_EQ(Simp(Add(Sub(C(5), V(1)), Add(S(0), C(-7))), {3, 3}), "(((i1 * -1) + s0) - 2)");
  EXPECT_EQ(Simp(Mul(Add(V(0), C(1)), C(4)), {3}), "((i0 * 4) + 4)");
  EXPECT_EQ(Simp(Op(ScalarOp::kNeg, Sub(V(0), V(1))), {3, 3}), "((i0 * -1) + i1)");
  // A product of two variables is an atom of its own, its operands in order.
  EXPECT_EQ(Simp(Add(Mul(V(1), V(0)), Mul(V(0), V(1))), {3, 3}), "((i0 * i1) * 2)");
}

TEST(SimplifyIndex, LoopVariablesOfExtentOneAreZero) {
  EXPECT_EQ(Simp(Add(Mul(V(0), C(16)), V(1)), {1, 16}), "i1");
  EXPECT_EQ(Simp(Load(0, ir::DType::kF64, {V(0), V(1)}), {1, 5}), "b0[0, i1]");
  // An extent that is at most 1 by range, too.
  EXPECT_EQ(SimpE(V(0), {Min(S(0), C(1))}), "0");
  EXPECT_EQ(SimpE(V(0), {S(0)}), "i0");
}

TEST(SimplifyIndex, DivModSplitOnlyWhenTheRemainderFits) {
  // (i0 - 1) / 4 with i0 in [0, 4) is -1 or 0: nothing to fold.
  EXPECT_EQ(Simp(Div(Sub(V(0), C(1)), C(4)), {4}), "((i0 - 1) / 4)");
  EXPECT_EQ(Simp(Mod(Sub(V(0), C(1)), C(4)), {4}), "((i0 - 1) % 4)");
  // In one block of 4: folded with floor semantics.
  EXPECT_EQ(Simp(Div(Sub(V(0), C(4)), C(4)), {4}), "-1");
  EXPECT_EQ(Simp(Mod(Sub(V(0), C(4)), C(4)), {4}), "i0");
  EXPECT_EQ(Simp(Div(Add(V(0), C(4)), C(4)), {4}), "1");
  EXPECT_EQ(Simp(Mod(Add(V(0), C(4)), C(4)), {4}), "i0");
  EXPECT_EQ(Simp(Mod(Add(V(0), C(3)), C(4)), {2}), "((i0 + 3) % 4)");
  EXPECT_EQ(Simp(Mod(V(0), C(4)), {5}), "(i0 % 4)");
  EXPECT_EQ(Simp(Mod(V(0), C(4)), {4}), "i0");
  EXPECT_EQ(Simp(Div(V(0), C(4)), {4}), "0");
  // Multiples of the divisor leave the division, whatever their range.
  EXPECT_EQ(Simp(Div(Add(Mul(V(0), C(8)), V(1)), C(4)), {3, 9}), "((i0 * 2) + (i1 / 4))");
  EXPECT_EQ(Simp(Mod(Add(Mul(V(0), C(8)), V(1)), C(4)), {3, 9}), "(i1 % 4)");
  EXPECT_EQ(Simp(Div(Add(Mul(V(0), C(8)), V(1)), C(4)), {3, 4}), "(i0 * 2)");
  // Negative multiples too (floor division is exact on them).
  EXPECT_EQ(Simp(Div(Sub(V(1), Mul(V(0), C(4))), C(4)), {3, 4}), "(i0 * -1)");
  // Common factors and nested divisions.
  EXPECT_EQ(SimpE(Div(Mul(V(0), C(2)), C(4)), {S(0)}), "(i0 / 2)");
  EXPECT_EQ(SimpE(Mod(Mul(V(0), C(2)), C(4)), {S(0)}), "((i0 % 2) * 2)");
  EXPECT_EQ(SimpE(Div(Add(Mul(V(0), C(6)), C(3)), C(9)), {S(0)}), "(((i0 * 2) + 1) / 3)");
  EXPECT_EQ(SimpE(Div(Div(V(0), C(4)), C(8)), {S(0)}), "(i0 / 32)");
  EXPECT_EQ(SimpE(Mod(Mod(V(0), C(16)), C(4)), {S(0)}), "(i0 % 4)");
  EXPECT_EQ(SimpE(Mod(Mod(V(0), C(4)), C(16)), {S(0)}), "(i0 % 4)");
  // Divisors that are not positive constants are left alone (floor semantics differ).
  EXPECT_EQ(Simp(Div(Mul(V(0), C(3)), C(-3)), {4}), "((i0 * 3) / -3)");
  EXPECT_EQ(Simp(Div(V(0), Add(V(1), C(1))), {4, 4}), "(i0 / (i1 + 1))");
  EXPECT_EQ(Simp(Div(V(0), C(0)), {4}), "(i0 / 0)");
}

TEST(SimplifyIndex, DivModIdentityFallsOut) {
  ExprPtr x = V(0);
  EXPECT_EQ(SimpE(Add(Mul(Div(x, C(16)), C(16)), Mod(x, C(16))), {S(0)}), "i0");
  EXPECT_EQ(SimpE(Add(Mul(Mod(x, C(16)), C(2)), Mul(Div(x, C(16)), C(32))), {S(0)}), "(i0 * 2)");
  ExprPtr y = Sub(Mul(V(0), C(3)), V(1));  // may be negative
  EXPECT_EQ(SimpE(Add(Mul(Div(y, C(5)), C(5)), Mod(y, C(5))), {S(0), S(1)}), "((i0 * 3) - i1)");
}

TEST(SimplifyIndex, SymbolicExtentsGiveNoUpperBound) {
  std::vector<ExprPtr> sym = {S(0)};
  EXPECT_EQ(SimpE(Div(V(0), C(4)), sym), "(i0 / 4)");
  EXPECT_EQ(SimpE(Mod(V(0), C(4)), sym), "(i0 % 4)");
  EXPECT_EQ(SimpE(Min(V(0), C(7)), sym), "(i0 min 7)");
  EXPECT_EQ(SimpE(Lt(V(0), C(8)), sym), "(i0 < 8)");
  EXPECT_EQ(SimpE(Div(Sub(V(0), C(1)), C(4)), sym), "((i0 - 1) / 4)");
  // ... but a lower bound of 0, and the bound of the other loops.
  EXPECT_EQ(SimpE(Max(V(0), C(0)), sym), "i0");
  EXPECT_EQ(SimpE(Lt(V(0), C(0)), sym), "0");  // false
  EXPECT_EQ(SimpE(Div(Add(Mul(V(0), C(4)), V(1)), C(4)), {S(0), C(4)}), "i0");
  EXPECT_EQ(SimpE(Div(Add(Mul(V(0), C(4)), V(1)), C(4)), {C(4), S(0)}), "(i0 + (i1 / 4))");
  EXPECT_EQ(SimpE(Mod(Add(Mul(V(0), C(4)), V(1)), C(4)), {C(4), S(0)}), "(i1 % 4)");
  // Symbols are >= 0 and unbounded; an extent expression over them bounds nothing above.
  EXPECT_EQ(SimpE(Div(Add(Mul(S(0), C(8)), V(0)), C(8)), {C(8)}), "s0");
  EXPECT_EQ(SimpE(Div(V(0), C(8)), {Add(S(0), C(1))}), "(i0 / 8)");
  EXPECT_EQ(SimpE(Lt(V(0), Add(S(0), C(1))), {Add(S(0), C(1))}), "(i0 < (s0 + 1))");
}

// The box of a store or load: each index's bounds over the loops; widening takes the
// hull of two boxes dim by dim, and a dim unknown in either stays unknown.
TEST(SimplifyIndex, IndexBoxesWidenToTheirHull) {
  using Range = std::pair<int64_t, int64_t>;
  // A padded map's interior [1, 56] x [1, 56] over 56 x 56 loops; a symbolic extent
  // bounds nothing above.
  IndexBox box = IndexBoxOf({Add(V(0), C(1)), Add(V(1), C(1))}, {C(56), C(56)});
  ASSERT_EQ(box.size(), 2u);
  EXPECT_EQ(box[0], Range(1, 56));
  EXPECT_EQ(box[1], Range(1, 56));
  EXPECT_EQ(IndexBoxOf({V(0)}, {S(0)})[0], std::nullopt);
  // Its top border row 0 and a column past it: the hull is rows [0, 56], columns [1, 57].
  WidenIndexBox(IndexBoxOf({C(0), Add(V(0), C(2))}, {C(56)}), &box);
  EXPECT_EQ(box[0], Range(0, 56));
  EXPECT_EQ(box[1], Range(1, 57));
  // A read whose row is loaded from a buffer (unbounded) leaves the rows unknown for good.
  WidenIndexBox({std::nullopt, Range(3, 4)}, &box);
  EXPECT_EQ(box[0], std::nullopt);
  EXPECT_EQ(box[1], Range(1, 57));
  WidenIndexBox({Range(0, 1), Range(0, 0)}, &box);
  EXPECT_EQ(box[0], std::nullopt);
  EXPECT_EQ(box[1], Range(0, 57));
  // A box of another rank widens only the dims both have.
  WidenIndexBox({Range(-5, 100)}, &box);
  EXPECT_EQ(box[1], Range(0, 57));
}

TEST(SimplifyIndex, MinMaxAndSelectResolveByRange) {
  EXPECT_EQ(Simp(Clamp(V(0), 7), {8}), "i0");
  EXPECT_EQ(Simp(Clamp(V(0), 7), {9}), "(i0 min 7)");
  EXPECT_EQ(Simp(Clamp(Sub(V(0), C(8)), 7), {8}), "0");
  EXPECT_EQ(SimpE(Min(Add(V(0), C(1)), Add(V(0), C(2))), {S(0)}), "(i0 + 1)");
  EXPECT_EQ(Simp(Max(V(1), V(0)), {3, 3}), "(i0 max i1)");
  ExprPtr b = Load(0, ir::DType::kF64, {V(0)});
  ExprPtr other = Load(1, ir::DType::kF64, {V(0)});
  EXPECT_EQ(Simp(Select(Lt(V(0), C(8)), b, other), {8}), "b0[i0]");
  EXPECT_EQ(Simp(Select(Lt(V(0), C(8)), b, other), {10}), "select((i0 < 8), b0[i0], b1[i0])");
  EXPECT_EQ(Simp(Select(Lt(V(0), C(8)), b, b), {10}), "b0[i0]");
  // With i0 < 9, the false arm runs only for i0 = 8.
  EXPECT_EQ(Simp(Select(Lt(V(0), C(8)), b, other), {9}), "select((i0 < 8), b0[i0], b1[8])");
  EXPECT_EQ(SimpE(Select(Lt(V(0), C(0)), C(1), C(2)), {S(0)}), "2");
  // and / or / not of decided conditions fold.
  ExprPtr both = Op(ScalarOp::kAnd, Lt(V(0), C(8)), Lt(V(1), C(3)));
  EXPECT_EQ(Simp(both, {8, 3}), "1");
  EXPECT_EQ(Simp(both, {9, 3}), "(i0 < 8)");
  EXPECT_EQ(Simp(Op(ScalarOp::kNot, both), {8, 3}), "0");
}

TEST(SimplifyIndex, SelectArmsKnowTheirCondition) {
  // Concat of two 8-wide halves as lowering builds it (rotate-half in RoPE): each piece's
  // index clamped into range, the clamps redundant under the select's condition.
  ExprPtr b = Load(0, ir::DType::kF64, {Add(Clamp(V(0), 7), C(8))});
  ExprPtr other = Load(0, ir::DType::kF64, {Clamp(Sub(V(0), C(8)), 7)});
  ExprPtr concat = Select(Lt(V(0), C(8)), b, other);
  EXPECT_EQ(Simp(concat, {16}), "select((i0 < 8), b0[(i0 + 8)], b0[(i0 - 8)])");
  // Nested selects (three pieces) narrow twice; an `and` narrows both variables.
  ExprPtr inner = Select(Lt(V(0), C(12)), Load(0, ir::DType::kF64, {Clamp(Sub(V(0), C(8)), 3)}),
                         Load(0, ir::DType::kF64, {Clamp(Sub(V(0), C(12)), 3)}));
  EXPECT_EQ(Simp(Select(Lt(V(0), C(8)), b, inner), {16}),
            "select((i0 < 8), b0[(i0 + 8)], select((i0 < 12), b0[(i0 - 8)], b0[(i0 - 12)]))");
  ExprPtr cond = Op(ScalarOp::kAnd, Lt(V(0), C(2)), Op(ScalarOp::kGe, V(1), C(5)));
  EXPECT_EQ(Simp(Select(cond, Add(Clamp(V(0), 1), Min(V(1), C(4))), C(0)), {9, 9}),
            "select(((i0 < 2) and (i1 >= 5)), (i0 + 4), 0)");
  // Narrowing to one value makes the variable that constant.
  EXPECT_EQ(Simp(Select(Op(ScalarOp::kEq, V(0), C(3)), Mul(V(0), V(1)), C(0)), {9, 9}),
            "select((i0 == 3), (i1 * 3), 0)");
  // A condition with a negative coefficient: 10 - 2 * i0 < 4 means i0 >= 4.
  ExprPtr neg = Lt(Sub(C(10), Mul(V(0), C(2))), C(4));
  EXPECT_EQ(Simp(Select(neg, Max(V(0), C(4)), Min(V(0), C(3))), {9}), "i0");  // both arms
}

TEST(SimplifyIndex, ValuesReadFromBuffersMayWrap) {
  // b1 is i64 data: b1 * 8 may wrap, so (b1 * 8 + 3) / 4 is not b1 * 2.
  ExprPtr data = Load(1, ir::DType::kI64, {V(0)});
  EXPECT_EQ(Simp(Div(Add(Mul(data, C(8)), C(3)), C(4)), {4}), "(((b1[i0] * 8) + 3) / 4)");
  EXPECT_EQ(Simp(Mod(Mul(data, C(8)), C(8)), {4}), "((b1[i0] * 8) % 8)");
  EXPECT_EQ(Simp(Min(Add(data, C(1)), Add(data, C(2))), {4}), "((b1[i0] + 1) min (b1[i0] + 2))");
  // The ring rules hold under wrap-around.
  EXPECT_EQ(Simp(Sub(Add(data, C(5)), C(5)), {4}), "b1[i0]");
  // A gathered row clamped into a table of s0 rows is a size again.
  ExprPtr row = Max(Min(data, Sub(S(0), C(1))), C(0));
  EXPECT_EQ(Simp(Div(Add(Mul(row, C(16)), V(1)), C(16)), {4, 16}), "((b1[i0] min (s0 - 1)) max 0)");
}

TEST(SimplifyIndex, FloatArithmeticIsLeftAlone) {
  ExprPtr x = Load(0, ir::DType::kF32, {Add(V(0), Mul(V(1), C(0)))});
  ExprPtr f = Op(ScalarOp::kAdd,
                 Op(ScalarOp::kMul, Op(ScalarOp::kAdd, x, ConstF(1, ir::DType::kF32)),
                    ConstF(0, ir::DType::kF32)),
                 Op(ScalarOp::kSub, x, x));
  EXPECT_EQ(Simp(f, {4, 4}), ExprToString(f));
  ExprPtr iota = Cast(Add(Mul(V(0), C(1)), V(1)), ir::DType::kF64);
  EXPECT_EQ(Simp(Op(ScalarOp::kDiv, iota, ConstF(3, ir::DType::kF64)), {1, 4}), "(f64(i1) / 3)");
}

// ---- soundness: random expressions, brute force over the iteration space ----------------

struct Point {
  std::vector<int64_t> vars;
  std::vector<int64_t> symbols;
  const std::vector<int64_t>* data;  // i64 buffer b1
};

int64_t EvalI(const ExprPtr& e, const Point& p);
bool EvalB(const ExprPtr& e, const Point& p) {
  switch (e->kind) {
    case ExprKind::kConst:
      return e->i_value != 0;
    case ExprKind::kSelect:
      return EvalB(e->operands[0], p) ? EvalB(e->operands[1], p) : EvalB(e->operands[2], p);
    case ExprKind::kOp:
      break;
    default:
      ADD_FAILURE() << "bool " << ExprToString(e);
      return false;
  }
  switch (e->op) {
    case ScalarOp::kNot:
      return !EvalB(e->operands[0], p);
    case ScalarOp::kAnd:
      return EvalB(e->operands[0], p) && EvalB(e->operands[1], p);
    case ScalarOp::kOr:
      return EvalB(e->operands[0], p) || EvalB(e->operands[1], p);
    default:
      break;
  }
  int64_t a = EvalI(e->operands[0], p), b = EvalI(e->operands[1], p);
  switch (e->op) {
    case ScalarOp::kEq:
      return a == b;
    case ScalarOp::kNe:
      return a != b;
    case ScalarOp::kLt:
      return a < b;
    case ScalarOp::kLe:
      return a <= b;
    case ScalarOp::kGt:
      return a > b;
    case ScalarOp::kGe:
      return a >= b;
    default:
      ADD_FAILURE() << "bool op " << ExprToString(e);
      return false;
  }
}

int64_t EvalI(const ExprPtr& e, const Point& p) {
  switch (e->kind) {
    case ExprKind::kConst:
      return e->i_value;
    case ExprKind::kLoopVar:
      return p.vars.at(e->index);
    case ExprKind::kSymbol:
      return p.symbols.at(e->index);
    case ExprKind::kLoad:
      return p.data->at(EvalI(e->operands[0], p));
    case ExprKind::kSelect:
      return EvalB(e->operands[0], p) ? EvalI(e->operands[1], p) : EvalI(e->operands[2], p);
    case ExprKind::kCast:
      return EvalB(e->operands[0], p) ? 1 : 0;
    case ExprKind::kOp:
      break;
  }
  int64_t a = EvalI(e->operands[0], p);
  if (e->op == ScalarOp::kNeg) return runtime::WrapNeg(a);
  if (e->op == ScalarOp::kAbs) return runtime::WrapAbs(a);
  int64_t b = EvalI(e->operands[1], p);
  switch (e->op) {
    case ScalarOp::kAdd:
      return runtime::WrapAdd(a, b);
    case ScalarOp::kSub:
      return runtime::WrapSub(a, b);
    case ScalarOp::kMul:
      return runtime::WrapMul(a, b);
    case ScalarOp::kDiv:
      return b == 0 ? 0 : runtime::FloorDivI64(a, b);
    case ScalarOp::kMod:
      return b == 0 ? 0 : runtime::FloorModI64(a, b);
    case ScalarOp::kMin:
      return std::min(a, b);
    case ScalarOp::kMax:
      return std::max(a, b);
    default:
      ADD_FAILURE() << "op " << ExprToString(e);
      return 0;
  }
}

class RandomIndex {
 public:
  RandomIndex(uint64_t seed, int vars, bool symbols, bool data)
      : rng_(seed), vars_(vars), symbols_(symbols), data_(data) {}

  ExprPtr Int(int depth) {
    if (depth == 0 || Chance(0.25)) return Leaf();
    switch (Pick(12)) {
      case 0:
        return Add(Int(depth - 1), Int(depth - 1));
      case 1:
        return Sub(Int(depth - 1), Int(depth - 1));
      case 2:
        return Mul(Int(depth - 1), C(Pick(9) - 3));
      case 3:
        return Chance(0.2) ? Mul(Int(depth - 1), Int(depth - 1))
                           : Mul(C(Pick(5) + 1), Int(depth - 1));
      case 4:
        return Div(Int(depth - 1), Divisor());
      case 5:
        return Mod(Int(depth - 1), Divisor());
      case 6:
        return Min(Int(depth - 1), Int(depth - 1));
      case 7:
        return Max(Int(depth - 1), Int(depth - 1));
      case 8:
        return Select(Bool(depth - 1), Int(depth - 1), Int(depth - 1));
      case 9:
        return Op(Chance(0.5) ? ScalarOp::kNeg : ScalarOp::kAbs, Int(depth - 1));
      case 10: {  // the reshape pattern: (x / c) * c + x % c, and its pieces
        ExprPtr x = Int(depth - 1);
        ExprPtr c = C(Pick(6) + 1);
        return Add(Mul(Div(x, c), c), Mod(x, c));
      }
      default:
        return Cast(Bool(depth - 1), ir::DType::kI64);
    }
  }

  ExprPtr Bool(int depth) {
    static const ScalarOp kCmp[] = {ScalarOp::kEq, ScalarOp::kNe, ScalarOp::kLt,
                                    ScalarOp::kLe, ScalarOp::kGt, ScalarOp::kGe};
    if (depth > 0 && Chance(0.2)) {
      return Op(Chance(0.5) ? ScalarOp::kAnd : ScalarOp::kOr, Bool(depth - 1), Bool(depth - 1));
    }
    return Op(kCmp[Pick(6)], Int(depth), Int(depth));
  }

  int64_t Pick(int64_t n) { return std::uniform_int_distribution<int64_t>(0, n - 1)(rng_); }
  bool Chance(double p) { return std::uniform_real_distribution<double>()(rng_) < p; }

 private:
  ExprPtr Leaf() {
    int64_t kind = Pick(10);
    if (kind < 5) return V(static_cast<int>(Pick(vars_)));
    if (kind == 5 && symbols_) return S(0);
    if (kind == 6 && data_) return Load(1, ir::DType::kI64, {V(static_cast<int>(Pick(vars_)))});
    return C(Pick(13) - 6);
  }
  ExprPtr Divisor() {
    if (Chance(0.1)) return C(-(Pick(4) + 1));
    if (Chance(0.1)) return Add(V(static_cast<int>(Pick(vars_))), C(1));
    return C(Pick(9) + 1);
  }

  std::mt19937_64 rng_;
  int vars_;
  bool symbols_, data_;
};

// Every point of the iteration space of `extents` (loop variables), for each symbol value.
void ForEachPoint(const std::vector<int64_t>& extents,
                  const std::function<void(const std::vector<int64_t>&)>& f) {
  std::vector<int64_t> v(extents.size(), 0);
  for (int64_t e : extents) {
    if (e <= 0) return;
  }
  while (true) {
    f(v);
    size_t d = v.size();
    while (d > 0 && ++v[d - 1] == extents[d - 1]) v[--d] = 0;
    if (d == 0) return;
  }
}

TEST(SimplifyIndex, RandomExpressionsKeepTheirValues) {
  // Huge values in the data buffer make any wrap-around the rules overlook visible.
  const std::vector<int64_t> data = {7, -3, INT64_MAX - 2, INT64_MIN + 1, int64_t{1} << 61, 0};
  int cases = 0, changed = 0;
  for (uint64_t seed = 0; seed < 4000; ++seed) {
    const bool symbolic = seed % 4 == 1, with_data = seed % 4 == 2;
    RandomIndex gen(seed, 3, symbolic, with_data);
    std::vector<int64_t> extents;
    std::vector<ExprPtr> extent_exprs;
    for (int i = 0; i < 3; ++i) {
      extents.push_back(1 + gen.Pick(6));
      extent_exprs.push_back(C(extents.back()));
    }
    if (symbolic) extent_exprs[1] = S(0);  // loop 1 runs to s0
    ExprPtr e = gen.Int(4);
    if (gen.Chance(0.3)) e = Load(0, ir::DType::kF64, {e});  // also through a float load
    ExprPtr s = SimplifyIndexExpr(e, extent_exprs);
    ExprPtr want_e = e->kind == ExprKind::kLoad && e->dtype == ir::DType::kF64 ? e->operands[0] : e;
    ExprPtr got_e = s->kind == ExprKind::kLoad && s->dtype == ir::DType::kF64 ? s->operands[0] : s;
    ASSERT_EQ(s->dtype, e->dtype);
    changed += ExprToString(s) != ExprToString(e);
    for (int64_t sym : symbolic ? std::vector<int64_t>{0, 1, 3, 6} : std::vector<int64_t>{0}) {
      std::vector<int64_t> ext = extents;
      if (symbolic) ext[1] = sym;
      ForEachPoint(ext, [&](const std::vector<int64_t>& vars) {
        Point p{vars, {sym}, &data};
        ASSERT_EQ(EvalI(want_e, p), EvalI(got_e, p))
            << "seed " << seed << " at i = (" << vars[0] << ", " << vars[1] << ", " << vars[2]
            << ") s0 = " << sym << "\n  " << ExprToString(e) << "\n  " << ExprToString(s);
      });
      if (HasFatalFailure()) return;
    }
    ++cases;
  }
  EXPECT_EQ(cases, 4000);
  EXPECT_GT(changed, 2000);  // the rules do fire
}

TEST(SimplifyIndex, IsIdempotentAndDeterministic) {
  for (uint64_t seed = 0; seed < 300; ++seed) {
    RandomIndex gen(seed, 3, seed % 2 == 0, false);
    ExprPtr e = gen.Int(4);
    std::vector<ExprPtr> extents = {C(3), S(0), C(5)};
    ExprPtr once = SimplifyIndexExpr(e, extents);
    EXPECT_EQ(ExprToString(SimplifyIndexExpr(e, extents)), ExprToString(once)) << seed;
    EXPECT_EQ(ExprToString(SimplifyIndexExpr(once, extents)), ExprToString(once)) << seed;
  }
}

// ---- whole programs -----------------------------------------------------------------------

struct Optimized {
  ir::Graph graph;
  TensorMap params;
};

Optimized Optimize(const models::Model& model, const models::TraceOptions& options) {
  Optimized o{*models::TraceModel(model, options), model.params()};
  PassContext ctx{o.params};
  absl::Status s = Pipeline::Default().Run(&o.graph, &ctx);
  EXPECT_TRUE(s.ok()) << s;
  o.params = ctx.params;
  return o;
}

// Runs `program` (lowered from `g`) with the program evaluator; inputs are cloned, as
// caches are written in place.
std::vector<Tensor> Evaluate(const Optimized& o, const LoweredGraph& lowered, const TensorMap& in,
                             const ir::Bindings& bindings) {
  TensorMap inputs;
  for (const auto& [name, t] : in) inputs[name] = t.Clone();
  std::vector<Tensor> constants = ConstantTensors(o.graph, lowered);
  absl::StatusOr<CallFrame> frame =
      PrepareCall(o.graph, lowered, inputs, o.params, constants, bindings);
  EXPECT_TRUE(frame.ok()) << frame.status();
  if (!frame.ok()) return {};
  absl::Status s = EvaluateProgram(lowered.program, frame->args.data(), frame->symbols.data(),
                                   frame->workspace.get());
  EXPECT_TRUE(s.ok()) << s;
  return frame->outputs;
}

// Lowered with and without simplification: the same outputs, bit for bit (no float
// arithmetic changes), with fewer index nodes.
void ExpectSameResults(const Optimized& o, const TensorMap& in, const ir::Bindings& bindings) {
  absl::StatusOr<LoweredGraph> plain = Lower(o.graph, {.simplify_indices = false});
  absl::StatusOr<LoweredGraph> simplified = Lower(o.graph);
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(simplified.ok()) << simplified.status();
  ExprNodeCounts before = CountKernelExprNodes(plain->program);
  ExprNodeCounts after = CountKernelExprNodes(simplified->program);
  EXPECT_LT(after.i64_nodes, before.i64_nodes);
  EXPECT_LE(after.nodes, before.nodes);
  std::vector<Tensor> want = Evaluate(o, *plain, in, bindings);
  std::vector<Tensor> got = Evaluate(o, *simplified, in, bindings);
  ASSERT_EQ(want.size(), got.size());
  ASSERT_FALSE(want.empty());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(want[i].TypeString(), got[i].TypeString()) << "output " << i;
    EXPECT_EQ(want[i].ToDoubles(), got[i].ToDoubles()) << "output " << i;
  }
  // Simplifying again changes nothing.
  Program again = simplified->program;
  SimplifyKernelIndices(&again);
  EXPECT_EQ(ProgramToString(again), ProgramToString(simplified->program));
}

TEST(SimplifyIndex, DecodeLayerGivesTheSameResults) {
  auto model = *models::CreateModel("decode");
  for (int64_t S : {1, 7, 33}) {
    for (bool symbolic : {true, false}) {
      SCOPED_TRACE(absl::StrCat("S=", S, symbolic ? " symbolic" : " exact"));
      models::TraceOptions options;
      if (!symbolic) options.fixed_dims = {{"S", S}};
      Optimized o = Optimize(*model, options);
      ExpectSameResults(o, *model->ExampleInputs({{"S", S}}, 3), {{"P", S - 1}});
    }
  }
}

TEST(SimplifyIndex, DecodeLayerK7HasNoSplitLeft) {
  auto model = *models::CreateModel("decode");
  Optimized o = Optimize(*model, {});
  absl::StatusOr<LoweredGraph> lowered = Lower(o.graph);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  std::string listing = ProgramToString(lowered->program);
  EXPECT_EQ(listing.find("/ 128"), std::string::npos) << listing;
  EXPECT_EQ(listing.find("% 128"), std::string::npos) << listing;
  EXPECT_EQ(listing.find(" min 7"), std::string::npos) << listing;  // concat clamps
}

TEST(SimplifyIndex, TinyGPTGivesTheSameResults) {
  for (const char* spec : {"tinygpt:L=1,d=16,T=8,V=11,B=2", "tinygpt:L=2,d=32,T=16,V=13,B=3"}) {
    SCOPED_TRACE(spec);
    auto model = *models::CreateModel(spec);
    Optimized o = Optimize(*model, {});
    ExpectSameResults(o, *model->ExampleInputs({}, 2), {});
  }
}

// n split over an image's rows and columns is consecutive in memory where the image's
// row is exactly the split's width; not inside a padded buffer's interior (rows of W + 2)
// nor along a transposed index.
TEST(SimplifyIndex, ConsecutiveInMemoryThroughDivMod) {
  const std::vector<ExprPtr> extents = {C(1), C(256), C(3136)};
  const std::vector<ExprPtr> image = {C(1), C(256), C(56), C(56)};
  EXPECT_TRUE(
      ConsecutiveInMemory({C(0), V(1), Div(V(2), C(56)), Mod(V(2), C(56))}, image, 2, extents));
  EXPECT_TRUE(ConsecutiveInMemory({C(0), V(1), C(3), Add(V(2), C(1))}, image, 2, extents));
  const std::vector<ExprPtr> padded = {C(1), C(256), C(58), C(58)};
  EXPECT_FALSE(ConsecutiveInMemory(
      {C(0), V(1), Add(Div(V(2), C(56)), C(1)), Add(Mod(V(2), C(56)), C(1))}, padded, 2, extents));
  EXPECT_FALSE(ConsecutiveInMemory({C(0), V(2), C(0), V(1)}, image, 2, extents));
  EXPECT_FALSE(ConsecutiveInMemory({C(0), V(1), Mul(V(2), C(2)), C(0)}, image, 2, extents));
  EXPECT_FALSE(ConsecutiveInMemory({C(0), V(1)}, image, 2, extents));  // rank mismatch
}

}  // namespace
}  // namespace graphjit::compiler
