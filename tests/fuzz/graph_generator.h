// The differential fuzz target's graph generator (tests/fuzz/fuzz_differential.cc): the
// fuzzer's bytes, read as choices, build a small well-typed graph over every op of
// ir/ops.def: f32/f64/i64/bool values, exact and symbolic dims, dims and symbols of size 0
// and 1, constants and params with inf/nan/huge values. Defined in graph_generator.cc, a
// library the fuzz target and graph_generator_test.cc share, so that the test can check
// what it generates (every op, zero sizes, S = 0) and that the committed corpus reaches
// every op.
#ifndef GRAPHJIT_TESTS_FUZZ_GRAPH_GENERATOR_H_
#define GRAPHJIT_TESTS_FUZZ_GRAPH_GENERATOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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
  std::optional<ir::Graph> Build();

  const ir::Bindings& bindings() const { return bindings_; }
  const std::vector<IndexInput>& index_inputs() const { return index_inputs_; }
  const runtime::TensorMap& params() const { return params_; }
  runtime::TensorMap& mutable_params() { return params_; }

 private:
  // ---- shapes -----------------------------------------------------------------------
  SymExpr S() const { return symbolic_ ? SymExpr::Symbol("S") : SymExpr(s_value_); }
  SymExpr RandomDim();
  Shape RandomShape(int max_rank = 3);
  DType RandomDType();
  ValueType RandomType();
  bool Small(const ValueType& t) const;

  // ---- values -----------------------------------------------------------------------
  // A new input or param (params are folded by constant_fold: params_are_constant).
  ValueId NewSource(ValueType t, bool allow_param = true);
  ValueId NewIndexInput(Shape shape, SymExpr bound);
  // Whether `shape` mentions a count symbol (count_bounds_): such values are fills, not
  // inputs.
  bool MentionsCount(const Shape& shape) const;

  // A copy: references into the graph die when a node is appended.
  ValueType T(ValueId v) const { return b_.type(v); }

  // A pool value, preferring later ones; of `dtype` if given (cast if none has it).
  ValueId Any();
  ValueId OfDType(DType dtype);
  ValueId Float();
  ValueId Numeric();

  // Appends the node if its shape rule accepts it and it stays small.
  std::optional<ValueId> Try(OpCode op, std::vector<ValueId> operands, ir::Attrs attrs = {});

  // A value shaped like `shape` (a new input) of dtype.
  ValueId Like(const Shape& shape, DType dtype);

  // `shape` with some dims replaced by 1 (broadcastable to it), maybe with fewer dims.
  Shape BroadcastableTo(const Shape& shape);

  int64_t Axis(int rank);

  // ---- one step ---------------------------------------------------------------------
  // One node (or a few) of a kind the bytes pick.
  void Step();

  void Sources();
  void BinaryArith();
  // A second operand broadcast-compatible with `a`.
  ValueId SecondOperand(ValueId a);
  void Compare();
  void Where();
  void Unary();
  // erf and the trigonometric and hyperbolic functions (NaN outside their domains on
  // both sides).
  void MathUnary();
  void Cast();
  void Matmul();
  void Transpose();
  void Reshape();
  void Expand();
  void Concat();
  void Slice();
  // Windows over the last one or two dims: kernel 1-3, strides and dilations 1-2 (a
  // constant dim shorter than the span is refused at build, a symbolic one at the call).
  void Window();
  void Gather();
  void ScatterAdd();
  // Reductions and the arg-reductions over one axis; an axis that is S may be bound to 0
  // (argmin / argmax: the interpreter and compiled code both refuse such a call).
  void Reduce();
  void Scan();
  void Softmax();
  void Norm();
  void Rope();
  void CrossEntropy();
  void CausalMask();
  void KvWrite();
  // A while loop (ir/regions.h) carrying a pool value and a trip counter: the body
  // updates the value (x + x, a rounded tanh, a negated flag), the cond stops after 0-3
  // trips, sometimes by max_trips; loop_result gives the counter.
  void Loop();
  // An if on a comparison of pool values: one branch doubles a pool value, the other
  // negates it (a bool one: eq / ne with false).
  void Branch();
  // A scan over the rows of a pool value of rank >= 1: carries a row-shaped sum (the
  // row's dtype: add, or for bool maximum) and stacks each row's doubled (or negated)
  // value.
  void RowScan();
  // A runtime op (ir/ops.def): a data-dependent one (nonzero, compress,
  // non_max_suppression) over a pool value or new inputs, defining a new count symbol
  // `count<N>`, which later steps' values then carry; an assert_dim of a pool value's dim
  // against a count (an error when they differ); a factor_dim by 2 (an error on an odd
  // dim); or a top_k (or its indices).
  void RuntimeOps();
  // Records `bound`, evaluated now, as count symbol `symbol`'s largest value.
  void Bound(const std::string& symbol, const SymExpr& bound);

  ByteReader& in_;
  ir::GraphBuilder b_;
  bool symbolic_ = false;
  DType float_ = DType::kF64;
  int64_t s_value_ = 0;
  int counter_ = 0;
  ir::Bindings bindings_;
  // Each count symbol a data-dependent op defined, at its largest value: what sizes
  // (Small) assume, and what a new input's dim is in its place (inputs cannot carry it).
  ir::Bindings count_bounds_;
  std::vector<std::string> counts_;  // the counts the graph defines, in order
  std::vector<ValueId> pool_;
  std::vector<IndexInput> index_inputs_;
  runtime::TensorMap params_;
};

}  // namespace graphjit::fuzz

#endif  // GRAPHJIT_TESTS_FUZZ_GRAPH_GENERATOR_H_
