// Structured control flow for model code, in the shapes of jax.lax.while_loop and
// jax.lax.cond: the whole loop, its condition included, or the whole branch is one op of
// the graph (ir/regions.h), so a traced and compiled loop runs with no graph break and no
// return to the caller per trip, and a compiled branch runs only the code it takes.
#ifndef GRAPHJIT_FRONTEND_CONTROL_FLOW_H_
#define GRAPHJIT_FRONTEND_CONTROL_FLOW_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "frontend/value.h"

namespace graphjit::frontend {

// The condition of a loop: a bool scalar from the carried values and the invariants.
using WhileCond =
    std::function<Value(absl::Span<const Value> carried, absl::Span<const Value> invariants)>;
// One trip: the next carried values (same dtypes and shapes) from the current ones.
using WhileBody = std::function<std::vector<Value>(absl::Span<const Value> carried,
                                                   absl::Span<const Value> invariants)>;

// Runs `body` while `cond` holds, from `init`, and returns the final carried values:
//   carried = init; while (trips < max_trips && cond(carried)) carried = body(carried)
// `invariants` are values every trip reads and none changes (weights, limits): the
// functions receive them as arguments and must not use other values of the enclosing
// code (they are traced into regions of their own; params they read by
// `ctx.Param(name)` come from the enclosing context's weights). Eager contexts run the
// loop at once; traced ones record it as one `while` op. Errors (a body that changes a
// carried shape, a cond that is not a bool scalar, values of another context) are
// recorded in the context, naming the region, like any op's.
std::vector<Value> While(const WhileCond& cond, const WhileBody& body, absl::Span<const Value> init,
                         absl::Span<const Value> invariants = {},
                         std::optional<int64_t> max_trips = std::nullopt);

// One row of a Scan: the next carried values, then the row's outputs, from the carried
// values, one row of each scanned input and the invariants.
using ScanStep =
    std::function<std::vector<Value>(absl::Span<const Value> carried, absl::Span<const Value> rows,
                                     absl::Span<const Value> invariants)>;

// jax.lax.scan over dim 0 of `xs` (every one the same length T): runs `step` once per row
// t in order, carrying `init`, and returns the final carried values followed by each row
// output stacked into [T, ..]. Traced, it is one `scan` op whose compiled body runs once
// per row in native code; T may be symbolic. The same rules as While's.
std::vector<Value> Scan(const ScanStep& step, absl::Span<const Value> init,
                        absl::Span<const Value> xs, absl::Span<const Value> invariants = {});

// The branches of a Cond: values computed from its operands.
using CondBranch = std::function<std::vector<Value>(const std::vector<Value>& operands)>;

// The values `then_fn` gives when `pred` (a bool scalar) holds, else `else_fn`'s; both
// must give as many values, of the same dtypes and shapes (else an InvalidArgument
// naming the branch, recorded in the context). The functions get the operands as
// arguments and are traced into regions (the same rule as While's). Eagerly only the
// taken branch runs; traced, each value is an `if` op whose compiled code runs only the
// taken branch.
std::vector<Value> Cond(const Value& pred, const CondBranch& then_fn, const CondBranch& else_fn,
                        absl::Span<const Value> operands);

}  // namespace graphjit::frontend

#endif  // GRAPHJIT_FRONTEND_CONTROL_FLOW_H_
