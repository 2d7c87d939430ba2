// Scalar expressions of kernel bodies -> LLVM values, with the semantics of the
// interpreter (floor division, NaN-propagating max/min, numpy's comparisons).
#include <algorithm>
#include <numbers>
#include <utility>
#include <vector>

#include "compiler/codegen/codegen_emitter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Intrinsics.h"

namespace graphjit::compiler::codegen_internal {

using ir::DType;

namespace {

const char* KindName(ExprKind kind) {
  static const char* const kNames[] = {"constant", "loop variable", "symbol", "load",
                                       "op",       "select",        "cast"};
  return kind <= ExprKind::kCast ? kNames[static_cast<int>(kind)] : "invalid expression";
}

// `v` as a floating constant (a scalar or a splat vector), or null.
const llvm::ConstantFP* FloatConstant(llvm::Value* v) {
  const auto* c = llvm::dyn_cast<llvm::Constant>(v);
  if (c == nullptr) return nullptr;
  if (c->getType()->isVectorTy()) c = c->getSplatValue();
  return llvm::dyn_cast_or_null<llvm::ConstantFP>(c);
}

// IEEE maximum (or minimum, `max` false) of x and a constant c that is not NaN, as one
// compare and select: a NaN x fails the compare and stays, and the compare orders the
// zeros as `maximum` does. x86 makes `x < c ? c : x` one vmaxps (and `x > c ? c : x` one
// vminps); llvm.maximum's general expansion, which must also handle a NaN or a zero on
// the other side, is six instructions with a mask register between them (relu and clip
// passes ran at 15 cycles a vector). Null when c does not qualify.
llvm::Value* ExtremumWithConstant(llvm::IRBuilder<>& b, bool max, llvm::Value* x, llvm::Value* c) {
  const llvm::ConstantFP* constant = FloatConstant(c);
  if (constant == nullptr || constant->isNaN()) return nullptr;
  // maximum(+0, c = -0) is +0, so x == c must keep x: strict <; maximum(-0, c = +0) is
  // +0, so x == c must take c: <=. Mirrored for the minimum.
  const bool zero = constant->isZero();
  const bool take_c_on_tie = zero && (constant->isNegative() != max);
  llvm::Value* c_wins = max ? (take_c_on_tie ? b.CreateFCmpOLE(x, c) : b.CreateFCmpOLT(x, c))
                            : (take_c_on_tie ? b.CreateFCmpOGE(x, c) : b.CreateFCmpOGT(x, c));
  return b.CreateSelect(c_wins, c, x);
}

}  // namespace

bool KernelEmitter::CheckTree(const ExprPtr& e, absl::string_view what) {
  // Shape only (non-null operands, their number, valid enums), once per shared node, so
  // that evaluation and ExprToString can rely on it.
  if (e == nullptr) {
    Fail(what, " is missing");
    return false;
  }
  if (auto it = checked_.find(e.get()); it != checked_.end()) return it->second;
  const int expected = ExpectedOperands(e->kind, e->op);
  const bool ok =
      static_cast<int>(e->dtype) < ir::kNumDTypes && (expected >= 0 || e->kind == ExprKind::kLoad);
  // A load's count is its buffer's rank, checked where it is evaluated.
  const size_t want = e->kind == ExprKind::kLoad ? e->operands.size() : expected;
  if (!ok || e->operands.size() != want) {
    Fail("malformed ", KindName(e->kind), " in ", what, " (", e->operands.size(),
         " operands, dtype ", static_cast<int>(e->dtype), ")");
    return checked_[e.get()] = false;
  }
  for (const ExprPtr& operand : e->operands) {
    if (!CheckTree(operand, what)) return checked_[e.get()] = false;
  }
  return checked_[e.get()] = true;
}

bool KernelEmitter::ContainsLoad(const Expr* e) {
  if (e->kind == ExprKind::kLoad) return true;
  if (auto it = contains_load_.find(e); it != contains_load_.end()) return it->second;
  bool result = false;
  for (const ExprPtr& operand : e->operands) result = result || ContainsLoad(operand.get());
  return contains_load_[e] = result;
}

llvm::Value* KernelEmitter::EvalTop(const ExprPtr& e, DType want, absl::string_view what) {
  if (!CheckTree(e, what)) return Poison(want);
  if (e->dtype != want) {
    Fail(what, " ", ExprToString(e), " is ", ir::DTypeName(e->dtype), ", expected ",
         ir::DTypeName(want));
    return Poison(want);
  }
  memo_.clear();
  return Eval(*e, /*index=*/false);
}

llvm::Value* KernelEmitter::EvalPrologue(const ExprPtr& e, absl::string_view what) {
  // Called in the middle of other evaluations (a load's first use of a buffer): keep their
  // memo and insertion point.
  decltype(memo_) saved_memo;
  std::swap(saved_memo, memo_);
  llvm::IRBuilder<>* saved_builder = b_;
  b_ = &prologue_;
  in_prologue_ = true;
  llvm::Value* value = EvalTop(e, DType::kI64, what);
  in_prologue_ = false;
  b_ = saved_builder;
  std::swap(saved_memo, memo_);
  return value;
}

llvm::Value* KernelEmitter::EvalOperand(const ExprPtr& e, DType want, bool index) {
  if (e->dtype != want) {
    Fail("operand ", ExprToString(e), " is ", ir::DTypeName(e->dtype), ", expected ",
         ir::DTypeName(want));
    return Poison(want);
  }
  return Eval(*e, index);
}

llvm::Value* KernelEmitter::Eval(const Expr& e, bool index) {
  const auto key = std::make_pair(&e, index);
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  llvm::Value* value = EvalUncached(e, index);
  memo_[key] = value;
  return value;
}

llvm::Value* KernelEmitter::EvalUncached(const Expr& e, bool index) {
  switch (e.kind) {
    case ExprKind::kConst:
      switch (e.dtype) {
        case DType::kF32:
        case DType::kF64:
          return llvm::ConstantFP::get(ValueType(e.dtype), e.f_value);
        case DType::kI64:
          return b_->getInt64(e.i_value);
        case DType::kBool:
          return b_->getInt1(e.i_value != 0);
        case DType::kI32:
          return b_->getInt32(static_cast<uint32_t>(e.i_value));
      }
      return Poison(e.dtype);
    case ExprKind::kLoopVar:
      if (e.dtype != DType::kI64 || in_prologue_ || e.index < 0 ||
          e.index >= static_cast<int>(loop_vars_.size()) || loop_vars_[e.index] == nullptr) {
        Fail("loop variable i", e.index, in_prologue_ ? " in a buffer dim or offset" : "",
             " used outside its loop (", loop_vars_.size(), " loop variables)");
        return Poison(e.dtype);
      }
      return loop_vars_[e.index];
    case ExprKind::kSymbol:
      if (e.dtype != DType::kI64) {
        Fail("symbol s", e.index, " is not i64");
        return Poison(e.dtype);
      }
      return Symbol(e.index);
    case ExprKind::kLoad: {
      if (in_prologue_) {
        Fail("load of b", e.index, " in a buffer dim or offset");
        return Poison(e.dtype);
      }
      llvm::Value* ptr = ElementPtr(e.index, e.operands);
      if (ptr == nullptr) return Poison(e.dtype);
      if (program_.buffers[e.index].dtype != e.dtype) {
        Fail("load of b", e.index, " as ", ir::DTypeName(e.dtype), " but the buffer is ",
             ir::DTypeName(program_.buffers[e.index].dtype));
        return Poison(e.dtype);
      }
      return LoadElement(e.index, ptr);
    }
    case ExprKind::kOp:
      return EvalOp(e, index);
    case ExprKind::kSelect:
      return EvalSelect(e, index);
    case ExprKind::kCast:
      return EvalCast(e, index);
  }
  return Poison(e.dtype);
}

llvm::Value* KernelEmitter::EvalOp(const Expr& e, bool index) {
  const DType dtype = e.operands[0]->dtype;
  if (e.dtype != (IsComparison(e.op) ? DType::kBool : dtype)) {
    Fail("op ", ScalarOpName(e.op), " on ", ir::DTypeName(dtype), " typed as ",
         ir::DTypeName(e.dtype));
    return Poison(e.dtype);
  }
  llvm::Value* x = EvalOperand(e.operands[0], dtype, index);
  llvm::Value* y = IsUnary(e.op) ? nullptr : EvalOperand(e.operands[1], dtype, index);
  llvm::Value* result = nullptr;
  switch (dtype) {
    case DType::kF32:
    case DType::kF64:
      result = FloatOp(e.op, x, y);
      break;
    case DType::kI64:
      result = IntOp(e.op, x, y, index);
      break;
    case DType::kBool:
      result = BoolOp(e.op, x, y);
      break;
    case DType::kI32:  // a storage type: only casts read it (ir/op.cc)
      break;
  }
  if (result == nullptr) {
    Fail("op ", ScalarOpName(e.op), " is not defined on ", ir::DTypeName(dtype));
    return Poison(e.dtype);
  }
  return result;
}

// Floating ops get no fast-math flags (KernelEmitter's constructor says why): no
// contraction, reassociation or NaN/Inf assumptions, so each rounds as the interpreter's.
llvm::Value* KernelEmitter::FloatOp(ScalarOp op, llvm::Value* x, llvm::Value* y) {
  llvm::IRBuilder<>& b = *b_;
  llvm::Value* one = llvm::ConstantFP::get(x->getType(), 1.0);  // a splat for vectors
  switch (op) {
    case ScalarOp::kAdd:
      return b.CreateFAdd(x, y);
    case ScalarOp::kSub:
      return b.CreateFSub(x, y);
    case ScalarOp::kMul:
      return b.CreateFMul(x, y);
    case ScalarOp::kDiv:
      return b.CreateFDiv(x, y);
    case ScalarOp::kPow:
      // x pow 2 is x * x, exactly rounded either way (LLVM's own rewrite at O2); as a
      // product it also has a vector form (codegen_lanes.cc, IsSquare).
      if (const auto* c = llvm::dyn_cast<llvm::Constant>(y); c != nullptr) {
        if (c->getType()->isVectorTy()) c = c->getSplatValue();
        if (const auto* two = llvm::dyn_cast_or_null<llvm::ConstantFP>(c);
            two != nullptr && two->isExactlyValue(2.0)) {
          return b.CreateFMul(x, x);
        }
      }
      return b.CreateBinaryIntrinsic(llvm::Intrinsic::pow, x, y);
    case ScalarOp::kMax:
    case ScalarOp::kMin: {
      const bool max = op == ScalarOp::kMax;
      if (llvm::Value* v = ExtremumWithConstant(b, max, x, y)) return v;
      if (llvm::Value* v = ExtremumWithConstant(b, max, y, x)) return v;
      // NaN-propagating, as numpy's maximum
      return max ? b.CreateMaximum(x, y) : b.CreateMinimum(x, y);
    }
    case ScalarOp::kEq:
      return b.CreateFCmpOEQ(x, y);
    case ScalarOp::kNe:
      return b.CreateFCmpUNE(x, y);  // NaN != NaN is true
    case ScalarOp::kLt:
      return b.CreateFCmpOLT(x, y);
    case ScalarOp::kLe:
      return b.CreateFCmpOLE(x, y);
    case ScalarOp::kGt:
      return b.CreateFCmpOGT(x, y);
    case ScalarOp::kGe:
      return b.CreateFCmpOGE(x, y);
    case ScalarOp::kNeg:
      return b.CreateFNeg(x);
    case ScalarOp::kAbs:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    case ScalarOp::kSqrt:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
    case ScalarOp::kRsqrt:
      return b.CreateFDiv(one, b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x));
      // exp and f32 erf are emitted inline (codegen_math.cc); the others are one libm call
      // each (LLVM maps them to libmvec's vector variants, or to an instruction where there
      // is one; libmvec has no erf LLVM knows of, so a scalar erff call kept GELU's loops
      // scalar).
#define GJ_FLOAT_MATH(name, spelling, cost, function, f64_name, f32_name)     \
  case ScalarOp::k##name:                                                     \
    if (op == ScalarOp::kExp) return Exp(x);                                  \
    if (op == ScalarOp::kErf && x->getType()->getScalarType()->isFloatTy()) { \
      return ErfF32(x);                                                       \
    }                                                                         \
    return CallLibm(f64_name, f32_name, x);
#include "runtime/float_math.def"
#undef GJ_FLOAT_MATH
    case ScalarOp::kSigmoid:
      return Sigmoid(x);
    default:
      return nullptr;
  }
}

llvm::Value* KernelEmitter::IndexOp(ScalarOp op, llvm::Value* x, llvm::Value* y) {
  llvm::IRBuilder<>& b = *b_;
  auto is = [](llvm::Value* v, int64_t c) {
    auto* k = llvm::dyn_cast<llvm::ConstantInt>(v);
    return k != nullptr && k->getSExtValue() == c;
  };
  // The identities lowering leaves in (a + 0 for a zero offset, a * 1 for a unit stride).
  if ((op == ScalarOp::kAdd || op == ScalarOp::kSub) && is(y, 0)) return x;
  if (op == ScalarOp::kAdd && is(x, 0)) return y;
  if (op == ScalarOp::kMul && (is(y, 1) || is(x, 0))) return x;
  if (op == ScalarOp::kMul && (is(x, 1) || is(y, 0))) return y;
  llvm::BasicBlock* block = b.GetInsertBlock();
  const bool at_end = block != nullptr && b.GetInsertPoint() == block->end();
  // Add and mul commute: one key for both operand orders.
  const bool swap = op != ScalarOp::kSub && y < x;
  const auto key = std::make_tuple(static_cast<int>(op), swap ? y : x, swap ? x : y);
  if (at_end) {
    auto it = index_ops_.find(key);
    if (it != index_ops_.end() && it->second->getParent() == block) return it->second;
  }
  llvm::Value* v = op == ScalarOp::kAdd   ? b.CreateAdd(x, y, "", false, true)
                   : op == ScalarOp::kSub ? b.CreateSub(x, y, "", false, true)
                                          : b.CreateMul(x, y, "", false, true);
  if (auto* inst = llvm::dyn_cast<llvm::Instruction>(v); inst != nullptr && at_end) {
    index_ops_[key] = inst;
  }
  return v;
}

llvm::Value* KernelEmitter::IntOp(ScalarOp op, llvm::Value* x, llvm::Value* y, bool index) {
  // Index arithmetic is nsw (in-bounds indices do not overflow, and SCEV needs it to see
  // affine addresses); arithmetic on i64 data wraps, as numpy's does.
  llvm::IRBuilder<>& b = *b_;
  if (index && (op == ScalarOp::kAdd || op == ScalarOp::kSub || op == ScalarOp::kMul)) {
    return IndexOp(op, x, y);
  }
  switch (op) {
    case ScalarOp::kAdd:
      return b.CreateAdd(x, y, "", false, index);
    case ScalarOp::kSub:
      return b.CreateSub(x, y, "", false, index);
    case ScalarOp::kMul:
      return b.CreateMul(x, y, "", false, index);
    case ScalarOp::kDiv:
      return FloorDivMod(x, y, /*mod=*/false);
    case ScalarOp::kMod:
      return FloorDivMod(x, y, /*mod=*/true);
    case ScalarOp::kMax:
      return b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x, y);
    case ScalarOp::kMin:
      return b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, x, y);
    case ScalarOp::kEq:
      return b.CreateICmpEQ(x, y);
    case ScalarOp::kNe:
      return b.CreateICmpNE(x, y);
    case ScalarOp::kLt:
      return b.CreateICmpSLT(x, y);
    case ScalarOp::kLe:
      return b.CreateICmpSLE(x, y);
    case ScalarOp::kGt:
      return b.CreateICmpSGT(x, y);
    case ScalarOp::kGe:
      return b.CreateICmpSGE(x, y);
    case ScalarOp::kNeg:
      return b.CreateNeg(x, "", index);
    case ScalarOp::kAbs:
      return b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b.getFalse());
    default:
      return nullptr;
  }
}

llvm::Value* KernelEmitter::FloorDivMod(llvm::Value* x, llvm::Value* y, bool mod) {
  llvm::IRBuilder<>& b = *b_;
  // The semantics of runtime/scalar_semantics.h: x // 0 and x % 0 are 0; INT64_MIN // -1
  // wraps to INT64_MIN and x % -1 is 0. Both divisors would trap (SIGFPE; INT64_MIN / -1
  // is also poison in LLVM), so they divide by 1 instead and the result is fixed up with
  // selects: -x for // -1, 0 for // 0. The remainder by 1 is 0, right for both. Folds
  // away for constant divisors.
  llvm::Value* minus_one = nullptr;
  llvm::Value* zero = nullptr;
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(y);
      c == nullptr || c->isZero() || c->isMinusOne()) {
    minus_one = b.CreateICmpEQ(y, b.getInt64(-1));
    zero = b.CreateICmpEQ(y, b.getInt64(0));
    y = b.CreateSelect(b.CreateOr(zero, minus_one), b.getInt64(1), y);
  }
  llvm::Value* q = b.CreateSDiv(x, y);
  llvm::Value* r = b.CreateSRem(x, y);
  // sdiv truncates; Python floors: step down when the remainder is nonzero and its sign
  // differs from the divisor's.
  llvm::Value* adjust = b.CreateAnd(b.CreateICmpNE(r, b.getInt64(0)),
                                    b.CreateICmpSLT(b.CreateXor(r, y), b.getInt64(0)));
  if (mod) return b.CreateAdd(r, b.CreateSelect(adjust, y, b.getInt64(0)));
  llvm::Value* floor = b.CreateSub(q, b.CreateZExt(adjust, b.getInt64Ty()));
  if (minus_one == nullptr) return floor;
  floor = b.CreateSelect(minus_one, b.CreateNeg(x), floor);
  return b.CreateSelect(zero, b.getInt64(0), floor);
}

llvm::Value* KernelEmitter::BoolOp(ScalarOp op, llvm::Value* x, llvm::Value* y) {
  llvm::IRBuilder<>& b = *b_;
  switch (op) {
    case ScalarOp::kAnd:
    case ScalarOp::kMin:  // false < true, as the interpreter's min/max on bool
      return b.CreateAnd(x, y);
    case ScalarOp::kOr:
    case ScalarOp::kMax:
      return b.CreateOr(x, y);
    case ScalarOp::kEq:
      return b.CreateICmpEQ(x, y);
    case ScalarOp::kNe:
      return b.CreateICmpNE(x, y);
    case ScalarOp::kLt:
      return b.CreateICmpULT(x, y);
    case ScalarOp::kLe:
      return b.CreateICmpULE(x, y);
    case ScalarOp::kGt:
      return b.CreateICmpUGT(x, y);
    case ScalarOp::kGe:
      return b.CreateICmpUGE(x, y);
    case ScalarOp::kNot:
      return b.CreateNot(x);
    default:
      return nullptr;
  }
}

llvm::Value* KernelEmitter::EvalCast(const Expr& e, bool index) {
  const DType from = e.operands[0]->dtype, to = e.dtype;
  return CastValue(EvalOperand(e.operands[0], from, index), from, to);
}

llvm::Type* KernelEmitter::ValueTypeLike(DType dtype, llvm::Value* like) {
  auto* vector = llvm::dyn_cast<llvm::VectorType>(like->getType());
  return vector == nullptr ? ValueType(dtype)
                           : llvm::VectorType::get(ValueType(dtype), vector->getElementCount());
}

llvm::Value* KernelEmitter::CastValue(llvm::Value* x, DType from, DType to) {
  llvm::IRBuilder<>& b = *b_;
  llvm::Type* type = ValueTypeLike(to, x);
  if (from == to) return x;
  if (to == DType::kBool) {
    // Like C++'s bool conversion: NaN is true.
    return ir::IsFloat(from) ? b.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0))
                             : b.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
  }
  if (from == DType::kBool)
    return ir::IsFloat(to) ? b.CreateUIToFP(x, type) : b.CreateZExt(x, type);
  // Float to i64 or i32 saturates and maps NaN to 0 (fptosi would be poison out of range), as the
  // interpreter's cast (runtime/scalar_semantics.h).
  if (ir::IsFloat(from)) {
    return ir::IsFloat(to)
               ? b.CreateFPCast(x, type)
               : b.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {type, x->getType()}, {x});
  }
  // Integers widen by sign and narrow by wrapping, as the interpreter's static_cast.
  if (!ir::IsFloat(to)) return b.CreateSExtOrTrunc(x, type);
  return b.CreateSIToFP(x, type);
}

llvm::Value* KernelEmitter::EvalSelect(const Expr& e, bool index) {
  llvm::Value* cond = EvalOperand(e.operands[0], DType::kBool, index);
  const ExprPtr& on_true = e.operands[1];
  const ExprPtr& on_false = e.operands[2];
  if (in_prologue_ || (!ContainsLoad(on_true.get()) && !ContainsLoad(on_false.get()))) {
    llvm::Value* t = EvalOperand(on_true, e.dtype, index);
    llvm::Value* f = EvalOperand(on_false, e.dtype, index);
    return b_->CreateSelect(cond, t, f);
  }
  // An arm that loads may index out of bounds when not taken (concat, pad: b[i - n] for
  // i < n), so it runs only when selected. The vectorizer if-converts the diamond with
  // masked loads where the target has them (AVX2: 32/64-bit elements).
  llvm::BasicBlock* then_block = llvm::BasicBlock::Create(context_, "sel.true", function_);
  llvm::BasicBlock* else_block = llvm::BasicBlock::Create(context_, "sel.false", function_);
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(context_, "sel.merge", function_);
  b_->CreateCondBr(cond, then_block, else_block);
  // Values made inside one arm do not dominate the other arm or the merge.
  const auto saved_memo = memo_;
  b_->SetInsertPoint(then_block);
  llvm::Value* t = EvalOperand(on_true, e.dtype, index);
  llvm::BasicBlock* then_end = b_->GetInsertBlock();
  b_->CreateBr(merge);
  memo_ = saved_memo;
  b_->SetInsertPoint(else_block);
  llvm::Value* f = EvalOperand(on_false, e.dtype, index);
  llvm::BasicBlock* else_end = b_->GetInsertBlock();
  b_->CreateBr(merge);
  memo_ = saved_memo;
  b_->SetInsertPoint(merge);
  llvm::PHINode* phi = b_->CreatePHI(ValueType(e.dtype), 2, "sel");
  phi->addIncoming(t, then_end);
  phi->addIncoming(f, else_end);
  return phi;
}

llvm::Value* KernelEmitter::CallLibm(const char* f64_name, const char* f32_name, llvm::Value* x) {
  llvm::Type* type = x->getType();
  const char* name = type->isFloatTy() ? f32_name : f64_name;
  llvm::FunctionType* function_type = llvm::FunctionType::get(type, {type}, false);
  auto* f =
      llvm::dyn_cast<llvm::Function>(module_.getOrInsertFunction(name, function_type).getCallee());
  // Only the entry function could have taken the name (kernels are prefixed).
  if (f == nullptr || f->getFunctionType() != function_type || !f->isDeclaration()) {
    Fail("function name '", name, "' is taken, cannot call libm's");
    return x;
  }
  // memory(none) (as -fno-math-errno): otherwise the vectorizer sees a possible store and
  // never maps the call to libmvec.
  f->setMemoryEffects(llvm::MemoryEffects::none());
  f->setDoesNotThrow();
  f->setWillReturn();
  return b_->CreateCall(f, {x});
}

}  // namespace graphjit::compiler::codegen_internal
