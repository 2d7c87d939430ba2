// Index algebra for lowering: graph dims as kernel expressions, and the operand index
// that each pure index rewrite (broadcast, reshape) reads for a result index. No graph
// state: every function maps shapes and index expressions to index expressions.
#ifndef GRAPHJIT_COMPILER_LOWER_INDEX_EXPRS_H_
#define GRAPHJIT_COMPILER_LOWER_INDEX_EXPRS_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "compiler/lower/kernel_ir.h"
#include "ir/sym_expr.h"

namespace graphjit::compiler {

// `e` as an i64 kernel expression; symbol `name` reads SymbolValue(j) where
// symbols[j] == name (it must be there).
ExprPtr SymToExpr(const ir::SymExpr& e, const std::vector<std::string>& symbols);

// Loop variables i0 .. i{n-1}.
std::vector<ExprPtr> LoopVars(size_t n);

// `e` is loop variable `var` plus or minus terms that do not mention it (var + 8,
// (i0 * 16 + var) - 8): as an element's last index, consecutive var, consecutive elements.
bool VarPlusOffset(const Expr* e, int var);

// `e` with each subexpression for which `replace` returns an expression replaced by it
// (not looked into further), the others rebuilt over their operands; a subtree shared
// within `e` is rewritten once.
ExprPtr ReplaceSubexprs(const ExprPtr& e, absl::FunctionRef<ExprPtr(const Expr&)> replace);

// `e` with loop variables renamed at once (old index -> new index; others unchanged).
ExprPtr RenameLoopVars(const ExprPtr& e, const absl::flat_hash_map<int, int>& vars);

// The index into an operand of shape `in` for the result index `idx` of shape `out`
// under numpy broadcasting: size-1 operand dims read element 0.
std::vector<ExprPtr> BroadcastIndex(const ir::Shape& in, const ir::Shape& out,
                                    const std::vector<ExprPtr>& idx);

// The index into a window's operand for result index `idx` ([batch.., window offsets k..,
// output positions o..]): position o * stride + k * dilation along each windowed dim.
std::vector<ExprPtr> WindowIndex(const std::vector<ExprPtr>& idx,
                                 const std::vector<int64_t>& kernel,
                                 const std::vector<int64_t>& strides,
                                 const std::vector<int64_t>& dilations);

// The index into a row-major reshape's operand of shape `in` for result index `idx` of
// shape `out`, group by group of dims with equal products (so splitting and merging
// dims, symbolic ones too, map directly; div and mod by the operand's dims only where a
// group merges several of them).
std::vector<ExprPtr> ReshapeIndex(const ir::Shape& in, const ir::Shape& out,
                                  const std::vector<ExprPtr>& idx,
                                  const std::vector<std::string>& symbols);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_INDEX_EXPRS_H_
