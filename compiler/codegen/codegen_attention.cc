// Attention in one pass (KernelKind::kAttention): per row, blocks of kBlock positions go
// through four short loops while the row's running max m, sum l and output o stay in
// registers:
//   1. scores s_j = q . k_j into the scores scratch (the tiled dot of q @ K^T: a vector of
//      dots at a time, for several query heads sharing each K row);
//   2. x_j = value(s_j) back into the scratch, then the block's max over it;
//   3. m' = max(m, block max); p_j = exp(x_j - m') into the scratch and their sum;
//      l = l * exp(m - m') + sum, o *= exp(m - m');
//   4. o += p_j * v_j (one strip of output vectors per head, each V row loaded once for
//      all the heads; positions round-robin over accumulator sets where the heads' strips
//      give too few independent FMA chains).
// The query heads sharing a KV head go through a pass together (each K and V row loaded
// once for all). x_j and loop 3 are plain loops LLVM's vectorizer takes at O2; at the
// baseline codegen writes their vectors (codegen_lanes.cc) and loops over the pass's
// heads in steps 2 and 3 rather than unrolling them. The max is vectorized here in both.
// The block stays in L1, where the five unfused kernels passed over the whole row of
// scores and p five times.
//
// Exactness: where every x_j seen so far is -inf, m' is -inf and exp is taken against 0
// instead (exp(-inf - -inf) would be NaN and poison the later blocks); a row whose x are
// all -inf ends with o and l NaN, as exp(-inf - -inf) makes them in the unfused kernels.
// A NaN x makes its p NaN (the max passes over it), a +inf x makes m' +inf and so its p
// NaN; either makes o and l NaN, as there.
#include <algorithm>
#include <optional>

#include "compiler/codegen/codegen_emitter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"

namespace graphjit::compiler::codegen_internal {

using ir::DType;

namespace {

// Positions per block: a multiple of every vector width, and few enough that a block's
// scores for four heads (8 KiB in f64) stay in L1 between its loops. (128 and 512 ran
// the same at S = 512 here: the per-block rescaling is not what the kernel spends.)
constexpr int64_t kBlock = 256;

}  // namespace

void KernelEmitter::EmitAttention() {
  const DType dtype = program_.buffers[kernel_.out].dtype;
  if (dtype != DType::kF32 && dtype != DType::kF64) {
    return Fail("attention into a ", ir::DTypeName(dtype), " buffer");
  }
  for (int b : {kernel_.scores, kernel_.sum_out}) {
    if (b < 0 || b >= static_cast<int>(program_.buffers.size()) ||
        program_.buffers[b].dtype != dtype) {
      return Fail("attention's scores and sum buffers must be ", ir::DTypeName(dtype),
                  " buffers, b", b, " is not");
    }
  }
  if (kernel_.lhs == nullptr || kernel_.rhs == nullptr || kernel_.value == nullptr ||
      kernel_.values == nullptr || kernel_.values_width == nullptr) {
    return Fail("attention needs lhs, rhs, value, values and values_width");
  }
  const int nb = static_cast<int>(kernel_.loops.size()) - 3;
  const int j = nb + 1, d = nb + 2, e = nb + 3;
  const int jam_var = nb - 1;  // the query heads sharing a KV head (see SetJamIndex)
  const auto* width_const =
      llvm::dyn_cast_or_null<llvm::ConstantInt>(EvalPrologue(kernel_.values_width, "values width"));
  if (failed()) return;
  if (width_const == nullptr || width_const->getSExtValue() <= 0 ||
      width_const->getSExtValue() > 1024) {
    return Fail("attention's values width must be a constant in [1, 1024]");
  }
  if (!ContiguousAlongN(kernel_.store_indices, e)) {
    return Fail("attention's output must be stored contiguously along its column i", e);
  }
  const int lanes = VectorBytes() / static_cast<int>(ir::DTypeSize(dtype));
  const int64_t columns = width_const->getSExtValue();
  const int vectors = static_cast<int>(columns / lanes);
  const int width = vectors + static_cast<int>(columns % lanes);
  llvm::Type* type = ValueType(dtype);
  llvm::Type* sum_type = ValueType(SumType(dtype));
  llvm::Type* vector_type = llvm::FixedVectorType::get(type, lanes);
  auto type_of = [&](int c) { return c < vectors ? vector_type : type; };
  // The column of output group c (its first lane).
  auto column = [&](int c) {
    return body_.getInt64(c < vectors ? int64_t{c} * lanes
                                      : int64_t{vectors} * lanes + c - vectors);
  };
  auto i64 = [&](int64_t v) { return body_.getInt64(v); };
  const llvm::Align align(ir::DTypeSize(dtype));
  llvm::Value* minus_inf = llvm::ConstantFP::getInfinity(type, /*Negative=*/true);

  const std::optional<DotTiling> tiling = PlanTiledDot();
  if (failed()) return;
  // Heads of one KV head per pass: their output strips, a V row and a splat must fit the
  // registers (and, tiled, their q vectors).
  const int max_heads = tiling ? std::min(MaxDotHeads(), StripHeads(width, VectorRegisters()))
                               : StripHeads(width, VectorRegisters());
  // Both tiers take the heads of a KV head together, so each K and V row is loaded once
  // for all of them (at the baseline, one head per pass ran the attention of the decode
  // layer at S = 512 1.5x (f64) and 1.3x (f32) slower, and its step 1.2-1.3x O2's; the
  // baseline keeps its compile in check by looping over the heads in steps 2 and 3).
  const int jam =
      nb >= 1 && UsesLoopVar(kernel_.values.get(), nb - 1) ? 1 : SharedRhsJam(max_heads);

  // Per head of a pass: running max and sum, the block's max and sum (arrays of `jam`,
  // which SROA turns into registers where every index is a constant), the output strip
  // (registers). The block's sum stays in the dtype: its terms are p <= 1, at most kBlock
  // of them, so f32 cannot overflow, and an f32 sum widened to f64 per element ran the exp
  // loop at half width (f32 S = 8192: 76-80 us -> 65 us); the running sum is f64 for f32,
  // as the unfused sum kernel's.
  auto per_head = [&](llvm::Type* t) {
    return prologue_.CreateAlloca(llvm::ArrayType::get(t, jam), nullptr, "per_head");
  };
  llvm::AllocaInst* max_of = per_head(type);
  llvm::AllocaInst* sum_of = per_head(sum_type);
  llvm::AllocaInst* block_max = per_head(type);
  llvm::AllocaInst* block_sum = per_head(type);
  llvm::AllocaInst* alpha_of = per_head(type);
  // Head h's element of a per-head array (h an i64, constant or not).
  auto of = [&](llvm::AllocaInst* array, llvm::Value* h) {
    return body_.CreateInBoundsGEP(array->getAllocatedType(), array, {i64(0), h});
  };
  // P @ V's chains: jam x width FMAs per position (four f32 heads of one 16-lane vector:
  // 4 chains, too few), so positions go round-robin to accumulator sets.
  const int sets = AccumulatorSets(jam * width, width, VectorRegisters());
  // acc[u][h][c]: set u, head h, column group c.
  std::vector<std::vector<std::vector<llvm::AllocaInst*>>> acc(
      sets, std::vector<std::vector<llvm::AllocaInst*>>(jam));
  for (int h = 0; h < jam; ++h) {
    for (int u = 0; u < sets; ++u) {
      for (int c = 0; c < width; ++c) {
        acc[u][h].push_back(prologue_.CreateAlloca(type_of(c), nullptr, "acc"));
      }
    }
  }
  // The baseline writes the vectors of the x map and the exp loop itself (codegen_lanes.cc):
  // x_lanes for the map (0: LLVM's vectorizer takes both loops), `lanes` for exp.
  const int x_lanes = PlanLanes(kernel_.value, j, &identity_, dtype, kernel_.scores);
  llvm::AllocaInst* lane_sum =
      x_lanes > 0 ? prologue_.CreateAlloca(vector_type, nullptr, "lane_sum") : nullptr;
  // loop_vars_[j] as the position j0 + the loop's index (inside a loop over j).
  auto at_position = [&](llvm::Value* j0) {
    loop_vars_[j] = body_.CreateAdd(j0, loop_vars_[j], "", true, true);
  };
  auto scores_ptr = [&] { return TargetPtr(kernel_.scores, identity_); };

  // The max of the scratch's x at positions j0 .. j0 + count into `out`, as x > m ? x : m
  // over kMaxChains vectors at a time (one vmax each). A NaN x is passed over: its p is
  // NaN whatever the max, and so are the sum and every output column, as in the unfused
  // kernels. (LLVM 19 vectorizes the NaN-propagating llvm.maximum reduction as a chain of
  // six instructions through one mask register, and leaves maxnum or this select scalar
  // without fast-math flags; this form took f64 S = 512 from 7.1-7.4 to 6.7-7.1 us.)
  constexpr int kMaxChains = 4;
  std::vector<llvm::AllocaInst*> chains;  // one head's at a time
  for (int u = 0; u < kMaxChains; ++u) {
    chains.push_back(prologue_.CreateAlloca(vector_type, nullptr, "max"));
  }
  auto block_max_of = [&](llvm::Value* j0, llvm::Value* count, llvm::Value* out) {
    auto max = [&](llvm::Value* x, llvm::Value* m) {
      return body_.CreateSelect(body_.CreateFCmpOGT(x, m), x, m);
    };
    for (llvm::AllocaInst* chain : chains) {
      body_.CreateStore(body_.CreateVectorSplat(lanes, minus_inf), chain);
    }
    body_.CreateStore(minus_inf, out);
    EmitBlockedLoop(
        count, j, int64_t{kMaxChains} * lanes,
        [&](llvm::Value* first_j) {
          for (int u = 0; u < kMaxChains; ++u) {
            loop_vars_[j] = body_.CreateAdd(j0, first_j, "", true, true);
            if (u > 0)
              loop_vars_[j] = body_.CreateAdd(loop_vars_[j], i64(u * lanes), "", true, true);
            llvm::Value* ptr = scores_ptr();
            if (ptr == nullptr) return;
            body_.CreateStore(max(body_.CreateAlignedLoad(vector_type, ptr, align),
                                  body_.CreateLoad(vector_type, chains[u])),
                              chains[u]);
          }
        },
        [&](llvm::Value* index) {
          loop_vars_[j] = body_.CreateAdd(j0, index, "", true, true);
          llvm::Value* ptr = scores_ptr();
          if (ptr == nullptr) return;
          body_.CreateStore(max(LoadElement(kernel_.scores, ptr), body_.CreateLoad(type, out)),
                            out);
        });
    llvm::Value* m = body_.CreateLoad(vector_type, chains[0]);
    for (int u = 1; u < kMaxChains; ++u) m = max(body_.CreateLoad(vector_type, chains[u]), m);
    llvm::Value* total = body_.CreateLoad(type, out);
    for (int i = 0; i < lanes; ++i) total = max(body_.CreateExtractElement(m, uint64_t(i)), total);
    body_.CreateStore(total, out);
  };

  // Positions j0 .. j0 + count of heads first .. first + heads.
  auto block = [&](llvm::Value* first, int heads, llvm::Value* j0, llvm::Value* count) {
    // 1. Scores.
    if (tiling) {
      auto dots = [&](llvm::Value* offset, int n) {
        EmitDotVectors(*tiling, first, heads, body_.CreateAdd(j0, offset, "", true, true), n,
                       kernel_.scores, identity_);
      };
      EmitBlockedLoop(
          count, j, tiling->lanes, [&](llvm::Value* n0) { dots(n0, tiling->lanes); },
          [&](llvm::Value* index) { dots(index, 1); });
    } else {
      llvm::AllocaInst* dot = Accumulator(dtype);
      for (int h = 0; h < heads; ++h) {
        SetJamIndex(first, h);
        EmitLoop(count, j, [&] {
          at_position(j0);
          body_.CreateStore(llvm::Constant::getNullValue(type), dot);
          EmitLoop(EvalTop(kernel_.loops[d], DType::kI64, "D extent"), d, [&] {
            llvm::Value* a = EvalTop(kernel_.lhs, dtype, "lhs");
            llvm::Value* b = EvalTop(kernel_.rhs, dtype, "rhs");
            body_.CreateStore(MultiplyAdd(body_.CreateLoad(type, dot), a, b, dtype, true), dot);
          });
          StoreElement(kernel_.scores, scores_ptr(), body_.CreateLoad(type, dot));
        });
      }
    }
    // 2. x_j in place of the scores of head h (a map: in vectors at the baseline, else by
    // LLVM's vectorizer), then the block's max.
    auto x_and_max = [&](llvm::Value* h) {
      if (x_lanes > 0) {
        EmitBlockedLoop(
            count, j, x_lanes,
            [&](llvm::Value* j1) {
              loop_vars_[j] = body_.CreateAdd(j0, j1, "", true, true);
              llvm::Value* x = EvalLanes(kernel_.value, j, x_lanes);
              StoreLanes(kernel_.scores, scores_ptr(), x);
            },
            [&](llvm::Value* index) {
              loop_vars_[j] = body_.CreateAdd(j0, index, "", true, true);
              StoreElement(kernel_.scores, scores_ptr(), EvalTop(kernel_.value, dtype, "value"));
            });
      } else {
        VectorizeLoops vectorize(this, j);
        EmitLoop(count, j, [&] {
          at_position(j0);
          StoreElement(kernel_.scores, scores_ptr(), EvalTop(kernel_.value, dtype, "value"));
        });
      }
      block_max_of(j0, count, of(block_max, h));
    };
    // 3. Head h's new max; p_j in place of x_j and their sum; the running sum rescaled to
    // the new max. Returns the factor exp(m - m') its output strip is rescaled by.
    auto softmax_step = [&](llvm::Value* h) {
      llvm::Value* old_max = body_.CreateLoad(type, of(max_of, h));
      llvm::Value* new_max = body_.CreateMaximum(old_max, body_.CreateLoad(type, of(block_max, h)));
      llvm::Value* ref = body_.CreateSelect(body_.CreateFCmpOEQ(new_max, minus_inf),
                                            llvm::ConstantFP::get(type, 0.0), new_max);
      llvm::Value* head_sum = of(block_sum, h);
      body_.CreateStore(llvm::Constant::getNullValue(type), head_sum);
      // p at loop_vars_[j] (one element or, with a vector ref, `lanes` of them) in place
      // of x, and its sum into `sum`.
      auto exp_step = [&](llvm::Value* ref_value, llvm::Value* sum) {
        llvm::Value* ptr = scores_ptr();
        if (ptr == nullptr) return;
        llvm::Value* x = ref_value->getType()->isVectorTy()
                             ? LoadLanes(kernel_.scores, ptr, lanes, nullptr)
                             : LoadElement(kernel_.scores, ptr);
        llvm::Value* p = Exp(body_.CreateFSub(x, ref_value));
        if (ref_value->getType()->isVectorTy()) {
          StoreLanes(kernel_.scores, ptr, p);
        } else {
          StoreElement(kernel_.scores, ptr, p);
        }
        llvm::IRBuilder<>::FastMathFlagGuard guard(body_);
        llvm::FastMathFlags fmf = body_.getFastMathFlags();
        fmf.setAllowReassoc();  // the sum splits into vector lanes
        body_.setFastMathFlags(fmf);
        body_.CreateStore(body_.CreateFAdd(body_.CreateLoad(p->getType(), sum), p), sum);
      };
      if (x_lanes > 0) {
        body_.CreateStore(llvm::Constant::getNullValue(vector_type), lane_sum);
        llvm::Value* ref_lanes = body_.CreateVectorSplat(lanes, ref);
        EmitBlockedLoop(
            count, j, lanes,
            [&](llvm::Value* j1) {
              loop_vars_[j] = body_.CreateAdd(j0, j1, "", true, true);
              exp_step(ref_lanes, lane_sum);
            },
            [&](llvm::Value* index) {
              loop_vars_[j] = body_.CreateAdd(j0, index, "", true, true);
              exp_step(ref, head_sum);
            });
        llvm::IRBuilder<>::FastMathFlagGuard guard(body_);
        llvm::FastMathFlags fmf = body_.getFastMathFlags();
        fmf.setAllowReassoc();
        body_.setFastMathFlags(fmf);
        llvm::Value* lanes_total =
            CombineLanes(body_.CreateLoad(vector_type, lane_sum),
                         [&](llvm::Value* a, llvm::Value* b) { return body_.CreateFAdd(a, b); });
        body_.CreateStore(body_.CreateFAdd(lanes_total, body_.CreateLoad(type, head_sum)),
                          head_sum);
      } else {
        VectorizeLoops vectorize(this, j);
        EmitLoop(count, j, [&] {
          at_position(j0);
          exp_step(ref, head_sum);
        });
      }
      llvm::Value* alpha = Exp(body_.CreateFSub(old_max, ref));
      llvm::Value* wide_alpha = sum_type == type ? alpha : body_.CreateFPExt(alpha, sum_type);
      llvm::Value* block_total = body_.CreateLoad(type, head_sum);
      if (sum_type != type) block_total = body_.CreateFPExt(block_total, sum_type);
      llvm::Value* head_total = of(sum_of, h);
      body_.CreateStore(
          body_.CreateFAdd(body_.CreateFMul(body_.CreateLoad(sum_type, head_total), wide_alpha),
                           block_total),
          head_total);
      body_.CreateStore(new_max, of(max_of, h));
      return alpha;
    };
    // Head h's output strip times alpha.
    auto rescale = [&](int h, llvm::Value* alpha) {
      llvm::Value* splat = vectors > 0 ? body_.CreateVectorSplat(lanes, alpha) : nullptr;
      for (int u = 0; u < sets; ++u) {
        for (int c = 0; c < width; ++c) {
          body_.CreateStore(body_.CreateFMul(body_.CreateLoad(type_of(c), acc[u][h][c]),
                                             c < vectors ? splat : alpha),
                            acc[u][h][c]);
        }
      }
    };
    if (options_.tier == CodeTier::kBaseline && heads > 1) {
      // The baseline walks steps 2 and 3 over the pass's heads in a loop: one copy of
      // their IR however many heads share the K and V rows of steps 1 and 4 (four
      // unrolled copies nearly doubled the kernel's compile). The output strips stay
      // unrolled in registers, so their factors go through `alpha_of`.
      llvm::Value* jammed = loop_vars_[jam_var];
      EmitLoopFrom(first, body_.CreateAdd(first, i64(heads), "", true, true), jam_var, [&] {
        llvm::Value* h = body_.CreateSub(loop_vars_[jam_var], first, "", true, true);
        x_and_max(h);
        body_.CreateStore(softmax_step(h), of(alpha_of, h));
      });
      loop_vars_[jam_var] = jammed;
      for (int h = 0; h < heads; ++h) rescale(h, body_.CreateLoad(type, of(alpha_of, i64(h))));
    } else {
      for (int h = 0; h < heads; ++h) {
        SetJamIndex(first, h);
        x_and_max(i64(h));
      }
      for (int h = 0; h < heads; ++h) {
        SetJamIndex(first, h);
        rescale(h, softmax_step(i64(h)));
      }
    }
    // 4. o += p_j * v_j, each V row loaded once for the heads.
    const Expr* values = kernel_.values.get();
    const bool contiguous =
        values->kind == ExprKind::kLoad && ContiguousAlongN(values->operands, e);
    // Position loop_vars_[j] into set u.
    auto step = [&](int u) {
      std::vector<llvm::Value*> v;
      for (int c = 0; c < width; ++c) {
        loop_vars_[e] = column(c);
        if (contiguous) {
          llvm::Value* ptr = TargetPtr(values->index, values->operands);
          if (ptr == nullptr) return;
          v.push_back(body_.CreateAlignedLoad(type_of(c), ptr, align));
          continue;
        }
        if (c >= vectors) {
          v.push_back(EvalTop(kernel_.values, dtype, "values"));
          continue;
        }
        llvm::Value* lanes_value = llvm::PoisonValue::get(vector_type);
        for (int i = 0; i < lanes; ++i) {
          loop_vars_[e] = body_.CreateAdd(column(c), i64(i), "", true, true);
          lanes_value = body_.CreateInsertElement(
              lanes_value, EvalTop(kernel_.values, dtype, "values"), uint64_t(i));
        }
        v.push_back(lanes_value);
      }
      loop_vars_[e] = nullptr;
      for (int h = 0; h < heads; ++h) {
        SetJamIndex(first, h);
        llvm::Value* ptr = scores_ptr();
        if (ptr == nullptr) return;
        llvm::Value* p = LoadElement(kernel_.scores, ptr);
        llvm::Value* splat = vectors > 0 ? body_.CreateVectorSplat(lanes, p) : nullptr;
        for (int c = 0; c < width; ++c) {
          body_.CreateStore(MultiplyAdd(body_.CreateLoad(type_of(c), acc[u][h][c]),
                                        c < vectors ? splat : p, v[c], dtype, false),
                            acc[u][h][c]);
        }
      }
    };
    EmitBlockedLoop(
        count, j, sets,
        [&](llvm::Value* first_j) {
          for (int u = 0; u < sets; ++u) {
            loop_vars_[j] = body_.CreateAdd(j0, first_j, "", true, true);
            if (u > 0) loop_vars_[j] = body_.CreateAdd(loop_vars_[j], i64(u), "", true, true);
            step(u);
          }
        },
        [&](llvm::Value* index) {
          loop_vars_[j] = body_.CreateAdd(j0, index, "", true, true);
          step(0);
        });
  };

  EmitJammedNest(jam, [&](llvm::Value* first, int heads) {
    for (int h = 0; h < heads; ++h) {
      body_.CreateStore(minus_inf, of(max_of, i64(h)));
      body_.CreateStore(llvm::Constant::getNullValue(sum_type), of(sum_of, i64(h)));
      for (int u = 0; u < sets; ++u) {
        for (int c = 0; c < width; ++c) {
          body_.CreateStore(llvm::Constant::getNullValue(type_of(c)), acc[u][h][c]);
        }
      }
    }
    llvm::Value* n_extent = EvalTop(kernel_.loops[j], DType::kI64, "N extent");
    if (llvm::isa<llvm::ConstantInt>(n_extent)) {
      // A known length: whole blocks of a constant count, then the rest as one shorter
      // block (LLVM drops whichever copy cannot run). The constant count is worth its IR
      // at the baseline tier: one copy for every length ran its attention 15% slower
      // (f64 S = 512 and 2048, `graphjit-dump --profile --tier=baseline`; O2 the same).
      llvm::Value* blocks = body_.CreateSDiv(n_extent, i64(kBlock));
      EmitLoop(blocks, j, [&] {
        block(first, heads, body_.CreateMul(loop_vars_[j], i64(kBlock), "", true, true),
              i64(kBlock));
      });
      llvm::Value* done = body_.CreateMul(blocks, i64(kBlock), "", true, true);
      llvm::Value* rest = body_.CreateSub(n_extent, done, "", true, true);
      EmitLoop(body_.CreateZExt(body_.CreateICmpSGT(rest, i64(0)), body_.getInt64Ty()), j,
               [&] { block(first, heads, done, rest); });
    } else {
      // A symbolic length: one copy of the block's loops, the last block shorter (two
      // live copies made the symbolic decode layer's compile 30-40% longer in both tiers).
      llvm::Value* blocks =
          body_.CreateSDiv(body_.CreateAdd(n_extent, i64(kBlock - 1), "", true, true), i64(kBlock));
      EmitLoop(blocks, j, [&] {
        llvm::Value* j0 = body_.CreateMul(loop_vars_[j], i64(kBlock), "", true, true);
        llvm::Value* count = body_.CreateBinaryIntrinsic(
            llvm::Intrinsic::smin, body_.CreateSub(n_extent, j0, "", true, true), i64(kBlock));
        block(first, heads, j0, count);
      });
    }
    // A row of only -inf: NaN, as the unfused exp(-inf - -inf).
    for (int h = 0; h < heads; ++h) {
      SetJamIndex(first, h);
      llvm::Value* all_minus_inf = body_.CreateAnd(
          body_.CreateFCmpOEQ(body_.CreateLoad(type, of(max_of, i64(h))), minus_inf),
          body_.CreateICmpSGT(n_extent, i64(0)));
      llvm::Value* sum = body_.CreateLoad(sum_type, of(sum_of, i64(h)));
      if (sum_type != type) sum = body_.CreateFPTrunc(sum, type);
      sum = body_.CreateSelect(all_minus_inf, llvm::ConstantFP::getNaN(type), sum);
      StoreElement(kernel_.sum_out, TargetPtr(kernel_.sum_out, kernel_.sum_indices), sum);
      for (int c = 0; c < width; ++c) {
        loop_vars_[e] = column(c);
        llvm::Value* ptr = TargetPtr(kernel_.out, kernel_.store_indices);
        if (ptr == nullptr) break;
        llvm::Value* nan = llvm::ConstantFP::getNaN(type_of(c));
        llvm::Value* total = body_.CreateLoad(type_of(c), acc[0][h][c]);
        for (int u = 1; u < sets; ++u) {
          total = body_.CreateFAdd(total, body_.CreateLoad(type_of(c), acc[u][h][c]));
        }
        body_.CreateAlignedStore(body_.CreateSelect(all_minus_inf, nan, total), ptr, align);
      }
      loop_vars_[e] = nullptr;
    }
  });
}

}  // namespace graphjit::compiler::codegen_internal
