// mark_constant_fills (compiler/lower/constant_fills.h) and the workspace plan it feeds
// (compiler/lower/buffer_plan.h): a padded buffer's border fills are marked once and its
// bytes shared with no temp of other constants; fills that something else overwrites, fills of
// outputs, kernels that load and the thin border of a large map are not marked.
#include "compiler/lower/constant_fills.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "compiler/lower/buffer_plan.h"
#include "compiler/lower/lower.h"
#include "gtest/gtest.h"
#include "ir/parser.h"

namespace graphjit::compiler {
namespace {

// x [1, 4, 6, 6] padded by concats of zeros to [1, 4, 8, 8], then doubled: the pad's
// interior is copied, its border filled; the doubled value is a temp of the same size
// planned after it.
constexpr const char* kPadded = R"(graph pad {
  %0 = input {name="x"} : f32[1, 4, 6, 6]
  %1 = full {value=0} : f32[1, 4, 1, 6]
  %2 = concat(%1, %0, %1) {axis=2} : f32[1, 4, 8, 6]
  %3 = full {value=0} : f32[1, 4, 8, 1]
  %4 = concat(%3, %2, %3) {axis=3} : f32[1, 4, 8, 8]
  %5 = window(%4) {dilations=[1, 1], kernel=[3, 3], strides=[1, 1]} : f32[1, 4, 3, 3, 6, 6]
  %6 = reduce_sum(%5) {axis=3, keepdim=false} : f32[1, 4, 3, 6, 6]
  %7 = reduce_sum(%6) {axis=2, keepdim=false} : f32[1, 4, 6, 6]
  %8 = add(%7, %7) : f32[1, 4, 6, 6]
  %9 = exp(%8) : f32[1, 4, 6, 6]
  return %9
})";

Program Lowered(const char* text, bool fills_once = true) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  absl::StatusOr<LoweredGraph> lowered = Lower(*g, {.fills_once = fills_once});
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  return lowered->program;
}

TEST(ConstantFills, APadsBorderIsFilledOnceInASlotOfItsOwn) {
  const Program p = Lowered(kPadded);
  int once = 0;
  std::set<int> filled;
  for (const Kernel& k : p.kernels) {
    if (!k.once) continue;
    ++once;
    EXPECT_TRUE(absl::StrContains(k.name, "_full")) << k.name;
    filled.insert(k.out);
  }
  EXPECT_EQ(once, 4) << ProgramToString(p);  // top, bottom, left, right
  ASSERT_EQ(filled.size(), 1u);
  const int padded = *filled.begin();
  EXPECT_TRUE(absl::StrContains(ProgramToString(p), "(once)"));
  // Its slot: after the header, shared with no other temp.
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    const Buffer& buf = p.buffers[b];
    if (buf.kind != BufferKind::kTemp) continue;
    ASSERT_EQ(buf.workspace_offset->kind, ExprKind::kConst);
    EXPECT_GE(buf.workspace_offset->i_value, kWorkspaceHeaderBytes);
    if (static_cast<int>(b) != padded) {
      EXPECT_NE(ExprToString(buf.workspace_offset),
                ExprToString(p.buffers[padded].workspace_offset));
    }
  }
  // Off: no kernel once.
  for (const Kernel& k : Lowered(kPadded, /*fills_once=*/false).kernels) EXPECT_FALSE(k.once);
}

// The same pad around a 62 x 62 map: its border is 6% of the padded buffer.
constexpr const char* kPaddedLarge = R"(graph pad {
  %0 = input {name="x"} : f32[1, 2, 62, 62]
  %1 = full {value=0} : f32[1, 2, 1, 62]
  %2 = concat(%1, %0, %1) {axis=2} : f32[1, 2, 64, 62]
  %3 = full {value=0} : f32[1, 2, 64, 1]
  %4 = concat(%3, %2, %3) {axis=3} : f32[1, 2, 64, 64]
  %5 = window(%4) {dilations=[1, 1], kernel=[3, 3], strides=[1, 1]} : f32[1, 2, 3, 3, 62, 62]
  %6 = reduce_sum(%5) {axis=3, keepdim=false} : f32[1, 2, 3, 62, 62]
  %7 = reduce_sum(%6) {axis=2, keepdim=false} : f32[1, 2, 62, 62]
  return %7
})";

TEST(ConstantFills, ALargeMapsThinBorderIsFilledOnEveryCall) {
  // Under 30% of the buffer: its fills run per call and its bytes are shared (the 6 x 6
  // map's border above, 44%, stays once).
  const Program p = Lowered(kPaddedLarge);
  int fills = 0;
  for (const Kernel& k : p.kernels) {
    EXPECT_FALSE(k.once) << k.name;
    if (absl::StrContains(k.name, "_full")) ++fills;
  }
  EXPECT_EQ(fills, 4) << ProgramToString(p);
  EXPECT_FALSE(absl::StrContains(ProgramToString(p), "(once)"));
}

// A buffer of `n` elements.
Buffer Vector(const char* name, ir::DType dtype, int64_t n, BufferKind kind, int arg_index) {
  Buffer b;
  b.name = name;
  b.dtype = dtype;
  b.shape = {ir::SymExpr(n)};
  b.dims = {ConstI(n)};
  b.kind = kind;
  b.arg_index = arg_index;
  return b;
}

// A kernel storing `value` to b0 over [lo, hi).
Kernel Fill(const char* name, int64_t lo, int64_t hi, double value) {
  Kernel k;
  k.name = name;
  k.out = 0;
  k.loops = {ConstI(hi - lo)};
  k.store_indices = {Op(ScalarOp::kAdd, LoopVar(0), ConstI(lo))};
  k.value = ConstF(value, ir::DType::kF32);
  return k;
}

// A program by hand: fill b0 (a temp of 8) over [lo, hi), then the kernel `over` stores
// b0 at [over_lo, over_hi); b1 reads it.
Program FillThenStore(int64_t lo, int64_t hi, int64_t over_lo, int64_t over_hi,
                      BufferKind filled_kind = BufferKind::kTemp) {
  Program p;
  p.buffers.push_back(
      Vector("t", ir::DType::kF32, 8, filled_kind, filled_kind == BufferKind::kTemp ? -1 : 0));
  p.buffers.push_back(Vector("y", ir::DType::kF32, 8, BufferKind::kOutput, 1));
  Kernel fill = Fill("k0_full", lo, hi, 0);
  Kernel over = Fill("k1_full", over_lo, over_hi, 1);
  Kernel read;
  read.name = "k2_copy";
  read.out = 1;
  read.loops = {ConstI(8)};
  read.value = Load(0, ir::DType::kF32, {LoopVar(0)});
  p.kernels = {fill, over, read};
  return p;
}

TEST(ConstantFills, DisjointWritersKeepTheFillOnceOverlappingOnesDoNot) {
  Program disjoint = FillThenStore(0, 3, 3, 8);
  MarkConstantFills(&disjoint);
  EXPECT_TRUE(disjoint.kernels[0].once);
  EXPECT_TRUE(disjoint.kernels[1].once);   // a constant fill of the rest, just as well
  EXPECT_FALSE(disjoint.kernels[2].once);  // loads
  PlanWorkspace(&disjoint);
  EXPECT_EQ(ExprToString(disjoint.buffers[0].workspace_offset), "64");

  Program overlapping = FillThenStore(0, 4, 3, 8);  // element 3 twice
  MarkConstantFills(&overlapping);
  EXPECT_FALSE(overlapping.kernels[0].once);
  EXPECT_FALSE(overlapping.kernels[1].once);

  Program output = FillThenStore(0, 3, 3, 8, BufferKind::kOutput);
  MarkConstantFills(&output);
  EXPECT_FALSE(output.kernels[0].once);  // the caller's memory: filled every call
}

TEST(ConstantFills, AnUnboundedWriterKeepsTheFillPerCall) {
  Program p = FillThenStore(0, 3, 3, 8);
  // Stores at an index read from memory: anywhere.
  p.buffers.push_back(Vector("i", ir::DType::kI64, 5, BufferKind::kInput, 2));
  p.kernels[1].store_indices = {Load(2, ir::DType::kI64, {LoopVar(0)})};
  MarkConstantFills(&p);
  EXPECT_FALSE(p.kernels[0].once);
}

}  // namespace
}  // namespace graphjit::compiler
