// Tiled products (MatmulOrder::kTiles): C[m, n] = sum_k A[m, k] * B[k, n] in register
// tiles of broadcast FMAs, the GotoBLAS / BLIS structure, generated for the kernel's own
// shapes and the host's vectors:
//
//   for n0 in blocks of NC columns:
//     for k0 in blocks of KC:
//       pack B[k0 .. k0+kc, n0 .. n0+nc] into panels of NR columns, zeros past N  (L2)
//       for mc0 in blocks of MC rows:
//         pack A[mc0 .. mc0+mc, k0 .. k0+kc] into tiles of MR rows, k-major (rows past M
//           repeat the last row)
//         for each panel (in L1), for each tile of A (from L2):
//           acc[MR][V] = k0 ? C : 0
//           for k < kc: acc[i][v] += splat(Ap[k][i]) * Bp[k][v]
//           store acc (lanes past N and rows past M masked off; N's last panel, part
//           full, has tiles of its vectors in N only)
//           (after the last block of k, acc through the epilogue first: a bias, an
//           activation, a residual: compiler/lower/fuse_epilogues.h)
//
// NR = V vectors. The tile (MR, V) keeps MR * V accumulators, V rhs vectors and a splat
// in the vector registers and is chosen for the product's constant M and N so that the
// fewest lanes are wasted at the edges (12 x 2 vectors, 8 x 3 or 6 x 4 with 32
// registers; 6 x 2, 4 x 3 or 3 x 4 with 16). Operands are packed per call (the rhs a vector
// at a time, from a buffer contiguous along n or a convolution's windows; the lhs as any
// expression of m and k, once per row block) unless they are weights packed into panels
// when the code was built (compiler/passes/packed_weights.h), read in place; the packing
// is in codegen_tile_packing.cc, what it shares with this file in tile_frame.h.
// Every element is summed over k in order, one FMA per term, whatever the tile, the
// blocks or the thread's row range: results are the same bits on any thread count.
// Explicit vector code: the baseline tier runs the same tiles as O2.
#include <algorithm>

#include "compiler/codegen/codegen_emitter.h"
#include "compiler/codegen/tile_frame.h"
#include "compiler/codegen/tiles_plan.h"
#include "compiler/lower/simplify_index.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Intrinsics.h"

namespace graphjit::compiler::codegen_internal {

using ir::DType;

namespace {

int64_t ConstantOr0(llvm::Value* v) {
  const auto* c = llvm::dyn_cast_or_null<llvm::ConstantInt>(v);
  return c == nullptr ? 0 : c->getSExtValue();
}

}  // namespace

// How many panels of packed weights ahead of the one in use the tiles prefetch.
constexpr int64_t kPrefetchPanels = 3;

bool KernelEmitter::EmitTiles() {
  const DType dtype = program_.buffers[kernel_.out].dtype;
  if (dtype != DType::kF32 && dtype != DType::kF64) return false;
  const size_t nb = kernel_.loops.size() - 3;
  const int m = static_cast<int>(nb), n = m + 1, k = m + 2;
  const auto& out_indices = kernel_.store_indices.empty() ? identity_ : kernel_.store_indices;
  const Expr* lhs = kernel_.lhs.get();
  const Expr* rhs = kernel_.rhs.get();
  if (lhs == nullptr || rhs == nullptr || lhs->dtype != dtype || rhs->dtype != dtype ||
      rhs->kind != ExprKind::kLoad || UsesLoopVar(lhs, n) || UsesLoopVar(rhs, m)) {
    return false;
  }
  // C contiguous along n (also in memory through indices that split n over an image's
  // rows), or at f(m) + g(n) (a fused epilogue writing a padded buffer's interior, rows
  // of an image with a border around them): then each vector of a tile is gathered and
  // scattered at lane offsets fixed per panel.
  const ExprPtr c_elem = Load(kernel_.out, dtype, out_indices);
  const bool scatter_c =
      !ContiguousAlongN(out_indices, n) &&
      !ConsecutiveInMemory(out_indices, program_.buffers[kernel_.out].dims, n, kernel_.loops);
  if (scatter_c && !SeparableLoad(c_elem.get(), m, n)) return false;
  const int64_t size = ir::DTypeSize(dtype);
  const int lanes = VectorBytes() / static_cast<int>(size);
  // Rows of at least a vector: each of C's vectors is at most two runs (see StoreLanes).
  const RowRunPlan c_run_plan = PlanRunsPerVector(c_elem.get(), n, lanes, 3);
  const bool c_runs = scatter_c && c_run_plan.runs == 2 && c_run_plan.stride == 1;
  // Weights packed into panels when the code was built, along `v` (n: orient_products' rhs;
  // m: pack_weight_rows' lhs), read in place: no pack of that operand per call.
  auto packed_width = [&](const Expr* e, int v) -> int64_t {
    return e->kind == ExprKind::kLoad ? PackedPanelWidth(e, program_.buffers[e->index].dims, v, k)
                                      : 0;
  };
  int64_t packed_nr = packed_width(rhs, n);
  if (packed_nr % lanes != 0 || packed_nr / lanes < 2 || packed_nr / lanes > 4) packed_nr = 0;
  // A convolution's windows, which lowering leaves in place (no im2col copy): the address
  // is f(n) + g(k), so each vector of a panel is gathered at offsets fixed per panel from a
  // base that moves with k (a plain load where the offsets are consecutive).
  const bool rhs_contiguous = ContiguousAlongN(rhs->operands, n);
  const bool gather_b = packed_nr == 0 && !rhs_contiguous && SeparableLoad(rhs, k, n);
  if (packed_nr == 0 && !rhs_contiguous && !gather_b) return false;
  // Gathered windows whose vectors are runs of consecutive (or every other) elements per
  // image row load them run by run (see the packing of B below).
  const RowRunPlan run_plan =
      gather_b ? PlanRunsPerVector(rhs, n, lanes, RowRuns::kMax) : RowRunPlan{0, 1};
  const bool prefetch_b = OutgrowsTheCaches(rhs->index);
  const bool pack_runs = run_plan.runs > 0;
  const int64_t m_const = ConstantOr0(EvalPrologue(kernel_.loops[m], "M extent"));
  const int64_t n_const = ConstantOr0(EvalPrologue(kernel_.loops[n], "N extent"));
  const int64_t k_const = ConstantOr0(EvalPrologue(kernel_.loops[k], "K extent"));
  if (failed()) return true;
  // The epilogue (fuse_epilogues) on each tile once its sums are complete, in vectors of
  // the tile's lanes along n, its loads of C (each element's sum) given from the
  // accumulators; otherwise EmitMatmul applies it in a pass of its own.
  const std::vector<const Expr*> epilogue_sums = LoadsOf(kernel_.epilogue.get(), kernel_.out);
  if (kernel_.epilogue != nullptr) {
    for (const Expr* sum : epilogue_sums) lane_values_[sum] = nullptr;  // planned as given
  }
  const bool tile_epilogue =
      kernel_.epilogue != nullptr &&
      PlanLanes(kernel_.epilogue, n, scatter_c ? nullptr : &out_indices, dtype, kernel_.out,
                /*at_o2=*/true) == lanes;
  lane_values_.clear();
  epilogue_applied_ = tile_epilogue;
  // What the epilogue streams in (a residual): a tile prefetches it before its last block
  // of k. Read after the FMAs, it missed to memory one tile at a time once activations
  // outgrew the caches (resnet50 at N = 8: a 1 x 1 convolution with its residual 2.2x its
  // time per image at N = 1, 1.1x without; 1.3x with the prefetch).
  const std::vector<const Expr*> streamed =
      tile_epilogue ? StreamedLoadsOf(kernel_.epilogue.get(), kernel_.out, n)
                    : std::vector<const Expr*>{};
  // A in panels of MR rows: its tiles, where the plan's tile has MR rows.
  int64_t packed_mr = packed_width(lhs, m);
  const TilePlan plan =
      PlanTiles(m_const, n_const, k_const, VectorBytes(), static_cast<int>(packed_nr / lanes),
                static_cast<int>(packed_mr), size);
  if (plan.rows != packed_mr) packed_mr = 0;
  const int rows = plan.rows, vectors = plan.vectors, edge_vectors = plan.edge_vectors;
  const int64_t nr = plan.nr, kc_max = plan.kc_max, tiles_total = plan.tiles_total;
  const int64_t nc_max = plan.nc_max, mc_max = plan.mc_max;
  const bool whole_a = plan.whole_a;
  const int64_t panels_max = nc_max / nr, tiles_max = mc_max / rows;
  TileFrame f;
  f.body = &body_;
  f.m = m, f.n = n, f.k = k;
  f.dtype = dtype, f.lhs = lhs, f.rhs = rhs, f.size = size, f.lanes = lanes, f.plan = plan;
  f.packed_nr = packed_nr, f.gather_b = gather_b, f.pack_runs = pack_runs, f.run_plan = run_plan;
  f.prefetch_b = prefetch_b;
  llvm::Type* type = f.type = ValueType(dtype);
  llvm::Type* vtype = f.vtype = llvm::FixedVectorType::get(type, lanes);
  const llvm::Align valign = f.valign = llvm::Align(VectorBytes());
  const llvm::Align ealign = f.ealign = llvm::Align(size);
  llvm::Type* i64 = body_.getInt64Ty();
  if (packed_nr == 0) {
    f.packed_b = prologue_.CreateAlloca(type, prologue_.getInt64(panels_max * kc_max * nr), "bp");
    f.packed_b->setAlignment(llvm::Align(64));
  }
  // A gathered B's row addresses for the block of k being packed (see PackTileB), where a
  // block has panels enough to repay them (a 14 x 14 map's 5 did not: 3% slower).
  f.b_rows = gather_b && panels_max >= 8;
  if (f.b_rows) {
    f.row_at = prologue_.CreateAlloca(body_.getPtrTy(), prologue_.getInt64(kc_max), "b_rows");
  }
  // Panels packed here are aligned to the vectors; a param's are to its elements.
  const llvm::Align b_align = packed_nr == 0 ? valign : ealign;
  // A whose rows are contiguous along k is packed a vector of k at a time, whose last
  // vector may run up to `lanes` rows of k past a tile.
  f.lhs_rows_contiguous = packed_mr == 0 && lhs->kind == ExprKind::kLoad &&
                          ContiguousAlongN(lhs->operands, k) && !UsesLoopVar(lhs, n);
  // Turned windows (orient_products) as A, at f(m) + g(k): a tile's rows are gathered
  // per k, at offsets fixed per tile.
  f.gather_a = packed_mr == 0 && !f.lhs_rows_contiguous && SeparableLoad(lhs, m, k);
  // Tile t of A at packed_a[t * a_stride * MR], k-major: the whole K of every tile when
  // whole_a, else one block of k of one row block (none for weights packed in place); past
  // the last, room for the vectors of k it packs past kc and a vector of rows past MR
  // (StoreGroup).
  const int64_t a_stride = whole_a ? k_const : kc_max;
  const int64_t a_tiles = packed_mr > 0 ? 0 : whole_a ? tiles_total : tiles_max;
  auto* packed_a = prologue_.CreateAlloca(
      type, prologue_.getInt64((a_tiles * a_stride + lanes) * rows + lanes), "ap");
  packed_a->setAlignment(llvm::Align(64));
  std::vector<llvm::AllocaInst*> acc;
  for (int i = 0; i < rows * vectors; ++i)
    acc.push_back(prologue_.CreateAlloca(vtype, nullptr, "acc"));
  llvm::Value* zero = f.zero = llvm::Constant::getNullValue(vtype);
  llvm::Type* ivtype = llvm::FixedVectorType::get(i64, lanes);
  std::vector<llvm::Constant*> iota_bytes;
  for (int j = 0; j < lanes; ++j) iota_bytes.push_back(llvm::ConstantInt::get(i64, j * size));
  llvm::Value* consecutive = f.consecutive = llvm::ConstantVector::get(iota_bytes);
  f.every_other = body_.CreateAdd(consecutive, consecutive);
  f.offset_slot = prologue_.CreateAlloca(ivtype, nullptr, "lane_offsets");
  f.offset_slot->setAlignment(llvm::Align(64));
  auto lane_offsets = [&](const Expr* e, int var, llvm::Value* origin, int count,
                          absl::FunctionRef<llvm::Value*(llvm::Value*)> var_at) {
    return LaneOffsets(e, var, origin, count, var_at, f.offset_slot);
  };
  EmitNest(0, nb, [&] {
    llvm::Value* m_extent = EvalTop(kernel_.loops[m], DType::kI64, "M extent");
    llvm::Value* n_extent = EvalTop(kernel_.loops[n], DType::kI64, "N extent");
    llvm::Value* k_extent = EvalTop(kernel_.loops[k], DType::kI64, "K extent");
    if (failed()) return;
    auto [m_begin, m_end] = LoopBounds(m, m_extent);
    auto [n_begin, n_end] = LoopBounds(n, n_extent);
    f.m_end = m_end, f.n_end = n_end;
    // C[m0 .. m0+MR, col0 .. col0+NR] (+)= A's tile (kc x MR at tile_a) times B's panel
    // (kc x NR at panel); rows from m_end on and columns from n_end on are not stored.
    // Scattered C: vector v's lane offsets from its panel's first column, and their runs
    // (set per panel).
    std::vector<llvm::Value*> c_offsets(vectors);
    std::vector<RowRuns> c_row_runs(vectors);
    // The same rows of the panel kPrefetchPanels on from this one (packed weights read in
    // place), or null: asked into L2 while this panel's tiles run (see below).
    llvm::Value* prefetch_panel = nullptr;
    // The next tile's rows of A's packed weights, or null: into L2 a line per k while this
    // tile runs, so the first panel's pass over a row block does not wait on memory.
    llvm::Value* prefetch_a = nullptr;
    // Over the panel's first `nv` vectors (its others are all past N).
    auto micro_tile = [&](llvm::Value* m0, llvm::Value* col0, llvm::Value* k0, llvm::Value* kc,
                          llvm::Value* tile_a, llvm::Value* panel, bool scattered, int nv) {
      llvm::Value* first_block = body_.CreateICmpEQ(k0, body_.getInt64(0));
      std::vector<llvm::Value*> c_ptr(rows * vectors), c_mask(rows * vectors);
      for (int i = 0; i < rows; ++i) {
        llvm::Value* row_in = body_.CreateICmpSLT(f.Add(m0, i), m_end);
        loop_vars_[m] = f.ClampedRow(m0, i);
        loop_vars_[n] = col0;
        llvm::Value* row_ptr = TargetPtr(kernel_.out, out_indices);
        if (row_ptr == nullptr) return;
        for (int v = 0; v < nv; ++v) {
          llvm::Value* col = f.Add(col0, int64_t{v} * lanes);
          c_ptr[i * vectors + v] = scattered ? row_ptr : f.InPanel(row_ptr, col, v);
          c_mask[i * vectors + v] = body_.CreateAnd(LanesBelow(lanes, body_.CreateSub(n_end, col)),
                                                    body_.CreateVectorSplat(lanes, row_in));
        }
      }
      if (failed()) return;
      // The first block of k starts from zeros without reading C: a load of every lane
      // masked off touches no memory, where one whose result was then dropped read all of
      // C from memory once more (products with one block of k, such as a 1 x 1
      // convolution's over 16 channels, are bound by C's traffic).
      llvm::Value* later_block = body_.CreateVectorSplat(lanes, body_.CreateNot(first_block));
      for (int t = 0; t < rows * vectors; ++t) {
        const int v = t % vectors;
        if (v >= nv) continue;
        llvm::Value* mask = body_.CreateAnd(c_mask[t], later_block);
        body_.CreateStore(scattered ? LoadLanes(vtype, c_ptr[t], c_offsets[v],
                                                c_runs ? &c_row_runs[v] : nullptr, mask)
                                    : body_.CreateMaskedLoad(vtype, c_ptr[t], ealign, mask, zero),
                          acc[t]);
      }
      llvm::Value* last_block = body_.CreateICmpEQ(body_.CreateAdd(k0, kc), k_extent);
      if (!streamed.empty()) {
        auto position = [&](int t) {
          loop_vars_[m] = f.ClampedRow(m0, t / nv);
          loop_vars_[n] = f.SafeColumn(f.Add(col0, int64_t{t % nv} * lanes), col0);
        };
        EmitIfElse(
            last_block, "prefetch_epilogue", [&] { PrefetchLoads(streamed, rows * nv, position); },
            [] {});
      }
      EmitCountedLoop(body_.getInt64(0), kc, 1, "tile_k", [&](llvm::Value* kk) {
        llvm::Value* b_row = f.At(panel, f.Mul(kk, nr));
        // A k step's MR values (48 or 96 bytes) and NR values, every line of them.
        if (prefetch_a != nullptr) Prefetch(f.At(prefetch_a, f.Mul(kk, rows)), rows * size);
        if (prefetch_panel != nullptr) Prefetch(f.At(prefetch_panel, f.Mul(kk, nr)), nr * size);
        std::vector<llvm::Value*> b(vectors);
        for (int v = 0; v < nv; ++v) {
          b[v] = body_.CreateAlignedLoad(vtype, f.At(b_row, body_.getInt64(int64_t{v} * lanes)),
                                         b_align);
        }
        llvm::Value* a_row = f.At(tile_a, f.Mul(kk, rows));
        for (int i = 0; i < rows; ++i) {
          llvm::Value* a = body_.CreateAlignedLoad(type, f.At(a_row, body_.getInt64(i)), ealign);
          llvm::Value* splat = body_.CreateVectorSplat(lanes, a);
          for (int v = 0; v < nv; ++v) {
            llvm::AllocaInst* slot = acc[i * vectors + v];
            body_.CreateStore(body_.CreateIntrinsic(llvm::Intrinsic::fma, {vtype},
                                                    {splat, b[v], body_.CreateLoad(vtype, slot)}),
                              slot);
          }
        }
      });
      // The sums stored; after the last block of k, through the epilogue first, its loads
      // of C taken from the accumulators.
      // Where masked stores are slow, a tile with every lane in C stores plain vectors.
      const bool whole_tiles = !scattered && MaskedStoresAreSlow();
      auto store_tile = [&](bool epilogue) {
        std::vector<llvm::Value*> ys(rows * vectors);
        for (int i = 0; i < rows; ++i) {
          for (int v = 0; v < nv; ++v) {
            const int t = i * vectors + v;
            llvm::Value* y = body_.CreateLoad(vtype, acc[t]);
            if (epilogue) {
              loop_vars_[m] = f.ClampedRow(m0, i);
              loop_vars_[n] = f.SafeColumn(f.Add(col0, int64_t{v} * lanes), col0);
              for (const Expr* sum : epilogue_sums) lane_values_[sum] = y;
              y = EvalLanes(kernel_.epilogue, n, lanes, c_mask[t]);
              lane_values_.clear();
              if (failed()) return;
            }
            if (whole_tiles) {
              ys[t] = y;
            } else if (!scattered) {
              body_.CreateMaskedStore(y, c_ptr[t], ealign, c_mask[t]);
            } else {
              StoreLanes(y, c_ptr[t], c_offsets[v], c_runs ? &c_row_runs[v] : nullptr, c_mask[t]);
            }
          }
        }
        if (!whole_tiles) return;
        llvm::Value* whole =
            body_.CreateAnd(body_.CreateICmpSLE(f.Add(m0, rows), m_end),
                            body_.CreateICmpSLE(f.Add(col0, int64_t{nv} * lanes), n_end));
        auto store = [&](bool masked) {
          for (int t = 0; t < rows * vectors; ++t) {
            if (ys[t] == nullptr) continue;
            if (masked) {
              body_.CreateMaskedStore(ys[t], c_ptr[t], ealign, c_mask[t]);
            } else {
              body_.CreateAlignedStore(ys[t], c_ptr[t], ealign);
            }
          }
        };
        EmitIfElse(whole, "c_whole", [&] { store(false); }, [&] { store(true); });
      };
      if (!tile_epilogue) {
        store_tile(false);
        return;
      }
      EmitIfElse(last_block, "epilogue", [&] { store_tile(true); }, [&] { store_tile(false); });
    };
    if (whole_a) {
      llvm::Value* tiles =
          body_.CreateUDiv(f.Add(body_.CreateSub(m_end, m_begin), rows - 1), body_.getInt64(rows));
      EmitCountedLoop(body_.getInt64(0), tiles, 1, "pack_whole_a", [&](llvm::Value* t) {
        PackTileA(f, body_.CreateAdd(m_begin, f.Mul(t, rows)), body_.getInt64(0), k_extent,
                  f.At(packed_a, f.Mul(f.Mul(t, a_stride), rows)));
      });
    }
    EmitCountedLoop(n_begin, n_end, nc_max, "n0", [&](llvm::Value* n0) {
      llvm::Value* nc = f.Smin(body_.getInt64(nc_max), body_.CreateSub(n_end, n0));
      llvm::Value* panels = body_.CreateUDiv(f.Add(nc, nr - 1), body_.getInt64(nr));
      EmitCountedLoop(body_.getInt64(0), k_extent, kc_max, "k0", [&](llvm::Value* k0) {
        llvm::Value* kc = f.Smin(body_.getInt64(kc_max), body_.CreateSub(k_extent, k0));
        // Pack B (unless packed already): PackTileB.
        if (packed_nr == 0) PackTileB(f, n0, k0, kc, panels);
        // Row blocks of MC rows: A's block packed, then every panel of B (in L1) against
        // every row tile of it (A's tiles from L2).
        EmitCountedLoop(m_begin, m_end, mc_max, "mc0", [&](llvm::Value* mc0) {
          llvm::Value* block_end = f.Smin(f.Add(mc0, mc_max), m_end);
          llvm::Value* tiles = body_.CreateUDiv(f.Add(body_.CreateSub(block_end, mc0), rows - 1),
                                                body_.getInt64(rows));
          // Tile t of this row block: packed now (one block of k), or once per call.
          llvm::Value* first_tile =
              whole_a ? body_.CreateUDiv(body_.CreateSub(mc0, m_begin), body_.getInt64(rows))
                      : body_.getInt64(0);
          auto tile_a_at = [&](llvm::Value* t, llvm::Value* k_offset) {
            if (packed_mr > 0) {  // row k_offset of the weights' panel of this tile's rows
              loop_vars_[m] = body_.CreateAdd(mc0, f.Mul(t, rows));
              loop_vars_[k] = k_offset;
              return TargetPtr(lhs->index, lhs->operands);
            }
            return f.At(
                packed_a,
                f.Mul(body_.CreateAdd(f.Mul(body_.CreateAdd(first_tile, t), a_stride), k_offset),
                      rows));
          };
          if (!whole_a && packed_mr == 0) {
            EmitCountedLoop(body_.getInt64(0), tiles, 1, "pack_t", [&](llvm::Value* t) {
              PackTileA(f, body_.CreateAdd(mc0, f.Mul(t, rows)), k0, kc,
                        tile_a_at(t, body_.getInt64(0)));
            });
          }
          EmitCountedLoop(body_.getInt64(0), panels, 1, "tile_p", [&](llvm::Value* p) {
            llvm::Value* col0 = body_.CreateAdd(n0, f.Mul(p, nr));
            llvm::Value* c_consecutive = body_.getTrue();
            if (scatter_c) {  // C's lane offsets for this panel, from its first column
              loop_vars_[m] = mc0;
              for (int v = 0; v < vectors; ++v) {
                llvm::Value* col = f.Add(col0, int64_t{v} * lanes);
                c_offsets[v] = lane_offsets(c_elem.get(), n, col0, lanes, [&](llvm::Value* j) {
                  return f.SafeColumn(body_.CreateAdd(col, j), col0);
                });
                if (c_offsets[v] == nullptr) return;
                if (c_runs) {
                  c_row_runs[v] =
                      PlanRowRuns(c_offsets[v], LanesBelow(lanes, body_.CreateSub(n_end, col)),
                                  consecutive, size, 2);
                }
                c_consecutive = body_.CreateAnd(
                    c_consecutive, ConsecutiveLanes(c_offsets[v], lanes, int64_t{v} * lanes, size));
              }
            }
            llvm::Value* panel = nullptr;
            if (packed_nr == 0) {
              panel = f.At(f.packed_b, f.Mul(f.Mul(p, kc_max), nr));
            } else {  // the packed weights' panel col0 / NR from row k0 (col0 is a multiple)
              loop_vars_[n] = col0;
              loop_vars_[k] = k0;
              panel = TargetPtr(rhs->index, rhs->operands);
              if (panel == nullptr) return;
              // Packed weights larger than L2 (a CNN's late layers: 9.4 MB for a 3 x 3
              // over 512 channels) come from memory once per call, a panel at a time, and
              // the hardware's stream prefetcher stops at every 4 KiB page of them; asked
              // for three panels ahead, they arrive in L2 in time. resnet18's 7 x 7 layers
              // 3.1 -> 2.1 ms (1 panel ahead 2.2, 2 panels 2.1, 4 panels 1.9-2.2 on a
              // noisier minute); the lines already there cost a load slot each.
              llvm::Value* ahead = f.Add(col0, kPrefetchPanels * nr);
              loop_vars_[n] = body_.CreateSelect(body_.CreateICmpSLT(ahead, n_end), ahead, col0);
              prefetch_panel = TargetPtr(rhs->index, rhs->operands);
            }
            EmitCountedLoop(body_.getInt64(0), tiles, 1, "tile_m", [&](llvm::Value* t) {
              llvm::Value* m0 = body_.CreateAdd(mc0, f.Mul(t, rows));
              llvm::Value* tile_a = tile_a_at(t, whole_a || packed_mr > 0 ? k0 : body_.getInt64(0));
              if (tile_a == nullptr) return;
              if (packed_mr > 0) {  // the next tile's, or this one's at M's end
                llvm::Value* next = body_.CreateSelect(body_.CreateICmpSLT(f.Add(m0, rows), m_end),
                                                       body_.CreateAdd(t, body_.getInt64(1)), t);
                prefetch_a = tile_a_at(next, k0);
                if (prefetch_a == nullptr) return;
              }
              // N's last panel, where it is part full, computes its vectors in N only.
              auto panel_tiles = [&](bool scattered) {
                if (scattered || edge_vectors == 0) {
                  return micro_tile(m0, col0, k0, kc, tile_a, panel, scattered, vectors);
                }
                llvm::Value* rest = body_.CreateSub(n_end, col0);
                EmitIfElse(
                    body_.CreateICmpSLE(rest, body_.getInt64(edge_vectors * lanes)), "c_edge",
                    [&] { micro_tile(m0, col0, k0, kc, tile_a, panel, false, edge_vectors); },
                    [&] { micro_tile(m0, col0, k0, kc, tile_a, panel, false, vectors); });
              };
              // A panel whose C lanes are consecutive (no image row ends inside it) takes
              // plain vector loads and stores; the others gather and scatter.
              if (!scatter_c) return panel_tiles(false);
              EmitIfElse(
                  c_consecutive, "c_rows", [&] { panel_tiles(false); }, [&] { panel_tiles(true); });
            });
          });
        });
      });
    });
    loop_vars_[m] = loop_vars_[n] = loop_vars_[k] = nullptr;
  });
  return true;
}

}  // namespace graphjit::compiler::codegen_internal
