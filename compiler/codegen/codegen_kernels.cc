// The kernels that are loop nests: pointwise, reduction, arg reduction and scan bodies, and
// the vector accumulators of reductions in lanes (EmitReduceLanes), or of reductions over
// a strided axis in vectors of their outputs (EmitReduceOutputLanes).
#include <algorithm>
#include <limits>

#include "compiler/codegen/codegen_emitter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Intrinsics.h"

namespace graphjit::compiler::codegen_internal {

using ir::DType;

namespace {

// Vector accumulators of a reduction whose value is cheap (a load, a product): enough
// independent adds to cover their latency. A value with a transcendental is bound by its
// own instructions, and two chains keep its IR (one copy of the value per chain) small.
constexpr int kReduceChains = 4;
constexpr int kCostlyReduceChains = 2;

}  // namespace

void KernelEmitter::EmitPointwise() {
  const DType dtype = program_.buffers[kernel_.out].dtype;
  const int inner = static_cast<int>(kernel_.loops.size()) - 1;
  if (inner >= 0) {
    const auto& indices = kernel_.store_indices.empty() ? identity_ : kernel_.store_indices;
    if (const int lanes = PlanLanes(kernel_.value, inner, &indices, dtype, /*in_place=*/-1,
                                    /*at_o2=*/true)) {
      return EmitPointwiseLanes(lanes);
    }
    // A map between layouts (one of its buffers consecutive along an outer loop).
    if (EmitTransposedLanes()) return;
  }
  VectorizeLoops vectorize(this, inner);
  EmitNest(0, kernel_.loops.size(), [&] {
    llvm::Value* value = EvalTop(kernel_.value, dtype, "value");
    const auto& indices = kernel_.store_indices.empty() ? identity_ : kernel_.store_indices;
    StoreElement(kernel_.out, TargetPtr(kernel_.out, indices), value);
  });
}

void KernelEmitter::EmitReduce() {
  const DType dtype = program_.buffers[kernel_.out].dtype;
  const bool is_max = kernel_.combine == ScalarOp::kMax;
  if (!is_max && kernel_.combine != ScalarOp::kAdd) {
    return Fail("reduction combine must be + or max, is ", ScalarOpName(kernel_.combine));
  }
  if (dtype != DType::kF32 && dtype != DType::kF64 && dtype != DType::kI64) {
    return Fail("reduction into a ", ir::DTypeName(dtype), " buffer");
  }
  // A maximum is exact in any type, so it stays in the dtype.
  const DType acc_dtype = is_max ? dtype : SumType(dtype);
  llvm::Type* type = ValueType(acc_dtype);
  llvm::Value* init;
  if (dtype == DType::kI64) {
    init = body_.getInt64(is_max ? std::numeric_limits<int64_t>::min() : 0);
  } else {
    init = is_max ? llvm::ConstantFP::getInfinity(type, /*Negative=*/true)
                  : llvm::ConstantFP::get(type, 0.0);
  }
  // acc (op) value, for scalars and for vectors alike; an f32 value widens to its sum type.
  auto combine = [&](llvm::Value* sum, llvm::Value* value) -> llvm::Value* {
    if (value->getType() != sum->getType()) value = body_.CreateFPExt(value, sum->getType());
    if (is_max) {
      // NaN-propagating like the interpreter; a maximum reduction needs no fast-math.
      return dtype == DType::kI64 ? body_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, sum, value)
                                  : body_.CreateMaximum(sum, value);
    }
    if (dtype == DType::kI64) return body_.CreateAdd(sum, value);
    // `reassoc` lets the sum split into lanes (a different, equally accurate summation
    // order): LLVM's vectorizer at O2, EmitReduceLanes at the baseline.
    llvm::IRBuilder<>::FastMathFlagGuard guard(body_);
    llvm::FastMathFlags fmf = body_.getFastMathFlags();
    fmf.setAllowReassoc();
    body_.setFastMathFlags(fmf);
    return body_.CreateFAdd(sum, value);
  };
  const int reduce_var = static_cast<int>(kernel_.loops.size());
  if (PlanLanes(kernel_.value, reduce_var, nullptr, acc_dtype, /*in_place=*/-1,
                /*at_o2=*/true) == 0 &&
      EmitReduceOutputLanes(init, combine)) {
    return;
  }
  // The accumulator lives in an alloca that SROA turns into the phi the vectorizer wants.
  llvm::AllocaInst* acc = Accumulator(acc_dtype);
  const int lanes = PlanLanes(kernel_.value, reduce_var, nullptr, acc_dtype);
  VectorizeLoops vectorize(this, lanes > 0 ? -1 : reduce_var);
  EmitNest(0, kernel_.loops.size(), [&] {
    body_.CreateStore(init, acc);
    llvm::Value* extent = EvalTop(kernel_.reduce_extent, DType::kI64, "reduce extent");
    auto scalar_step = [&] {
      llvm::Value* value = EvalTop(kernel_.value, dtype, "value");
      body_.CreateStore(combine(body_.CreateLoad(type, acc), value), acc);
    };
    llvm::Value* lanes_result = nullptr;
    if (lanes > 0) {
      lanes_result =
          EmitReduceLanes(lanes, extent, init, combine, [&](llvm::Value*) { scalar_step(); });
    } else {
      EmitLoop(extent, reduce_var, scalar_step);
    }
    llvm::Value* result = body_.CreateLoad(type, acc);
    if (lanes_result != nullptr) result = combine(lanes_result, result);
    if (kernel_.finish_scale != nullptr) {
      llvm::Value* scale = EvalTop(kernel_.finish_scale, dtype, "finish scale");
      if (acc_dtype != dtype) scale = body_.CreateFPExt(scale, type);
      result =
          dtype == DType::kI64 ? body_.CreateMul(result, scale) : body_.CreateFMul(result, scale);
    }
    if (acc_dtype != dtype) result = body_.CreateFPTrunc(result, ValueType(dtype));
    const auto& indices = kernel_.store_indices.empty() ? identity_ : kernel_.store_indices;
    StoreElement(kernel_.out, TargetPtr(kernel_.out, indices), result);
  });
}

void KernelEmitter::EmitArgReduce() {
  const bool is_min = kernel_.combine == ScalarOp::kMin;
  if (!is_min && kernel_.combine != ScalarOp::kMax) {
    return Fail("arg reduction combine must be min or max, is ", ScalarOpName(kernel_.combine));
  }
  if (program_.buffers[kernel_.out].dtype != DType::kI64) {
    return Fail("arg reduction into a ", ir::DTypeName(program_.buffers[kernel_.out].dtype),
                " buffer (indices are i64)");
  }
  if (!CheckTree(kernel_.value, "value")) return;
  const DType dtype = kernel_.value->dtype;
  if (dtype != DType::kF32 && dtype != DType::kF64 && dtype != DType::kI64) {
    return Fail("arg reduction over ", ir::DTypeName(dtype), " values");
  }
  llvm::Type* type = ValueType(dtype);
  llvm::Value* init;
  if (dtype == DType::kI64) {
    init = body_.getInt64(is_min ? std::numeric_limits<int64_t>::max()
                                 : std::numeric_limits<int64_t>::min());
  } else {
    init = llvm::ConstantFP::getInfinity(type, /*Negative=*/!is_min);
  }
  llvm::AllocaInst* best = Accumulator(dtype);
  llvm::AllocaInst* index = Accumulator(DType::kI64);
  const int reduce_var = static_cast<int>(kernel_.loops.size());
  EmitNest(0, kernel_.loops.size(), [&] {
    body_.CreateStore(init, best);
    body_.CreateStore(body_.getInt64(0), index);
    llvm::Value* extent = EvalTop(kernel_.reduce_extent, DType::kI64, "reduce extent");
    EmitLoop(extent, reduce_var, [&] {
      llvm::Value* value = EvalTop(kernel_.value, dtype, "value");
      llvm::Value* current = body_.CreateLoad(type, best);
      // Strictly better keeps the first of equal extrema; a NaN is taken once (the first)
      // and then never beaten, as in the interpreter.
      llvm::Value* better;
      if (dtype == DType::kI64) {
        better = is_min ? body_.CreateICmpSLT(value, current) : body_.CreateICmpSGT(value, current);
      } else {
        llvm::Value* ordered =
            is_min ? body_.CreateFCmpOLT(value, current) : body_.CreateFCmpOGT(value, current);
        llvm::Value* first_nan = body_.CreateAnd(body_.CreateFCmpUNO(value, value),
                                                 body_.CreateFCmpORD(current, current));
        better = body_.CreateOr(ordered, first_nan);
      }
      body_.CreateStore(body_.CreateSelect(better, value, current), best);
      body_.CreateStore(body_.CreateSelect(better, loop_vars_[reduce_var],
                                           body_.CreateLoad(body_.getInt64Ty(), index)),
                        index);
    });
    const auto& indices = kernel_.store_indices.empty() ? identity_ : kernel_.store_indices;
    StoreElement(kernel_.out, TargetPtr(kernel_.out, indices),
                 body_.CreateLoad(body_.getInt64Ty(), index));
  });
}

void KernelEmitter::EmitScan() {
  const DType dtype = program_.buffers[kernel_.out].dtype;
  if (kernel_.combine != ScalarOp::kAdd) {
    return Fail("scan combine must be +, is ", ScalarOpName(kernel_.combine));
  }
  if (dtype != DType::kF32 && dtype != DType::kF64 && dtype != DType::kI64) {
    return Fail("scan into a ", ir::DTypeName(dtype), " buffer");
  }
  // The order is the index order (no reassoc: every prefix is a result, so there is
  // nothing to split into lanes).
  const DType acc_dtype = SumType(dtype);
  llvm::Type* acc_type = ValueType(acc_dtype);
  llvm::AllocaInst* acc = Accumulator(acc_dtype);
  const int scan_var = static_cast<int>(kernel_.loops.size());
  EmitNest(0, kernel_.loops.size(), [&] {
    body_.CreateStore(llvm::Constant::getNullValue(acc_type), acc);
    llvm::Value* extent = EvalTop(kernel_.reduce_extent, DType::kI64, "scan extent");
    EmitLoop(extent, scan_var, [&] {
      llvm::Value* value = EvalTop(kernel_.value, dtype, "value");
      llvm::Value* sum = body_.CreateLoad(acc_type, acc);
      llvm::Value* next;
      if (dtype == DType::kI64) {
        next = body_.CreateAdd(sum, value);  // wraps, as numpy's
      } else {
        if (dtype == DType::kF32) value = body_.CreateFPExt(value, acc_type);
        next = body_.CreateFAdd(sum, value);
      }
      body_.CreateStore(next, acc);
      llvm::Value* result =
          dtype == DType::kF32 ? body_.CreateFPTrunc(next, ValueType(dtype)) : next;
      const auto& indices = kernel_.store_indices.empty() ? identity_ : kernel_.store_indices;
      StoreElement(kernel_.out, TargetPtr(kernel_.out, indices), result);
    });
  });
}

llvm::Value* KernelEmitter::EmitReduceLanes(
    int lanes, llvm::Value* extent, llvm::Value* init,
    absl::FunctionRef<llvm::Value*(llvm::Value*, llvm::Value*)> combine,
    absl::FunctionRef<void(llvm::Value*)> scalar_step) {
  const int var = static_cast<int>(kernel_.loops.size());
  int cost = 0;
  for (const auto& [e, lane_class] : lane_class_) {
    if (e->kind == ExprKind::kOp) cost += ScalarOpCost(e->op);
  }
  const int chains = cost >= 8 ? kCostlyReduceChains : kReduceChains;
  llvm::Type* type = llvm::FixedVectorType::get(init->getType(), lanes);
  std::vector<llvm::AllocaInst*> acc;
  for (int u = 0; u < chains; ++u) {
    acc.push_back(prologue_.CreateAlloca(type, nullptr, "lanes"));
    body_.CreateStore(body_.CreateVectorSplat(lanes, init), acc.back());
  }
  // value at loop_vars_[var] = first .. first + lanes - 1 into accumulator u.
  auto step = [&](int u, llvm::Value* first) {
    loop_vars_[var] = first;
    llvm::Value* value = EvalLanes(kernel_.value, var, lanes);
    body_.CreateStore(combine(body_.CreateLoad(type, acc[u]), value), acc[u]);
  };
  const int64_t block = int64_t{chains} * lanes;
  llvm::Value* blocks = body_.CreateSDiv(extent, body_.getInt64(block));
  llvm::Value* done = body_.CreateMul(blocks, body_.getInt64(block), "", true, true);
  if (const auto* c = llvm::dyn_cast<llvm::ConstantInt>(blocks);
      c == nullptr || c->getSExtValue() > 0) {
    EmitLoop(blocks, var, [&] {
      llvm::Value* first = body_.CreateMul(loop_vars_[var], body_.getInt64(block), "", true, true);
      for (int u = 0; u < chains; ++u) {
        step(u, u == 0
                    ? first
                    : body_.CreateAdd(first, body_.getInt64(int64_t{u} * lanes), "", true, true));
      }
    });
  }
  EmitBlockedLoop(
      extent, var, lanes, [&](llvm::Value* first) { step(0, first); },
      [&](llvm::Value* index) {
        loop_vars_[var] = index;
        scalar_step(index);
      },
      done);
  // The chains in a tree, then the lanes: halves combined until one is left.
  std::vector<llvm::Value*> sums;
  for (llvm::AllocaInst* a : acc) sums.push_back(body_.CreateLoad(type, a));
  for (size_t width = sums.size(); width > 1; width /= 2) {
    for (size_t i = 0; i < width / 2; ++i) sums[i] = combine(sums[i], sums[i + width / 2]);
  }
  return CombineLanes(sums[0], combine);
}

bool KernelEmitter::EmitReduceOutputLanes(
    llvm::Value* init, absl::FunctionRef<llvm::Value*(llvm::Value*, llvm::Value*)> combine) {
  const DType dtype = program_.buffers[kernel_.out].dtype;
  const int reduce_var = static_cast<int>(kernel_.loops.size());
  // The last output loop that is not a constant single iteration (a mean over the
  // channels kept as a dim of 1 leaves loops [.., H, W, 1]).
  int var = reduce_var - 1;
  auto single = [&](int v) {
    const Expr* e = kernel_.loops[v].get();
    return e->kind == ExprKind::kConst && e->i_value == 1;
  };
  while (var >= 0 && single(var)) --var;
  if (var < 0 || UsesLoopVar(kernel_.reduce_extent.get(), var) ||
      (kernel_.finish_scale != nullptr && UsesLoopVar(kernel_.finish_scale.get(), var))) {
    return false;
  }
  const auto& indices = kernel_.store_indices.empty() ? identity_ : kernel_.store_indices;
  const DType acc_dtype = init->getType()->isDoubleTy()  ? DType::kF64
                          : init->getType()->isFloatTy() ? DType::kF32
                                                         : DType::kI64;
  const int lanes = PlanLanes(kernel_.value, var, &indices, acc_dtype, /*in_place=*/-1,
                              /*at_o2=*/true);
  if (lanes == 0) return false;
  // Four vectors at a time (one vector of 4 * lanes, which LLVM splits): four
  // independent chains of adds hide their latency, as the reduced loop is a chain per lane.
  // Fewer where a constant row of outputs is shorter.
  constexpr int64_t kChains = 4;
  const Expr* row = kernel_.loops[var].get();
  const int64_t chains = row->kind == ExprKind::kConst
                             ? std::clamp<int64_t>((row->i_value + lanes - 1) / lanes, 1, kChains)
                             : kChains;
  const int width = static_cast<int>(chains) * lanes;
  llvm::Type* type = llvm::FixedVectorType::get(init->getType(), width);
  llvm::AllocaInst* acc = prologue_.CreateAlloca(type, nullptr, "outputs");
  // Outputs first .. first + width - 1, under `mask` (null: all of them).
  auto outputs = [&](llvm::Value* first, llvm::Value* mask) {
    EmitNest(var + 1, kernel_.loops.size(), [&] {
      loop_vars_[var] = first;
      body_.CreateStore(body_.CreateVectorSplat(width, init), acc);
      llvm::Value* extent = EvalTop(kernel_.reduce_extent, DType::kI64, "reduce extent");
      EmitLoop(extent, reduce_var, [&] {
        loop_vars_[var] = first;
        llvm::Value* value = EvalLanes(kernel_.value, var, width, mask);
        body_.CreateStore(combine(body_.CreateLoad(type, acc), value), acc);
      });
      loop_vars_[var] = first;
      llvm::Value* result = body_.CreateLoad(type, acc);
      if (kernel_.finish_scale != nullptr) {
        llvm::Value* scale = EvalTop(kernel_.finish_scale, dtype, "finish scale");
        if (acc_dtype != dtype) scale = body_.CreateFPExt(scale, init->getType());
        scale = body_.CreateVectorSplat(width, scale);
        result =
            dtype == DType::kI64 ? body_.CreateMul(result, scale) : body_.CreateFMul(result, scale);
      }
      if (acc_dtype != dtype) {
        result = body_.CreateFPTrunc(result, llvm::FixedVectorType::get(ValueType(dtype), width));
      }
      StoreLanes(kernel_.out, TargetPtr(kernel_.out, indices), result, mask);
    });
  };
  EmitNest(0, var, [&] {
    llvm::Value* extent = EvalTop(kernel_.loops[var], DType::kI64, "loop extent");
    auto [begin, end] = LoopBounds(var, extent);
    EmitBlocks(
        end, var, width, [&](llvm::Value* first) { outputs(first, nullptr); },
        [&](llvm::Value* first, llvm::Value* left) { outputs(first, LanesBelow(width, left)); },
        begin);
  });
  return true;
}

llvm::Value* KernelEmitter::CombineLanes(
    llvm::Value* v, absl::FunctionRef<llvm::Value*(llvm::Value*, llvm::Value*)> combine) {
  const int lanes =
      static_cast<int>(llvm::cast<llvm::FixedVectorType>(v->getType())->getNumElements());
  for (int width = lanes; width > 2; width /= 2) {
    std::vector<int> low(width / 2), high(width / 2);
    for (int i = 0; i < width / 2; ++i) {
      low[i] = i;
      high[i] = width / 2 + i;
    }
    v = combine(body_.CreateShuffleVector(v, low), body_.CreateShuffleVector(v, high));
  }
  return combine(body_.CreateExtractElement(v, uint64_t{0}),
                 body_.CreateExtractElement(v, uint64_t{1}));
}

}  // namespace graphjit::compiler::codegen_internal
