// Explicit vector code for maps and reductions at the baseline tier: a map's innermost
// loop, or a reduction's loop, in vectors of the host's width (CompileOptions'
// max_vector_bytes within it) with a scalar rest, so that the tier's code no longer waits
// for LLVM's loop vectorizer to find them (compiler/orc/optimize_module.cc). At O2, maps
// too (PlanLanes says why), their vectors in pairs and their rest one masked vector, and
// a stencil's rows (a depthwise convolution's) four at a time; a stencil of more taps in
// vectors as wide as its row, or with its rows as the parts of one vector.
// Loads of every other element (stride-2 windows) are a wide load and a shuffle; a
// square of vectors is transposed in registers (the tiles pack A's rows with it).
//
// Each lane computes what the scalar loop computes at its index, with the same
// instructions (FloatOp, IntOp, BoolOp, Exp and CastValue take vectors too), so a map's
// vectors give the bits of its scalar rest and of the O2 tier. Sums split into lanes and
// accumulator chains, the reassociation their `reassoc` flag allows LLVM's vectorizer.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "compiler/codegen/codegen_emitter.h"
#include "compiler/codegen/stencil_plan.h"
#include "compiler/lower/index_exprs.h"
#include "compiler/lower/simplify_index.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Intrinsics.h"

namespace graphjit::compiler::codegen_internal {

using ir::DType;

namespace {

bool IsVar(const Expr* e, int var) { return e->kind == ExprKind::kLoopVar && e->index == var; }

// The last index is var plus an offset and no other index mentions var: consecutive
// values of var address consecutive elements.
bool UnitStrideAlong(const std::vector<ExprPtr>& indices, int var) {
  return !indices.empty() && VarPlusOffset(indices.back().get(), var) &&
         std::none_of(indices.begin(), indices.end() - 1,
                      [&](const ExprPtr& e) { return UsesLoopVar(e.get(), var); });
}

// The last index is 2 * var plus an offset and no other index mentions var: lanes read
// every other element (a stride-2 window of a convolution or a pool).
bool StrideTwoAlong(const std::vector<ExprPtr>& indices, int var) {
  return !indices.empty() && Coefficient(indices.back().get(), var) == 2 &&
         std::none_of(indices.begin(), indices.end() - 1,
                      [&](const ExprPtr& e) { return UsesLoopVar(e.get(), var); });
}

// The ops whose lanes FloatOp / IntOp / BoolOp compute with vector instructions. Not
// pow and the libm functions but exp and f32 erf (calls), nor i64 floor division (a
// divide per lane).
bool HasVectorForm(ScalarOp op, DType dtype) {
  switch (op) {
    case ScalarOp::kMax:
    case ScalarOp::kMin:
    case ScalarOp::kEq:
    case ScalarOp::kNe:
    case ScalarOp::kLt:
    case ScalarOp::kLe:
    case ScalarOp::kGt:
    case ScalarOp::kGe:
      return dtype != DType::kI32;
    case ScalarOp::kAdd:
    case ScalarOp::kSub:
    case ScalarOp::kMul:
    case ScalarOp::kNeg:
    case ScalarOp::kAbs:
      return dtype == DType::kF32 || dtype == DType::kF64 || dtype == DType::kI64;
    case ScalarOp::kDiv:
    case ScalarOp::kSqrt:
    case ScalarOp::kRsqrt:
    case ScalarOp::kSigmoid:
    case ScalarOp::kExp:
      return dtype == DType::kF32 || dtype == DType::kF64;
    case ScalarOp::kErf:
      return dtype == DType::kF32;  // inline (ErfF32); f64 calls libm
    case ScalarOp::kAnd:
    case ScalarOp::kOr:
    case ScalarOp::kNot:
      return dtype == DType::kBool;
    default:
      return false;
  }
}

// x pow 2 (a variance's square, as ONNX exports it): FloatOp multiplies x by itself.
bool IsSquare(const Expr& e) {
  return e.kind == ExprKind::kOp && e.op == ScalarOp::kPow && e.operands.size() == 2 &&
         e.operands[1]->kind == ExprKind::kConst && e.operands[1]->f_value == 2.0 &&
         (e.dtype == DType::kF32 || e.dtype == DType::kF64);
}

}  // namespace

KernelEmitter::LaneClass KernelEmitter::ClassifyLanes(const Expr* e, int var) {
  if (auto it = lane_class_.find(e); it != lane_class_.end()) return it->second;
  if (lane_values_.contains(e)) return lane_class_[e] = LaneClass::kVarying;  // given
  LaneClass result = LaneClass::kUniform;
  // Any operand that cannot be a vector keeps the whole expression scalar.
  for (const ExprPtr& operand : e->operands) {
    result = std::max(result, ClassifyLanes(operand.get(), var));
  }
  const auto dtype_of = [&](int i) { return e->operands[i]->dtype; };
  switch (e->kind) {
    case ExprKind::kConst:
    case ExprKind::kSymbol:
      break;
    case ExprKind::kLoopVar:
      if (e->index == var) result = LaneClass::kVarying;
      break;
    case ExprKind::kLoad: {
      const int b = e->index;
      if (b < 0 || b >= static_cast<int>(program_.buffers.size()) ||
          program_.buffers[b].dtype != e->dtype) {
        result = LaneClass::kNo;
        break;
      }
      // A load of memory the kernel writes (a buffer it writes, or the input its output
      // is written in place of) would read a whole vector before the stores of its
      // earlier lanes: scalar, in order, unless each lane reads the element it writes.
      // Other buffers never overlap (Buffer::alias_of).
      const bool written = b == kernel_.out || b == kernel_.scores || b == kernel_.sum_out ||
                           program_.buffers[kernel_.out].alias_of == b ||
                           program_.buffers[b].alias_of == kernel_.out;
      const bool own_element = b == lanes_in_place_ && UnitStrideAlong(e->operands, var) &&
                               IsVar(e->operands.back().get(), var);
      if (written && !own_element) {
        result = LaneClass::kNo;
      } else if (result != LaneClass::kUniform) {
        // Its indices move with var: one vector load if consecutive (also where they
        // split var over dims by divisions, whose lanes have no vector form: the indices
        // are scalars, the first lane's), two and a shuffle if every other element;
        // else scalar.
        if (result == LaneClass::kVarying && StrideTwoAlong(e->operands, var) &&
            e->dtype != DType::kBool) {
          stride_two_loads_.insert(e);
        } else if (UnitStrideAlong(e->operands, var) ||
                   ConsecutiveInMemory(e->operands, program_.buffers[b].dims, var, kernel_.loops)) {
          result = LaneClass::kVarying;
        } else {
          result = LaneClass::kNo;
        }
      }
      break;
    }
    case ExprKind::kOp: {
      const bool typed = e->dtype == (IsComparison(e->op) ? DType::kBool : dtype_of(0)) &&
                         (IsUnary(e->op) || dtype_of(1) == dtype_of(0));
      if (!typed) {
        result = LaneClass::kNo;  // the scalar path names the error
      } else if (result == LaneClass::kVarying && !HasVectorForm(e->op, dtype_of(0)) &&
                 !IsSquare(*e)) {
        result = LaneClass::kNo;
      }
      break;
    }
    case ExprKind::kSelect:
      if (dtype_of(0) != DType::kBool || dtype_of(1) != e->dtype || dtype_of(2) != e->dtype) {
        result = LaneClass::kNo;
      } else if (result == LaneClass::kVarying &&
                 lane_class_.at(e->operands[0].get()) != LaneClass::kUniform &&
                 (HasUniformLoad(e->operands[1].get()) || HasUniformLoad(e->operands[2].get()))) {
        // An arm's loads run only where it is selected (EvalSelect), as they may be out of
        // bounds elsewhere (concat, pad): masked vector loads can say so, one scalar load
        // for all lanes cannot (unless the condition is the same for all lanes: then the
        // vectors branch, UniformSelectLanes).
        result = LaneClass::kNo;
      }
      break;
    case ExprKind::kCast:
      break;
  }
  return lane_class_[e] = result;
}

bool KernelEmitter::HasUniformLoad(const Expr* e) {
  if (!ContainsLoad(e)) return false;
  if (lane_class_.at(e) == LaneClass::kUniform) return true;
  return std::any_of(e->operands.begin(), e->operands.end(),
                     [&](const ExprPtr& operand) { return HasUniformLoad(operand.get()); });
}

int64_t KernelEmitter::WidestLane(const Expr* e) {
  if (lane_class_.at(e) != LaneClass::kVarying) return 0;
  int64_t widest = ir::DTypeSize(e->dtype);
  if (e->kind == ExprKind::kLoad) return widest;  // its indices are scalars
  for (const ExprPtr& operand : e->operands) widest = std::max(widest, WidestLane(operand.get()));
  return widest;
}

int KernelEmitter::PlanLanes(const ExprPtr& value, int var,
                             const std::vector<ExprPtr>* store_indices, DType acc_dtype,
                             int in_place, bool at_o2) {
  if ((options_.tier != CodeTier::kBaseline && !at_o2) || failed() || !CheckTree(value, "value")) {
    return 0;
  }
  if (value->dtype != program_.buffers[kernel_.out].dtype) return 0;  // EvalTop says so
  if (store_indices != nullptr) {
    for (const ExprPtr& index : *store_indices) {
      if (!CheckTree(index, "store index")) return 0;
    }
    if (!UnitStrideAlong(*store_indices, var) &&
        !ConsecutiveInMemory(*store_indices, program_.buffers[kernel_.out].dims, var,
                             kernel_.loops)) {
      return 0;
    }
  }
  lane_class_.clear();
  stride_two_loads_.clear();
  lanes_in_place_ = in_place;
  if (ClassifyLanes(value.get(), var) == LaneClass::kNo) return 0;
  // One lane count for the whole expression: the widest element held in a vector sets
  // it (uniform values are splat at their own type, indices stay scalar).
  const int64_t widest = std::max<int64_t>(ir::DTypeSize(acc_dtype), WidestLane(value.get()));
  const int lanes = static_cast<int>(VectorBytes() / widest);
  return lanes >= 2 ? lanes : 0;
}

llvm::Value* KernelEmitter::EvalLanes(const ExprPtr& value, int var, int lanes, llvm::Value* mask) {
  memo_.clear();
  lane_memo_.clear();
  return LanesOf(*value, var, lanes, mask);
}

llvm::Value* KernelEmitter::LanesOf(const Expr& e, int var, int lanes, llvm::Value* mask) {
  if (auto it = lane_values_.find(&e); it != lane_values_.end()) return it->second;
  // A value computed for all lanes serves a masked use too.
  for (llvm::Value* key : {static_cast<llvm::Value*>(nullptr), mask}) {
    if (auto it = lane_memo_.find({&e, key}); it != lane_memo_.end()) return it->second;
  }
  auto lanes_of = [&](int operand, llvm::Value* m) {
    return LanesOf(*e.operands[operand], var, lanes, m);
  };
  llvm::Value* v = nullptr;
  const auto lane_class = lane_class_.find(&e);
  if (lane_class == lane_class_.end() || lane_class->second == LaneClass::kNo) {
    Fail("a ", ir::DTypeName(e.dtype), " expression evaluated as vectors, not planned so");
  } else if (lane_class->second == LaneClass::kUniform) {
    if (!row_parts_.empty() && UsesLoopVar(&e, row_var_)) {
      v = ConcatParts(lanes, mask, [&](int width, llvm::Value*) {
        return body_.CreateVectorSplat(width, Eval(e, /*index=*/false));
      });
    } else {
      v = body_.CreateVectorSplat(lanes, Eval(e, /*index=*/false));
    }
  } else {
    switch (e.kind) {
      case ExprKind::kLoopVar: {
        const int width = row_parts_.empty() ? lanes : lanes / static_cast<int>(row_parts_.size());
        std::vector<uint64_t> steps(lanes);
        for (int i = 0; i < lanes; ++i) steps[i] = i % width;
        v = body_.CreateAdd(body_.CreateVectorSplat(lanes, loop_vars_[var]),
                            llvm::ConstantDataVector::get(context_, steps), "", true, true);
        break;
      }
      case ExprKind::kLoad: {
        auto load = [&](int width, llvm::Value* m) -> llvm::Value* {
          llvm::Value* ptr = ElementPtr(e.index, e.operands);
          if (ptr == nullptr) return nullptr;
          return stride_two_loads_.contains(&e) ? LoadEveryOtherLane(e.index, ptr, width, m)
                                                : LoadLanes(e.index, ptr, width, m);
        };
        if (!row_parts_.empty() && UsesLoopVar(&e, row_var_)) {
          v = ConcatParts(lanes, mask, load);
        } else {
          v = load(lanes, mask);
        }
        break;
      }
      case ExprKind::kOp: {
        const DType dtype = e.operands[0]->dtype;
        llvm::Value* x = lanes_of(0, mask);
        llvm::Value* y = IsUnary(e.op) ? nullptr : lanes_of(1, mask);
        if (failed()) break;
        v = dtype == DType::kBool  ? BoolOp(e.op, x, y)
            : dtype == DType::kI64 ? IntOp(e.op, x, y, /*index=*/false)
                                   : FloatOp(e.op, x, y);
        break;
      }
      case ExprKind::kSelect: {
        if (lane_class_.at(e.operands[0].get()) == LaneClass::kUniform &&
            (ContainsLoad(e.operands[1].get()) || ContainsLoad(e.operands[2].get()))) {
          v = UniformSelectLanes(e, var, lanes, mask);
          break;
        }
        llvm::Value* cond = lanes_of(0, mask);
        if (failed()) break;
        llvm::Value* not_cond = body_.CreateNot(cond);
        llvm::Value* t = lanes_of(1, mask == nullptr ? cond : body_.CreateAnd(mask, cond));
        llvm::Value* f = lanes_of(2, mask == nullptr ? not_cond : body_.CreateAnd(mask, not_cond));
        if (!failed()) v = body_.CreateSelect(cond, t, f);
        break;
      }
      case ExprKind::kCast: {
        llvm::Value* x = lanes_of(0, mask);
        if (!failed()) v = CastValue(x, e.operands[0]->dtype, e.dtype);
        break;
      }
      default:
        break;
    }
  }
  if (v == nullptr) {
    Fail("no vector form for a ", ir::DTypeName(e.dtype), " expression");
    v = llvm::PoisonValue::get(llvm::FixedVectorType::get(ValueType(e.dtype), lanes));
  }
  return lane_memo_[{&e, mask}] = v;
}

llvm::Value* KernelEmitter::LanesBelow(int lanes, llvm::Value* count, int period) {
  std::vector<uint64_t> steps(lanes);
  for (int i = 0; i < lanes; ++i) steps[i] = period > 0 ? i % period : i;
  return body_.CreateICmpSLT(llvm::ConstantDataVector::get(context_, steps),
                             body_.CreateVectorSplat(lanes, count));
}

llvm::Value* KernelEmitter::ConcatParts(int lanes, llvm::Value* mask,
                                        absl::FunctionRef<llvm::Value*(int, llvm::Value*)> part) {
  const int parts = static_cast<int>(row_parts_.size());
  const int width = lanes / parts;
  llvm::Value* saved = loop_vars_[row_var_];
  std::vector<llvm::Value*> values;
  for (int r = 0; r < parts; ++r) {
    // Expressions of the row are evaluated afresh at each part's row.
    memo_.clear();
    loop_vars_[row_var_] = row_parts_[r];
    llvm::Value* part_mask = nullptr;
    if (mask != nullptr) {
      std::vector<int> lanes_of_part(width);
      for (int i = 0; i < width; ++i) lanes_of_part[i] = r * width + i;
      part_mask = body_.CreateShuffleVector(mask, lanes_of_part);
    }
    values.push_back(part(width, part_mask));
    if (values.back() == nullptr) break;
  }
  memo_.clear();
  loop_vars_[row_var_] = saved;
  if (values.back() == nullptr) return nullptr;
  // Halves joined until one vector is left.
  while (values.size() > 1) {
    std::vector<llvm::Value*> joined;
    const int half =
        static_cast<int>(llvm::cast<llvm::FixedVectorType>(values[0]->getType())->getNumElements());
    std::vector<int> both(2 * half);
    for (int i = 0; i < 2 * half; ++i) both[i] = i;
    for (size_t i = 0; i < values.size(); i += 2) {
      joined.push_back(body_.CreateShuffleVector(values[i], values[i + 1], both));
    }
    values = std::move(joined);
  }
  return values[0];
}

// A select whose condition is the same for every lane (a concat along an outer axis,
// read inline: densenet's dense blocks, 32 pieces along the channels) branches to the
// taken arm's vectors; masked loads of every arm would read each piece once per vector.
llvm::Value* KernelEmitter::UniformSelectLanes(const Expr& e, int var, int lanes,
                                               llvm::Value* mask) {
  llvm::Value* cond = Eval(*e.operands[0], /*index=*/false);
  llvm::BasicBlock* then_block = llvm::BasicBlock::Create(context_, "lanes.true", function_);
  llvm::BasicBlock* else_block = llvm::BasicBlock::Create(context_, "lanes.false", function_);
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(context_, "lanes.merge", function_);
  body_.CreateCondBr(cond, then_block, else_block);
  // Values made inside one arm do not dominate the other arm or the merge.
  const auto saved_memo = memo_;
  const auto saved_lanes = lane_memo_;
  auto arm = [&](int operand, llvm::BasicBlock* block) {
    body_.SetInsertPoint(block);
    llvm::Value* value = LanesOf(*e.operands[operand], var, lanes, mask);
    llvm::BasicBlock* end = body_.GetInsertBlock();
    body_.CreateBr(merge);
    memo_ = saved_memo;
    lane_memo_ = saved_lanes;
    return std::make_pair(value, end);
  };
  const auto [t, then_end] = arm(1, then_block);
  const auto [f, else_end] = arm(2, else_block);
  body_.SetInsertPoint(merge);
  if (failed()) return nullptr;
  llvm::PHINode* phi = body_.CreatePHI(t->getType(), 2, "lanes.sel");
  phi->addIncoming(t, then_end);
  phi->addIncoming(f, else_end);
  return phi;
}

llvm::Value* KernelEmitter::LoadLanes(int buffer, llvm::Value* ptr, int lanes, llvm::Value* mask) {
  const DType dtype = program_.buffers[buffer].dtype;
  llvm::Type* type = llvm::FixedVectorType::get(MemoryType(dtype), lanes);
  const llvm::Align align(ir::DTypeSize(dtype));
  // Lanes outside the mask read nothing and hold 0 (the select discards them).
  llvm::Value* value =
      mask == nullptr
          ? static_cast<llvm::Value*>(body_.CreateAlignedLoad(type, ptr, align))
          : body_.CreateMaskedLoad(type, ptr, align, mask, llvm::Constant::getNullValue(type));
  // Bools are one byte per element; any nonzero byte is true (LoadElement).
  return dtype == DType::kBool ? body_.CreateICmpNE(value, llvm::Constant::getNullValue(type))
                               : value;
}

llvm::Value* KernelEmitter::LoadEveryOtherLane(int buffer, llvm::Value* ptr, int lanes,
                                               llvm::Value* mask) {
  const DType dtype = program_.buffers[buffer].dtype;
  const int wide = 2 * lanes;
  llvm::Type* type = llvm::FixedVectorType::get(MemoryType(dtype), wide);
  // Element j of the result is lane 2j of the wide load. The odd lanes between are in
  // bounds (between elements that are); the one past the last element is not read.
  std::vector<llvm::Constant*> read;
  for (int j = 0; j < wide; ++j) read.push_back(body_.getInt1(j + 1 < wide));
  llvm::Value* wide_mask = llvm::ConstantVector::get(read);
  if (mask != nullptr) {
    std::vector<int> spread(wide);
    for (int j = 0; j < wide; ++j) spread[j] = j / 2;
    wide_mask = body_.CreateAnd(body_.CreateShuffleVector(mask, spread), wide_mask);
  }
  llvm::Value* all = body_.CreateMaskedLoad(type, ptr, llvm::Align(ir::DTypeSize(dtype)), wide_mask,
                                            llvm::Constant::getNullValue(type));
  std::vector<int> even(lanes);
  for (int j = 0; j < lanes; ++j) even[j] = 2 * j;
  return body_.CreateShuffleVector(all, even);
}

void KernelEmitter::EmitPointwiseLanes(int lanes) {
  const DType dtype = program_.buffers[kernel_.out].dtype;
  const int inner = static_cast<int>(kernel_.loops.size()) - 1;
  const bool at_o2 = options_.tier != CodeTier::kBaseline;
  const Stencil stencil =
      at_o2 && inner >= 1 ? StencilOf(kernel_.value.get(), inner - 1) : Stencil{};
  const auto constant_or_0 = [&](int loop) {
    const Expr* e = kernel_.loops[loop].get();
    return e->kind == ExprKind::kConst ? e->i_value : 0;
  };
  // A stencil too wide to jam: a row in one vector as wide as it, or where a row fits one
  // vector, rows as the parts of one.
  const int parts = at_o2 && inner >= 1
                        ? RowsAsParts(stencil, constant_or_0(inner), constant_or_0(inner - 1),
                                      lanes, kernel_.value.get())
                        : 1;
  lanes *= VectorsPerRow(stencil, constant_or_0(inner), lanes);
  const auto& indices = kernel_.store_indices.empty() ? identity_ : kernel_.store_indices;
  // The rows (values of loop inner - 1) each vector is computed for: all their values
  // first, then their stores, so LLVM loads a vector two rows share once.
  std::vector<llvm::Value*> rows;
  auto for_rows = [&](absl::FunctionRef<llvm::Value*()> value,
                      absl::FunctionRef<void(llvm::Value*)> store) {
    if (rows.empty()) return store(value());
    std::vector<llvm::Value*> values;
    for (llvm::Value* row : rows) {
      loop_vars_[inner - 1] = row;
      values.push_back(value());
    }
    for (size_t r = 0; r < rows.size(); ++r) {
      loop_vars_[inner - 1] = rows[r];
      store(values[r]);
    }
  };
  auto whole = [&](llvm::Value* first) {
    loop_vars_[inner] = first;
    for_rows([&] { return EvalLanes(kernel_.value, inner, lanes); },
             [&](llvm::Value* value) {
               StoreLanes(kernel_.out, TargetPtr(kernel_.out, indices), value);
             });
  };
  // One row's vectors (or jammed rows': see for_rows).
  auto columns = [&] {
    llvm::Value* extent = EvalTop(kernel_.loops[inner], DType::kI64, "loop extent");
    if (options_.tier == CodeTier::kBaseline) {
      EmitRangedBlockedLoop(extent, inner, lanes, whole, [&](llvm::Value* index) {
        loop_vars_[inner] = index;
        llvm::Value* value = EvalTop(kernel_.value, dtype, "value");
        StoreElement(kernel_.out, TargetPtr(kernel_.out, indices), value);
      });
      return;
    }
    // At O2, for speed rather than compile time: rows are short (56, 28, 14 and 7 outputs
    // in a CNN's later stages), so their rest is one masked vector, not up to lanes - 1
    // scalar steps (the masked lanes run the same instructions: the scalar steps' bits);
    // whole vectors go in pairs, as a window's sum is a chain of dependent adds and two
    // chains in flight hide half its latency.
    auto masked = [&](llvm::Value* first, llvm::Value* left) {
      llvm::Value* once =
          body_.CreateZExt(body_.CreateICmpSGT(left, body_.getInt64(0)), body_.getInt64Ty());
      EmitCountedLoop(body_.getInt64(0), once, 1, "rest", [&](llvm::Value*) {
        llvm::Value* mask = LanesBelow(lanes, left);
        loop_vars_[inner] = first;
        for_rows([&] { return EvalLanes(kernel_.value, inner, lanes, mask); },
                 [&](llvm::Value* value) {
                   StoreLanes(kernel_.out, TargetPtr(kernel_.out, indices), value, mask);
                 });
      });
    };
    auto [begin, end] = LoopBounds(inner, extent);
    EmitBlocks(
        end, inner, 2 * lanes,
        [&](llvm::Value* first) {
          whole(first);
          whole(body_.CreateAdd(first, body_.getInt64(lanes), "", true, true));
        },
        [&](llvm::Value* first, llvm::Value* left) {
          EmitBlocks(body_.CreateAdd(first, left, "", true, true), inner, lanes, whole, masked,
                     first);
        },
        begin);
  };
  // `parts` rows as one vector's parts, each part stored at its row.
  auto row_parts = [&] {
    const int wide = parts * lanes;
    llvm::Value* extent = EvalTop(kernel_.loops[inner], DType::kI64, "loop extent");
    auto [begin, end] = LoopBounds(inner, extent);
    llvm::Value* left = body_.CreateSub(end, begin);
    llvm::Value* mask = LanesBelow(wide, left, /*period=*/lanes);
    llvm::Value* part_mask = LanesBelow(lanes, left);
    loop_vars_[inner] = begin;
    row_parts_ = rows;
    row_var_ = inner - 1;
    llvm::Value* value = EvalLanes(kernel_.value, inner, wide, mask);
    row_parts_.clear();
    if (failed()) return;
    for (int r = 0; r < parts; ++r) {
      std::vector<int> lanes_of_part(lanes);
      for (int i = 0; i < lanes; ++i) lanes_of_part[i] = r * lanes + i;
      loop_vars_[inner - 1] = rows[r];
      loop_vars_[inner] = begin;
      StoreLanes(kernel_.out, TargetPtr(kernel_.out, indices),
                 body_.CreateShuffleVector(value, lanes_of_part), part_mask);
    }
  };
  const int jam = at_o2 && inner >= 1 ? std::max(RowsSharingLoads(stencil), parts) : 1;
  EmitNest(0, jam > 1 ? inner - 1 : inner, [&] {
    if (jam > 1) {
      // The row loop in blocks of `jam` rows, its rest row by row.
      llvm::Value* extent = EvalTop(kernel_.loops[inner - 1], DType::kI64, "loop extent");
      auto [begin, end] = LoopBounds(inner - 1, extent);
      EmitBlocks(
          end, inner - 1, jam,
          [&](llvm::Value* first) {
            for (int r = 0; r < jam; ++r) {
              rows.push_back(r == 0 ? first
                                    : body_.CreateAdd(first, body_.getInt64(r), "", true, true));
            }
            if (parts > 1) {
              row_parts();
            } else {
              columns();
            }
            rows.clear();
          },
          [&](llvm::Value* first, llvm::Value* left) {
            EmitLoop(left, inner - 1, [&] {
              loop_vars_[inner - 1] = body_.CreateAdd(first, loop_vars_[inner - 1], "", true, true);
              columns();
            });
          },
          begin);
      return;
    }
    columns();
  });
}

}  // namespace graphjit::compiler::codegen_internal
