// Internal to compiler/codegen: the per-kernel IR emitter shared by codegen.cc (module,
// loops, buffers), the files of kernel bodies (named at the Emit hooks below) and
// codegen_expr.cc (scalar expressions).
#ifndef GRAPHJIT_COMPILER_CODEGEN_CODEGEN_EMITTER_H_
#define GRAPHJIT_COMPILER_CODEGEN_CODEGEN_EMITTER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "compiler/codegen/native_code.h"
#include "compiler/codegen/tiles_plan.h"
#include "compiler/lower/kernel_ir.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace graphjit::compiler::codegen_internal {

struct TileFrame;  // tile_frame.h

// Whether the host has FMA instructions (llvm.fma is then one instruction, not a call).
bool HostHasFma();
// The host's widest vector in bytes (AVX-512: 64, AVX / AVX2: 32, else 16).
int HostVectorBytes();
// One-strip products (EmitTiledAxpy's P @ V, the fused attention's): the query heads of
// one KV head to run per pass with `width` accumulators each, while their strips, a row
// of the rhs and a splat fit the `registers` vector registers (at most 4).
int StripHeads(int width, int registers);
// The accumulator sets to split the positions (k) of a one-strip product into, round
// robin, when its `chains` independent FMA chains (heads x width) are too few to hide
// the FMA latency: up to 4, while the sets, a row of the rhs and a splat fit the
// `registers` vector registers.
int AccumulatorSets(int chains, int width, int registers);
// The type sums of `dtype` accumulate in: f64 for f32, as the interpreter's kernels and
// program_eval do (OPS.md), so partial sums of large f32 values that overflow f32 stay
// finite; the dtype itself otherwise.
ir::DType SumType(ir::DType dtype);
// Consecutive n give consecutive elements: the last index is n itself and no other
// index mentions n (buffers are row-major with a unit stride in their last dim).
bool ContiguousAlongN(const std::vector<ExprPtr>& indices, int n);

// Emits the body of one kernel function `void(ptr args, ptr symbols, ptr workspace)`.
// Validation happens on the way: the first inconsistency is recorded (naming the kernel)
// and emission goes on with poison values of the right type, so the IR stays well typed
// and nothing crashes; the caller discards the module when Emit() fails.
class KernelEmitter {
 public:
  KernelEmitter(const Program& program, const Kernel& kernel, llvm::Function* function,
                const CompileOptions& options);
  absl::Status Emit();

 private:
  // A buffer as seen from the kernel: base pointer and row-major element strides,
  // computed once in the prologue on first use.
  struct BufferAccess {
    bool ready = false;
    bool failed = false;
    llvm::Value* base = nullptr;
    std::vector<llvm::Value*> strides;
  };

  template <typename... Args>
  void Fail(const Args&... args) {
    if (status_.ok()) {
      status_ = absl::InternalError(absl::StrCat("kernel '", kernel_.name, "': ", args...));
    }
  }
  bool failed() const { return !status_.ok(); }

  llvm::Type* ValueType(ir::DType dtype);   // bool is i1 in registers
  llvm::Type* MemoryType(ir::DType dtype);  // and i8 in memory
  llvm::Value* Poison(ir::DType dtype) { return llvm::PoisonValue::get(ValueType(dtype)); }

  // With kernel_.out_exclusive, tells LLVM (scoped noalias metadata) that no access of
  // another buffer overlaps a buffer the kernel writes, so the vectorizer needs no
  // run-time overlap check (which failed, and ran the scalar loop, in kernels reading a
  // row's max or sum), and loads shared by jammed heads are not redone after a store.
  void AddOutAliasScope();
  // --- one emitter per kernel kind, declared from compiler/lower/kernel_kinds.def (a kind
  // without a definition fails to link): EmitPointwise, EmitReduce, EmitArgReduce (best
  // value and its index) and EmitScan (running sums, stored at every step) in
  // codegen_kernels.cc; EmitMatmul in codegen_matmul.cc; EmitExternMatmul (per batch, a
  // call to the runtime's BLAS helper) in codegen_extern_matmul.cc; EmitAttention (an
  // online softmax per row block) in codegen_attention.cc.
#define GJ_KERNEL_KIND(name, ...) void Emit##name();
#include "compiler/lower/kernel_kinds.def"
#undef GJ_KERNEL_KIND
  // --- matmuls (codegen_matmul.cc; the tiled dot in codegen_dot.cc)
  // The product's sums into out, by the kernel's order (EmitMatmul then applies an
  // epilogue the product's stores did not: epilogue_applied_).
  void EmitProduct();
  bool epilogue_applied_ = false;
  // kDot over a constant K of at most a few vectors (attention's q @ K^T, K = head dim),
  // with lhs and rhs contiguous along k: blocks of one vector's width of n, whose dots
  // are reduced together into one vector and stored at once, for SharedRhsJam() heads
  // at a time. False, with nothing emitted, where it does not apply.
  bool EmitTiledDot();
  // Where the tiled dot applies (lhs and rhs loads contiguous along k = the last loop, K
  // a constant of at most a few vectors, lhs not depending on n): the vector width in
  // elements and K in vectors.
  struct DotTiling {
    int lanes = 0;
    int k_vectors = 0;
  };
  std::optional<DotTiling> PlanTiledDot();
  // The dots at n = n0 .. n0 + count (count = lanes, or 1) of `heads` jammed heads from
  // `first`, each head's stored at once (one vector, or one element) into buffer `target`
  // at `indices` evaluated with n = n0.
  void EmitDotVectors(const DotTiling& t, llvm::Value* first, int heads, llvm::Value* n0, int count,
                      int target, const std::vector<ExprPtr>& indices);
  // Heads a tiled dot runs per pass over the rhs (their lhs vectors stay in registers).
  int MaxDotHeads();
  // The vectors codegen's own vector code uses (CompileOptions::max_vector_bytes within
  // the host's) and how many registers of that width it counts on (32 for 64-byte
  // vectors, else 16).
  int VectorBytes() const;
  int VectorRegisters() const { return RegistersFor(VectorBytes()); }
  // Whether a masked store of these vectors may cost far more than a plain one: below
  // 64 bytes they may be AVX's vmaskmovps, microcoded on AMD's Zen 1 to 3 (42 uops, one
  // per 12 cycles on Zen 3 by llvm-mca -mcpu=znver3), where AVX-512's masked stores cost
  // a store. Then whole tiles, blocks and a row's rest of constant length store plain
  // vectors (on AVX-512 hosts with 32-byte vectors too, where it costs nothing).
  bool MaskedStoresAreSlow() const { return VectorBytes() < 64; }
  // --- tiled products (codegen_tiles.cc; the packing of their operands in
  // codegen_tile_packing.cc)
  // kTiles: register tiles of broadcast FMAs over packed panels of both operands. False,
  // with nothing emitted, where it does not apply (ints, out not contiguous along n): the
  // caller then emits the axpy loops.
  bool EmitTiles();
  // Packs A's tile at row m0, k from k0 + [0, kc), into tile_a (k-major, MR values per
  // k; rows past M repeat the last row). In codegen_tile_packing.cc, as is the next.
  void PackTileA(const TileFrame& f, llvm::Value* m0, llvm::Value* k0, llvm::Value* kc,
                 llvm::Value* tile_a);
  // Packs B's block of columns from n0 (`panels` panels of NR) and rows k0 + [0, kc)
  // into f.packed_b, panel p's row kk at [(p * KC + kk) * NR], zeros past N.
  // Stores lanes `group_lanes` of x, a group of a tile's rows at one k, at dst in A's tile
  // (PackTileA's stores).
  void StoreGroup(const TileFrame& f, llvm::Value* x, llvm::Value* dst, llvm::Value* group_lanes);
  void PackTileB(const TileFrame& f, llvm::Value* n0, llvm::Value* k0, llvm::Value* kc,
                 llvm::Value* panels);
  // --- shared with attention (codegen_matmul.cc)
  // How many iterations of the batch loop just outside m to run per pass (1: none), at
  // most max_jam and dividing its constant extent, when rhs does not depend on that loop
  // and lhs does: attention's query heads of one KV head, which then share each rhs load.
  int SharedRhsJam(int max_jam);
  // The batch loops and m, with the loop just outside m in blocks of `jam`:
  // body(first, count) runs at each (batch.., m) for that loop's iterations first ..
  // first + count (first is null, count 1, when jam is 1: the loop is then the nest's).
  void EmitJammedNest(int jam, absl::FunctionRef<void(llvm::Value*, int)> body);
  // Binds the jammed loop's variable to first + u (nothing when first is null).
  void SetJamIndex(llvm::Value* first, int u);
  // kAxpy with output strips held in vector registers across the k loop. False, with
  // nothing emitted, where it does not apply (rhs or out not contiguous along n, ints).
  bool EmitTiledAxpy();
  // The rows part of a tiled axpy wider than one strip, at the current batch and m
  // position: kJamRows rows of the weight at a time, in order, into the output row, with
  // `lanes` elements per vector and lhs_at_k() the lhs at loop_vars_[k].
  void EmitJammedRows(int lanes, absl::FunctionRef<llvm::Value*()> lhs_at_k);
  // acc + a * b: one llvm.fma on FMA hosts for ordered sums (so every loop order rounds
  // alike); `reassoc` (a dot product) instead lets the sum split into lanes, contracted.
  llvm::Value* MultiplyAdd(llvm::Value* acc, llvm::Value* a, llvm::Value* b, ir::DType dtype,
                           bool reassoc);
  // for (i = 0; i < extent; ++i) with i bound to loop variable `var` while `body` runs;
  // the builder continues after the loop.
  void EmitLoop(llvm::Value* extent, int var, absl::FunctionRef<void()> body);
  // The same for i in [begin, end).
  void EmitLoopFrom(llvm::Value* begin, llvm::Value* end, int var, absl::FunctionRef<void()> body);
  // for (iv = begin; iv < end; iv += step) body(iv), its blocks named after `name`, not
  // bound to a loop variable (EmitLoopFrom binds one); returns the back edge.
  llvm::BranchInst* EmitCountedLoop(llvm::Value* begin, llvm::Value* end, int64_t step,
                                    const std::string& name,
                                    absl::FunctionRef<void(llvm::Value*)> body);
  // if (cond) then_arm() else else_arm(), its blocks named after `name`; the builder
  // continues after both.
  void EmitIfElse(llvm::Value* cond, const std::string& name, absl::FunctionRef<void()> then_arm,
                  absl::FunctionRef<void()> else_arm);
  // Attaches loop hint `hint` (e.g. !{"llvm.loop.unroll.disable"}) to the loop whose back
  // edge is `back` (EmitCountedLoop's result).
  void SetLoopHint(llvm::BranchInst* back, llvm::MDNode* hint);
  // Loops over `var` emitted while the result lives are the ones the baseline tier's loop
  // vectorizer takes (`llvm.loop.vectorize.enable`; it takes no others, see
  // compiler/orc/optimize_module.cc): maps and reductions over a contiguous axis whose
  // vector code codegen does not write itself. The O2 tier's vectorizer chooses alone.
  class VectorizeLoops {
   public:
    VectorizeLoops(KernelEmitter* emitter, int var)
        : emitter_(emitter), saved_(emitter->vectorize_var_) {
      emitter->vectorize_var_ = var;
    }
    ~VectorizeLoops() { emitter_->vectorize_var_ = saved_; }

   private:
    KernelEmitter* emitter_;
    int saved_;
  };
  // The iterations of loop `var` (of extent `extent`) this call runs: [0, extent), or for
  // the kernel's parallel loop in a unit with a range, [begin, min(end, extent)).
  std::pair<llvm::Value*, llvm::Value*> LoopBounds(int var, llvm::Value* extent);
  // EmitLoop over LoopBounds(var, extent): every loop over the output's own iterations
  // (not a block index, not a reduction) is emitted through it.
  void EmitRangedLoop(llvm::Value* extent, int var, absl::FunctionRef<void()> body);
  // Loop variable `var` over [start, extent) (start null: 0) in blocks of `block`:
  // whole(first) for each whole block, then rest(index) for each index past the last
  // whole block.
  void EmitBlockedLoop(llvm::Value* extent, int var, int64_t block,
                       absl::FunctionRef<void(llvm::Value*)> whole,
                       absl::FunctionRef<void(llvm::Value*)> rest, llvm::Value* start = nullptr);
  // The same blocks, then tail(first, left) once for the `left` (> 0, maybe not a
  // constant) indices past the last whole block, where there are any.
  void EmitBlocks(llvm::Value* extent, int var, int64_t block,
                  absl::FunctionRef<void(llvm::Value*)> whole,
                  absl::FunctionRef<void(llvm::Value*, llvm::Value*)> tail,
                  llvm::Value* start = nullptr);
  // EmitBlockedLoop over LoopBounds(var, extent).
  void EmitRangedBlockedLoop(llvm::Value* extent, int var, int64_t block,
                             absl::FunctionRef<void(llvm::Value*)> whole,
                             absl::FunctionRef<void(llvm::Value*)> rest);
  // Nested loops over kernel_.loops[depth, end) (loop variable = loop position).
  void EmitNest(size_t depth, size_t end, absl::FunctionRef<void()> body);
  llvm::Value* Symbol(int index);
  const BufferAccess* Access(int buffer);
  // Element address; `indices` are evaluated at the current position (memo kept).
  llvm::Value* ElementPtr(int buffer, const std::vector<ExprPtr>& indices);
  // The same as a fresh evaluation (a store target, not part of an expression).
  llvm::Value* TargetPtr(int buffer, const std::vector<ExprPtr>& indices);
  llvm::Value* LoadElement(int buffer, llvm::Value* ptr);
  void StoreElement(int buffer, llvm::Value* ptr, llvm::Value* value);
  llvm::AllocaInst* Accumulator(ir::DType dtype);

  // --- explicit vectors for maps and reductions (codegen_lanes.cc), the baseline tier's
  // in place of LLVM's loop vectorizer.
  // How an expression varies along loop `var`: not at all (evaluated once, then splat),
  // lane by lane (consecutive elements of `var`), or in a way one vector cannot hold (a
  // gather, a call without a vector form, a guarded load): then the loop stays scalar.
  enum class LaneClass : uint8_t { kUniform, kVarying, kNo };
  LaneClass ClassifyLanes(const Expr* e, int var);
  // The lanes to evaluate `value` with along loop `var` (the innermost loop of a map, the
  // reduced loop of a reduction), storing to `store_indices` when given (null: a
  // reduction's accumulator, of `acc_dtype`): the host's vector bytes over the widest
  // element involved; 0 where the loop must stay scalar. `in_place`: a buffer the loop
  // writes, each lane at the element it reads (attention's scores), or -1.
  // At the O2 tier only where `at_o2` (maps: LLVM's vectorizer interleaves stride-2 loads
  // into half-width vectors and shuffles, takes NaN-propagating clamps element by element
  // and leaves short rows' rests scalar; mobilenet_v2 ran 13% faster on codegen's own
  // vectors), else 0, leaving the loop to LLVM's vectorizer.
  int PlanLanes(const ExprPtr& value, int var, const std::vector<ExprPtr>* store_indices,
                ir::DType acc_dtype, int in_place = -1, bool at_o2 = false);
  // `value` at loop_vars_[var] .. + lanes - 1 as one vector (loop_vars_[var] bound to the
  // first), after PlanLanes said `lanes`.
  llvm::Value* EvalLanes(const ExprPtr& value, int var, int lanes, llvm::Value* mask = nullptr);
  // Under `mask` (null: all lanes), the lanes a select's arm is taken in: its loads read
  // only those lanes (a guarded load may be out of bounds in the others).
  llvm::Value* LanesOf(const Expr& e, int var, int lanes, llvm::Value* mask);
  // The lanes i of a vector of `lanes` with i (modulo `period`, where > 0) below `count`.
  llvm::Value* LanesBelow(int lanes, llvm::Value* count, int period = 0);
  // With row_parts_: `part(width, part_mask)` for each row part at its row (width: a part's
  // lanes; part_mask: that part's lanes of `mask`, or null), concatenated into one vector of
  // `lanes`.
  llvm::Value* ConcatParts(int lanes, llvm::Value* mask,
                           absl::FunctionRef<llvm::Value*(int, llvm::Value*)> part);
  // Whether `e` (in an arm of a varying select) has a load evaluated once for all lanes,
  // which a mask cannot guard.
  bool HasUniformLoad(const Expr* e);
  // The widest element (bytes) of the varying values of `e`, outside load indices.
  int64_t WidestLane(const Expr* e);
  // `lanes` consecutive elements of `buffer` from `ptr` (bools: i8 in memory, i1 here).
  llvm::Value* LoadLanes(int buffer, llvm::Value* ptr, int lanes, llvm::Value* mask);
  // LanesOf a select whose condition is uniform: a branch to the taken arm's vectors.
  llvm::Value* UniformSelectLanes(const Expr& e, int var, int lanes, llvm::Value* mask);
  // Elements ptr[0], ptr[2], .. ptr[2 * (lanes - 1)] as one vector: a wide masked load
  // and a shuffle of its even lanes (`mask`, when given, per result lane).
  llvm::Value* LoadEveryOtherLane(int buffer, llvm::Value* ptr, int lanes, llvm::Value* mask);
  // `value`'s lanes to consecutive elements from `ptr`; with a mask, only its lanes. This
  // and the next three are in codegen_lane_stores.cc.
  void StoreLanes(int buffer, llvm::Value* ptr, llvm::Value* value, llvm::Value* mask = nullptr);
  // The lanes of `value` in `mask` from `ptr`: a masked store, or where MaskedStoresAreSlow
  // and the mask is a constant's lanes below a count (a row's rest), StorePrefix.
  void StoreMasked(llvm::Value* value, llvm::Value* ptr, llvm::Align align, llvm::Value* mask);
  // The count of a constant mask of the lanes j < count; nullopt for any other mask.
  static std::optional<int> ConstantPrefix(llvm::Value* mask);
  // Lanes j < count of `value` from `ptr` as plain stores of power-of-two pieces, largest
  // first: 6 of 8 lanes as 4 and 2.
  void StorePrefix(llvm::Value* value, llvm::Value* ptr, llvm::Align align, int count);
  // The byte offsets of `e`'s elements j < count (<= the lanes of `slot`, an i64 vector
  // alloca) along loop variable `var`, element j at var = var_at(j), from its element at
  // var = origin (the other loop variables as set): an i64 vector, 0 past count. Null if
  // an address cannot be formed. These three are in codegen_tile_lanes.cc.
  llvm::Value* LaneOffsets(const Expr* e, int var, llvm::Value* origin, int count,
                           absl::FunctionRef<llvm::Value*(llvm::Value*)> var_at,
                           llvm::AllocaInst* slot);
  // A vector's lanes as runs of consecutive elements (a window's positions across an
  // image's rows): run r is the lanes in mask[r], at byte `shift[r]` from the base plus
  // lane * element size; `complete` (i1) says every lane of `in` is in a run.
  struct RowRuns {
    static constexpr int kMax = 4;  // a 16-lane vector across rows of 6 or more
    llvm::Value* mask[kMax] = {};
    llvm::Value* shift[kMax] = {};
    llvm::Value* complete = nullptr;
  };
  // The runs of the lanes in `in` (an i1 vector) whose byte offsets from a base are
  // `offsets` (i64 lanes); `consecutive` holds lane j's j * `element_bytes`.
  // Plans `count` (<= kMax) runs.
  RowRuns PlanRowRuns(llvm::Value* offsets, llvm::Value* in, llvm::Value* consecutive,
                      int64_t element_bytes, int count);
  // The lanes of `passthru` under `mask` replaced by elements ptr[j * stride] (stride 1:
  // one masked load; 2: two and a shuffle of their even elements), each element read only
  // where its lane is in the mask.
  llvm::Value* LoadRun(llvm::Type* vtype, llvm::Value* ptr, llvm::Value* mask, int stride,
                       llvm::Value* passthru);
  // A vector by its first `count` runs from `base` (each run's lanes at its shift plus
  // lane * `stride` elements, LoadRun), only lanes also in `mask` where given; zero
  // elsewhere.
  llvm::Value* LoadRuns(llvm::Type* vtype, llvm::Value* base, const RowRuns& runs, int count,
                        int stride, llvm::Value* mask);
  // A vector of elements at `base` + `offsets` (bytes) under `mask` (zero elsewhere), and
  // its store: by `runs` (two of them: a vector of C across one row end of a padded
  // buffer's interior) where runs->complete holds, one masked load or store per run, else
  // by a gather or scatter (always, without runs). A scatter of 16 lanes cost more than
  // the pass it fused on AMD's Zen 5, where two masked stores cost two stores.
  llvm::Value* LoadLanes(llvm::Type* vtype, llvm::Value* base, llvm::Value* offsets,
                         const RowRuns* runs, llvm::Value* mask);
  void StoreLanes(llvm::Value* y, llvm::Value* base, llvm::Value* offsets, const RowRuns* runs,
                  llvm::Value* mask);
  // The loads of `buffer` in `e` (null: none), not looking inside them.
  static std::vector<const Expr*> LoadsOf(const Expr* e, int buffer);
  // The loads in `e` of buffers other than `skip` whose element moves with loop `var` and
  // whose indices load nothing (a residual's element next to the product's), outside any
  // select's arms, each once: the data an epilogue streams in.
  std::vector<const Expr*> StreamedLoadsOf(const Expr* e, int skip, int var);
  // Whether lane offsets `offsets` (bytes, of `count` lanes) are those of consecutive
  // elements of `element_bytes` from element `from` on (an i1).
  llvm::Value* ConsecutiveLanes(llvm::Value* offsets, int count, int64_t from,
                                int64_t element_bytes);
  // Prefetches into L1 the element each of `loads` reads at each of `count` positions,
  // `position(i)` setting the loop variables of the i-th.
  void PrefetchLoads(const std::vector<const Expr*>& loads, int count,
                     absl::FunctionRef<void(int)> position);
  // Whether `buffer` (of constant dims) is too large to have stayed in the caches since it
  // was written: more than four times this host's L2.
  bool OutgrowsTheCaches(int buffer) const;
  // Software prefetches (reads of data) of the lines of `bytes` bytes from `address`, one
  // per 64 bytes, into L2 (locality 2) or L1 (3).
  void Prefetch(llvm::Value* address, int64_t bytes, int locality = 2);
  // Vectors r[0..lanes) of `lanes` lanes as their transpose: vector j of the result holds
  // lane j of every input.
  std::vector<llvm::Value*> TransposeLanes(std::vector<llvm::Value*> r);
  // A vector's lanes folded into one value by `combine`, halves at a time.
  llvm::Value* CombineLanes(llvm::Value* v,
                            absl::FunctionRef<llvm::Value*(llvm::Value*, llvm::Value*)> combine);
  // A map's innermost loop in vectors of `lanes` and a scalar rest.
  void EmitPointwiseLanes(int lanes);
  // A map that reads a buffer transposed (consecutive along an outer loop, not the
  // innermost) in square blocks transposed in registers (codegen_transposed_lanes.cc);
  // false (nothing emitted) where the map is not one.
  bool EmitTransposedLanes();
  // A reduction's loop over [0, extent) at the current position: value vectors into
  // a few accumulators (from `init`) per block, then single vectors, then
  // scalar_step(index) for the rest; returns the accumulators' lanes combined (in a tree,
  // then halves) into one value. `combine(acc, value)` takes vectors of the accumulator's
  // type and of the value's.
  llvm::Value* EmitReduceLanes(int lanes, llvm::Value* extent, llvm::Value* init,
                               absl::FunctionRef<llvm::Value*(llvm::Value*, llvm::Value*)> combine,
                               absl::FunctionRef<void(llvm::Value*)> scalar_step);
  // A reduction whose reduced loop reads memory a vector cannot (a sum over the channels
  // of NCHW, at a stride of H * W) as vectors of outputs instead: along the last output
  // loop of more than one iteration, each lane summing its own output over the whole
  // reduced loop in index order. False (nothing emitted) where that loop's outputs and
  // reads are not consecutive. `combine` as for EmitReduceLanes.
  bool EmitReduceOutputLanes(llvm::Value* init,
                             absl::FunctionRef<llvm::Value*(llvm::Value*, llvm::Value*)> combine);

  // --- expressions (codegen_expr.cc)
  // Evaluates `e` (expected dtype `want`) at the builder's position with a fresh memo.
  llvm::Value* EvalTop(const ExprPtr& e, ir::DType want, absl::string_view what);
  // The same in the prologue (buffer dims and offsets): no loop variables, no loads.
  llvm::Value* EvalPrologue(const ExprPtr& e, absl::string_view what);
  bool CheckTree(const ExprPtr& e, absl::string_view what);
  bool ContainsLoad(const Expr* e);
  llvm::Value* EvalOperand(const ExprPtr& e, ir::DType want, bool index);
  llvm::Value* Eval(const Expr& e, bool index);
  llvm::Value* EvalUncached(const Expr& e, bool index);
  llvm::Value* EvalOp(const Expr& e, bool index);
  // x and y: scalars or vectors of one float type.
  llvm::Value* FloatOp(ScalarOp op, llvm::Value* x, llvm::Value* y);
  llvm::Value* IntOp(ScalarOp op, llvm::Value* x, llvm::Value* y, bool index);
  llvm::Value* BoolOp(ScalarOp op, llvm::Value* x, llvm::Value* y);
  llvm::Value* FloorDivMod(llvm::Value* x, llvm::Value* y, bool mod);
  llvm::Value* EvalCast(const Expr& e, bool index);
  // x (a scalar or a vector of `from`) converted to `to`, as the interpreter's cast.
  llvm::Value* CastValue(llvm::Value* x, ir::DType from, ir::DType to);
  // ValueType(dtype), or a vector of it with as many lanes as `like` when that is one.
  llvm::Type* ValueTypeLike(ir::DType dtype, llvm::Value* like);
  llvm::Value* EvalSelect(const Expr& e, bool index);
  llvm::Value* CallLibm(const char* f64_name, const char* f32_name, llvm::Value* x);
  // Inline transcendentals (codegen_math.cc), so they vectorize in place. exp of a float
  // or double as libm's (within 2 ulps, subnormals and inf included).
  llvm::Value* Exp(llvm::Value* x);
  // exp(x) for sums with 1 (sigmoid, erf): within 2 ulps where x is in [lo, 127.5 ln 2),
  // exp(lo) below lo (a normal number), inf from 127.5 ln 2 (88.38 for f32) on.
  llvm::Value* ExpClamped(llvm::Value* x);
  // 1 / (1 + exp(-x)) on ExpClamped.
  llvm::Value* Sigmoid(llvm::Value* x);
  // erf of a float (scalar or vector) on ExpClamped; f64 keeps libm's erf.
  llvm::Value* ErfF32(llvm::Value* x);

  const Program& program_;
  const CompileOptions& options_;
  const Kernel& kernel_;
  llvm::Function* function_;
  llvm::Module& module_;
  llvm::LLVMContext& context_;
  llvm::Value* args_;
  llvm::Value* symbols_;
  llvm::Value* workspace_;
  llvm::IRBuilder<> prologue_;  // before the entry block's branch
  llvm::IRBuilder<> body_;
  llvm::IRBuilder<>* b_;  // where expressions go: body_ or prologue_
  bool in_prologue_ = false;
  absl::Status status_;
  // The parallel loop's range (unit symbols Kernel::range_symbol and the next), or null.
  llvm::Value* range_begin_ = nullptr;
  llvm::Value* range_end_ = nullptr;
  int vectorize_var_ = -1;  // VectorizeLoops
  // ClassifyLanes (for one loop variable per kernel) and EvalLanes (per evaluation).
  absl::flat_hash_map<const Expr*, LaneClass> lane_class_;
  absl::flat_hash_set<const Expr*> stride_two_loads_;  // varying loads of every other element
  int lanes_in_place_ = -1;
  absl::flat_hash_map<std::pair<const Expr*, llvm::Value*>, llvm::Value*> lane_memo_;
  // Expressions whose lanes are given rather than computed (a tile's epilogue reads its
  // sums from the accumulators, not from memory): set around one EvalLanes.
  absl::flat_hash_map<const Expr*, llvm::Value*> lane_values_;
  // Rows of a stencil evaluated as parts of one vector (EmitPointwiseLanes): part r holds
  // loop row_var_ = row_parts_[r], each part `lanes` / row_parts_.size() lanes; empty when
  // a vector is one row's.
  std::vector<llvm::Value*> row_parts_;
  int row_var_ = -1;

  std::vector<llvm::Value*> symbol_values_;
  std::vector<BufferAccess> buffers_;
  std::vector<llvm::Value*> loop_vars_;  // null while a variable is out of scope
  std::vector<ExprPtr> identity_;        // LoopVar(0..n-1): the default store indices
  // Per evaluation: (node, index context) -> value, so shared subtrees are emitted once.
  absl::flat_hash_map<std::pair<const Expr*, bool>, llvm::Value*> memo_;
  absl::flat_hash_map<const Expr*, bool> checked_, contains_load_;
  // Index add / sub / mul already emitted, by (op, operands): every load and store
  // rebuilds its address from the loop variables, and an unrolled body repeats the same
  // terms (`i0 * 8192`) dozens of times. Reused within the block they are in only (then
  // they dominate the insert point, which is always the block's end). Codegen never
  // erases instructions, so the pointers stay valid.
  absl::flat_hash_map<std::tuple<int, llvm::Value*, llvm::Value*>, llvm::Instruction*> index_ops_;
  llvm::Value* IndexOp(ScalarOp op, llvm::Value* x, llvm::Value* y);
};

}  // namespace graphjit::compiler::codegen_internal

#endif  // GRAPHJIT_COMPILER_CODEGEN_CODEGEN_EMITTER_H_
