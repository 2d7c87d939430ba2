// ExternMatmul kernels: a call of the runtime's BLAS helper (runtime/jit_helpers.h) per
// batch, or per block of rows or of columns when the kernel runs over a range of M or N.
#include "compiler/codegen/codegen_emitter.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Intrinsics.h"

namespace graphjit::compiler::codegen_internal {

using ir::DType;

void KernelEmitter::EmitExternMatmul() {
  const DType dtype = program_.buffers[kernel_.out].dtype;
  if (dtype != DType::kF32 && dtype != DType::kF64) {
    return Fail("extern matmul into a ", ir::DTypeName(dtype), " buffer");
  }
  for (const ExprPtr* operand : {&kernel_.lhs, &kernel_.rhs}) {
    const Expr* e = operand->get();
    if (e == nullptr || e->kind != ExprKind::kLoad || e->dtype != dtype || e->operands.size() < 2) {
      return Fail("extern matmul operands must be ", ir::DTypeName(dtype),
                  " loads of a matrix (rank >= 2)");
    }
  }
  const size_t nb = kernel_.loops.size() - 3;
  if (program_.buffers[kernel_.out].dims.size() != nb + 2) {
    return Fail("extern matmul output must have rank ", nb + 2);
  }
  // Declared, not defined: the JIT resolves it to the host function registered by
  // CompileProgram (runtime/jit_helpers.h).
  llvm::Type* ptr = body_.getPtrTy();
  llvm::Type* i64 = body_.getInt64Ty();
  llvm::FunctionType* type = llvm::FunctionType::get(
      body_.getVoidTy(), {ptr, ptr, ptr, i64, i64, i64, i64, i64, body_.getInt32Ty()}, false);
  llvm::FunctionCallee helper = module_.getOrInsertFunction(
      dtype == DType::kF64 ? "graphjit_rt_matmul_f64" : "graphjit_rt_matmul_f32", type);
  if (auto* f = llvm::dyn_cast<llvm::Function>(helper.getCallee())) f->setDoesNotThrow();
  std::vector<ExprPtr> out_origin(identity_.begin(), identity_.begin() + nb);
  out_origin.push_back(ConstI(0));
  out_origin.push_back(ConstI(0));
  EmitNest(0, nb, [&] {
    llvm::Value* a = TargetPtr(kernel_.lhs->index, kernel_.lhs->operands);
    llvm::Value* b = TargetPtr(kernel_.rhs->index, kernel_.rhs->operands);
    llvm::Value* c = TargetPtr(kernel_.out, out_origin);
    llvm::Value* m = EvalTop(kernel_.loops[nb], DType::kI64, "M extent");
    llvm::Value* n = EvalTop(kernel_.loops[nb + 1], DType::kI64, "N extent");
    llvm::Value* k = EvalTop(kernel_.loops[nb + 2], DType::kI64, "K extent");
    if (a == nullptr || b == nullptr || c == nullptr || failed()) return;
    llvm::Value* ldb = kernel_.transpose_rhs ? k : n;
    llvm::Value* ldc = n;
    llvm::Type* elem = dtype == DType::kF64 ? body_.getDoubleTy() : body_.getFloatTy();
    auto extent = [&](llvm::Value* begin, llvm::Value* end) {
      return body_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, body_.CreateSub(end, begin),
                                         body_.getInt64(0));
    };
    if (kernel_.range_symbol >= 0 && kernel_.parallel_loop == static_cast<int>(nb)) {
      // A range over M: rows [begin, end) of a (k each) and of c (n each), both contiguous.
      auto [begin, end] = LoopBounds(static_cast<int>(nb), m);
      a = body_.CreateGEP(elem, a, body_.CreateMul(begin, k));
      c = body_.CreateGEP(elem, c, body_.CreateMul(begin, n));
      m = extent(begin, end);
    } else if (kernel_.range_symbol >= 0 && kernel_.parallel_loop == static_cast<int>(nb) + 1) {
      // A range over N: columns [begin, end) of c and of b (rows of b when stored [n, k]),
      // the rows as far apart as in the whole matrices.
      auto [begin, end] = LoopBounds(static_cast<int>(nb) + 1, n);
      b = body_.CreateGEP(elem, b, kernel_.transpose_rhs ? body_.CreateMul(begin, k) : begin);
      c = body_.CreateGEP(elem, c, begin);
      n = extent(begin, end);
    }
    body_.CreateCall(helper,
                     {a, b, c, m, n, k, ldb, ldc, body_.getInt32(kernel_.transpose_rhs ? 1 : 0)});
  });
}

}  // namespace graphjit::compiler::codegen_internal
