// Helpers the op families share: folding ops on known integers (shape arithmetic) and a
// few graph idioms (reshape, transpose, take along an axis) that several ONNX ops expand to.
#ifndef GRAPHJIT_ONNX_OP_HELPERS_H_
#define GRAPHJIT_ONNX_OP_HELPERS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "onnx/context.h"

namespace graphjit::onnx {

// Elements of known inputs combined into one element; nullopt when the result cannot be
// decided at import (e.g. whether `S == 3`).
using FoldFn = std::function<std::optional<ir::SymExpr>(absl::Span<const ir::SymExpr>)>;

// If every input of the node is known integers (or bools), folds the node elementwise with
// numpy broadcasting into output 0 of `out_elem` (0: input 0's element type) and returns
// true. Returns false, defining nothing, when an input is not known or an element cannot
// be decided: the caller then emits graph nodes.
bool TryFoldElementwise(Context& ctx, const FoldFn& fn, int32_t out_elem = 0);

// The concrete shape of a known (folded or constant) value.
std::vector<int64_t> ConstDims(const Value& v);
// Known integers of `v` laid out over its constant shape (as many as its dims say), or
// nullopt: a symbolic shape, or elements that do not fill it (a malformed model).
std::optional<std::vector<ir::SymExpr>> KnownGrid(const Value& v);
// ONNX's axis in [-rank, rank) normalized, or InvalidArgument naming the node.
absl::StatusOr<int> NormAxis(const Context& ctx, int64_t axis, int rank);
// Several axes normalized, sorted, without repeats.
absl::StatusOr<std::vector<int>> NormAxes(const Context& ctx, const std::vector<int64_t>& axes,
                                          int rank);

ir::ValueId Reshape(Context& ctx, ir::ValueId x, ir::Shape shape);
ir::ValueId Transpose(Context& ctx, ir::ValueId x, std::vector<int64_t> perm);
// One input of region builder `b` per type (named a0, a1, ...): what a region
// (ir/regions.h) takes, in order.
std::vector<ir::ValueId> RegionInputs(ir::GraphBuilder& b, const std::vector<ir::ValueType>& types);
// `x` reversed along dim 0, whose length may be symbolic (a gather at length - 1 - iota).
ir::ValueId ReverseRows(Context& ctx, ir::ValueId x);
// x with `before` and `after` elements of `value` around dim `axis` (a concat with fills).
ir::ValueId PadWithConstant(Context& ctx, ir::ValueId x, int axis, int64_t before, int64_t after,
                            double value);
// A 1-D i64 constant.
ir::ValueId ConstI64(Context& ctx, const std::vector<int64_t>& values);
// The most constant indices an op expands to (a stepped slice, a reversal, a pad): a
// larger one comes from a malformed dim and is refused rather than allocated.
inline constexpr int64_t kMaxIndexVector = int64_t{1} << 24;

// x's elements at `indices` (constants in [0, dim)) along `axis`: a gather, with the axis
// moved to the front and back. Slices with steps, reversals and splits use it.
ir::ValueId TakeAlongAxis(Context& ctx, ir::ValueId x, int axis,
                          const std::vector<int64_t>& indices);
// Reduces `x` over `axes` (normalized, sorted) with `op`, keeping them as size 1 or not.
ir::ValueId ReduceAxes(Context& ctx, ir::OpCode op, ir::ValueId x, const std::vector<int>& axes,
                       bool keepdims);
// a / b when b divides a exactly as polynomials over the dims' atoms (4*N*W / N is 4*W,
// which SymExpr's floor division leaves as is), or nullopt.
std::optional<ir::SymExpr> ExactDiv(const ir::SymExpr& a, const ir::SymExpr& b);
// Product of dims [from, to) of a shape.
ir::SymExpr DimProduct(const ir::Shape& shape, int from, int to);

}  // namespace graphjit::onnx

#endif  // GRAPHJIT_ONNX_OP_HELPERS_H_
