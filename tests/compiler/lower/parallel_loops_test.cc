// mark_parallel (compiler/lower/parallel_loops.h): which loop of each kernel of the decode
// layer may split across threads, kernels with their own store indices (a conv net's pads
// and reshapes), and the kernels it must leave whole.
#include "compiler/lower/parallel_loops.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/compiler/lower/decode_program.h"

namespace graphjit::compiler {
namespace {

// The decode layer's kernel program at S = 512 (exact), f64 or f32.
Program Decode512(bool f32) { return DecodeProgram(f32 ? "decode:dtype=f32" : "decode", 512); }

const Kernel* Find(const Program& p, const char* name) {
  for (const Kernel& k : p.kernels) {
    if (absl::StrContains(k.name, name)) return &k;
  }
  return nullptr;
}

TEST(MarkParallel, DecodeLayerSplitsAttentionByKvHeadAndWideMatvecsByColumn) {
  const Program p = Decode512(false);
  const Kernel* attention = Find(p, "attention");
  ASSERT_NE(attention, nullptr);
  EXPECT_EQ(attention->parallel_loop, 0);  // KV heads: each row's softmax stays whole
  EXPECT_EQ(attention->parallel_align, 1);
  ASSERT_NE(attention->parallel_work, nullptr);
  int wide = 0, narrow = 0;
  for (const Kernel& k : p.kernels) {
    if (k.kind != KernelKind::kMatmul) continue;
    // [1, K] @ [K, N]: M is 1, so N (loop 1); an f64 row of 32 is one register strip.
    const int64_t n = k.loops[1]->i_value;
    if (n * 8 > 512) {
      EXPECT_EQ(k.parallel_loop, 1) << k.name;
      EXPECT_EQ(k.parallel_align, 16) << k.name;
      ++wide;
    } else {
      EXPECT_EQ(k.parallel_loop, -1) << k.name;
      ++narrow;
    }
  }
  EXPECT_EQ(wide, 5);    // wq, wo, w1, w3, w2
  EXPECT_EQ(narrow, 2);  // wk, wv
}

TEST(MarkParallel, DoesNotSplitOneStripRowsReductionsOrTinyKernels) {
  const Program p = Decode512(true);
  for (const Kernel& k : p.kernels) {
    SCOPED_TRACE(k.name);
    if (k.kind == KernelKind::kMatmul && k.loops[1]->i_value * 4 <= 512) {
      EXPECT_EQ(k.parallel_loop, -1);  // 128 f32 columns: one strip in registers
    }
    // A mean over the whole row: its one loop has extent 1, the reduced axis is not a loop.
    if (k.kind == KernelKind::kReduce) {
      EXPECT_EQ(k.parallel_loop, -1);
    }
    // Written in place of the cache (custom store indices).
    if (absl::StrContains(k.name, "kv_write")) {
      EXPECT_EQ(k.parallel_loop, -1);
    }
  }
}

// A program of one f32 buffer per shape (an input, then outputs), and a pointwise kernel
// over `loops` storing `value` at `store` into buffer `out`.
struct StoreProgram {
  Program program;
  int Buffer(std::vector<int64_t> shape, BufferKind kind) {
    compiler::Buffer b;
    b.name = absl::StrCat("b", program.buffers.size());
    b.dtype = ir::DType::kF32;
    b.kind = kind;
    for (int64_t d : shape) {
      b.shape.push_back(ir::SymExpr(d));
      b.dims.push_back(ConstI(d));
    }
    b.arg_index = program.num_args++;
    program.buffers.push_back(std::move(b));
    return static_cast<int>(program.buffers.size()) - 1;
  }
  const Kernel& Pointwise(int out, std::vector<int64_t> loops, ExprPtr value,
                          std::vector<ExprPtr> store) {
    Kernel k;
    k.name = absl::StrCat("k", program.kernels.size());
    k.out = out;
    for (int64_t e : loops) k.loops.push_back(ConstI(e));
    k.value = std::move(value);
    k.store_indices = std::move(store);
    program.kernels.push_back(std::move(k));
    MarkParallelLoops(&program);
    return program.kernels.back();
  }
};

ExprPtr Plus(ExprPtr e, int64_t c) { return Op(ScalarOp::kAdd, std::move(e), ConstI(c)); }

TEST(MarkParallel, SplitsKernelsWhoseStoreIndicesKeepTheLoopsElementsApart) {
  StoreProgram p;
  const int x = p.Buffer({6, 8, 8}, BufferKind::kInput);
  const int padded = p.Buffer({6, 12, 12}, BufferKind::kOutput);
  const int flat = p.Buffer({1, 1, 6, 64}, BufferKind::kOutput);
  const int framed = p.Buffer({1, 8, 12}, BufferKind::kOutput);
  const ExprPtr xv = Load(x, ir::DType::kF32, {LoopVar(0), LoopVar(1), LoopVar(2)});
  // A pad's interior: channel i0 lands in channel i0.
  EXPECT_EQ(
      p.Pointwise(padded, {6, 8, 8}, xv, {LoopVar(0), Plus(LoopVar(1), 2), Plus(LoopVar(2), 2)})
          .parallel_loop,
      0);
  // A reshape into a product's layout: [0, 0, i0, i1 * 8 + i2].
  EXPECT_EQ(p.Pointwise(flat, {6, 8, 8}, xv,
                        {ConstI(0), ConstI(0), LoopVar(0),
                         Op(ScalarOp::kAdd, Op(ScalarOp::kMul, LoopVar(1), ConstI(8)), LoopVar(2))})
                .parallel_loop,
            0);
  // The first loop of extent 1 passed over: i1 picks the row (plus 2: a pad's offset, on
  // either side of the +).
  const ExprPtr row = Load(x, ir::DType::kF32, {ConstI(0), LoopVar(1), LoopVar(2)});
  EXPECT_EQ(p.Pointwise(framed, {1, 6, 8}, row,
                        {LoopVar(0), Op(ScalarOp::kAdd, ConstI(2), LoopVar(1)), LoopVar(2)})
                .parallel_loop,
            1);
}

// A tiled product [M, K] @ [K, N] splits its rows, or its columns in whole panels of
// every tile width where N is at least twice M (a convolution's positions, or the
// channels of one turned round over packed weights); batch loops first.
// Columns where they outnumber the rows twice, unless whole panels of 192 split them
// worse than 1.5 : 0.5 and rows split more evenly: N = 196 (192 + 4) and N = 160 (one
// panel) go by rows, N = 784 (384 + 400), 512 (192 + 320: 1.25) and 3136 stay by
// columns, and so does N = 196 over 8 rows, which split no better.
TEST(MarkParallel, TiledProductsSplitColumnsWhereTheyOutnumberRows) {
  struct Case {
    std::vector<int64_t> loops;  // batch.., M, N, K
    int loop;
    int64_t align;
  };
  for (const Case& c :
       {Case{{64, 3136, 576}, 1, 192}, Case{{49, 512, 4608}, 1, 192}, Case{{64, 127, 576}, 0, 8},
        Case{{512, 49, 4608}, 0, 8}, Case{{5, 16, 400, 72}, 0, 1}, Case{{64, 196, 384}, 0, 8},
        Case{{49, 160, 576}, 0, 8}, Case{{192, 784, 32}, 1, 192}, Case{{24, 3136, 96}, 1, 192},
        Case{{8, 196, 384}, 1, 192}}) {
    SCOPED_TRACE(absl::StrCat(c.loops[c.loops.size() - 3], " x ", c.loops[c.loops.size() - 2]));
    StoreProgram p;
    std::vector<int64_t> out_shape(c.loops.begin(), c.loops.end() - 1);
    const int a = p.Buffer({1}, BufferKind::kInput);
    const int out = p.Buffer(out_shape, BufferKind::kOutput);
    Kernel k;
    k.name = "k_tiles";
    k.kind = KernelKind::kMatmul;
    k.order = MatmulOrder::kTiles;
    k.out = out;
    for (int64_t e : c.loops) k.loops.push_back(ConstI(e));
    k.lhs = Load(a, ir::DType::kF32, {ConstI(0)});
    k.rhs = Load(a, ir::DType::kF32, {ConstI(0)});
    p.program.kernels.push_back(std::move(k));
    MarkParallelLoops(&p.program);
    EXPECT_EQ(p.program.kernels.back().parallel_loop, c.loop);
    EXPECT_EQ(p.program.kernels.back().parallel_align, c.align);
  }
}

// Over weights packed into panels of 32 columns (orient_products' rhs), columns split at
// those panels: N = 512 as 256 + 256 (by 192s it was 192 + 320, the larger part 1.25x an
// even one's), and N = 160, one part 64 and the other 96, now by columns as well.
TEST(MarkParallel, TiledProductsOverPackedWeightsSplitAtTheirPanels) {
  for (int64_t n : {512, 160}) {
    SCOPED_TRACE(absl::StrCat("N = ", n));
    constexpr int64_t kM = 49, kK = 576, kPanel = 32;
    StoreProgram p;
    const int a = p.Buffer({kM, kK}, BufferKind::kInput);
    const int w = p.Buffer({1, n / kPanel, kK, kPanel}, BufferKind::kParam);
    const int out = p.Buffer({kM, n}, BufferKind::kOutput);
    Kernel k;
    k.name = "k_tiles";
    k.kind = KernelKind::kMatmul;
    k.order = MatmulOrder::kTiles;
    k.out = out;
    k.loops = {ConstI(kM), ConstI(n), ConstI(kK)};
    k.lhs = Load(a, ir::DType::kF32, {LoopVar(0), LoopVar(2)});
    k.rhs = Load(w, ir::DType::kF32,
                 {ConstI(0), Op(ScalarOp::kDiv, LoopVar(1), ConstI(kPanel)), LoopVar(2),
                  Op(ScalarOp::kMod, LoopVar(1), ConstI(kPanel))});
    p.program.kernels.push_back(std::move(k));
    MarkParallelLoops(&p.program);
    EXPECT_EQ(p.program.kernels.back().parallel_loop, 1);
    EXPECT_EQ(p.program.kernels.back().parallel_align, kPanel);
  }
}

TEST(MarkParallel, DoesNotSplitStoresItCannotProveApartOrKernelsReadingTheirOutput) {
  StoreProgram p;
  const int x = p.Buffer({6, 8}, BufferKind::kInput);
  const int out = p.Buffer({12, 8}, BufferKind::kOutput);
  const ExprPtr xv = Load(x, ir::DType::kF32, {LoopVar(0), LoopVar(1)});
  // Must not fire: i0 * 2 (apart, but not a form it recognizes), i0 + i1 (two iterations
  // of i0 can meet), no index of i0 at all (every part writes the same rows), the kernel
  // reading the buffer it writes, an output written in place of its input.
  EXPECT_EQ(p.Pointwise(out, {6, 8}, xv, {Op(ScalarOp::kMul, LoopVar(0), ConstI(2)), LoopVar(1)})
                .parallel_loop,
            -1);
  EXPECT_EQ(p.Pointwise(out, {6, 8}, xv, {Op(ScalarOp::kAdd, LoopVar(0), LoopVar(1)), LoopVar(1)})
                .parallel_loop,
            -1);
  EXPECT_EQ(p.Pointwise(out, {6, 8}, xv, {LoopVar(1), LoopVar(1)}).parallel_loop, -1);
  const ExprPtr self = Load(out, ir::DType::kF32, {LoopVar(1), LoopVar(1)});
  EXPECT_EQ(p.Pointwise(out, {6, 8}, self, {LoopVar(0), LoopVar(1)}).parallel_loop, -1);
  p.program.buffers[out].alias_of = x;
  EXPECT_EQ(p.Pointwise(out, {6, 8}, xv, {Plus(LoopVar(0), 6), LoopVar(1)}).parallel_loop, -1);
  // ... and with the alias gone, that last one splits.
  p.program.buffers[out].alias_of = -1;
  MarkParallelLoops(&p.program);
  EXPECT_EQ(p.program.kernels.back().parallel_loop, 0);
}

}  // namespace
}  // namespace graphjit::compiler
