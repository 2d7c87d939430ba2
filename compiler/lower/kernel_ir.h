// The kernel program: what lowering produces from an optimized graph and codegen turns
// into one LLVM module. Loop nests over buffers with scalar expression bodies; no LLVM
// types here, so the program can be built, printed and tested without LLVM.
#ifndef GRAPHJIT_COMPILER_LOWER_KERNEL_IR_H_
#define GRAPHJIT_COMPILER_LOWER_KERNEL_IR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "ir/dtype.h"
#include "ir/op.h"
#include "ir/sym_expr.h"

namespace graphjit::compiler {

// Scalar operations of kernel bodies, generated from compiler/lower/scalar_ops.def and
// runtime/float_math.def (see them for each op's meaning). Integer (i64) ones also do
// index arithmetic.
enum class ScalarOp : uint8_t {
#define GJ_SCALAR_OP(name, ...) k##name,
#include "compiler/lower/scalar_ops.def"
#undef GJ_SCALAR_OP
#define GJ_FLOAT_MATH(name, ...) k##name,
#include "runtime/float_math.def"
#undef GJ_FLOAT_MATH
};
inline constexpr int kNumScalarOps = 0
#define GJ_SCALAR_OP(...) +1
#include "compiler/lower/scalar_ops.def"
#undef GJ_SCALAR_OP
#define GJ_FLOAT_MATH(...) +1
#include "runtime/float_math.def"
#undef GJ_FLOAT_MATH
    ;
bool IsUnary(ScalarOp op);
bool IsComparison(ScalarOp op);  // result bool
const char* ScalarOpName(ScalarOp op);
// What inlining one use costs (1 for an instruction, 8 for a transcendental).
int ScalarOpCost(ScalarOp op);
// Whether `op` costs a transcendental's 8 or more (exp, sigmoid, rsqrt, the libm functions).
bool IsTranscendental(ScalarOp op);
// The kernel ScalarOp of a Pointwise op of ir/ops.def (its Scalar column), else nullopt.
std::optional<ScalarOp> ScalarOpFor(ir::OpCode op);

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

enum class ExprKind : uint8_t {
  kConst,    // f_value (float dtypes) or i_value (i64, bool)
  kLoopVar,  // the value (i64) of loop variable `index` of the enclosing kernel
  kSymbol,   // the value (i64) of program symbol `index` (Program::symbols), read at run time
  kLoad,     // buffer `index` at operands = one i64 index per dim of the buffer
  kOp,       // op applied to operands (1 or 2)
  kSelect,   // operands[0] (bool) ? operands[1] : operands[2]
  kCast,     // operands[0] converted to dtype (float->i64 truncates; ->bool is != 0)
};

// An immutable scalar expression; shared subtrees are allowed (codegen may emit a shared
// subtree once per evaluation of the enclosing expression).
struct Expr {
  ExprKind kind = ExprKind::kConst;
  ir::DType dtype = ir::DType::kF64;
  ScalarOp op = ScalarOp::kAdd;
  int index = -1;
  double f_value = 0;
  int64_t i_value = 0;
  std::vector<ExprPtr> operands = {};
};

// Constructors (they fold i64 constant arithmetic, so index expressions stay small).
// How many operands an expression of its kind (and op) has: 0 for constants, loop
// variables and symbols, one per dim of its buffer for a load (-1 here: the caller knows
// the buffer), 1 or 2 for an op, 3 for a select, 1 for a cast; -1 for a kind or op out of
// range as well.
int ExpectedOperands(ExprKind kind, ScalarOp op);

ExprPtr ConstF(double v, ir::DType dtype);
ExprPtr ConstI(int64_t v);
ExprPtr ConstBool(bool v);
ExprPtr LoopVar(int index);
ExprPtr SymbolValue(int index);
ExprPtr Load(int buffer, ir::DType dtype, std::vector<ExprPtr> indices);
ExprPtr Op(ScalarOp op, ExprPtr a, ExprPtr b = nullptr);  // result dtype inferred
ExprPtr Select(ExprPtr cond, ExprPtr a, ExprPtr b);
ExprPtr Cast(ExprPtr x, ir::DType dtype);
// Text like `(ld b3[i0, (i1 + s0)] * 2.0)`, for dumps and tests.
std::string ExprToString(const ExprPtr& e);

// Where a buffer lives. Args are pointers passed by the caller in `args[arg_index]`
// (inputs, parameters, outputs); temps live in the workspace at `workspace_offset` bytes.
enum class BufferKind : uint8_t { kInput, kParam, kOutput, kTemp };

struct Buffer {
  std::string name;
  ir::DType dtype;
  ir::Shape shape;            // as SymExprs over program symbols (for the runtime)
  std::vector<ExprPtr> dims;  // the same dims as kernel expressions (for codegen)
  BufferKind kind;
  int arg_index = -1;        // kInput / kParam / kOutput
  ExprPtr workspace_offset;  // kTemp: byte offset (i64 expr), 64-byte aligned
  // kOutput only: the input buffer this output is written in place of (the caller passes
  // the donated input's pointer for both), or -1.
  int alias_of = -1;
};

// What a kernel's loops compute, from compiler/lower/kernel_kinds.def (see it for each
// kind's meaning, its facts and the hooks every kind defines).
enum class KernelKind : uint8_t {
#define GJ_KERNEL_KIND(name, ...) k##name,
#include "compiler/lower/kernel_kinds.def"
#undef GJ_KERNEL_KIND
};
inline constexpr int kNumKernelKinds = 0
#define GJ_KERNEL_KIND(...) +1
#include "compiler/lower/kernel_kinds.def"
#undef GJ_KERNEL_KIND
    ;

// The columns of kernel_kinds.def as constexpr facts.
enum class KernelKindLoops : uint8_t { kNest, kProduct };
enum class KernelKindVar : uint8_t { kNone, kReduce, kColumn };
enum class KernelKindStore : uint8_t { kLoops, kLoopsAndVar, kProduct };
struct KernelKindFacts {
  KernelKindLoops loops;
  KernelKindVar var;
  KernelKindStore store;
};
namespace kernel_kind_internal {
inline constexpr KernelKindFacts kFacts[] = {
#define GJ_KERNEL_KIND(name, loops, var, store) \
  {KernelKindLoops::k##loops, KernelKindVar::k##var, KernelKindStore::k##store},
#include "compiler/lower/kernel_kinds.def"
#undef GJ_KERNEL_KIND
};
static_assert(sizeof(kFacts) / sizeof(kFacts[0]) == kNumKernelKinds);
}  // namespace kernel_kind_internal
constexpr const KernelKindFacts& FactsOf(KernelKind kind) {
  return kernel_kind_internal::kFacts[static_cast<int>(kind)];
}

// How a generated product runs: kDot (k innermost, a scalar accumulator), kAxpy (n
// innermost, rows of the output updated per k) or kTiles (register tiles of broadcast
// FMAs over panels of the rhs packed per K-block, the large products' order:
// compiler/codegen/codegen_tiles.cc).
enum class MatmulOrder : uint8_t { kDot, kAxpy, kTiles };
inline constexpr int kNumMatmulOrders = 3;

struct Kernel {
  KernelKind kind = KernelKind::kPointwise;
  std::string name = "";                    // e.g. "k3_reduce_max" (unique within the program)
  int out = -1;                             // buffer written
  std::vector<ExprPtr> loops = {};          // extents (i64), outermost first
  std::vector<ExprPtr> store_indices = {};  // empty: the kind's default (kernel_kinds.def)
  ExprPtr value = nullptr;                  // kPointwise, kReduce
  // kReduce, kArgReduce, kScan
  ExprPtr reduce_extent = nullptr;
  ScalarOp combine = ScalarOp::kAdd;  // kAdd or kMax (kReduce), kMin or kMax (kArgReduce)
  ExprPtr finish_scale = nullptr;     // optional: acc * finish_scale (means)
  // kMatmul (loops = batch extents, then M, N, K)
  ExprPtr lhs = nullptr, rhs = nullptr;
  MatmulOrder order = MatmulOrder::kDot;
  bool transpose_rhs = false;  // kExternMatmul: rhs stored [.., N, K]
  // kMatmul, optional: the pointwise ops after the product (a bias, an activation, a
  // residual add), fused by lowering's fuse_epilogues step. Each element of the output
  // becomes `epilogue` once its sum is complete; in it, a load of `out` at the store
  // indices reads that sum, and other loads are at the batch, m and n variables.
  ExprPtr epilogue = nullptr;
  // kAttention (loops = batch extents, then M, N, D; lhs, rhs and value as above)
  ExprPtr values = nullptr;        // V at (batch.., j, e)
  ExprPtr values_width = nullptr;  // the extent of e
  int scores = -1;                 // the scratch buffer the scores go through
  int sum_out = -1;                // where each row's sum of p goes, at sum_indices
  std::vector<ExprPtr> sum_indices = {};
  // No buffer the kernel reads overlaps a buffer it writes (KernelWrites; other than
  // itself), nor do the written ones overlap: codegen tells LLVM so. Arg buffers may
  // overlap (an output written in place of a donated input), so only MakeKernelUnit,
  // which knows the program's buffers, sets it.
  bool out_exclusive = false;
  // Lowering's mark_parallel step (compiler/lower/parallel_loops.h): the loop whose
  // iterations write disjoint elements and read none another iteration writes, so ranges
  // of it may run on different threads (-1: none); the work of one of its iterations (an
  // i64 expression of the program's symbols: the host's cost model); and the multiple of
  // iterations split points keep to (whole vectors). Only parallel_loop changes the code.
  int parallel_loop = -1;
  ExprPtr parallel_work = nullptr;
  int64_t parallel_align = 1;
  // Lowering's mark_constant_fills step (compiler/lower/constant_fills.h): the kernel
  // stores the same constants on every call where nothing else stores, so the runtime
  // runs it only when the workspace holds another program's data (a program record
  // field; codegen ignores it).
  bool once = false;
  // Set by MakeKernelUnit only: parallel_loop runs over [symbols[range_symbol],
  // symbols[range_symbol + 1]) rather than over its whole extent.
  int range_symbol = -1;
};

// Every expression root of a kernel (null ones included), in a fixed order: loops, store
// indices, value, reduce_extent, finish_scale, lhs, rhs, values, values_width, sum
// indices, epilogue. For passes that treat all of a kernel's expressions alike.
std::vector<const ExprPtr*> KernelExprs(const Kernel& kernel);
std::vector<ExprPtr*> MutableKernelExprs(Kernel* kernel);
// The buffers a kernel writes: out, and a kAttention's scores and sum_out.
std::vector<int> KernelWrites(const Kernel& kernel);
// The same as the fields holding them, for passes that renumber buffers.
std::vector<int*> MutableKernelWrites(Kernel* kernel);
// The extents of every loop variable a kernel's expressions use: its loops, then the one
// past them where its kind has one (VarExtent).
std::vector<ExprPtr> KernelExtents(const Kernel& kernel);
// The extent of the loop variable a kernel has past its loops (variable loops.size(); the
// kind's Var column): &reduce_extent, &values_width, or null for a kind without one.
ExprPtr* MutableVarExtent(Kernel* kernel);
// The same, read only: the extent, or null.
ExprPtr VarExtent(const Kernel& kernel);
// The loop variables a kernel's expressions may use: its loops and the variable past them.
int NumLoopVars(const Kernel& kernel);
// How many loop variables, from the first, are the store indices when store_indices is
// empty (the kind's Store column).
int DefaultStoreRank(const Kernel& kernel);
// The buffers a kernel loads anywhere in its expressions.
std::set<int> KernelLoads(const Kernel& kernel);
// Whether loop variable `var` occurs in `e`.
bool UsesLoopVar(const Expr* e, int var);
// Whether `e` is a load whose every index is a sum of terms (scaled by factors free of
// loop variables) that each use at most one of loop variables `a` and `b`: its address is
// f(a) + g(b), so the elements at b .. b + lanes are one gather of fixed offsets from a
// base that moves with a. The tiles read a convolution's windows so, in place, instead
// of from an im2col copy (compiler/codegen/codegen_tiles.cc).
bool SeparableLoad(const Expr* e, int a, int b);
// The panel width P when `e` reads weights packed into the tiles' panels at compile time
// (compiler/passes/packed_weights.h): a load of [.., panels, K, P] (`dims`) at
// [.., v / P, k, v % P] for loop variables v and k (v = n: the packed rhs of
// orient_products; v = m: the packed lhs of pack_weight_rows), no other index using v or
// k; else 0.
int64_t PackedPanelWidth(const Expr* e, const std::vector<ExprPtr>& dims, int v, int k);

// A whole compiled graph: its symbols, buffers and kernels, run in order by one entry
//   void entry(void** args, const int64_t* symbols, char* workspace)
// where args[arg_index] points at each input / param / output buffer, symbols[j] is the
// value of symbols[j], and workspace holds workspace_bytes bytes (64-byte aligned). No
// buffer overlaps the args or symbols arrays or the workspace (codegen marks them noalias);
// arg buffers may overlap each other (an output written in place of a donated input).
struct Program {
  std::string name;
  std::vector<std::string> symbols;  // e.g. {"S", "P"}
  std::vector<Buffer> buffers;
  std::vector<Kernel> kernels;
  ir::SymExpr workspace_bytes;  // over the symbols
  int num_args = 0;
};

// A readable listing of the program (buffers, then one block per kernel).
std::string ProgramToString(const Program& program);

// For the steps that fuse kernels: removes buffers `dropped` (temps no kernel reads or
// writes any more), renumbering the rest in the buffers, kernels and aliases; and a
// kernel's name at its new position ("k12_matmul" at 9 -> "k9_matmul").
void DropBuffers(const std::set<int>& dropped, Program* program);
std::string RenumberedKernelName(absl::string_view name, int position);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_KERNEL_IR_H_
