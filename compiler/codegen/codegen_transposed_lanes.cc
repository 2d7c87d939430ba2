// Maps that read a buffer transposed (EmitTransposedLanes): out[.., u, .., i] = f(x[.., i,
// .., u], ..) with the store consecutive along the innermost loop i and x consecutive
// along an outer loop u, as a permute between NCHW and NHWC fused into its neighbours
// writes (convnext's layer norm and residual add, a vision transformer's patches). No
// vector along i holds x's elements (they are a row of x apart), so the loop stayed
// scalar for LLVM's vectorizer, which gathered them: 96 channels of 56 x 56 read so took
// 150-230 us where their plain copy takes 30, and a row of 2048 channels (resnet50's
// residual adds after its turned 7 x 7 products) puts every element's line in one L1 set
// (405-414 us for 2 x 100k elements; 116-129 in blocks). Here u runs in blocks of `lanes`; per
// vector of i, `lanes` vectors of x along u (one per lane of i) are loaded and transposed
// in registers (TransposeLanes), and f is evaluated lane by lane along i once per value
// of u in the block, the transposed vectors given as x's lanes.
#include <algorithm>
#include <vector>

#include "compiler/codegen/codegen_emitter.h"
#include "compiler/lower/simplify_index.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"

namespace graphjit::compiler::codegen_internal {

using ir::DType;

namespace {

// The most buffers read transposed in one map: each takes `lanes` vector registers
// while its block is transposed.
constexpr size_t kMaxTransposedLoads = 2;

void LoadsIn(const Expr* e, std::vector<const Expr*>* loads) {
  if (e->kind == ExprKind::kLoad) {
    if (std::find(loads->begin(), loads->end(), e) == loads->end()) loads->push_back(e);
    return;
  }
  for (const ExprPtr& operand : e->operands) LoadsIn(operand.get(), loads);
}

}  // namespace

bool KernelEmitter::EmitTransposedLanes() {
  const int inner = static_cast<int>(kernel_.loops.size()) - 1;
  if (inner < 1 || !CheckTree(kernel_.value, "value")) return false;
  const DType dtype = program_.buffers[kernel_.out].dtype;
  const auto& indices = kernel_.store_indices.empty() ? identity_ : kernel_.store_indices;
  const auto consecutive_along = [&](const std::vector<ExprPtr>& at, int buffer, int var) {
    return ContiguousAlongN(at, var) ||
           ConsecutiveInMemory(at, program_.buffers[buffer].dims, var, kernel_.loops);
  };
  // The innermost loop before i along which `at` (into `buffer`) is consecutive, or -1.
  const auto outer_along = [&](const std::vector<ExprPtr>& at, int buffer) {
    for (int v = inner - 1; v >= 0; --v) {
      if (consecutive_along(at, buffer, v)) return v;
    }
    return -1;
  };
  // Either the store is consecutive along i and some loads move with i but not along it,
  // all consecutive along one outer loop u (read transposed), or every load moves along i
  // and the store is consecutive along u instead (written transposed).
  const bool store_along_i = consecutive_along(indices, kernel_.out, inner);
  std::vector<const Expr*> loads, transposed;
  LoadsIn(kernel_.value.get(), &loads);
  int u = store_along_i ? -1 : outer_along(indices, kernel_.out);
  if (store_along_i) {
    for (const Expr* load : loads) {
      if (!UsesLoopVar(load, inner) || consecutive_along(load->operands, load->index, inner)) {
        continue;
      }
      const int b = load->index;
      if (b < 0 || b >= static_cast<int>(program_.buffers.size()) ||
          program_.buffers[b].dtype != load->dtype || load->dtype != dtype || b == kernel_.out ||
          program_.buffers[kernel_.out].alias_of == b ||
          program_.buffers[b].alias_of == kernel_.out) {
        return false;
      }
      const int along = outer_along(load->operands, b);
      if (along < 0 || (u >= 0 && along != u)) return false;
      u = along;
      transposed.push_back(load);
    }
    if (transposed.empty() || transposed.size() > kMaxTransposedLoads) return false;
  }
  if (u < 0) return false;
  // A short u (a batch of one) has no block to transpose.
  if (const Expr* e = kernel_.loops[u].get(); e->kind == ExprKind::kConst && e->i_value < 2) {
    return false;
  }
  for (const Expr* load : transposed) lane_values_[load] = nullptr;  // planned as given
  // Written transposed: the store is checked here, not by PlanLanes (as a reduction's).
  const int lanes = PlanLanes(kernel_.value, inner, store_along_i ? &indices : nullptr, dtype,
                              /*in_place=*/-1, /*at_o2=*/true);
  lane_values_.clear();
  // Square blocks: as many values of u as lanes of i, in vectors of the loads' type.
  if (lanes == 0 || VectorBytes() / static_cast<int>(ir::DTypeSize(dtype)) != lanes) return false;
  if (!store_along_i) {
    // The kernel must not read what it writes (a vector's lanes are read before the
    // block's stores).
    for (const Expr* load : loads) {
      const int b = load->index;
      if (b == kernel_.out || program_.buffers[kernel_.out].alias_of == b ||
          (b >= 0 && b < static_cast<int>(program_.buffers.size()) &&
           program_.buffers[b].alias_of == kernel_.out)) {
        return false;
      }
    }
  }

  llvm::Type* vtype = llvm::FixedVectorType::get(ValueType(dtype), lanes);
  const llvm::Align align(ir::DTypeSize(dtype));
  std::vector<llvm::AllocaInst*> block_buffers;
  for (size_t t = 0; t < std::max<size_t>(1, transposed.size()); ++t) {
    block_buffers.push_back(prologue_.CreateAlloca(vtype, prologue_.getInt64(lanes), "block"));
    block_buffers.back()->setAlignment(llvm::Align(VectorBytes()));
  }
  // The block of u from u0, `u_left` of its values in range (`u_mask`: lanes below that),
  // against the vector of i from `first`, `left` of its lanes in range (with a mask where
  // that is fewer than lanes, else null), i's last value in range `last`.
  auto block = [&](llvm::Value* u0, llvm::Value* u_left, llvm::Value* u_mask, llvm::Value* first,
                   llvm::Value* left, llvm::Value* last, llvm::Value* mask) {
    auto lane_of_i = [&](int j) {  // past the range: the last in range (never stored)
      llvm::Value* at = body_.CreateAdd(first, body_.getInt64(j), "", true, true);
      return body_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, at, last);
    };
    // The block's vectors pass through `block_buffer` (one per value of u), so that f is
    // emitted once, in a loop over the block's values of u, rather than `lanes` times.
    auto slot = [&](llvm::AllocaInst* buffer, llvm::Value* m) {
      return body_.CreateInBoundsGEP(vtype, buffer, m);
    };
    if (!store_along_i) {
      // Values of u past the range leave their slots as they were: their lanes of the
      // transposed vectors are not stored.
      EmitCountedLoop(body_.getInt64(0), u_left, 1, "block_u", [&](llvm::Value* m) {
        loop_vars_[u] = body_.CreateAdd(u0, m, "", true, true);
        loop_vars_[inner] = first;
        body_.CreateStore(EvalLanes(kernel_.value, inner, lanes, mask), slot(block_buffers[0], m));
      });
      std::vector<llvm::Value*> values(lanes);
      for (int m = 0; m < lanes; ++m) {
        values[m] = body_.CreateLoad(vtype, slot(block_buffers[0], body_.getInt64(m)));
      }
      std::vector<llvm::Value*> columns = TransposeLanes(std::move(values));
      std::vector<llvm::Value*> ptrs(lanes), in_range(lanes);
      for (int j = 0; j < lanes; ++j) {
        loop_vars_[u] = u0;
        loop_vars_[inner] = lane_of_i(j);
        ptrs[j] = TargetPtr(kernel_.out, indices);
        if (ptrs[j] == nullptr) return;
        in_range[j] = u_mask;
        if (mask != nullptr) {
          in_range[j] = body_.CreateAnd(
              in_range[j],
              body_.CreateVectorSplat(lanes, body_.CreateICmpSLT(body_.getInt64(j), left)));
        }
      }
      auto store = [&](bool masked) {
        for (int j = 0; j < lanes; ++j) {
          if (masked) {
            body_.CreateMaskedStore(columns[j], ptrs[j], align, in_range[j]);
          } else {
            body_.CreateAlignedStore(columns[j], ptrs[j], align);
          }
        }
      };
      if (!MaskedStoresAreSlow()) return store(true);
      // Where masked stores are slow, a whole block stores plain vectors.
      llvm::Value* whole = body_.CreateICmpEQ(u_left, body_.getInt64(lanes));
      if (mask != nullptr) {
        whole = body_.CreateAnd(whole, body_.CreateICmpEQ(left, body_.getInt64(lanes)));
      }
      EmitIfElse(whole, "whole_block", [&] { store(false); }, [&] { store(true); });
      return;
    }
    for (size_t t = 0; t < transposed.size(); ++t) {
      std::vector<llvm::Value*> rows(lanes);
      for (int j = 0; j < lanes; ++j) {
        loop_vars_[inner] = lane_of_i(j);
        loop_vars_[u] = u0;
        llvm::Value* ptr = TargetPtr(transposed[t]->index, transposed[t]->operands);
        if (ptr == nullptr) return;
        rows[j] =
            body_.CreateMaskedLoad(vtype, ptr, align, u_mask, llvm::Constant::getNullValue(vtype));
      }
      std::vector<llvm::Value*> columns = TransposeLanes(std::move(rows));
      for (int m = 0; m < lanes; ++m) {
        body_.CreateStore(columns[m], slot(block_buffers[t], body_.getInt64(m)));
      }
    }
    EmitCountedLoop(body_.getInt64(0), u_left, 1, "block_u", [&](llvm::Value* m) {
      loop_vars_[u] = body_.CreateAdd(u0, m, "", true, true);
      loop_vars_[inner] = first;
      for (size_t t = 0; t < transposed.size(); ++t) {
        lane_values_[transposed[t]] = body_.CreateLoad(vtype, slot(block_buffers[t], m));
      }
      llvm::Value* value = EvalLanes(kernel_.value, inner, lanes, mask);
      lane_values_.clear();
      StoreLanes(kernel_.out, TargetPtr(kernel_.out, indices), value, mask);
    });
  };
  // u in blocks of `lanes` values, the last one part full where lanes do not divide u's
  // extent (masked: one copy of the block).
  EmitNest(0, u, [&] {
    llvm::Value* u_extent = EvalTop(kernel_.loops[u], DType::kI64, "loop extent");
    auto [u_begin, u_end] = LoopBounds(u, u_extent);
    EmitCountedLoop(u_begin, u_end, lanes, "transposed_u", [&](llvm::Value* u0) {
      llvm::Value* u_left = body_.CreateBinaryIntrinsic(
          llvm::Intrinsic::smin, body_.getInt64(lanes), body_.CreateSub(u_end, u0));
      llvm::Value* u_mask = LanesBelow(lanes, u_left);
      EmitNest(u + 1, inner, [&] {
        llvm::Value* extent = EvalTop(kernel_.loops[inner], DType::kI64, "loop extent");
        auto [begin, end] = LoopBounds(inner, extent);
        llvm::Value* last = body_.CreateSub(end, body_.getInt64(1));
        auto masked = [&](llvm::Value* first, llvm::Value* left) {
          block(u0, u_left, u_mask, first, left, last, LanesBelow(lanes, left));
        };
        // Rows a whole number of vectors long take unmasked blocks; others one loop of
        // masked blocks, its last part full, rather than a second copy of the block (its
        // transposes doubled the kernel's instruction selection).
        if (const Expr* row = kernel_.loops[inner].get();
            row->kind == ExprKind::kConst && row->i_value % lanes == 0) {
          EmitBlocks(
              end, inner, lanes,
              [&](llvm::Value* first) {
                block(u0, u_left, u_mask, first, body_.getInt64(lanes), last, nullptr);
              },
              masked, begin);
          return;
        }
        EmitCountedLoop(begin, end, lanes, "transposed_i", [&](llvm::Value* first) {
          masked(first, body_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, body_.getInt64(lanes),
                                                    body_.CreateSub(end, first)));
        });
      });
    });
  });
  return true;
}

}  // namespace graphjit::compiler::codegen_internal
