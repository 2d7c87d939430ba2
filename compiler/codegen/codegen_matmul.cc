// Matmul kernels: the generated loops (dot and register-tiled axpy orders) and the call
// into the runtime's BLAS helper.
//
// Why register tiling: a decode step is a chain of matrix-vector products whose weights
// are read once per step, so the step's floor is the time to stream the weights. The
// plain axpy order (for k: for n: out[n] += a[k] * b[k, n]) loads and stores the whole
// output row for every k, which doubles or triples the traffic through L1 and keeps the
// loads of b waiting behind those stores. The tiled order holds a strip of the output in
// vector registers for the whole k loop:
//   for n0 in strips of T: acc[0..T) = 0; for k: acc += splat(a[k]) * b[k, n0..n0+T)
//                          out[n0..n0+T) = acc
// so each weight is loaded once and each output stored once. In a full strip every
// output element is still summed over k in order with the same contraction, so results
// equal the axpy order's bit for bit (the interpreter's order); narrow strips over a long
// k split the sum over a few accumulator sets (see EmitTiledAxpy). An lhs that is computed (say
// SwiGLU's silu(g) * u) is staged once per k in a stack array when there are several strips; that
// loop may vectorize its math through libmvec, within an ulp of scalar libm. T is kTileVectors
// vectors of the host's widest vector width (AVX-512: 64 bytes, AVX/AVX2: 32, else 16): enough
// independent accumulators to hide the FMA latency, few enough to leave registers for the operands.
#include <algorithm>

#include "compiler/codegen/codegen_emitter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/TargetParser/Host.h"

namespace graphjit::compiler::codegen_internal {

using ir::DType;

namespace {

constexpr int kTileVectors = 8;
// Narrow strips split k over up to kMaxSets accumulator sets when K >= kSplitMinK.
constexpr int kMaxSets = 4;
constexpr int64_t kSplitMinK = 32;
// Weights of at most this many bytes may be read strip by strip (see EmitTiledAxpy).
constexpr int64_t kMaxStripedBytes = int64_t{2} << 20;
// lhs values that are not plain loads are computed once per k into a stack array, up to
// this size.
constexpr int64_t kMaxLhsBytes = 32 * 1024;

int HostVectorBytes() {
  static const int bytes = [] {
    const llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    if (features.lookup("avx512f")) return 64;
    if (features.lookup("avx")) return 32;
    return 16;
  }();
  return bytes;
}

bool UsesLoopVar(const Expr* e, int var) {
  if (e->kind == ExprKind::kLoopVar) return e->index == var;
  return std::any_of(e->operands.begin(), e->operands.end(),
                     [&](const ExprPtr& o) { return UsesLoopVar(o.get(), var); });
}

// Consecutive n give consecutive elements: the last index is n itself and no other
// index mentions n (buffers are row-major with a unit stride in their last dim).
bool ContiguousAlongN(const std::vector<ExprPtr>& indices, int n) {
  if (indices.empty()) return false;
  const Expr* last = indices.back().get();
  if (last->kind != ExprKind::kLoopVar || last->index != n) return false;
  return std::none_of(indices.begin(), indices.end() - 1,
                      [&](const ExprPtr& e) { return UsesLoopVar(e.get(), n); });
}

// A load, possibly cast, with index arithmetic: cheap enough to repeat per strip.
bool IsPlainLoad(const Expr* e) {
  if (e->kind == ExprKind::kCast) return IsPlainLoad(e->operands[0].get());
  return e->kind == ExprKind::kLoad || e->kind == ExprKind::kConst;
}

}  // namespace

void KernelEmitter::EmitMatmul() {
  const DType dtype = program_.buffers[kernel_.out].dtype;
  if (dtype != DType::kF32 && dtype != DType::kF64 && dtype != DType::kI64) {
    return Fail("matmul into a ", ir::DTypeName(dtype), " buffer");
  }
  llvm::Type* type = ValueType(dtype);
  llvm::Value* zero = llvm::Constant::getNullValue(type);
  const size_t nb = kernel_.loops.size() - 3;
  const int m = static_cast<int>(nb), n = m + 1, k = m + 2;
  const auto& out_indices = kernel_.store_indices.empty() ? identity_ : kernel_.store_indices;

  if (kernel_.order == MatmulOrder::kDot) {
    llvm::AllocaInst* acc = Accumulator(dtype);
    EmitNest(0, nb + 2, [&] {
      body_.CreateStore(zero, acc);
      llvm::Value* extent = EvalTop(kernel_.loops[k], DType::kI64, "K extent");
      EmitLoop(extent, k, [&] {
        llvm::Value* a = EvalTop(kernel_.lhs, dtype, "lhs");
        llvm::Value* b = EvalTop(kernel_.rhs, dtype, "rhs");
        // A dot product is a reduction: reassoc lets it be split into vector lanes.
        body_.CreateStore(MultiplyAdd(body_.CreateLoad(type, acc), a, b, dtype, true), acc);
      });
      StoreElement(kernel_.out, TargetPtr(kernel_.out, out_indices), body_.CreateLoad(type, acc));
    });
    return;
  }
  if (kernel_.order != MatmulOrder::kAxpy) {
    return Fail("unknown matmul order ", static_cast<int>(kernel_.order));
  }
  if (EmitTiledAxpy()) return;
  EmitNest(0, nb + 1, [&] {
    llvm::Value* n_extent = EvalTop(kernel_.loops[n], DType::kI64, "N extent");
    EmitLoop(n_extent, n,
             [&] { StoreElement(kernel_.out, TargetPtr(kernel_.out, out_indices), zero); });
    llvm::Value* k_extent = EvalTop(kernel_.loops[k], DType::kI64, "K extent");
    EmitLoop(k_extent, k, [&] {
      llvm::Value* a = EvalTop(kernel_.lhs, dtype, "lhs");  // n is not in scope here
      llvm::Value* n_extent_inner = EvalTop(kernel_.loops[n], DType::kI64, "N extent");
      EmitLoop(n_extent_inner, n, [&] {
        llvm::Value* b = EvalTop(kernel_.rhs, dtype, "rhs");
        llvm::Value* ptr = TargetPtr(kernel_.out, out_indices);
        if (ptr == nullptr) return;
        // Each out element is summed over k in order (no reassoc): only FMA contraction.
        StoreElement(kernel_.out, ptr,
                     MultiplyAdd(LoadElement(kernel_.out, ptr), a, b, dtype, false));
      });
    });
  });
}

llvm::Value* KernelEmitter::MultiplyAdd(llvm::Value* acc, llvm::Value* a, llvm::Value* b,
                                        DType dtype, bool reassoc) {
  if (dtype == DType::kI64) return body_.CreateAdd(acc, body_.CreateMul(a, b));
  llvm::IRBuilder<>::FastMathFlagGuard guard(body_);
  llvm::FastMathFlags fmf = body_.getFastMathFlags();
  fmf.setAllowReassoc(reassoc);
  body_.setFastMathFlags(fmf);
  return body_.CreateFAdd(acc, body_.CreateFMul(a, b));
}

bool KernelEmitter::EmitTiledAxpy() {
  const DType dtype = program_.buffers[kernel_.out].dtype;
  if (!options_.tile_matmuls || (dtype != DType::kF32 && dtype != DType::kF64)) return false;
  const size_t nb = kernel_.loops.size() - 3;
  const int n = static_cast<int>(nb) + 1, k = n + 1;
  const Expr* rhs = kernel_.rhs.get();
  const auto& out_indices = kernel_.store_indices.empty() ? identity_ : kernel_.store_indices;
  if (rhs == nullptr || kernel_.lhs == nullptr || rhs->kind != ExprKind::kLoad ||
      rhs->dtype != dtype || !ContiguousAlongN(rhs->operands, n) ||
      !ContiguousAlongN(out_indices, n) || UsesLoopVar(kernel_.lhs.get(), n)) {
    return false;
  }
  const int lanes = HostVectorBytes() / static_cast<int>(ir::DTypeSize(dtype));
  const int64_t tile = int64_t{kTileVectors} * lanes;
  const auto* n_const =
      llvm::dyn_cast_or_null<llvm::ConstantInt>(EvalPrologue(kernel_.loops[n], "N extent"));
  const auto* k_const =
      llvm::dyn_cast_or_null<llvm::ConstantInt>(EvalPrologue(kernel_.loops[k], "K extent"));
  if (failed()) return true;  // the extents are bad: the failure is recorded
  // A computed lhs is staged whenever K is known and small enough: its loop vectorizes
  // (a division or exp per k would otherwise bound the strip loop); with several strips
  // and no staging it would be recomputed per strip, so those stay untiled.
  const bool one_strip = n_const != nullptr && n_const->getSExtValue() <= tile;
  const bool computed_lhs = !IsPlainLoad(kernel_.lhs.get());
  const bool stage_lhs = computed_lhs && k_const != nullptr &&
                         k_const->getSExtValue() * ir::DTypeSize(dtype) <= kMaxLhsBytes;
  if (computed_lhs && !stage_lhs && !one_strip) return false;
  // Several strips walk the weights strip by strip, every row a stride apart. That is
  // free while they sit in cache and costs where they stream from DRAM (bench_roofline's
  // BM_Matvec here, us per call tiled / untiled: f64 128x344 6.4 / 7.9, 512x512 42 / 41,
  // 1024x1024 370 / 201; f32 1024x1024 98 / 93). Past kMaxStripedBytes, or when the size
  // is not known, the untiled loops read the rows in order.
  if (!one_strip && (n_const == nullptr || k_const == nullptr ||
                     k_const->getSExtValue() * n_const->getSExtValue() *
                             static_cast<int64_t>(ir::DTypeSize(dtype)) >
                         kMaxStripedBytes)) {
    return false;
  }

  llvm::Type* type = ValueType(dtype);
  llvm::AllocaInst* staged = nullptr;
  if (stage_lhs) {
    staged = prologue_.CreateAlloca(type, prologue_.getInt64(k_const->getSExtValue()), "lhs");
    staged->setAlignment(llvm::Align(64));
  }
  // A strip of `vectors` full vectors and `scalars` single elements from output column n0.
  // Narrow strips (fewer accumulators than kTileVectors) over a long k would wait on the
  // FMA latency of too few chains: k is then split round-robin over up to 4 accumulator
  // sets, added together (in set order) at the end. That changes the order of the sum,
  // within rounding, where a full strip keeps the interpreter's order exactly.
  const bool long_k = k_const == nullptr || k_const->getSExtValue() >= kSplitMinK;
  // A strip of `vectors` full vectors and `scalars` single elements from output column n0.
  auto strip = [&](llvm::Value* n0, int vectors, int scalars) {
    const int width = vectors + scalars;
    const int sets = long_k ? std::clamp(kTileVectors / width, 1, kMaxSets) : 1;
    llvm::Type* vector_type = llvm::FixedVectorType::get(type, lanes);
    auto type_of = [&](int j) { return j < vectors ? vector_type : type; };
    std::vector<std::vector<llvm::AllocaInst*>> acc(sets);
    for (int u = 0; u < sets; ++u) {
      for (int j = 0; j < width; ++j) {
        acc[u].push_back(prologue_.CreateAlloca(type_of(j), nullptr, "acc"));
        body_.CreateStore(llvm::Constant::getNullValue(type_of(j)), acc[u].back());
      }
    }
    // Column of accumulator j (its first lane).
    auto column = [&](int j) {
      const int64_t offset =
          j < vectors ? int64_t{j} * lanes : int64_t{vectors} * lanes + j - vectors;
      return offset == 0 ? n0 : body_.CreateAdd(n0, body_.getInt64(offset), "", true, true);
    };
    // acc[u] += lhs(k) * rhs(k, columns) at k = loop_vars_[k].
    auto step = [&](int u) {
      llvm::Value* a =
          staged != nullptr
              ? body_.CreateLoad(type, body_.CreateInBoundsGEP(type, staged, loop_vars_[k]))
              : EvalTop(kernel_.lhs, dtype, "lhs");
      llvm::Value* splat = vectors > 0 ? body_.CreateVectorSplat(lanes, a) : nullptr;
      for (int j = 0; j < width; ++j) {
        loop_vars_[n] = column(j);
        llvm::Value* ptr = TargetPtr(rhs->index, rhs->operands);
        if (ptr == nullptr) break;
        llvm::Value* b =
            body_.CreateAlignedLoad(type_of(j), ptr, llvm::Align(ir::DTypeSize(dtype)));
        llvm::Value* sum = body_.CreateLoad(type_of(j), acc[u][j]);
        body_.CreateStore(MultiplyAdd(sum, j < vectors ? splat : a, b, dtype, false), acc[u][j]);
      }
      loop_vars_[n] = nullptr;
    };
    llvm::Value* k_extent = EvalTop(kernel_.loops[k], DType::kI64, "K extent");
    if (sets == 1) {
      EmitLoop(k_extent, k, [&] { step(0); });
    } else {
      llvm::Value* blocks = body_.CreateSDiv(k_extent, body_.getInt64(sets));
      EmitLoop(blocks, k, [&] {
        llvm::Value* first = body_.CreateMul(loop_vars_[k], body_.getInt64(sets), "", true, true);
        for (int u = 0; u < sets; ++u) {
          loop_vars_[k] =
              u == 0 ? first : body_.CreateAdd(first, body_.getInt64(u), "", true, true);
          step(u);
        }
      });
      llvm::Value* done = body_.CreateMul(blocks, body_.getInt64(sets), "", true, true);
      EmitLoop(body_.CreateSub(k_extent, done, "", true, true), k, [&] {
        loop_vars_[k] = body_.CreateAdd(done, loop_vars_[k], "", true, true);
        step(0);
      });
      for (int j = 0; j < width; ++j) {
        llvm::Value* total = body_.CreateLoad(type_of(j), acc[0][j]);
        for (int u = 1; u < sets; ++u) {
          total = body_.CreateFAdd(total, body_.CreateLoad(type_of(j), acc[u][j]));
        }
        body_.CreateStore(total, acc[0][j]);
      }
    }
    for (int j = 0; j < width; ++j) {
      loop_vars_[n] = column(j);
      llvm::Value* ptr = TargetPtr(kernel_.out, out_indices);
      if (ptr == nullptr) break;
      body_.CreateAlignedStore(body_.CreateLoad(type_of(j), acc[0][j]), ptr,
                               llvm::Align(ir::DTypeSize(dtype)));
    }
    loop_vars_[n] = nullptr;
  };

  EmitNest(0, nb + 1, [&] {
    if (staged != nullptr) {
      EmitLoop(EvalTop(kernel_.loops[k], DType::kI64, "K extent"), k, [&] {
        llvm::Value* a = EvalTop(kernel_.lhs, dtype, "lhs");
        body_.CreateStore(a, body_.CreateInBoundsGEP(type, staged, loop_vars_[k]));
      });
    }
    // Known widths only (see above): full strips, then one strip of what is left.
    const int64_t columns = n_const->getSExtValue();
    const int64_t full = columns / tile, rest = columns % tile;
    if (full == 1) strip(body_.getInt64(0), kTileVectors, 0);
    if (full > 1) {
      EmitLoop(body_.getInt64(full), n, [&] {
        strip(body_.CreateMul(loop_vars_[n], body_.getInt64(tile), "", true, true), kTileVectors,
              0);
      });
    }
    if (rest > 0) {
      strip(body_.getInt64(full * tile), static_cast<int>(rest / lanes),
            static_cast<int>(rest % lanes));
    }
  });
  return true;
}

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
      body_.getVoidTy(), {ptr, ptr, ptr, i64, i64, i64, body_.getInt32Ty()}, false);
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
    body_.CreateCall(helper, {a, b, c, m, n, k, body_.getInt32(kernel_.transpose_rhs ? 1 : 0)});
  });
}

}  // namespace graphjit::compiler::codegen_internal
