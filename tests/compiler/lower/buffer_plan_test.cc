// The workspace plan (compiler/lower/buffer_plan.h) on small programs: which temps share
// bytes, and which must not.
#include "compiler/lower/buffer_plan.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace graphjit::compiler {
namespace {

const ir::SymExpr kS = ir::SymExpr::Symbol("S");

// A program over symbol S whose kernels each write one buffer from one other (or from
// a constant); buffers are f32.
struct Builder {
  Program p;
  Builder() { p.symbols = {"S"}; }
  int Buffer(ir::Shape shape, BufferKind kind = BufferKind::kTemp) {
    compiler::Buffer b;
    b.dtype = ir::DType::kF32;
    b.shape = std::move(shape);
    b.kind = kind;
    p.buffers.push_back(b);
    return static_cast<int>(p.buffers.size()) - 1;
  }
  // Kernel writing `out` over `extent` elements from `in` (-1: the constant `fill`), at
  // element `at` + i.
  Kernel& Write(int out, int in, int64_t extent = 16, int64_t at = 0, double fill = 1) {
    Kernel k{KernelKind::kPointwise, "k" + std::to_string(p.kernels.size()), out};
    k.loops = {ConstI(extent)};
    k.store_indices = {Op(ScalarOp::kAdd, LoopVar(0), ConstI(at))};
    k.value = in < 0 ? ConstF(fill, ir::DType::kF32) : Load(in, ir::DType::kF32, {ConstI(0)});
    p.kernels.push_back(k);
    return p.kernels.back();
  }
  std::string Offset(int b) const { return ExprToString(p.buffers[b].workspace_offset); }
};

TEST(BufferPlan, DeadTempsShareSpaceButNotWithTheNextKernel) {
  Builder t;
  const int b0 = t.Buffer({16});      // kernels 0..1
  const int b1 = t.Buffer({16});      // kernels 2..3: right after b0's last read
  const int b2 = t.Buffer({16});      // kernels 3..4: b0 died two kernels before
  const int b3 = t.Buffer({kS, 16});  // symbolic size: a slot after the constant sizes
  const int out = t.Buffer({16}, BufferKind::kOutput);
  const int b5 = t.Buffer({16});  // no kernel touches it: no space
  t.Write(b0, -1);
  t.Write(out, b0);
  t.Write(b1, -1);
  t.Write(b2, b1);
  t.Write(b3, b2);
  t.Write(out, b3);
  PlanWorkspace(&t.p);
  // After the runtime's header (kWorkspaceHeaderBytes).
  EXPECT_EQ(t.Offset(b0), "64");
  EXPECT_EQ(t.Offset(b1), "128");  // must not take b0's bytes: kernel 2 follows kernel 1
  EXPECT_EQ(t.Offset(b2), "64");
  EXPECT_EQ(t.Offset(b3), "192");
  EXPECT_EQ(t.Offset(b5), "0");
  EXPECT_EQ(t.p.workspace_bytes, ir::SymExpr(192) + (64 * kS + 63) / 64 * 64);
  // A program without temps has no workspace, and so no header.
  Program none;
  PlanWorkspace(&none);
  EXPECT_EQ(none.workspace_bytes, ir::SymExpr(0));
}

TEST(BufferPlan, ShrinkingTempsFitInTheGapsOfLargerDeadOnes) {
  // A chain whose temps halve (a CNN's activations): 4096, 2048, 1024, 512 bytes, each
  // read by the next kernel. Equal sizes never meet, yet the last one fits in the first
  // one's bytes once it died (the third still overlaps its life by the margin).
  Builder t;
  const int b0 = t.Buffer({1024}), b1 = t.Buffer({512}), b2 = t.Buffer({256});
  const int b3 = t.Buffer({128}), out = t.Buffer({16}, BufferKind::kOutput);
  t.Write(b0, -1, 1024);
  t.Write(b1, b0, 512);
  t.Write(b2, b1, 256);
  t.Write(b3, b2, 128);
  t.Write(out, b3);
  PlanWorkspace(&t.p);
  EXPECT_EQ(t.Offset(b0), "64");
  EXPECT_EQ(t.Offset(b1), "4160");
  EXPECT_EQ(t.Offset(b2), "6208");  // overlaps b0's life by the one-kernel margin
  EXPECT_EQ(t.Offset(b3), "64");    // b0 is long dead: its bytes
  EXPECT_EQ(t.p.workspace_bytes, ir::SymExpr(64 + 4096 + 2048 + 1024));
}

TEST(BufferPlan, TempsFilledOnceShareOnlyWithTheSameConstants) {
  // Padded temps of 16 elements whose border (elements 0 and 15) a once kernel fills
  // with zeros: b0 and b1 (same constants, lives apart) share; b2 fills its border with
  // ones, b4 with 1.0000001 (the same to 6 digits, as expressions print) and b3 fills
  // element 1: none shares with another; an ordinary temp never takes a kept temp's
  // bytes, though it is dead.
  Builder t;
  const int b0 = t.Buffer({16}), b1 = t.Buffer({16}), b2 = t.Buffer({16});
  const int b3 = t.Buffer({16}), plain = t.Buffer({16}), b4 = t.Buffer({16});
  const int out = t.Buffer({16}, BufferKind::kOutput);
  auto padded = [&](int b, double fill, int64_t first) {
    t.Write(b, -1, 1, first, fill).once = true;
    t.Write(b, -1, 1, 15, fill).once = true;
    t.Write(b, -1, 14 - first, first + 1, 2);  // the interior, every call
    t.Write(out, b);
  };
  padded(b0, 0, 0);
  t.Write(plain, -1);  // between b0's life and b1's, so they do not touch
  t.Write(out, plain);
  padded(b1, 0, 0);
  padded(b2, 1, 0);
  padded(b3, 0, 1);
  padded(b4, 1.0000001, 0);
  PlanWorkspace(&t.p);
  EXPECT_EQ(t.Offset(plain), "64");  // the only temp of the constant-size region
  EXPECT_EQ(t.Offset(b0), "128");
  EXPECT_EQ(t.Offset(b1), "128");
  EXPECT_EQ(t.Offset(b2), "192");
  EXPECT_EQ(t.Offset(b3), "256");
  EXPECT_EQ(t.Offset(b4), "320");
  EXPECT_EQ(t.p.workspace_bytes, ir::SymExpr(384));
}

}  // namespace
}  // namespace graphjit::compiler
