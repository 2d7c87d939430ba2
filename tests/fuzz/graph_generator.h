// The differential fuzz target's graph generator (tests/fuzz/fuzz_differential.cc): the
// fuzzer's bytes, read as choices, build a small well-typed graph over every op of
// ir/ops.def: f32/f64/i64/bool values, exact and symbolic dims, dims and symbols of size 0
// and 1, constants and params with inf/nan/huge values. In a header so that
// graph_generator_test.cc can check what it generates (every op, zero sizes, S = 0) and
// that the committed corpus reaches every op.
#ifndef GRAPHJIT_TESTS_FUZZ_GRAPH_GENERATOR_H_
#define GRAPHJIT_TESTS_FUZZ_GRAPH_GENERATOR_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/builder.h"
#include "ir/op.h"
#include "ir/sym_expr.h"
#include "runtime/interpreter.h"
#include "tests/fuzz/fuzz_util.h"

namespace graphjit::fuzz {

using ir::DType;
using ir::OpCode;
using ir::Shape;
using ir::SymExpr;
using ir::ValueId;
using ir::ValueType;

inline constexpr int64_t kMaxElements = 4096;

// Inputs whose values must be indices into a dim (gather, scatter_add, cross_entropy).
struct IndexInput {
  std::string name;
  SymExpr bound;
};

class Generator {
 public:
  explicit Generator(ByteReader* in) : in_(*in), b_("fuzz") {}

  // Builds the graph; nullopt if the bytes led nowhere useful.
  std::optional<ir::Graph> Build() {
    symbolic_ = in_.Bool();
    float_ = in_.Bool() ? DType::kF32 : DType::kF64;
    s_value_ = static_cast<int64_t>(in_.Pick(std::vector<int>{0, 1, 2, 3, 4, 5, 7}));
    bindings_["S"] = s_value_;
    int num_inputs = 1 + static_cast<int>(in_.Below(3));
    for (int i = 0; i < num_inputs; ++i) NewSource(RandomType());
    int steps = 1 + static_cast<int>(in_.Below(10));
    for (int i = 0; i < steps && !in_.empty(); ++i) Step();
    if (pool_.empty()) return std::nullopt;
    int outputs = 1 + static_cast<int>(in_.Below(2));
    for (int i = 0; i < outputs; ++i) {
      // Prefer the latest values (they depend on the most).
      size_t back = in_.Below(std::min<size_t>(pool_.size(), 3));
      b_.Output(pool_[pool_.size() - 1 - back]);
    }
    absl::StatusOr<ir::Graph> g = std::move(b_).Build();
    if (!g.ok()) Fail("generator built an invalid graph: " + g.status().ToString());
    return *std::move(g);
  }

  const ir::Bindings& bindings() const { return bindings_; }
  const std::vector<IndexInput>& index_inputs() const { return index_inputs_; }
  const runtime::TensorMap& params() const { return params_; }
  runtime::TensorMap& mutable_params() { return params_; }

 private:
  // ---- shapes -----------------------------------------------------------------------
  SymExpr S() const { return symbolic_ ? SymExpr::Symbol("S") : SymExpr(s_value_); }

  SymExpr RandomDim() {
    switch (in_.Below(7)) {
      case 0:
        return 0;
      case 1:
        return 1;
      case 2:
        return 2;
      case 3:
        return 3;
      case 4:
        return S();
      case 5:
        return S();
      default:
        return S() + 1;
    }
  }

  Shape RandomShape(int max_rank = 3) {
    Shape s;
    int rank = static_cast<int>(in_.Below(max_rank + 1));
    for (int i = 0; i < rank; ++i) s.push_back(RandomDim());
    return s;
  }

  DType RandomDType() {
    switch (in_.Below(6)) {
      case 0:
        return DType::kI64;
      case 1:
        return DType::kBool;
      default:
        return float_;
    }
  }

  ValueType RandomType() { return {RandomDType(), RandomShape()}; }

  bool Small(const ValueType& t) const {
    absl::StatusOr<std::vector<int64_t>> dims = ir::EvaluateShape(t.shape, bindings_);
    if (!dims.ok()) return false;
    int64_t n = 1;
    for (int64_t d : *dims) {
      if (d < 0 || (d > 0 && n > kMaxElements / d)) return false;
      n *= d;
    }
    return true;
  }

  // ---- values -----------------------------------------------------------------------
  // A new input or param (params are folded by constant_fold: params_are_constant).
  ValueId NewSource(ValueType t, bool allow_param = true) {
    bool param = allow_param && in_.Below(4) == 0;
    std::string name = absl::StrCat(param ? "p" : "x", counter_++);
    ValueId v = param ? b_.Param(name, t.dtype, t.shape) : b_.Input(name, t.dtype, t.shape);
    if (param) {
      std::optional<runtime::Tensor> value = MakeTensor(t, bindings_, counter_ * 7919);
      if (!value) Fail("cannot make a param");
      params_[name] = *value;
    }
    pool_.push_back(v);
    return v;
  }

  ValueId NewIndexInput(Shape shape, SymExpr bound) {
    std::string name = absl::StrCat("idx", counter_++);
    ValueId v = b_.Input(name, DType::kI64, std::move(shape));
    index_inputs_.push_back({name, std::move(bound)});
    return v;
  }

  // A copy: references into the graph die when a node is appended.
  ValueType T(ValueId v) const { return b_.type(v); }

  // A pool value, preferring later ones; of `dtype` if given (cast if none has it).
  ValueId Any() { return pool_[pool_.size() - 1 - in_.Below(std::min<size_t>(pool_.size(), 4))]; }
  ValueId OfDType(DType dtype) {
    std::vector<ValueId> matching;
    for (ValueId v : pool_) {
      if (T(v).dtype == dtype) matching.push_back(v);
    }
    if (!matching.empty() && in_.Below(4) != 0) return in_.Pick(matching);
    ValueId v = Any();
    if (T(v).dtype == dtype) return v;
    if (std::optional<ValueId> cast = Try(OpCode::kCast, {v}, {{"dtype", dtype}})) return *cast;
    return NewSource({dtype, T(v).shape});
  }
  ValueId Float() { return OfDType(float_); }
  ValueId Numeric() { return OfDType(in_.Below(3) == 0 ? DType::kI64 : float_); }

  // Appends the node if its shape rule accepts it and it stays small.
  std::optional<ValueId> Try(OpCode op, std::vector<ValueId> operands, ir::Attrs attrs = {}) {
    std::vector<ValueType> types;
    for (ValueId v : operands) types.push_back(T(v));
    absl::StatusOr<ValueType> t = ir::InferType(op, types, attrs);
    if (!t.ok() || !Small(*t)) return std::nullopt;
    ValueId v = b_.Add(op, operands, std::move(attrs));
    if (!b_.status().ok())
      Fail("builder rejected a node InferType accepted: " + b_.status().ToString());
    pool_.push_back(v);
    return v;
  }

  // A value shaped like `shape` (a new input) of dtype.
  ValueId Like(const Shape& shape, DType dtype) { return NewSource({dtype, shape}); }

  // `shape` with some dims replaced by 1 (broadcastable to it), maybe with fewer dims.
  Shape BroadcastableTo(const Shape& shape) {
    Shape s;
    size_t drop = in_.Below(shape.size() + 1);
    for (size_t i = drop; i < shape.size(); ++i)
      s.push_back(in_.Below(3) == 0 ? SymExpr(1) : shape[i]);
    return s;
  }

  int64_t Axis(int rank) {
    if (rank == 0) return 0;
    int64_t a = static_cast<int64_t>(in_.Below(rank));
    return in_.Bool() ? a - rank : a;  // negative axes too
  }

  // ---- one step ---------------------------------------------------------------------
  void Step() {
    static const std::vector<std::function<void(Generator*)>> kOps = {
        [](Generator* g) { g->Sources(); },     [](Generator* g) { g->BinaryArith(); },
        [](Generator* g) { g->BinaryArith(); }, [](Generator* g) { g->Compare(); },
        [](Generator* g) { g->Where(); },       [](Generator* g) { g->Unary(); },
        [](Generator* g) { g->Unary(); },       [](Generator* g) { g->Cast(); },
        [](Generator* g) { g->Matmul(); },      [](Generator* g) { g->Transpose(); },
        [](Generator* g) { g->Reshape(); },     [](Generator* g) { g->Expand(); },
        [](Generator* g) { g->Concat(); },      [](Generator* g) { g->Slice(); },
        [](Generator* g) { g->Gather(); },      [](Generator* g) { g->ScatterAdd(); },
        [](Generator* g) { g->Reduce(); },      [](Generator* g) { g->Reduce(); },
        [](Generator* g) { g->Softmax(); },     [](Generator* g) { g->Norm(); },
        [](Generator* g) { g->Rope(); },        [](Generator* g) { g->CrossEntropy(); },
        [](Generator* g) { g->CausalMask(); },  [](Generator* g) { g->KvWrite(); },
        [](Generator* g) { g->Scan(); },        [](Generator* g) { g->Window(); },
        [](Generator* g) { g->MathUnary(); },   [](Generator* g) { g->MathUnary(); },
    };
    kOps[in_.Below(kOps.size())](this);
  }

  void Sources() {
    ValueType t = RandomType();
    switch (in_.Below(4)) {
      case 0: {  // constant: shapes must be constant
        Shape shape;
        int64_t n = 1;
        for (int i = 0, rank = static_cast<int>(in_.Below(3)); i < rank; ++i) {
          int64_t d = static_cast<int64_t>(in_.Below(4));
          shape.push_back(d);
          n *= d;
        }
        std::vector<double> values;
        static const double kValues[] = {
            0, 1, -1, 2.5, -3.75, 1e300, -1e300, 1e20, INFINITY, NAN, 9007199254740993.0};
        for (int64_t i = 0; i < n; ++i) values.push_back(kValues[in_.Below(11)]);
        Try(OpCode::kConstant, {}, {{"value", values}, {"dtype", t.dtype}, {"shape", shape}});
        break;
      }
      case 1: {
        static const double kValues[] = {0, 1, -2.5, 1e300, -INFINITY, NAN, 4e18};
        Try(OpCode::kFull, {},
            {{"value", kValues[in_.Below(7)]}, {"dtype", t.dtype}, {"shape", t.shape}});
        break;
      }
      case 2:
        if (t.dtype == DType::kBool) t.dtype = DType::kI64;
        Try(OpCode::kIota, {}, {{"axis", Axis(t.rank())}, {"dtype", t.dtype}, {"shape", t.shape}});
        break;
      default:
        NewSource(t);
    }
  }

  void BinaryArith() {
    static const OpCode kOps[] = {OpCode::kAdd, OpCode::kSub,     OpCode::kMul,    OpCode::kDiv,
                                  OpCode::kPow, OpCode::kMaximum, OpCode::kMinimum};
    OpCode op = kOps[in_.Below(7)];
    ValueId a = op == OpCode::kPow                                 ? Float()
                : op == OpCode::kMaximum || op == OpCode::kMinimum ? Any()
                                                                   : Numeric();
    ValueId b = SecondOperand(a);
    Try(op, {a, b});
  }

  // A second operand broadcast-compatible with `a`.
  ValueId SecondOperand(ValueId a) {
    switch (in_.Below(4)) {
      case 0:
        return a;
      case 1:
        return Like(BroadcastableTo(T(a).shape), T(a).dtype);
      case 2: {
        std::vector<ValueId> same;
        for (ValueId v : pool_) {
          if (T(v).dtype == T(a).dtype) same.push_back(v);
        }
        return in_.Pick(same);
      }
      default:
        return b_.Scalar(in_.Pick(std::vector<double>{0, 1, -1, 2, -3, 0.5}), T(a).dtype);
    }
  }

  void Compare() {
    static const OpCode kOps[] = {OpCode::kEq, OpCode::kNe, OpCode::kLt,
                                  OpCode::kLe, OpCode::kGt, OpCode::kGe};
    ValueId a = Any();
    // One read per statement: C++ leaves the order of function arguments open (gcc reads
    // the last first, clang the first), and the same bytes must build the same graph under
    // both, so that an input clang's fuzzer finds replays in the gcc build. This is gcc's
    // order, which the committed corpus was picked under.
    ValueId b = SecondOperand(a);
    OpCode op = kOps[in_.Below(6)];
    Try(op, {a, b});
  }

  void Where() {
    ValueId a = Any();
    ValueId c = OfDType(DType::kBool);
    Try(OpCode::kWhere, {c, a, SecondOperand(a)});
  }

  void Unary() {
    static const OpCode kOps[] = {
        OpCode::kNeg,   OpCode::kAbs,      OpCode::kExp,  OpCode::kLog,   OpCode::kSqrt,
        OpCode::kRsqrt, OpCode::kTanh,     OpCode::kSin,  OpCode::kLog1p, OpCode::kSigmoid,
        OpCode::kSilu,  OpCode::kGeluTanh, OpCode::kFloor};
    OpCode op = kOps[in_.Below(std::size(kOps))];
    Try(op, {op == OpCode::kNeg || op == OpCode::kAbs ? Numeric() : Float()});
  }

  // erf and the trigonometric and hyperbolic functions (NaN outside their domains on
  // both sides).
  void MathUnary() {
    static const OpCode kOps[] = {OpCode::kErf,   OpCode::kCos,   OpCode::kTan,  OpCode::kAsin,
                                  OpCode::kAcos,  OpCode::kAtan,  OpCode::kSinh, OpCode::kCosh,
                                  OpCode::kAsinh, OpCode::kAcosh, OpCode::kAtanh};
    Try(kOps[in_.Below(std::size(kOps))], {Float()});
  }

  void Cast() {
    static const DType kTypes[] = {DType::kF32, DType::kF64, DType::kI64, DType::kBool};
    DType dtype = kTypes[in_.Below(4)];  // before the operand: see Compare
    ValueId x = Any();
    Try(OpCode::kCast, {x}, {{"dtype", dtype}});
  }

  void Matmul() {
    ValueId a = Float();
    const Shape s = T(a).shape;
    if (s.size() < 2) {
      Shape m = {RandomDim(), s.empty() ? RandomDim() : s[0]};
      a = Like(m, float_);
    }
    const Shape as = T(a).shape;
    Shape bs;
    if (in_.Bool()) bs.assign(as.begin(), as.end() - 2);  // batch dims
    bs.push_back(as.back());
    bs.push_back(RandomDim());
    Try(OpCode::kMatmul, {a, Like(bs, float_)});
  }

  void Transpose() {
    ValueId x = Any();
    std::vector<int64_t> perm(T(x).rank());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
    for (size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[in_.Below(i)]);
    Try(OpCode::kTranspose, {x}, {{"perm", perm}});
  }

  void Reshape() {
    ValueId x = Any();
    const Shape s = T(x).shape;
    Shape out;
    switch (in_.Below(3)) {
      case 0:
        out = {ir::NumElements(s)};
        break;
      case 1:
        out = s;
        out.insert(out.begin() + in_.Below(s.size() + 1), SymExpr(1));
        break;
      default:
        if (s.size() < 2) return;
        out.assign(s.begin(), s.end() - 2);
        out.push_back(s[s.size() - 2] * s.back());
    }
    Try(OpCode::kReshape, {x}, {{"shape", out}});
  }

  void Expand() {
    ValueId x = Any();
    Shape out;
    if (in_.Bool()) out.push_back(RandomDim());
    for (const SymExpr& d : T(x).shape) out.push_back(d == 1 ? RandomDim() : d);
    Try(OpCode::kExpand, {x}, {{"shape", out}});
  }

  void Concat() {
    ValueId x = Any();
    if (T(x).rank() == 0) return;
    int64_t axis = Axis(T(x).rank());
    std::vector<ValueId> parts = {x};
    for (int i = 0, n = 1 + static_cast<int>(in_.Below(2)); i < n; ++i) {
      if (in_.Bool()) {
        parts.push_back(x);
      } else {
        Shape s = T(x).shape;
        s[axis < 0 ? axis + s.size() : axis] = RandomDim();
        parts.push_back(Like(s, T(x).dtype));
      }
    }
    Try(OpCode::kConcat, parts, {{"axis", axis}});
  }

  void Slice() {
    ValueId x = Any();
    if (T(x).rank() == 0) return;
    int64_t axis = Axis(T(x).rank());
    const SymExpr d = T(x).shape[axis < 0 ? axis + T(x).rank() : axis];
    SymExpr start = in_.Pick(std::vector<SymExpr>{0, 0, 1, d - 1, d});
    SymExpr end = in_.Pick(std::vector<SymExpr>{d, d, 1, d - 1, start});
    Try(OpCode::kSlice, {x}, {{"axis", axis}, {"start", start}, {"end", end}});
  }

  // Windows over the last one or two dims: kernel 1-3, strides and dilations 1-2 (a
  // constant dim shorter than the span is refused at build, a symbolic one at the call).
  void Window() {
    ValueId x = Any();
    const int k = 1 + static_cast<int>(in_.Below(2));
    if (T(x).rank() < k) return;
    std::vector<int64_t> kernel, strides, dilations;
    for (int i = 0; i < k; ++i) {
      kernel.push_back(1 + static_cast<int64_t>(in_.Below(3)));
      strides.push_back(1 + static_cast<int64_t>(in_.Below(2)));
      dilations.push_back(1 + static_cast<int64_t>(in_.Below(2)));
    }
    Try(OpCode::kWindow, {x}, {{"kernel", kernel}, {"strides", strides}, {"dilations", dilations}});
  }

  void Gather() {
    ValueId table = Any();
    if (T(table).rank() == 0) return;
    Shape idx_shape = RandomShape(2);
    ValueId idx = NewIndexInput(idx_shape, T(table).shape[0]);
    Try(OpCode::kGather, {table, idx});
  }

  void ScatterAdd() {
    ValueId table = Numeric();
    if (T(table).rank() == 0) return;
    Shape idx_shape = RandomShape(2);
    ValueId idx = NewIndexInput(idx_shape, T(table).shape[0]);
    const Shape ts = T(table).shape;
    Shape up = idx_shape;
    up.insert(up.end(), ts.begin() + 1, ts.end());
    Try(OpCode::kScatterAdd, {table, idx, Like(up, T(table).dtype)});
  }

  // Reductions and the arg-reductions over one axis; an axis that is S may be bound to 0
  // (argmin / argmax: the interpreter and compiled code both refuse such a call).
  void Reduce() {
    static const OpCode kOps[] = {OpCode::kReduceSum, OpCode::kReduceMax, OpCode::kReduceMean,
                                  OpCode::kArgMin, OpCode::kArgMax};
    OpCode op = kOps[in_.Below(std::size(kOps))];
    ValueId x = op == OpCode::kReduceMean ? Float() : Numeric();
    if (T(x).rank() == 0) return;
    Try(op, {x}, {{"axis", Axis(T(x).rank())}, {"keepdim", in_.Bool()}});
  }

  void Scan() {
    ValueId x = Numeric();
    if (T(x).rank() == 0) return;
    Try(OpCode::kCumSum, {x}, {{"axis", Axis(T(x).rank())}});
  }

  void Softmax() {
    ValueId x = Float();
    if (T(x).rank() == 0) return;
    Try(OpCode::kSoftmax, {x}, {{"axis", Axis(T(x).rank())}});
  }

  void Norm() {
    ValueId x = Float();
    if (T(x).rank() == 0) return;
    Shape d = {T(x).shape.back()};
    static const double kEps[] = {1e-6, 1e-5, 0.5};
    double eps = kEps[in_.Below(3)];
    switch (in_.Below(3)) {
      case 0:
        Try(OpCode::kRmsNorm, {x}, {{"eps", eps}});
        break;
      case 1:
        Try(OpCode::kRmsNorm, {x, Like(d, float_)}, {{"eps", eps}});
        break;
      default:
        Try(OpCode::kLayerNorm, {x, Like(d, float_), Like(d, float_)}, {{"eps", eps}});
    }
  }

  void Rope() {
    ValueId x = Float();
    Shape s = T(x).shape;
    if (s.empty() || !s.back().IsConstant() || *s.back().AsConstant() % 2 != 0) {
      s = RandomShape(2);
      s.push_back(SymExpr(2 * static_cast<int64_t>(in_.Below(3))));
      x = Like(s, float_);
    }
    Try(OpCode::kRope, {x, Like(BroadcastableTo(s), float_), Like(BroadcastableTo(s), float_)});
  }

  void CrossEntropy() {
    ValueId logits = Float();
    if (T(logits).rank() == 0) return;
    const Shape ls = T(logits).shape;
    Shape rows(ls.begin(), ls.end() - 1);
    Try(OpCode::kCrossEntropy, {logits, NewIndexInput(rows, ls.back())});
  }

  void CausalMask() {
    ValueId x = Float();
    if (T(x).rank() < 2) x = Like({RandomDim(), RandomDim()}, float_);
    Try(OpCode::kCausalMask, {x});
  }

  void KvWrite() {
    ValueId cache = Any();
    Shape s = T(cache).shape;
    if (s.size() < 2) {
      s = {RandomDim(), S() + 1, RandomDim()};
      cache = Like(s, T(cache).dtype);
    }
    Shape rows = s;
    SymExpr r = in_.Pick(std::vector<SymExpr>{0, 1, 1, 2});
    rows[rows.size() - 2] = r;
    SymExpr seq = s[s.size() - 2];
    SymExpr pos = in_.Pick(std::vector<SymExpr>{0, 1, seq - r});
    Try(OpCode::kKvWrite, {cache, Like(rows, T(cache).dtype)}, {{"pos", pos}});
  }

  ByteReader& in_;
  ir::GraphBuilder b_;
  bool symbolic_ = false;
  DType float_ = DType::kF64;
  int64_t s_value_ = 0;
  int counter_ = 0;
  ir::Bindings bindings_;
  std::vector<ValueId> pool_;
  std::vector<IndexInput> index_inputs_;
  runtime::TensorMap params_;
};

// Whether `graph` has an op whose compiled code sums floats in an order of its own
// (reductions, matmul, and the composites and scatter_add that decompose into them).
inline bool Sums(const ir::Graph& graph) {
  for (const ir::Node& n : graph.nodes()) {
    switch (n.op) {
      case OpCode::kReduceSum:
      case OpCode::kReduceMean:
      case OpCode::kMatmul:
      case OpCode::kSoftmax:
      case OpCode::kRmsNorm:
      case OpCode::kLayerNorm:
      case OpCode::kCrossEntropy:
      case OpCode::kScatterAdd:
        return true;
      default:
        break;
    }
  }
  return false;
}

// The tolerance output `out` inherits from a float cast on the way to it: to i64
// (cast(rope(x)) : i64, then cumsum), or from f32 to f64 (cast(softmax(x : f32)) : f64).
// Compiled code may round the float by an ulp differently (contracted, vectorized, an
// inline exp), and the cast carries that difference into the integer or the wider float,
// so it is compared like the widest-tolerance float it came from (f32 2e-3, f64 1e-9).
// nullopt when no such cast feeds it: integers must then match exactly, and floats
// within their own dtype's tolerance.
inline std::optional<double> CastFromFloatTolerance(const ir::Graph& graph, ValueId out) {
  std::optional<double> tol;
  std::vector<bool> seen(graph.num_nodes(), false);
  std::vector<ValueId> stack = {out};
  while (!stack.empty()) {
    const ValueId id = stack.back();
    stack.pop_back();
    if (seen[id]) continue;
    seen[id] = true;
    const ir::Node& n = graph.node(id);
    if (n.op == OpCode::kCast) {
      const DType from = graph.node(n.operands[0]).type.dtype;
      const bool widens = n.type.dtype == DType::kF64 && from == DType::kF32;
      if ((n.type.dtype == DType::kI64 && ir::IsFloat(from)) || widens) {
        tol = std::max(tol.value_or(0), from == DType::kF32 ? 2e-3 : 1e-9);
      }
    }
    for (ValueId v : n.operands) stack.push_back(v);
  }
  return tol;
}

// The graph whose interpretation on absolute values (Absolute) estimates the magnitudes a
// reassociated sum's rounding scales with: `graph` with each bounded op whose slope is at
// most 1 (sin, tanh, sigmoid) replaced by abs, and minimum by maximum. sin(x) of a sum x
// of huge terms is determined by the sum's rounding: its error is up to that of x, which
// grows with |x|, not with |sin(x)| <= 1 (found by the differential fuzzer: sin(mean(x) /
// 0.5) with x near 3e9 differed in the 8th digit). Likewise minimum(x, 0.5) passes x's
// error through wherever x is the smaller, however small the bound (found: the mean of
// cancelling huge values, 0 interpreted and -0.36 compiled, then minimum with 0.5).
inline ir::Graph MagnitudeGraph(const ir::Graph& graph) {
  ir::Graph g = graph;
  for (ValueId id = 0; id < g.num_nodes(); ++id) {
    OpCode& op = g.mutable_node(id).op;
    if (op == OpCode::kSin || op == OpCode::kTanh || op == OpCode::kSigmoid) op = OpCode::kAbs;
    if (op == OpCode::kMinimum) op = OpCode::kMaximum;
  }
  return g;
}

// `tensors` with every float element replaced by its absolute value.
inline runtime::TensorMap Absolute(const runtime::TensorMap& tensors) {
  runtime::TensorMap out;
  for (const auto& [name, t] : tensors) {
    if (!ir::IsFloat(t.dtype())) {
      out[name] = t;
      continue;
    }
    std::vector<double> values = t.ToDoubles();
    for (double& v : values) v = std::abs(v);
    out[name] = *runtime::Tensor::FromDoubles(t.dtype(), t.shape(), values);
  }
  return out;
}

// Whether op amplifies its operands' rounding past what the magnitude graph's tolerance
// covers: its result is not within a bounded multiple of the operand's absolute error
// (log, sqrt and the normalizations divide by the value; comparisons, floor and integer
// casts turn any error into a whole step). Division only through its divisor.
inline bool AmplifiesRounding(const ir::Node& n, size_t operand) {
  switch (n.op) {
    case OpCode::kDiv:
      return operand == 1;
    case OpCode::kCast:
      return !ir::IsFloat(n.type.dtype);
    case OpCode::kPow:
    case OpCode::kEq:
    case OpCode::kNe:
    case OpCode::kLt:
    case OpCode::kLe:
    case OpCode::kGt:
    case OpCode::kGe:
    case OpCode::kLog:
    case OpCode::kLog1p:
    case OpCode::kTan:  // the poles, and the inverse functions' domain edges
    case OpCode::kAsin:
    case OpCode::kAcos:
    case OpCode::kAcosh:
    case OpCode::kAtanh:
    case OpCode::kSqrt:
    case OpCode::kRsqrt:
    case OpCode::kFloor:
    case OpCode::kArgMin:
    case OpCode::kArgMax:
    case OpCode::kSoftmax:
    case OpCode::kRmsNorm:
    case OpCode::kLayerNorm:
    case OpCode::kCrossEntropy:
      return true;
    default:
      return false;
  }
}

// The outputs of `graph` not comparable between the interpreter and compiled code on
// these inputs: those computed from a cancelled float sum (reduce_sum, reduce_mean,
// matmul, scatter_add) through an op that amplifies rounding (AmplifiesRounding). A sum
// is cancelled where |value| < 64 eps / tol of the sum of the absolute values (f64: eps
// 2^-53, tol 1e-9; f32: 2^-24, 2e-3): a reassociated order may then move it by more than
// tol relative, so log, sqrt, a comparison or a normalization of it may give anything
// (found by the differential fuzzer: gelu_tanh(log(mean(x))) over x holding -1e300 and
// +1e300, the mean 0.90 interpreted and negative compiled, so log NaN; and rmsnorm of
// such a mean). Where the magnitude graph's tolerance covers the error (sums, products,
// sin of it), nothing is skipped. All false where the probes cannot be interpreted.
inline std::vector<bool> CancelledOutputs(const ir::Graph& graph, const runtime::TensorMap& inputs,
                                          const runtime::TensorMap& params,
                                          const ir::Bindings& bindings) {
  std::vector<bool> skip(graph.outputs().size(), false);
  std::vector<ValueId> sums;
  for (ValueId id = 0; id < graph.num_nodes(); ++id) {
    const ir::Node& n = graph.node(id);
    const bool sum = n.op == OpCode::kReduceSum || n.op == OpCode::kReduceMean ||
                     n.op == OpCode::kMatmul || n.op == OpCode::kScatterAdd;
    if (sum && ir::IsFloat(n.type.dtype)) sums.push_back(id);
  }
  if (sums.empty()) return skip;
  ir::Graph probe = graph;
  probe.set_outputs(sums);
  absl::StatusOr<std::vector<runtime::Tensor>> values =
      runtime::Interpret(probe, inputs, params, bindings);
  absl::StatusOr<std::vector<runtime::Tensor>> magnitudes =
      runtime::Interpret(MagnitudeGraph(probe), Absolute(inputs), Absolute(params), bindings);
  if (!values.ok() || !magnitudes.ok()) return skip;
  // carries[id]: computed from a cancelled sum; amplified[id]: and through an amplifier.
  std::vector<bool> carries(graph.num_nodes(), false), amplified(graph.num_nodes(), false);
  for (size_t i = 0; i < sums.size(); ++i) {
    const double k = 64 * ((*values)[i].dtype() == DType::kF32 ? 0x1p-24 / 2e-3 : 0x1p-53 / 1e-9);
    for (int64_t e = 0; e < (*values)[i].numel(); ++e) {
      const double m = std::abs((*magnitudes)[i].ValueAt(e));
      if (std::isfinite(m) && std::abs((*values)[i].ValueAt(e)) < k * m) carries[sums[i]] = true;
    }
  }
  for (ValueId id = 0; id < graph.num_nodes(); ++id) {
    const ir::Node& n = graph.node(id);
    for (size_t o = 0; o < n.operands.size(); ++o) {
      const ValueId v = n.operands[o];
      if (carries[v]) carries[id] = true;
      if (amplified[v] || (carries[v] && AmplifiesRounding(n, o))) amplified[id] = true;
    }
  }
  for (size_t i = 0; i < skip.size(); ++i) skip[i] = amplified[graph.outputs()[i]];
  return skip;
}

}  // namespace graphjit::fuzz

#endif  // GRAPHJIT_TESTS_FUZZ_GRAPH_GENERATOR_H_
