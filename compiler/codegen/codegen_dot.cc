// Matmul kernels in the dot order with a short K (q @ K^T of attention, head dim 16-64):
// EmitTiledDot computes a vector's width of dots at once, the lhs row in registers, and
// reduces them together into one vector store; several query heads sharing an rhs (a KV
// head) per pass over its rows (SharedRhsJam, codegen_matmul.cc).
#include <algorithm>
#include <optional>

#include "compiler/codegen/codegen_emitter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Intrinsics.h"

namespace graphjit::compiler::codegen_internal {

using ir::DType;

namespace {

// A tiled dot keeps one lhs row of at most this many vectors in registers.
constexpr int kMaxDotVectors = 4;

}  // namespace

std::optional<KernelEmitter::DotTiling> KernelEmitter::PlanTiledDot() {
  const DType dtype = program_.buffers[kernel_.out].dtype;
  if (!options_.tile_matmuls || (dtype != DType::kF32 && dtype != DType::kF64)) return std::nullopt;
  const int n = static_cast<int>(kernel_.loops.size()) - 2, k = n + 1;
  const Expr* lhs = kernel_.lhs.get();
  const Expr* rhs = kernel_.rhs.get();
  for (const Expr* e : {lhs, rhs}) {
    if (e == nullptr || e->kind != ExprKind::kLoad || e->dtype != dtype ||
        !ContiguousAlongN(e->operands, k)) {
      return std::nullopt;
    }
  }
  if (UsesLoopVar(lhs, n)) return std::nullopt;
  const int lanes = VectorBytes() / static_cast<int>(ir::DTypeSize(dtype));
  const auto* k_const =
      llvm::dyn_cast_or_null<llvm::ConstantInt>(EvalPrologue(kernel_.loops[k], "K extent"));
  if (failed() || k_const == nullptr || k_const->getSExtValue() <= 0 ||
      k_const->getSExtValue() % lanes != 0 || k_const->getSExtValue() > kMaxDotVectors * lanes) {
    return std::nullopt;
  }
  return DotTiling{lanes, static_cast<int>(k_const->getSExtValue() / lanes)};
}

void KernelEmitter::EmitDotVectors(const DotTiling& t, llvm::Value* first, int heads,
                                   llvm::Value* n0, int count, int target,
                                   const std::vector<ExprPtr>& indices) {
  const DType dtype = program_.buffers[kernel_.out].dtype;
  const int n = static_cast<int>(kernel_.loops.size()) - 2, k = n + 1;
  const int lanes = t.lanes;
  llvm::Type* vector_type = llvm::FixedVectorType::get(ValueType(dtype), lanes);
  const llvm::Align align(ir::DTypeSize(dtype));
  auto load = [&](const Expr* e, int c) {
    loop_vars_[k] = body_.getInt64(int64_t{c} * lanes);
    llvm::Value* ptr = TargetPtr(e->index, e->operands);
    return ptr == nullptr
               ? llvm::PoisonValue::get(vector_type)
               : static_cast<llvm::Value*>(body_.CreateAlignedLoad(vector_type, ptr, align));
  };
  // The lanes-wide partial sums of one dot at the current position, given lhs's vectors.
  auto dot = [&](const std::vector<llvm::Value*>& a) {
    llvm::Value* acc = body_.CreateFMul(a[0], load(kernel_.rhs.get(), 0));
    for (int c = 1; c < t.k_vectors; ++c) {
      acc = MultiplyAdd(acc, a[c], load(kernel_.rhs.get(), c), dtype, true);
    }
    return acc;
  };
  auto store = [&](llvm::Value* value) {
    llvm::Value* ptr = TargetPtr(target, indices);
    if (ptr != nullptr) body_.CreateAlignedStore(value, ptr, align);
  };
  std::vector<int> even, odd;
  for (int i = 0; i < lanes; ++i) {
    even.push_back(2 * i);
    odd.push_back(2 * i + 1);
  }
  for (int u = 0; u < heads; ++u) {
    SetJamIndex(first, u);
    std::vector<llvm::Value*> a;
    for (int c = 0; c < t.k_vectors; ++c) a.push_back(load(kernel_.lhs.get(), c));
    if (count == 1) {
      // One column: the dot's lanes added in order.
      loop_vars_[n] = n0;
      llvm::Value* acc = dot(a);
      llvm::Value* total = body_.CreateExtractElement(acc, uint64_t{0});
      for (int i = 1; i < lanes; ++i) {
        total = body_.CreateFAdd(total, body_.CreateExtractElement(acc, uint64_t(i)));
      }
      store(total);
      continue;
    }
    // Dots n0 .. n0 + lanes into one vector: the partial-sum vectors of the lanes dots
    // are added pairwise with their lanes interleaved (even lanes plus odd lanes of each
    // pair), which after log2(lanes) rounds leaves dot r in lane r.
    std::vector<llvm::Value*> sums;
    for (int r = 0; r < lanes; ++r) {
      loop_vars_[n] = r == 0 ? n0 : body_.CreateAdd(n0, body_.getInt64(r), "", true, true);
      sums.push_back(dot(a));
    }
    while (sums.size() > 1) {
      std::vector<llvm::Value*> next;
      for (size_t i = 0; i < sums.size(); i += 2) {
        next.push_back(body_.CreateFAdd(body_.CreateShuffleVector(sums[i], sums[i + 1], even),
                                        body_.CreateShuffleVector(sums[i], sums[i + 1], odd)));
      }
      sums = std::move(next);
    }
    loop_vars_[n] = n0;
    store(sums[0]);
  }
  loop_vars_[k] = nullptr;
}

int KernelEmitter::MaxDotHeads() { return VectorRegisters() == 32 ? 4 : 2; }

bool KernelEmitter::EmitTiledDot() {
  const int n = static_cast<int>(kernel_.loops.size()) - 2;
  const auto& out_indices = kernel_.store_indices.empty() ? identity_ : kernel_.store_indices;
  if (!ContiguousAlongN(out_indices, n)) return false;
  const std::optional<DotTiling> tiling = PlanTiledDot();
  if (failed()) return true;
  if (!tiling) return false;
  // Heads per block of rhs rows: LLVM keeps every head's lhs vectors in registers, so 16
  // registers take 2 heads (with a few spills; as fast as 1 here, on half the L2 reads).
  EmitJammedNest(SharedRhsJam(MaxDotHeads()), [&](llvm::Value* first, int heads) {
    EmitRangedBlockedLoop(
        EvalTop(kernel_.loops[n], DType::kI64, "N extent"), n, tiling->lanes,
        [&](llvm::Value* n0) {
          EmitDotVectors(*tiling, first, heads, n0, tiling->lanes, kernel_.out, out_indices);
        },
        [&](llvm::Value* index) {
          EmitDotVectors(*tiling, first, heads, index, 1, kernel_.out, out_indices);
        });
  });
  loop_vars_[n] = nullptr;
  return true;
}

}  // namespace graphjit::compiler::codegen_internal
