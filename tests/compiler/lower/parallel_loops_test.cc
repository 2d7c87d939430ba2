// mark_parallel (compiler/lower/parallel_loops.h): which loop of each kernel of the decode
// layer may split across threads, and the kernels it must leave whole.
#include "compiler/lower/parallel_loops.h"

#include "absl/strings/match.h"
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

}  // namespace
}  // namespace graphjit::compiler
