// The register tiles' lane helpers (compiler/codegen/codegen_tiles.cc): where a vector's
// elements are (their byte offsets, the runs of consecutive ones) and the register
// transpose of a tile.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "compiler/codegen/codegen_emitter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Metadata.h"

namespace graphjit::compiler::codegen_internal {

// A loop kept rolled over `slot` rather than one address per lane: an address is a dozen
// instructions of index arithmetic, and unrolled they doubled a tile kernel's compile.
llvm::Value* KernelEmitter::LaneOffsets(const Expr* e, int var, llvm::Value* origin, int count,
                                        absl::FunctionRef<llvm::Value*(llvm::Value*)> var_at,
                                        llvm::AllocaInst* slot) {
  llvm::Type* i64 = body_.getInt64Ty();
  llvm::Type* ivtype = slot->getAllocatedType();
  loop_vars_[var] = origin;
  llvm::Value* first = TargetPtr(e->index, e->operands);
  if (first == nullptr) return nullptr;
  first = body_.CreatePtrToInt(first, i64);
  body_.CreateStore(llvm::Constant::getNullValue(ivtype), slot);
  bool formed = true;
  llvm::BranchInst* back = EmitCountedLoop(
      body_.getInt64(0), body_.getInt64(count), 1, "lane_offsets", [&](llvm::Value* j) {
        loop_vars_[var] = var_at(j);
        llvm::Value* ptr = TargetPtr(e->index, e->operands);
        if (ptr == nullptr) {
          formed = false;
          return;
        }
        body_.CreateStore(body_.CreateSub(body_.CreatePtrToInt(ptr, i64), first),
                          body_.CreateInBoundsGEP(i64, slot, j));
      });
  SetLoopHint(back, llvm::MDNode::get(context_,
                                      {llvm::MDString::get(context_, "llvm.loop.unroll.disable")}));
  if (!formed) return nullptr;
  return body_.CreateAlignedLoad(ivtype, slot, llvm::Align(64));
}

// Run r starts at the lowest lane left (cttz of the lanes not yet in a run; the last lane
// when none is left: that run's mask is empty) and holds the lanes whose offsets continue
// it. A masked load per run costs a quarter of the 16-lane gather it replaces.
KernelEmitter::RowRuns KernelEmitter::PlanRowRuns(llvm::Value* offsets, llvm::Value* in,
                                                  llvm::Value* consecutive, int64_t element_bytes,
                                                  int count) {
  const int lanes =
      static_cast<int>(llvm::cast<llvm::FixedVectorType>(in->getType())->getNumElements());
  llvm::Type* bits_type = body_.getIntNTy(lanes);
  llvm::Type* i64 = body_.getInt64Ty();
  RowRuns runs;
  llvm::Value* rest = in;
  for (int r = 0; r < count; ++r) {
    llvm::Value* first = body_.CreateBinaryIntrinsic(
        llvm::Intrinsic::cttz, body_.CreateBitCast(rest, bits_type), body_.getFalse());
    first =
        body_.CreateZExt(body_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, first,
                                                     llvm::ConstantInt::get(bits_type, lanes - 1)),
                         i64);
    llvm::Value* shift = body_.CreateSub(body_.CreateExtractElement(offsets, first),
                                         body_.CreateMul(first, body_.getInt64(element_bytes)));
    llvm::Value* run = body_.CreateAnd(
        body_.CreateICmpEQ(offsets,
                           body_.CreateAdd(consecutive, body_.CreateVectorSplat(lanes, shift))),
        rest);
    runs.mask[r] = run;
    runs.shift[r] = shift;
    rest = body_.CreateAnd(rest, body_.CreateNot(run));
  }
  runs.complete = body_.CreateNot(body_.CreateOrReduce(rest));
  return runs;
}

// log2(lanes) stages of two-input shuffles (one vpermt2ps each with AVX-512), stage s
// swapping the off-diagonal s x s blocks of every 2s x 2s block.
std::vector<llvm::Value*> KernelEmitter::TransposeLanes(std::vector<llvm::Value*> r) {
  const int lanes = static_cast<int>(r.size());
  for (int s = lanes / 2; s >= 1; s /= 2) {
    std::vector<llvm::Value*> next(lanes);
    for (int i = 0; i < lanes; ++i) {
      if ((i & s) != 0) continue;
      std::vector<int> low(lanes), high(lanes);
      for (int j = 0; j < lanes; ++j) {
        low[j] = (j & s) != 0 ? lanes + j - s : j;
        high[j] = (j & s) != 0 ? lanes + j : j + s;
      }
      next[i] = body_.CreateShuffleVector(r[i], r[i + s], low);
      next[i + s] = body_.CreateShuffleVector(r[i], r[i + s], high);
    }
    r = std::move(next);
  }
  return r;
}

llvm::Value* KernelEmitter::LoadRun(llvm::Type* vtype, llvm::Value* ptr, llvm::Value* mask,
                                    int stride, llvm::Value* passthru) {
  const llvm::Align align(vtype->getScalarSizeInBits() / 8);
  if (stride == 1) return body_.CreateMaskedLoad(vtype, ptr, align, mask, passthru);
  const int lanes = static_cast<int>(llvm::cast<llvm::FixedVectorType>(vtype)->getNumElements());
  // Element e of the two loads (e < 2 * lanes) is lane e / 2's where e is even.
  auto half_mask = [&](int half) {
    std::vector<int> spread(lanes);
    for (int e = 0; e < lanes; ++e) spread[e] = (half * lanes + e) / 2;
    llvm::Value* m = body_.CreateShuffleVector(mask, spread);
    std::vector<llvm::Constant*> even(lanes);
    for (int e = 0; e < lanes; ++e) even[e] = body_.getInt1(e % 2 == 0);
    return body_.CreateAnd(m, llvm::ConstantVector::get(even));
  };
  llvm::Value* zero = llvm::Constant::getNullValue(vtype);
  llvm::Value* low = body_.CreateMaskedLoad(vtype, ptr, align, half_mask(0), zero);
  llvm::Value* high = body_.CreateMaskedLoad(
      vtype, body_.CreateInBoundsGEP(vtype->getScalarType(), ptr, body_.getInt64(lanes)), align,
      half_mask(1), zero);
  std::vector<int> evens(lanes);
  for (int j = 0; j < lanes; ++j) evens[j] = 2 * j;
  return body_.CreateSelect(mask, body_.CreateShuffleVector(low, high, evens), passthru);
}

llvm::Value* KernelEmitter::LoadRuns(llvm::Type* vtype, llvm::Value* base, const RowRuns& runs,
                                     int count, int stride, llvm::Value* mask) {
  llvm::Value* x = llvm::Constant::getNullValue(vtype);
  for (int r = 0; r < count; ++r) {
    llvm::Value* in = mask == nullptr ? runs.mask[r] : body_.CreateAnd(runs.mask[r], mask);
    x = LoadRun(vtype, body_.CreateGEP(body_.getInt8Ty(), base, runs.shift[r]), in, stride, x);
  }
  return x;
}

llvm::Value* KernelEmitter::LoadLanes(llvm::Type* vtype, llvm::Value* base, llvm::Value* offsets,
                                      const RowRuns* runs, llvm::Value* mask) {
  const llvm::Align align(vtype->getScalarSizeInBits() / 8);
  llvm::Value* zero = llvm::Constant::getNullValue(vtype);
  auto gather = [&] {
    return body_.CreateMaskedGather(vtype, body_.CreateGEP(body_.getInt8Ty(), base, offsets), align,
                                    mask, zero);
  };
  if (runs == nullptr) return gather();
  llvm::Value *by_runs = nullptr, *by_lanes = nullptr;
  llvm::BasicBlock *runs_end = nullptr, *lanes_end = nullptr;
  EmitIfElse(
      runs->complete, "c_runs",
      [&] {
        by_runs = LoadRuns(vtype, base, *runs, 2, 1, mask);
        runs_end = body_.GetInsertBlock();
      },
      [&] {
        by_lanes = gather();
        lanes_end = body_.GetInsertBlock();
      });
  llvm::PHINode* phi = body_.CreatePHI(vtype, 2, "c_loaded");
  phi->addIncoming(by_runs, runs_end);
  phi->addIncoming(by_lanes, lanes_end);
  return phi;
}

void KernelEmitter::StoreLanes(llvm::Value* y, llvm::Value* base, llvm::Value* offsets,
                               const RowRuns* runs, llvm::Value* mask) {
  const llvm::Align align(y->getType()->getScalarSizeInBits() / 8);
  auto scatter = [&] {
    body_.CreateMaskedScatter(y, body_.CreateGEP(body_.getInt8Ty(), base, offsets), align, mask);
  };
  if (runs == nullptr) return scatter();
  EmitIfElse(
      runs->complete, "c_runs",
      [&] {
        for (int r = 0; r < 2; ++r) {
          body_.CreateMaskedStore(y, body_.CreateGEP(body_.getInt8Ty(), base, runs->shift[r]),
                                  align, body_.CreateAnd(runs->mask[r], mask));
        }
      },
      scatter);
}

void KernelEmitter::Prefetch(llvm::Value* address, int64_t bytes, int locality) {
  for (int64_t line = 0; line < bytes; line += 64) {
    llvm::Value* at = body_.CreateGEP(body_.getInt8Ty(), address, body_.getInt64(line));
    body_.CreateIntrinsic(
        llvm::Intrinsic::prefetch, {body_.getPtrTy()},
        {at, body_.getInt32(0) /*read*/, body_.getInt32(locality), body_.getInt32(1) /*data*/});
  }
}

llvm::Value* KernelEmitter::ConsecutiveLanes(llvm::Value* offsets, int count, int64_t from,
                                             int64_t element_bytes) {
  const int lanes =
      static_cast<int>(llvm::cast<llvm::FixedVectorType>(offsets->getType())->getNumElements());
  std::vector<llvm::Constant*> want, used;
  for (int j = 0; j < lanes; ++j) {
    want.push_back(body_.getInt64((from + j) * element_bytes));
    used.push_back(body_.getInt1(j < count));
  }
  llvm::Value* equal = body_.CreateICmpEQ(offsets, llvm::ConstantVector::get(want));
  return body_.CreateAndReduce(
      body_.CreateOr(equal, body_.CreateNot(llvm::ConstantVector::get(used))));
}

void KernelEmitter::PrefetchLoads(const std::vector<const Expr*>& loads, int count,
                                  absl::FunctionRef<void(int)> position) {
  for (int i = 0; i < count; ++i) {
    position(i);
    for (const Expr* load : loads) {
      llvm::Value* at = TargetPtr(load->index, load->operands);
      if (at != nullptr) Prefetch(at, 1, /*locality=*/3);
    }
  }
}

// Packing a tiled product's B reads a panel's columns from each of kc rows: kc streams
// that advance a panel at a time, more than the hardware's prefetchers follow. Where B has
// not stayed in the caches since it was written (a batch of images: resnet50 at N = 8),
// the tiles prefetch each row's lines a few panels on as they pack it: a 1 x 1
// convolution 256 -> 64 at 56 x 56, N = 8, 6.1-7.3 ms -> 4.9-5.3 (znver5, L2 1 MB). A B
// that fits (N = 1) is left alone: there the prefetches cost 3-4% (0.47-0.48 -> 0.49-0.51).
bool KernelEmitter::OutgrowsTheCaches(int buffer) const {
  int64_t bytes = ir::DTypeSize(program_.buffers[buffer].dtype);
  for (const ExprPtr& d : program_.buffers[buffer].dims) {
    if (d->kind != ExprKind::kConst) return false;
    bytes *= d->i_value;
  }
  return bytes > 4 * HostL2Bytes();
}

std::vector<const Expr*> KernelEmitter::StreamedLoadsOf(const Expr* e, int skip, int var) {
  std::vector<const Expr*> loads;
  absl::flat_hash_set<const Expr*> seen;  // a subexpression CSE shares is one load
  std::vector<const Expr*> todo;
  if (e != nullptr) todo.push_back(e);
  while (!todo.empty()) {
    const Expr* x = todo.back();
    todo.pop_back();
    // A select's arms are read only where their guard holds: not prefetched.
    if (!seen.insert(x).second || x->kind == ExprKind::kSelect) continue;
    if (x->kind != ExprKind::kLoad) {
      for (const ExprPtr& o : x->operands) todo.push_back(o.get());
      continue;
    }
    const bool gathered = std::any_of(x->operands.begin(), x->operands.end(),
                                      [&](const ExprPtr& i) { return ContainsLoad(i.get()); });
    if (x->index != skip && UsesLoopVar(x, var) && !gathered) loads.push_back(x);
  }
  return loads;
}

std::vector<const Expr*> KernelEmitter::LoadsOf(const Expr* e, int buffer) {
  std::vector<const Expr*> loads;
  std::vector<const Expr*> todo;
  if (e != nullptr) todo.push_back(e);
  while (!todo.empty()) {
    const Expr* x = todo.back();
    todo.pop_back();
    if (x->kind == ExprKind::kLoad && x->index == buffer) {
      loads.push_back(x);
      continue;
    }
    for (const ExprPtr& o : x->operands) todo.push_back(o.get());
  }
  return loads;
}

}  // namespace graphjit::compiler::codegen_internal
