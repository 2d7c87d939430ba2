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

enum class KernelKind : uint8_t {
  // for i in loops: store(out, store_indices(i), value(i)).
  // `store_indices` empty means the identity (i_0, .., i_n) over the loops.
  kPointwise,
  // for i in loops: acc = init; for r < reduce_extent: acc = combine(acc, value(i, r));
  //   store(out, store_indices(i), finish(acc)) where finish = acc * finish_scale if set.
  // The reduction variable is loop variable index loops.size().
  kReduce,
  // out[b.., m, n] = sum_k a(b.., m, k) * b(b.., k, n), out contiguous [batch.., M, N].
  // Loop variables: batch 0..nb-1, then m = nb, n = nb+1, k = nb+2. `lhs` and `rhs` are
  // expressions over them. kDot order runs k innermost with a scalar accumulator (rhs
  // contiguous along k); kAxpy runs n innermost, accumulating rows into out (rhs
  // contiguous along n), and zeroes out first.
  kMatmul,
  // The same product through OpenBLAS (graphjit_rt_matmul_f32/_f64 in
  // runtime/jit_helpers.h), chosen by lowering for products large enough that BLAS's
  // blocked kernels beat the generated loops. Loops as kMatmul (batch.., M, N, K), but only
  // the batch loops run in the kernel: per batch it calls the helper once. `lhs` and `rhs`
  // are loads of the first element of the batch's operand matrix, of which only the
  // address is used: both operands are materialized buffers, row-major and contiguous in
  // their last two dims, lhs [.., M, K] and rhs [.., K, N], or [.., N, K] when
  // `transpose_rhs` (a transposed buffer read without a copy). Broadcast batch dims are in
  // the load indices, as in kMatmul. out is contiguous [batch.., M, N]; f32 and f64 only.
  kExternMatmul,
  // argmin (combine kMin) / argmax (kMax) into an i64 buffer: as kReduce, but the kernel
  // keeps the best value (of value's dtype) and its r, and stores the r of the first
  // extremum: r replaces the best only if strictly better, or if it is the first NaN
  // (numpy's rule). An empty extent stores 0 (PrepareCall refuses such calls first).
  kArgReduce,
  // Running sum (combine kAdd): for i in loops: acc = 0; for r < reduce_extent:
  //   acc += value(i, r); store(out, store_indices(i, r), acc).
  // In index order, f32 accumulating in f64 (as the eager kernel: results agree exactly).
  // `store_indices` empty means (i_0, .., i_n, r).
  kScan,
  // Attention in one pass (compiler/lower/fuse_attention.h): per row (batch.., m),
  //   x_j = value(j) where value reads the row's scores s_j = sum_d lhs(d) * rhs(j, d) from
  //       buffer `scores` at (batch.., m, j) (the kernel stores each score there first)
  //   p_j = exp(x_j - max_j x_j)
  //   out[store_indices(e)] = sum_j p_j * values(j, e);  sum_out[sum_indices] = sum_j p_j
  // with a running max (an online softmax), so the row is read once and no p or max is
  // stored. Loop variables: batch 0..nb-1, m = nb, j = nb+1, d = nb+2 (loops are the
  // scores' batch.., M, N, D, as a kDot matmul), e = nb+3 < values_width. `scores` is the
  // kernel's scratch: its contents afterwards are unspecified. The sums and outputs equal
  // the unfused kernels' within rounding (p is rescaled as the max grows); a row whose x
  // are all -inf gives NaN as exp(-inf - -inf) would; f32 and f64 only.
  kAttention,
};

enum class MatmulOrder : uint8_t { kDot, kAxpy };

struct Kernel {
  KernelKind kind = KernelKind::kPointwise;
  std::string name = "";                    // e.g. "k3_reduce_max" (unique within the program)
  int out = -1;                             // buffer written
  std::vector<ExprPtr> loops = {};          // extents (i64), outermost first
  std::vector<ExprPtr> store_indices = {};  // see KernelKind
  ExprPtr value = nullptr;                  // kPointwise, kReduce
  // kReduce, kArgReduce, kScan
  ExprPtr reduce_extent = nullptr;
  ScalarOp combine = ScalarOp::kAdd;  // kAdd or kMax (kReduce), kMin or kMax (kArgReduce)
  ExprPtr finish_scale = nullptr;     // optional: acc * finish_scale (means)
  // kMatmul (loops = batch extents, then M, N, K)
  ExprPtr lhs = nullptr, rhs = nullptr;
  MatmulOrder order = MatmulOrder::kDot;
  bool transpose_rhs = false;  // kExternMatmul: rhs stored [.., N, K]
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
};

// Every expression root of a kernel (null ones included), in a fixed order: loops, store
// indices, value, reduce_extent, finish_scale, lhs, rhs, values, values_width, sum
// indices. For passes that treat all of a kernel's expressions alike.
std::vector<const ExprPtr*> KernelExprs(const Kernel& kernel);
std::vector<ExprPtr*> MutableKernelExprs(Kernel* kernel);
// The buffers a kernel writes: out, and a kAttention's scores and sum_out.
std::vector<int> KernelWrites(const Kernel& kernel);
// The buffers a kernel loads anywhere in its expressions.
std::set<int> KernelLoads(const Kernel& kernel);
// Whether loop variable `var` occurs in `e`.
bool UsesLoopVar(const Expr* e, int var);

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

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_KERNEL_IR_H_
