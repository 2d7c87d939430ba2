// The differential fuzz target's graph generator (graph_generator.h): each step reads a
// few choices from the fuzzer's bytes and appends a node of one kind, keeping only nodes
// whose shape rule accepts them and whose results stay small.
#include "tests/fuzz/graph_generator.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ir/builder.h"
#include "ir/op.h"
#include "ir/sym_expr.h"
#include "runtime/interpreter.h"
#include "tests/fuzz/fuzz_util.h"

namespace graphjit::fuzz {

std::optional<ir::Graph> Generator::Build() {
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

SymExpr Generator::RandomDim() {
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

Shape Generator::RandomShape(int max_rank) {
  Shape s;
  int rank = static_cast<int>(in_.Below(max_rank + 1));
  for (int i = 0; i < rank; ++i) s.push_back(RandomDim());
  return s;
}

DType Generator::RandomDType() {
  switch (in_.Below(6)) {
    case 0:
      return DType::kI64;
    case 1:
      return DType::kBool;
    default:
      return float_;
  }
}

ValueType Generator::RandomType() { return {RandomDType(), RandomShape()}; }

bool Generator::Small(const ValueType& t) const {
  ir::Bindings all = bindings_;
  all.insert(count_bounds_.begin(), count_bounds_.end());
  absl::StatusOr<std::vector<int64_t>> dims = ir::EvaluateShape(t.shape, all);
  if (!dims.ok()) return false;
  int64_t n = 1;
  for (int64_t d : *dims) {
    if (d < 0 || (d > 0 && n > kMaxElements / d)) return false;
    n *= d;
  }
  return true;
}

bool Generator::MentionsCount(const Shape& shape) const {
  for (const SymExpr& d : shape) {
    if (!(d.Bind(count_bounds_) == d)) return true;
  }
  return false;
}

ValueId Generator::NewSource(ValueType t, bool allow_param) {
  if (MentionsCount(t.shape)) {  // not an input: the caller would bind the count
    ValueId v = b_.Add(OpCode::kFull, {},
                       {{"value", 1.0 + static_cast<double>(in_.Below(3))},
                        {"dtype", t.dtype},
                        {"shape", t.shape}});
    pool_.push_back(v);
    return v;
  }
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

ValueId Generator::NewIndexInput(Shape shape, SymExpr bound) {
  if (MentionsCount(shape) || MentionsCount({bound})) {  // index 0 (an error when bound is 0)
    return b_.Add(OpCode::kFull, {},
                  {{"value", 0.0}, {"dtype", DType::kI64}, {"shape", std::move(shape)}});
  }
  std::string name = absl::StrCat("idx", counter_++);
  ValueId v = b_.Input(name, DType::kI64, std::move(shape));
  index_inputs_.push_back({name, std::move(bound)});
  return v;
}

ValueId Generator::Any() {
  return pool_[pool_.size() - 1 - in_.Below(std::min<size_t>(pool_.size(), 4))];
}

ValueId Generator::OfDType(DType dtype) {
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

ValueId Generator::Float() { return OfDType(float_); }

ValueId Generator::Numeric() { return OfDType(in_.Below(3) == 0 ? DType::kI64 : float_); }

std::optional<ValueId> Generator::Try(OpCode op, std::vector<ValueId> operands, ir::Attrs attrs) {
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

ValueId Generator::Like(const Shape& shape, DType dtype) { return NewSource({dtype, shape}); }

Shape Generator::BroadcastableTo(const Shape& shape) {
  Shape s;
  size_t drop = in_.Below(shape.size() + 1);
  for (size_t i = drop; i < shape.size(); ++i)
    s.push_back(in_.Below(3) == 0 ? SymExpr(1) : shape[i]);
  return s;
}

int64_t Generator::Axis(int rank) {
  if (rank == 0) return 0;
  int64_t a = static_cast<int64_t>(in_.Below(rank));
  return in_.Bool() ? a - rank : a;  // negative axes too
}

void Generator::Step() {
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
      [](Generator* g) { g->Loop(); },        [](Generator* g) { g->Branch(); },
      [](Generator* g) { g->RowScan(); },     [](Generator* g) { g->RuntimeOps(); },
      [](Generator* g) { g->RuntimeOps(); },
  };
  kOps[in_.Below(kOps.size())](this);
}

void Generator::Sources() {
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

void Generator::BinaryArith() {
  static const OpCode kOps[] = {OpCode::kAdd, OpCode::kSub,     OpCode::kMul,    OpCode::kDiv,
                                OpCode::kPow, OpCode::kMaximum, OpCode::kMinimum};
  OpCode op = kOps[in_.Below(7)];
  ValueId a = op == OpCode::kPow                                 ? Float()
              : op == OpCode::kMaximum || op == OpCode::kMinimum ? Any()
                                                                 : Numeric();
  ValueId b = SecondOperand(a);
  Try(op, {a, b});
}

ValueId Generator::SecondOperand(ValueId a) {
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

void Generator::Compare() {
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

void Generator::Where() {
  ValueId a = Any();
  ValueId c = OfDType(DType::kBool);
  Try(OpCode::kWhere, {c, a, SecondOperand(a)});
}

void Generator::Unary() {
  static const OpCode kOps[] = {OpCode::kNeg,   OpCode::kAbs,     OpCode::kExp,  OpCode::kLog,
                                OpCode::kSqrt,  OpCode::kRsqrt,   OpCode::kTanh, OpCode::kSin,
                                OpCode::kLog1p, OpCode::kSigmoid, OpCode::kSilu, OpCode::kGeluTanh,
                                OpCode::kFloor};
  OpCode op = kOps[in_.Below(std::size(kOps))];
  Try(op, {op == OpCode::kNeg || op == OpCode::kAbs ? Numeric() : Float()});
}

void Generator::MathUnary() {
  static const OpCode kOps[] = {OpCode::kErf,   OpCode::kCos,   OpCode::kTan,  OpCode::kAsin,
                                OpCode::kAcos,  OpCode::kAtan,  OpCode::kSinh, OpCode::kCosh,
                                OpCode::kAsinh, OpCode::kAcosh, OpCode::kAtanh};
  Try(kOps[in_.Below(std::size(kOps))], {Float()});
}

void Generator::Cast() {
  static const DType kTypes[] = {DType::kF32, DType::kF64, DType::kI64, DType::kBool};
  DType dtype = kTypes[in_.Below(4)];  // before the operand: see Compare
  ValueId x = Any();
  Try(OpCode::kCast, {x}, {{"dtype", dtype}});
}

void Generator::Matmul() {
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

void Generator::Transpose() {
  ValueId x = Any();
  std::vector<int64_t> perm(T(x).rank());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  for (size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[in_.Below(i)]);
  Try(OpCode::kTranspose, {x}, {{"perm", perm}});
}

void Generator::Reshape() {
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

void Generator::Expand() {
  ValueId x = Any();
  Shape out;
  if (in_.Bool()) out.push_back(RandomDim());
  for (const SymExpr& d : T(x).shape) out.push_back(d == 1 ? RandomDim() : d);
  Try(OpCode::kExpand, {x}, {{"shape", out}});
}

void Generator::Concat() {
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

void Generator::Slice() {
  ValueId x = Any();
  if (T(x).rank() == 0) return;
  int64_t axis = Axis(T(x).rank());
  const SymExpr d = T(x).shape[axis < 0 ? axis + T(x).rank() : axis];
  SymExpr start = in_.Pick(std::vector<SymExpr>{0, 0, 1, d - 1, d});
  SymExpr end = in_.Pick(std::vector<SymExpr>{d, d, 1, d - 1, start});
  Try(OpCode::kSlice, {x}, {{"axis", axis}, {"start", start}, {"end", end}});
}

void Generator::Window() {
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

void Generator::Gather() {
  ValueId table = Any();
  if (T(table).rank() == 0) return;
  Shape idx_shape = RandomShape(2);
  ValueId idx = NewIndexInput(idx_shape, T(table).shape[0]);
  Try(OpCode::kGather, {table, idx});
}

void Generator::ScatterAdd() {
  ValueId table = Numeric();
  if (T(table).rank() == 0) return;
  Shape idx_shape = RandomShape(2);
  ValueId idx = NewIndexInput(idx_shape, T(table).shape[0]);
  const Shape ts = T(table).shape;
  Shape up = idx_shape;
  up.insert(up.end(), ts.begin() + 1, ts.end());
  Try(OpCode::kScatterAdd, {table, idx, Like(up, T(table).dtype)});
}

void Generator::Reduce() {
  static const OpCode kOps[] = {OpCode::kReduceSum, OpCode::kReduceMax, OpCode::kReduceMean,
                                OpCode::kArgMin, OpCode::kArgMax};
  OpCode op = kOps[in_.Below(std::size(kOps))];
  ValueId x = op == OpCode::kReduceMean ? Float() : Numeric();
  if (T(x).rank() == 0) return;
  Try(op, {x}, {{"axis", Axis(T(x).rank())}, {"keepdim", in_.Bool()}});
}

void Generator::Scan() {
  ValueId x = Numeric();
  if (T(x).rank() == 0) return;
  Try(OpCode::kCumSum, {x}, {{"axis", Axis(T(x).rank())}});
}

void Generator::Softmax() {
  ValueId x = Float();
  if (T(x).rank() == 0) return;
  Try(OpCode::kSoftmax, {x}, {{"axis", Axis(T(x).rank())}});
}

void Generator::Norm() {
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

void Generator::Rope() {
  ValueId x = Float();
  Shape s = T(x).shape;
  if (s.empty() || !s.back().IsConstant() || *s.back().AsConstant() % 2 != 0) {
    s = RandomShape(2);
    s.push_back(SymExpr(2 * static_cast<int64_t>(in_.Below(3))));
    x = Like(s, float_);
  }
  Try(OpCode::kRope, {x, Like(BroadcastableTo(s), float_), Like(BroadcastableTo(s), float_)});
}

void Generator::CrossEntropy() {
  ValueId logits = Float();
  if (T(logits).rank() == 0) return;
  const Shape ls = T(logits).shape;
  Shape rows(ls.begin(), ls.end() - 1);
  Try(OpCode::kCrossEntropy, {logits, NewIndexInput(rows, ls.back())});
}

void Generator::CausalMask() {
  ValueId x = Float();
  if (T(x).rank() < 2) x = Like({RandomDim(), RandomDim()}, float_);
  Try(OpCode::kCausalMask, {x});
}

void Generator::KvWrite() {
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

void Generator::Loop() {
  const ValueId x = Any();
  const ValueType t = T(x);
  const int64_t stop = static_cast<int64_t>(in_.Below(4));
  const bool limited = in_.Bool();
  // The regions take (x, n, stop): the carried value, the counter and an invariant.
  auto region = [&](const char* name) {
    auto b = std::make_unique<ir::GraphBuilder>(name);
    b->Input("x", t.dtype, t.shape);
    b->Input("n", DType::kI64, {});
    b->Input("stop", DType::kI64, {});
    return b;
  };
  std::unique_ptr<ir::GraphBuilder> cond = region("cond");
  cond->Output(cond->Add(OpCode::kLt, {1, 2}));
  std::unique_ptr<ir::GraphBuilder> body = region("body");
  ValueId next;
  if (t.dtype == DType::kBool) {
    next = body->Add(OpCode::kEq,
                     {0, body->Add(OpCode::kFull, {},
                                   {{"value", 0.0}, {"dtype", DType::kBool}, {"shape", Shape{}}})});
  } else if (ir::IsFloat(t.dtype)) {
    // tanh keeps values bounded; floor keeps them exact however the trips run.
    next = body->Add(
        OpCode::kFloor,
        {body->Add(OpCode::kMul, {body->Add(OpCode::kTanh, {0}), body->Scalar(8, t.dtype)})});
  } else {
    next = body->Add(OpCode::kAdd, {0, 0});
  }
  body->Output(next);
  body->Output(body->Add(OpCode::kAdd, {1, body->Scalar(1, DType::kI64)}));
  absl::StatusOr<ir::Graph> c = std::move(*cond).Build();
  absl::StatusOr<ir::Graph> bd = std::move(*body).Build();
  if (!c.ok() || !bd.ok()) {
    Fail("a loop's regions failed to build: " + (!c.ok() ? c.status() : bd.status()).ToString());
    return;
  }
  const ValueId zero =
      b_.Add(OpCode::kFull, {}, {{"value", 0.0}, {"dtype", DType::kI64}, {"shape", Shape{}}});
  const ValueId limit = b_.Scalar(static_cast<double>(stop), DType::kI64);
  ir::Attrs attrs{{"carried", int64_t{2}}};
  if (limited) attrs.Set("max_trips", static_cast<int64_t>(in_.Below(3)));
  const ValueId loop = b_.Add(OpCode::kWhile, {x, zero, limit}, std::move(attrs),
                              {std::make_shared<const ir::Graph>(*std::move(c)),
                               std::make_shared<const ir::Graph>(*std::move(bd))});
  if (!b_.status().ok()) {
    Fail("builder rejected a loop: " + b_.status().ToString());
    return;
  }
  pool_.push_back(loop);
  pool_.push_back(b_.Add(OpCode::kLoopResult, {loop, zero}, {{"index", int64_t{1}}}));
}

void Generator::Branch() {
  const ValueId x = Any();
  const ValueType t = T(x);
  // The condition: sum(a) > 0 over a numeric pool value's elements.
  const ValueId a = Numeric();
  std::optional<ValueId> flat =
      Try(OpCode::kReshape, {a}, {{"shape", Shape{ir::NumElements(T(a).shape)}}});
  if (!flat) return;
  std::optional<ValueId> total =
      Try(OpCode::kReduceSum, {*flat}, {{"axis", int64_t{0}}, {"keepdim", false}});
  if (!total) return;
  std::optional<ValueId> pred = Try(OpCode::kGt, {*total, b_.Scalar(0, T(*total).dtype)});
  if (!pred) return;
  std::vector<std::shared_ptr<const ir::Graph>> regions;
  for (bool then : {true, false}) {
    ir::GraphBuilder b(then ? "then" : "else");
    const ValueId in = b.Input("x", t.dtype, t.shape);
    if (t.dtype == DType::kBool) {
      const ValueId no =
          b.Add(OpCode::kFull, {}, {{"value", 0.0}, {"dtype", DType::kBool}, {"shape", Shape{}}});
      b.Output(b.Add(then ? OpCode::kEq : OpCode::kNe, {in, no}));
    } else {
      b.Output(then ? b.Add(OpCode::kAdd, {in, in}) : b.Add(OpCode::kNeg, {in}));
    }
    absl::StatusOr<ir::Graph> g = std::move(b).Build();
    if (!g.ok()) Fail("an if's branch failed to build: " + g.status().ToString());
    regions.push_back(std::make_shared<const ir::Graph>(*std::move(g)));
  }
  const ValueId id =
      b_.Add(OpCode::kIf, {*pred, x}, {{"dtype", t.dtype}, {"shape", t.shape}}, std::move(regions));
  if (!b_.status().ok()) Fail("builder rejected an if: " + b_.status().ToString());
  pool_.push_back(id);
}

void Generator::RowScan() {
  const ValueId xs = Any();
  const ValueType t = T(xs);
  if (t.rank() == 0) return;
  const Shape row(t.shape.begin() + 1, t.shape.end());
  const ValueId init = Like(row, t.dtype);
  ir::GraphBuilder b("body");
  const ValueId acc = b.Input("acc", t.dtype, row);
  const ValueId x = b.Input("x", t.dtype, row);
  const bool is_bool = t.dtype == DType::kBool;
  b.Output(b.Add(is_bool ? OpCode::kMaximum : OpCode::kAdd, {acc, x}));
  if (is_bool) {
    const ValueId no =
        b.Add(OpCode::kFull, {}, {{"value", 0.0}, {"dtype", DType::kBool}, {"shape", Shape{}}});
    b.Output(b.Add(OpCode::kEq, {x, no}));
  } else {
    b.Output(b.Add(OpCode::kAdd, {x, x}));
  }
  absl::StatusOr<ir::Graph> body = std::move(b).Build();
  if (!body.ok()) Fail("a scan's body failed to build: " + body.status().ToString());
  const ValueId scan =
      b_.Add(OpCode::kScan, {init, xs}, {{"carried", int64_t{1}}, {"scanned", int64_t{1}}},
             {std::make_shared<const ir::Graph>(*std::move(body))});
  if (!b_.status().ok()) Fail("builder rejected a scan: " + b_.status().ToString());
  pool_.push_back(scan);
  pool_.push_back(b_.Add(OpCode::kScanOutput, {scan},
                         {{"index", int64_t{0}}, {"dtype", t.dtype}, {"shape", t.shape}}));
}

void Generator::RuntimeOps() {
  // The bound is recorded first: Try's size check reads it.
  const std::string symbol = absl::StrCat("count", counter_++);
  switch (in_.Below(7)) {
    case 6: {  // unique along an axis, and one of its parts
      ValueId x = Any();
      const int rank = T(x).rank();
      if (rank == 0) return;
      const int64_t axis = Axis(rank);
      Bound(symbol, T(x).shape[axis < 0 ? axis + rank : axis]);
      const ir::Attrs attrs{{"axis", axis}, {"sorted", in_.Bool()}};
      ir::Attrs defining = attrs;
      defining.Set("symbol", symbol);
      std::optional<ValueId> values = Try(OpCode::kUnique, {x}, std::move(defining));
      if (!values) return;
      counts_.push_back(symbol);
      constexpr OpCode kParts[] = {OpCode::kUniqueIndices, OpCode::kUniqueInverse,
                                   OpCode::kUniqueCounts};
      Try(kParts[in_.Below(3)], {x, *values}, attrs);
      break;
    }
    case 5: {  // factor_dim of a pool value's dim by 2 (an error where it is odd)
      ValueId x = Any();
      const int rank = T(x).rank();
      if (rank == 0) return;
      const int64_t axis = Axis(rank);
      const SymExpr d = T(x).shape[axis < 0 ? axis + rank : axis];
      Bound(symbol, SymExpr::FloorDiv(d, 2));
      if (Try(OpCode::kFactorDim, {x},
              {{"axis", axis}, {"factor", int64_t{2}}, {"symbol", symbol}})) {
        counts_.push_back(symbol);
      }
      break;
    }
    case 4: {  // top_k / top_k_indices of up to the axis's length (a symbolic one: 0..S)
      ValueId x = Numeric();
      const int rank = T(x).rank();
      if (rank == 0) return;
      const int64_t axis = Axis(rank);
      const SymExpr n = T(x).shape[axis < 0 ? axis + rank : axis];
      const SymExpr k =
          n.IsConstant() ? SymExpr(static_cast<int64_t>(in_.Below(*n.AsConstant() + 1))) : n;
      Try(in_.Bool() ? OpCode::kTopK : OpCode::kTopKIndices, {x},
          {{"k", k}, {"axis", axis}, {"largest", in_.Bool()}});
      break;
    }
    case 3: {  // assert_dim of a pool value's dim against a count (or itself: passes)
      ValueId x = Any();
      const int rank = T(x).rank();
      if (rank == 0) return;
      const int64_t axis = Axis(rank);
      SymExpr dim = T(x).shape[axis < 0 ? axis + rank : axis];
      if (!counts_.empty() && in_.Bool()) dim = SymExpr::Symbol(counts_[in_.Below(counts_.size())]);
      Try(OpCode::kAssertDim, {x}, {{"axis", axis}, {"dim", dim}});
      break;
    }
    case 0: {
      ValueId x = Any();
      if (T(x).rank() == 0) return;
      Bound(symbol, ir::NumElements(T(x).shape));
      if (Try(OpCode::kNonZero, {x}, {{"symbol", symbol}})) counts_.push_back(symbol);
      break;
    }
    case 1: {
      ValueId x = Any();
      const int rank = T(x).rank();
      if (rank == 0) return;
      const int64_t axis = Axis(rank);
      ValueId condition = Like({T(x).shape[axis < 0 ? axis + rank : axis]}, DType::kBool);
      Bound(symbol, T(condition).shape[0]);
      if (Try(OpCode::kCompress, {x, condition}, {{"axis", axis}, {"symbol", symbol}})) {
        counts_.push_back(symbol);
      }
      break;
    }
    default: {
      const SymExpr n = RandomDim();
      ValueId boxes = Like({1, n, 4}, DType::kF32);
      ValueId scores = Like({1, 2, n}, DType::kF32);
      const auto max_per_class = static_cast<int64_t>(in_.Below(4));
      Bound(symbol, SymExpr(2 * max_per_class));
      const bool built = Try(OpCode::kNonMaxSuppression, {boxes, scores},
                             {{"max_per_class", max_per_class},
                              {"iou_threshold", 0.25 * static_cast<double>(in_.Below(4))},
                              {"score_threshold", in_.Bool() ? -1e30 : 0.0},
                              {"center_point_box", static_cast<int64_t>(in_.Below(2))},
                              {"symbol", symbol}})
                             .has_value();
      if (built) counts_.push_back(symbol);
      break;
    }
  }
}

void Generator::Bound(const std::string& symbol, const SymExpr& bound) {
  ir::Bindings all = bindings_;
  all.insert(count_bounds_.begin(), count_bounds_.end());
  count_bounds_[symbol] = bound.Evaluate(all).value_or(0);
}

}  // namespace graphjit::fuzz
