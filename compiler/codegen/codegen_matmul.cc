// Matmul kernels: the generated loops (dot, register-tiled and row-jammed axpy orders). The
// call into the runtime's BLAS helper is in codegen_extern_matmul.cc.
//
// Why these orders: a decode step is a chain of matrix-vector products whose weights are
// read once per step, so the step's floor is the time to stream the weights. The plain
// axpy order (for k: for n: out[n] += a[k] * b[k, n]) loads and stores the whole output
// row for every k, which doubles or triples the traffic through L1 and keeps the loads of
// b waiting behind those stores. Two orders avoid that:
// - One strip (N <= T): the output row lives in vector registers for the whole k loop,
//     acc[0..N) = 0; for k: acc += splat(a[k]) * b[k, 0..N); out[0..N) = acc
//   so each weight is loaded once and each output stored once. Narrow rows over a long k
//   split the sum over a few accumulator sets (see EmitTiledAxpy).
// - Wider rows, jammed: R = kJamRows rows of b at a time, each in order,
//     for k0 in steps of R: for n: out[n] += a[k0] * b[k0, n] + ... + a[k0+R-1] * b[k0+R-1, n]
//   so the output row is loaded and stored once per R rows and the weights stream in
//   address order, R sequential streams that the hardware prefetchers follow from L3 and
//   DRAM. (Strips of T columns across all k, the order before, read every row a stride
//   apart; bench_roofline's BM_Matvec here, strips vs jammed, best of alternating runs, us:
//   f64 512x512 43 / 37, 1024x1024 189 / 152; f32 512x512 23 / 19, 1024x1024 87 / 75;
//   f64 344x128 5.8 / 5.1, f32 128x344 3.5 / 2.8.)
// In both, every output element is summed over k in order with the same contraction (one
// FMA per term), so results equal the axpy order's bit for bit (the interpreter's order),
// except for the split sets. An lhs that is computed (say SwiGLU's silu(g) * u) is staged
// once per k in a stack array; that loop vectorizes its math (exp inline, with the scalar
// exp's bits; other functions through libmvec, within an ulp). T is kTileVectors vectors
// of the host's widest vector width (AVX-512: 64 bytes, AVX/AVX2: 32, else 16): enough
// independent accumulators to hide the FMA latency, few enough to leave registers for the
// operands.
//
// Attention (decode: query heads sharing KV heads) has a batch loop that the rhs does not
// depend on. Both of its products run several of those heads per pass over the rhs rows
// (SharedRhsJam), so each K or V row is loaded once for all of them: P @ V in one strip
// with an output row per head, q @ K^T in EmitTiledDot (codegen_dot.cc).
#include <algorithm>
#include <optional>

#include "compiler/codegen/codegen_emitter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/TargetParser/Host.h"

namespace graphjit::compiler::codegen_internal {

using ir::DType;

namespace {

constexpr int kTileVectors = 8;
// Rows of the weight the jammed order reads per pass over the output row.
constexpr int kJamRows = 8;
// Narrow strips split k over up to kMaxSets accumulator sets when K >= kSplitMinK.
constexpr int kMaxSets = 4;
constexpr int64_t kSplitMinK = 32;
// Query heads sharing an rhs (a KV head) that a one-strip axpy computes per pass over the
// rhs rows (fewer where registers run out).
constexpr int kMaxAxpyHeads = 4;
// lhs values that are not plain loads are computed once per k into a stack array, up to
// this size.
constexpr int64_t kMaxLhsBytes = 32 * 1024;

}  // namespace

int HostVectorBytes() {
  static const int bytes = [] {
    const llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    if (features.lookup("avx512f")) return 64;
    if (features.lookup("avx")) return 32;
    return 16;
  }();
  return bytes;
}

int StripHeads(int width, int registers) {
  return std::min(kMaxAxpyHeads, (registers - 2 - width) / width);
}

int AccumulatorSets(int chains, int width, int registers) {
  int sets = std::clamp(kTileVectors / chains, 1, kMaxSets);
  while (sets > 1 && sets * chains + width + 2 > registers) --sets;
  return sets;
}

namespace {

// A load, possibly cast, with index arithmetic: cheap enough to repeat per strip.
bool IsPlainLoad(const Expr* e) {
  if (e->kind == ExprKind::kCast) return IsPlainLoad(e->operands[0].get());
  return e->kind == ExprKind::kLoad || e->kind == ExprKind::kConst;
}

}  // namespace

// Consecutive n give consecutive elements: the last index is n itself and no other
// index mentions n (buffers are row-major with a unit stride in their last dim).
bool ContiguousAlongN(const std::vector<ExprPtr>& indices, int n) {
  if (indices.empty()) return false;
  const Expr* last = indices.back().get();
  if (last->kind != ExprKind::kLoopVar || last->index != n) return false;
  return std::none_of(indices.begin(), indices.end() - 1,
                      [&](const ExprPtr& e) { return UsesLoopVar(e.get(), n); });
}

// Without FMA hardware llvm.fma would be a libm call per term: the sums then round the
// multiply and the add apart, in every order alike.
bool HostHasFma() {
  static const bool fma = llvm::sys::getHostCPUFeatures().lookup("fma");
  return fma;
}

void KernelEmitter::EmitMatmul() {
  EmitProduct();
  // An epilogue the product's own stores did not apply (every path but the tiles, which
  // apply it to each tile as it is finished): a pass over the product's elements.
  if (kernel_.epilogue != nullptr && !epilogue_applied_ && !failed()) {
    const size_t nb = kernel_.loops.size() - 3;
    const auto& out_indices = kernel_.store_indices.empty() ? identity_ : kernel_.store_indices;
    const DType dtype = program_.buffers[kernel_.out].dtype;
    EmitNest(0, nb + 2, [&] {
      llvm::Value* value = EvalTop(kernel_.epilogue, dtype, "epilogue");
      StoreElement(kernel_.out, TargetPtr(kernel_.out, out_indices), value);
    });
  }
}

void KernelEmitter::EmitProduct() {
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
    if (EmitTiledDot()) return;
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
  if (kernel_.order == MatmulOrder::kTiles) {
    if (HostHasFma() && EmitTiles()) return;
  } else if (kernel_.order != MatmulOrder::kAxpy) {
    return Fail("unknown matmul order ", static_cast<int>(kernel_.order));
  } else if (EmitTiledAxpy()) {
    return;
  }
  EmitNest(0, nb + 1, [&] {
    llvm::Value* n_extent = EvalTop(kernel_.loops[n], DType::kI64, "N extent");
    EmitRangedLoop(n_extent, n,
                   [&] { StoreElement(kernel_.out, TargetPtr(kernel_.out, out_indices), zero); });
    llvm::Value* k_extent = EvalTop(kernel_.loops[k], DType::kI64, "K extent");
    EmitLoop(k_extent, k, [&] {
      llvm::Value* a = EvalTop(kernel_.lhs, dtype, "lhs");  // n is not in scope here
      llvm::Value* n_extent_inner = EvalTop(kernel_.loops[n], DType::kI64, "N extent");
      EmitRangedLoop(n_extent_inner, n, [&] {
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
  if (!reassoc && HostHasFma()) {
    // An ordered sum is one fused multiply-add per term, spelled out: a contractable
    // fmul + fadd is fused only where the backend still sees the pair, and the SLP
    // vectorizer may pack the multiplies of a row-jammed chain into vectors first, which
    // rounds them apart. Every order then gives the same bits.
    return body_.CreateIntrinsic(llvm::Intrinsic::fma, {acc->getType()}, {a, b, acc});
  }
  llvm::IRBuilder<>::FastMathFlagGuard guard(body_);
  llvm::FastMathFlags fmf = body_.getFastMathFlags();
  fmf.setAllowReassoc(reassoc);
  fmf.setAllowContract(reassoc);  // a dot's terms may fuse as they may reorder
  body_.setFastMathFlags(fmf);
  return body_.CreateFAdd(acc, body_.CreateFMul(a, b));
}

int KernelEmitter::SharedRhsJam(int max_jam) {
  const int nb = static_cast<int>(kernel_.loops.size()) - 3;
  if (nb < 1 || max_jam < 2 || UsesLoopVar(kernel_.rhs.get(), nb - 1) ||
      !UsesLoopVar(kernel_.lhs.get(), nb - 1)) {
    return 1;
  }
  const auto* extent =
      llvm::dyn_cast_or_null<llvm::ConstantInt>(EvalPrologue(kernel_.loops[nb - 1], "jam extent"));
  if (extent == nullptr) return 1;
  for (int jam = max_jam; jam >= 2; --jam) {
    if (extent->getSExtValue() % jam == 0) return jam;
  }
  return 1;
}

void KernelEmitter::EmitJammedNest(int jam, absl::FunctionRef<void(llvm::Value*, int)> body) {
  const int nb = static_cast<int>(kernel_.loops.size()) - 3;
  if (jam == 1) return EmitNest(0, nb + 1, [&] { body(nullptr, 1); });
  EmitNest(0, nb - 1, [&] {
    EmitRangedBlockedLoop(
        EvalTop(kernel_.loops[nb - 1], DType::kI64, "jam extent"), nb - 1, jam,
        [&](llvm::Value* first) { EmitNest(nb, nb + 1, [&] { body(first, jam); }); },
        [&](llvm::Value* index) { EmitNest(nb, nb + 1, [&] { body(index, 1); }); });
  });
}

void KernelEmitter::SetJamIndex(llvm::Value* first, int u) {
  if (first == nullptr) return;  // not jammed: the nest's own variable
  const int j = static_cast<int>(kernel_.loops.size()) - 4;
  loop_vars_[j] = u == 0 ? first : body_.CreateAdd(first, body_.getInt64(u), "", true, true);
}

int KernelEmitter::VectorBytes() const { return CodegenVectorBytes(options_.max_vector_bytes); }

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
  const int lanes = VectorBytes() / static_cast<int>(ir::DTypeSize(dtype));
  const int64_t tile = int64_t{kTileVectors} * lanes;
  const auto* n_const =
      llvm::dyn_cast_or_null<llvm::ConstantInt>(EvalPrologue(kernel_.loops[n], "N extent"));
  const auto* k_const =
      llvm::dyn_cast_or_null<llvm::ConstantInt>(EvalPrologue(kernel_.loops[k], "K extent"));
  if (failed()) return true;  // the extents are bad: the failure is recorded
  const bool one_strip = n_const != nullptr && n_const->getSExtValue() <= tile;
  if (one_strip && range_begin_ != nullptr && kernel_.parallel_loop == n) {
    Fail("a range of N of a one-strip matmul (mark_parallel keeps such rows whole)");
    return true;
  }
  const int64_t columns = one_strip ? n_const->getSExtValue() : 0;
  const int vectors = static_cast<int>(columns / lanes);
  const int scalars = static_cast<int>(columns % lanes);
  const int width = vectors + scalars;
  // One strip for several query heads of one KV head at once (they share every rhs row)
  // while their accumulators, the row and a splat fit the vector registers.
  int jam = one_strip && width > 0 ? SharedRhsJam(StripHeads(width, VectorRegisters())) : 1;
  // A computed lhs (say SwiGLU's silu(g) * u) is staged whenever K is known and small
  // enough: its loop vectorizes, where a division or exp per k would bound the matmul.
  llvm::Type* type = ValueType(dtype);
  const bool stage = !IsPlainLoad(kernel_.lhs.get()) && k_const != nullptr &&
                     k_const->getSExtValue() * ir::DTypeSize(dtype) <= kMaxLhsBytes;
  if (stage && jam * k_const->getSExtValue() * ir::DTypeSize(dtype) > kMaxLhsBytes) jam = 1;
  llvm::AllocaInst* staged = nullptr;
  if (stage) {
    staged = prologue_.CreateAlloca(type, prologue_.getInt64(jam * k_const->getSExtValue()), "lhs");
    staged->setAlignment(llvm::Align(64));
  }
  const int staged_lanes = stage ? PlanLanes(kernel_.lhs, k, nullptr, dtype) : 0;
  // Head h's staged row starts at h * K.
  auto staged_at = [&](int h) {
    llvm::Value* index = loop_vars_[k];
    if (h > 0) {
      index = body_.CreateAdd(index, body_.getInt64(h * k_const->getSExtValue()), "", true, true);
    }
    return body_.CreateInBoundsGEP(type, staged, index);
  };
  // Head h's lhs at k = loop_vars_[k], of the heads from `first` on.
  auto lhs_of_head = [&](llvm::Value* first, int h) {
    if (staged != nullptr) return static_cast<llvm::Value*>(body_.CreateLoad(type, staged_at(h)));
    SetJamIndex(first, h);
    return EvalTop(kernel_.lhs, dtype, "lhs");
  };
  EmitJammedNest(jam, [&](llvm::Value* first, int heads) {
    if (staged != nullptr) {
      // A map (exp and the like): in vectors at the baseline (staged_lanes), else by
      // LLVM's vectorizer.
      VectorizeLoops vectorize(this, staged_lanes > 0 ? -1 : k);
      for (int h = 0; h < heads; ++h) {
        SetJamIndex(first, h);
        llvm::Value* extent = EvalTop(kernel_.loops[k], DType::kI64, "K extent");
        auto stage_at = [&](llvm::Value* index) {
          loop_vars_[k] = index;
          body_.CreateStore(EvalTop(kernel_.lhs, dtype, "lhs"), staged_at(h));
        };
        if (staged_lanes == 0) {
          EmitLoop(extent, k, [&] { stage_at(loop_vars_[k]); });
          continue;
        }
        EmitBlockedLoop(
            extent, k, staged_lanes,
            [&](llvm::Value* first_k) {
              loop_vars_[k] = first_k;
              llvm::Value* v = EvalLanes(kernel_.lhs, k, staged_lanes);
              body_.CreateAlignedStore(v, staged_at(h), llvm::Align(ir::DTypeSize(dtype)));
            },
            stage_at);
      }
    }
    if (!one_strip) return EmitJammedRows(lanes, [&] { return lhs_of_head(first, 0); });
    // One strip: the whole output row in registers. Fewer accumulators than kTileVectors
    // over a long k would wait on the FMA latency of too few chains: k is then split
    // round-robin over up to kMaxSets accumulator sets, added together (in set order) at
    // the end. Jammed heads are chains too: P @ V of 4 f32 heads of one vector each
    // (AVX-512) had 4 chains of S FMAs and waited on their latency, so it splits into 2
    // sets; 4 f64 heads of two vectors do not split. Splitting changes the order of the
    // sum, within rounding, where a full strip keeps the interpreter's order exactly.
    if (width == 0) return;
    const bool long_k = k_const == nullptr || k_const->getSExtValue() >= kSplitMinK;
    const int chains = heads * width;
    const int sets = long_k ? AccumulatorSets(chains, width, VectorRegisters()) : 1;
    llvm::Type* vector_type = llvm::FixedVectorType::get(type, lanes);
    auto type_of = [&](int j) { return j < vectors ? vector_type : type; };
    // acc[u][h][j]: set u, head h, column group j.
    std::vector<std::vector<std::vector<llvm::AllocaInst*>>> acc(
        sets, std::vector<std::vector<llvm::AllocaInst*>>(heads));
    for (int u = 0; u < sets; ++u) {
      for (int h = 0; h < heads; ++h) {
        for (int j = 0; j < width; ++j) {
          acc[u][h].push_back(prologue_.CreateAlloca(type_of(j), nullptr, "acc"));
          body_.CreateStore(llvm::Constant::getNullValue(type_of(j)), acc[u][h].back());
        }
      }
    }
    // Column of accumulator j (its first lane).
    auto column = [&](int j) {
      return body_.getInt64(j < vectors ? int64_t{j} * lanes
                                        : int64_t{vectors} * lanes + j - vectors);
    };
    // acc[u][h] += lhs_h(k) * rhs(k, columns) at k = loop_vars_[k], each rhs load shared.
    auto step = [&](int u) {
      std::vector<llvm::Value*> b;
      for (int j = 0; j < width; ++j) {
        loop_vars_[n] = column(j);
        llvm::Value* ptr = TargetPtr(rhs->index, rhs->operands);
        if (ptr == nullptr) return;
        b.push_back(body_.CreateAlignedLoad(type_of(j), ptr, llvm::Align(ir::DTypeSize(dtype))));
      }
      loop_vars_[n] = nullptr;
      for (int h = 0; h < heads; ++h) {
        llvm::Value* a = lhs_of_head(first, h);
        llvm::Value* splat = vectors > 0 ? body_.CreateVectorSplat(lanes, a) : nullptr;
        for (int j = 0; j < width; ++j) {
          llvm::Value* sum = body_.CreateLoad(type_of(j), acc[u][h][j]);
          body_.CreateStore(MultiplyAdd(sum, j < vectors ? splat : a, b[j], dtype, false),
                            acc[u][h][j]);
        }
      }
    };
    llvm::Value* k_extent = EvalTop(kernel_.loops[k], DType::kI64, "K extent");
    if (sets == 1) {
      EmitLoop(k_extent, k, [&] { step(0); });
    } else {
      EmitBlockedLoop(
          k_extent, k, sets,
          [&](llvm::Value* first_k) {
            for (int u = 0; u < sets; ++u) {
              loop_vars_[k] =
                  u == 0 ? first_k : body_.CreateAdd(first_k, body_.getInt64(u), "", true, true);
              step(u);
            }
          },
          [&](llvm::Value* index) {
            loop_vars_[k] = index;
            step(0);
          });
      for (int h = 0; h < heads; ++h) {
        for (int j = 0; j < width; ++j) {
          llvm::Value* total = body_.CreateLoad(type_of(j), acc[0][h][j]);
          for (int u = 1; u < sets; ++u) {
            total = body_.CreateFAdd(total, body_.CreateLoad(type_of(j), acc[u][h][j]));
          }
          body_.CreateStore(total, acc[0][h][j]);
        }
      }
    }
    for (int h = 0; h < heads; ++h) {
      SetJamIndex(first, h);
      for (int j = 0; j < width; ++j) {
        loop_vars_[n] = column(j);
        llvm::Value* ptr = TargetPtr(kernel_.out, out_indices);
        if (ptr == nullptr) break;
        body_.CreateAlignedStore(body_.CreateLoad(type_of(j), acc[0][h][j]), ptr,
                                 llvm::Align(ir::DTypeSize(dtype)));
      }
    }
    loop_vars_[n] = nullptr;
  });
  return true;
}

void KernelEmitter::EmitJammedRows(int lanes, absl::FunctionRef<llvm::Value*()> lhs_at_k) {
  const DType dtype = program_.buffers[kernel_.out].dtype;
  const int n = static_cast<int>(kernel_.loops.size()) - 2, k = n + 1;
  const Expr* rhs = kernel_.rhs.get();
  const auto& out_indices = kernel_.store_indices.empty() ? identity_ : kernel_.store_indices;
  llvm::Type* type = ValueType(dtype);
  llvm::Type* vector_type = llvm::FixedVectorType::get(type, lanes);
  const llvm::Align align(ir::DTypeSize(dtype));
  auto i64 = [&](int64_t v) { return body_.getInt64(v); };
  // The baseline tier emits half the rows per block and one output vector per step, not
  // two: the tiled matvec [1, 128] @ [128, 344] then compiles from 185 IR instructions
  // instead of 374 (3.6 rather than 5.1 ms, `bench_compile --benchmark_filter=
  // CompileKernel/2/1`), and the decode step's matvecs, bound by reading the weights, run
  // as fast (`bench_roofline`, znver5, 2026-12-03).
  const bool lean = options_.tier == CodeTier::kBaseline;
  const int jam_rows = lean ? kJamRows / 2 : kJamRows;
  // The columns this call computes: all, or the caller's range of the parallel loop N.
  const auto [n_begin, n_end] = LoopBounds(n, EvalTop(kernel_.loops[n], DType::kI64, "N extent"));
  llvm::Value* n_count = body_.CreateSub(n_end, n_begin, "", true, true);

  // out[n0, n0 + vectors * lanes) (or the one element n0 when vectors is 0) += the rows'
  // a[k] * rhs[k, n0 ...), row after row: each element's sum keeps the interpreter's order.
  // `out_row` and `row_ptrs` point at column 0 of the output and of the rows (both
  // contiguous along N): computed once per block, not once per column, because the
  // baseline tier runs no LICM here (its inner loop recomputed every row's address, a
  // multiply each, and ran the decode layer's 128 x 344 f32 products 20% slower than O2).
  auto accumulate = [&](llvm::Value* n0, int vectors, llvm::Value* out_row,
                        const std::vector<llvm::Value*>& row_ptrs,
                        const std::vector<llvm::Value*>& a) {
    llvm::Type* t = vectors > 0 ? vector_type : type;
    for (int j = 0; j < std::max(vectors, 1); ++j) {
      llvm::Value* column =
          j == 0 ? n0 : body_.CreateAdd(n0, i64(int64_t{j} * lanes), "", true, true);
      llvm::Value* out = body_.CreateInBoundsGEP(type, out_row, column);
      llvm::Value* acc = body_.CreateAlignedLoad(t, out, align);
      for (size_t u = 0; u < row_ptrs.size(); ++u) {
        llvm::Value* ptr = body_.CreateInBoundsGEP(type, row_ptrs[u], column);
        acc = MultiplyAdd(acc, a[u], body_.CreateAlignedLoad(t, ptr, align), dtype, false);
      }
      body_.CreateAlignedStore(acc, out, align);
    }
  };
  // Rows k0 .. k0 + count into the whole output row.
  auto rows_into_out = [&](llvm::Value* k0, int count) {
    std::vector<llvm::Value*> rows, a, splats, row_ptrs;
    loop_vars_[n] = i64(0);
    llvm::Value* out_row = TargetPtr(kernel_.out, out_indices);
    if (out_row == nullptr) return;
    for (int u = 0; u < count; ++u) {
      rows.push_back(u == 0 ? k0 : body_.CreateAdd(k0, i64(u), "", true, true));
      loop_vars_[k] = rows.back();
      a.push_back(lhs_at_k());
      splats.push_back(body_.CreateVectorSplat(lanes, a.back()));
      row_ptrs.push_back(TargetPtr(rhs->index, rhs->operands));
      if (row_ptrs.back() == nullptr) return;
    }
    loop_vars_[n] = nullptr;
    // Vectors in pairs, then the one left over, then single elements.
    auto vectors_at = [&](int per_step) {
      return [&, per_step](llvm::Value* v) {
        accumulate(body_.CreateAdd(n_begin, body_.CreateMul(v, i64(lanes), "", true, true), "",
                                   true, true),
                   per_step, out_row, row_ptrs, splats);
      };
    };
    llvm::Value* vectors = body_.CreateSDiv(n_count, i64(lanes));
    if (lean) {
      EmitLoop(vectors, n, [&] { vectors_at(1)(loop_vars_[n]); });
    } else {
      EmitBlockedLoop(vectors, n, 2, vectors_at(2), vectors_at(1));
    }
    llvm::Value* done = body_.CreateAdd(
        n_begin, body_.CreateMul(vectors, i64(lanes), "", true, true), "", true, true);
    EmitLoop(body_.CreateSub(n_end, done, "", true, true), n, [&] {
      accumulate(body_.CreateAdd(done, loop_vars_[n], "", true, true), 0, out_row, row_ptrs, a);
    });
    loop_vars_[n] = nullptr;
  };

  EmitLoopFrom(n_begin, n_end, n, [&] {
    StoreElement(kernel_.out, TargetPtr(kernel_.out, out_indices),
                 llvm::Constant::getNullValue(type));
  });
  EmitBlockedLoop(
      EvalTop(kernel_.loops[k], DType::kI64, "K extent"), k, jam_rows,
      [&](llvm::Value* first) { rows_into_out(first, jam_rows); },
      [&](llvm::Value* index) { rows_into_out(index, 1); });
}

}  // namespace graphjit::compiler::codegen_internal
