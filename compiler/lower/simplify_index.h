// Index simplification: rewrites the i64 expressions of kernels (load and store indices,
// loop and reduce extents, matmul operands' indices, select conditions over indices) into
// a canonical, smaller form using the known range of every loop variable, so codegen
// emits - and LLVM has to clean up - less. Float arithmetic is never rewritten.
#ifndef GRAPHJIT_COMPILER_LOWER_SIMPLIFY_INDEX_H_
#define GRAPHJIT_COMPILER_LOWER_SIMPLIFY_INDEX_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "compiler/lower/kernel_ir.h"

namespace graphjit::compiler {

// Simplifies every kernel of `program` in place (SimplifyKernel on each); Lower() runs it
// last, so dumps, the program evaluator and codegen all see simplified kernels.
//
// Ranges: loop variable k of a kernel ranges over [0, extent_k) (the variable past the
// loops, variable loops.size(), over the extent its kind's Var column names in
// kernel_kinds.def: a reduction's reduce_extent, attention's values_width); a constant
// extent bounds it, a symbolic one leaves it in [0, +inf). Symbols are >= 0 (they are dims and
// positions). i64 values read from buffers or cast from floats may be anything.
//
// Rules (i64 only; floor division and floor mod as ScalarOp::kDiv / kMod, also for
// negative values):
//   - a loop variable whose range is one value (extent 1) is that constant;
//   - sums, differences, negations and products by constants become a linear form
//     (sum of coeff * atom + const, atoms being loop variables, symbols and the other
//     subexpressions), terms collected, constants folded, and rebuilt in a canonical
//     order: loop variables by index, then symbols, then other atoms structurally;
//   - x / c and x % c (c > 0 constant): x = c*A + r (A: the terms whose coefficient c
//     divides), x / c = A + r / c and x % c = r % c; r / c = m and r % c = r - m*c when
//     r's range lies in [m*c, (m+1)*c) (so r / c = 0, r % c = r for r in [0, c)); a
//     common factor g of r and c is divided out (r / c = (r/g) / (c/g),
//     r % c = g * ((r/g) % (c/g))); (y / a) / b = y / (a*b) and (y % a) % b = y % b when
//     b divides a; c*k*(y / c) + k*(y % c) = k*y (so (x / c) * c + x % c = x);
//   - min / max resolve when one side is never above / below the other, comparisons of
//     i64 values are decided when the ranges decide them, `and` / `or` / `not` of decided
//     conditions fold, and a select with a decided condition (of any dtype) is its arm;
//     select(c, a, a) is a;
//   - inside a select's arms, a condition on one loop variable (`i3 < 8`, `and`s of
//     them) narrows that variable's range: select(i3 < 8, b[min(i3, 7)], b[i3 - 8]) loses
//     its clamp.
// Rewrites keep the value of every expression: the ring rules (collecting terms) are exact
// under i64 wrap-around; the rules that need the absence of overflow (div/mod splitting,
// resolving by ranges) check it with interval arithmetic, assuming - like SymExpr - that
// arithmetic on loop variables and symbols (sizes) does not overflow.
//
// The result is deterministic (equal kernels give equal texts, which matters for the
// content-keyed kernel cache): nodes are hash-consed per kernel and terms sorted
// structurally, never by address. Equal subtrees end up shared.
//
// Measured (GRAPHJIT_CACHE_DIR=off; a shared 2-core machine with other builds running, so
// times are noisy: medians, same binary with simplification off / on, runs alternating):
//   decode layer (graphjit-dump decode --stats, symbolic S and P, 20 kernels):
//     index exprs 245 -> 148 nodes (distinct per kernel), all expr nodes 341 -> 239,
//     as printed 649 -> 353; simplifying takes 0.15 ms (lower 0.2 -> 0.35 ms)
//     LLVM IR as emitted 1346 -> 1129 instructions, after O2 1284 -> 1282: O2 already
//     cleaned up what this does, so the code and the decode step time are unchanged
//     (bench_overhead compiled, S=64/512, f64/f32: within noise, 42-76 us both ways)
//   KernelSet::Compile of the lowered program (a throwaway harness: 1 thread, 41 runs in
//   one process):
//     symbolic: llvm ir 0.98 -> 0.91 ms, O2 71.2 -> 68.7, codegen 59.2 -> 59.2,
//               cpu 131.3 -> 128.6 ms (-2%)
//     S=128:    llvm ir 0.98 -> 0.89 ms, O2 66.3 -> 64.0, codegen 53.8 -> 53.6,
//               cpu 120.8 -> 118.2 ms (-2%)
//   graphjit-dump decode --stats, 5 runs each (2 threads): llvm ir 1.50 -> 1.45 ms, O2 244
//     -> 246, codegen 220 -> 208 ms: below the noise of the machine
//   TinyGPT (default spec): index exprs 620 -> 426 nodes, all 924 -> 693, emitted LLVM IR
//     1870 -> 1671 instructions (1818 after O2 both ways); compile cpu 207.5 -> 205.3 ms
void SimplifyKernelIndices(Program* program);

// One kernel.
void SimplifyKernel(Kernel* kernel);

// `e` simplified as in a kernel whose loop variable k ranges over [0, loop_extents[k])
// (loop variables without an extent are any i64), for tests and tools.
ExprPtr SimplifyIndexExpr(const ExprPtr& e, const std::vector<ExprPtr>& loop_extents);

// The least and greatest values i64 expression `e` takes as in SimplifyIndexExpr, or
// nullopt where a bound is not known (a symbolic extent, a load, a wrap-around).
std::optional<std::pair<int64_t, int64_t>> IndexBounds(const ExprPtr& e,
                                                       const std::vector<ExprPtr>& loop_extents);

// Per dim of a buffer, the least and greatest index of some accesses (nullopt: not known).
using IndexBox = std::vector<std::optional<std::pair<int64_t, int64_t>>>;

// The box `indices` address over loops of `loop_extents` (IndexBounds per dim).
IndexBox IndexBoxOf(const std::vector<ExprPtr>& indices, const std::vector<ExprPtr>& loop_extents);

// Widens `box` to hold `other` too, dim by dim; a dim not known in either is not known.
void WidenIndexBox(const IndexBox& other, IndexBox* box);

// Whether consecutive values of loop variable `var` address consecutive elements of a
// row-major buffer of `dims` through `indices`: their element offset, simplified, is
// x + var with x free of var. Also where the indices split var over several dims (a
// product [C, H * W] read or stored as an image [C, H, W] at [m, n / W, n % W]).
bool ConsecutiveInMemory(const std::vector<ExprPtr>& indices, const std::vector<ExprPtr>& dims,
                         int var, const std::vector<ExprPtr>& loop_extents);

// Expression nodes of a program's kernels: each distinct node (pointer) counted once per
// kernel, as codegen emits them, i64 ones (index arithmetic) and all; and every use
// counted, as ExprToString prints them and the kernel-unit texts spell them.
struct ExprNodeCounts {
  int64_t i64_nodes = 0;
  int64_t nodes = 0;
  int64_t printed_nodes = 0;  // saturates at INT64_MAX
};
ExprNodeCounts CountKernelExprNodes(const Program& program);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_SIMPLIFY_INDEX_H_
