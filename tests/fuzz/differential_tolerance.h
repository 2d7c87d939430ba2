// How the differential fuzz target (tests/fuzz/fuzz_differential.cc) compares the
// interpreter's outputs with compiled code's: whether a graph sums floats in an order of its
// own, the tolerance an output inherits from a float cast on the way to it, the magnitude
// graph that scales a reassociated sum's tolerance, and the outputs not compared at all
// because they come from a sum that cancelled to rounding noise.
#ifndef GRAPHJIT_TESTS_FUZZ_DIFFERENTIAL_TOLERANCE_H_
#define GRAPHJIT_TESTS_FUZZ_DIFFERENTIAL_TOLERANCE_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/op.h"
#include "ir/sym_expr.h"
#include "runtime/interpreter.h"
#include "runtime/tensor.h"

namespace graphjit::fuzz {

using ir::DType;
using ir::OpCode;
using ir::ValueId;

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

#endif  // GRAPHJIT_TESTS_FUZZ_DIFFERENTIAL_TOLERANCE_H_
