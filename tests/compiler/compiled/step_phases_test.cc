// StepPhases (compiler/compiled/step_phases.h): which consecutive kernels may run at the
// same time. The decode layer's q / k / v projections and the MLP gate / up share a phase; no
// kernel shares one with a kernel it depends on; and the memory cases that must keep
// kernels apart (a temp read then reused, a workspace offset over symbols, an output
// written in place of an input) do.
#include "compiler/compiled/step_phases.h"

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/lower/kernel_unit.h"
#include "gtest/gtest.h"
#include "tests/compiler/lower/decode_program.h"

namespace graphjit::compiler {
namespace {

std::vector<std::vector<int>> Touched(const Program& p) {
  std::vector<std::vector<int>> touched;
  for (int k = 0; k < static_cast<int>(p.kernels.size()); ++k) {
    touched.push_back(MakeKernelUnit(p, k).buffers);
  }
  return touched;
}

Program Decode(bool symbolic) {
  return DecodeProgram("decode", symbolic ? std::nullopt : std::optional<int64_t>(512));
}

// The phase of the matmul whose weight is param `weight`.
int PhaseOfProjection(const Program& p, const std::vector<int>& phases, const char* weight) {
  const std::vector<std::vector<int>> touched = Touched(p);
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    if (p.kernels[k].kind != KernelKind::kMatmul) continue;
    for (int b : touched[k]) {
      if (p.buffers[b].kind == BufferKind::kParam && absl::StrContains(p.buffers[b].name, weight)) {
        return phases[k];
      }
    }
  }
  ADD_FAILURE() << "no projection by " << weight;
  return -1;
}

TEST(StepPhases, DecodeLayerRunsIndependentProjectionsTogether) {
  const Program p = Decode(/*symbolic=*/false);
  const std::vector<int> phases = StepPhases(p, Touched(p));
  ASSERT_EQ(phases.size(), p.kernels.size());
  EXPECT_EQ(PhaseOfProjection(p, phases, "wq"), PhaseOfProjection(p, phases, "wk"));
  EXPECT_EQ(PhaseOfProjection(p, phases, "wk"), PhaseOfProjection(p, phases, "wv"));
  EXPECT_EQ(PhaseOfProjection(p, phases, "w_gate"), PhaseOfProjection(p, phases, "w_up"));
  EXPECT_NE(PhaseOfProjection(p, phases, "w_up"), PhaseOfProjection(p, phases, "w_down"));
  EXPECT_NE(PhaseOfProjection(p, phases, "wv"), PhaseOfProjection(p, phases, "wo"));
}

// Within a phase no kernel reads or writes a buffer another writes, exact or symbolic.
TEST(StepPhases, NoKernelSharesAPhaseWithOneItDependsOn) {
  for (bool symbolic : {false, true}) {
    const Program p = Decode(symbolic);
    const std::vector<std::vector<int>> touched = Touched(p);
    const std::vector<int> phases = StepPhases(p, touched);
    for (size_t i = 0; i < phases.size(); ++i) {
      EXPECT_TRUE(i == 0 ? phases[i] == 0
                         : phases[i] == phases[i - 1] || phases[i] == phases[i - 1] + 1);
      for (size_t j = i + 1; j < phases.size() && phases[j] == phases[i]; ++j) {
        for (int w : KernelWrites(p.kernels[i])) {
          for (int b : touched[j]) EXPECT_NE(w, b) << p.kernels[i].name << " " << p.kernels[j].name;
        }
        for (int w : KernelWrites(p.kernels[j])) {
          for (int b : touched[i]) EXPECT_NE(w, b) << p.kernels[i].name << " " << p.kernels[j].name;
        }
      }
    }
  }
}

// A hand-made program: buffers b0 input x, b1 output y (in place of x when asked), b2..b5
// temps of 64 bytes at the given offsets (-1: an offset over symbol S).
Program Memory(std::vector<int64_t> offsets, bool in_place) {
  Program p;
  p.symbols = {"S"};
  auto arg = [&](const char* name, BufferKind kind, int index) {
    Buffer b{name, ir::DType::kF64, {}, {ConstI(8)}, kind, index, nullptr, -1};
    p.buffers.push_back(b);
  };
  arg("x", BufferKind::kInput, 0);
  arg("y", BufferKind::kOutput, 1);
  if (in_place) p.buffers[1].alias_of = 0;
  for (int64_t offset : offsets) {
    Buffer t{"t",
             ir::DType::kF64,
             {},
             {ConstI(8)},
             BufferKind::kTemp,
             -1,
             offset < 0 ? Op(ScalarOp::kMul, SymbolValue(0), ConstI(64)) : ConstI(offset),
             -1};
    p.buffers.push_back(t);
  }
  return p;
}

// Kernel k writes `out` (and touches `reads`).
void AddKernel(Program* p, int out, std::vector<int> reads,
               std::vector<std::vector<int>>* touched) {
  Kernel k;
  k.name = absl::StrCat("k", p->kernels.size());
  k.out = out;
  p->kernels.push_back(k);
  reads.push_back(out);
  touched->push_back(reads);
}

TEST(StepPhases, KernelsTouchingOtherMemoryShareAPhase) {
  Program p = Memory({0, 64, 128}, false);
  std::vector<std::vector<int>> touched;
  AddKernel(&p, 2, {0}, &touched);  // t2 = f(x)
  AddKernel(&p, 3, {0}, &touched);  // t3 = g(x): reads what k0 reads, writes elsewhere
  AddKernel(&p, 4, {0}, &touched);
  EXPECT_EQ(StepPhases(p, touched), (std::vector<int>{0, 0, 0}));
}

TEST(StepPhases, ReadingAWrittenBufferStartsAPhase) {
  Program p = Memory({0, 64}, false);
  std::vector<std::vector<int>> touched;
  AddKernel(&p, 2, {0}, &touched);
  AddKernel(&p, 3, {2}, &touched);  // reads k0's output
  AddKernel(&p, 1, {0}, &touched);  // y = h(x): independent of k1, joins it
  EXPECT_EQ(StepPhases(p, touched), (std::vector<int>{0, 1, 1}));
}

TEST(StepPhases, ReusedWorkspaceMemoryStartsAPhase) {
  // b4 reuses b2's bytes (b2 is dead once k1 read it): k2 writing b4 must wait for k1.
  Program p = Memory({0, 64, 32}, false);
  std::vector<std::vector<int>> touched;
  AddKernel(&p, 2, {0}, &touched);
  AddKernel(&p, 3, {2}, &touched);
  AddKernel(&p, 4, {0}, &touched);  // overlaps b2 at bytes 32..63
  EXPECT_EQ(StepPhases(p, touched), (std::vector<int>{0, 1, 2}));
  // Adjacent, not overlapping: k2 joins k1.
  p.buffers[4].workspace_offset = ConstI(128);
  EXPECT_EQ(StepPhases(p, touched), (std::vector<int>{0, 1, 1}));
}

TEST(StepPhases, AnOffsetOverSymbolsMayOverlapAnyTemp) {
  Program p = Memory({0, 64, -1}, false);
  std::vector<std::vector<int>> touched;
  AddKernel(&p, 2, {0}, &touched);
  AddKernel(&p, 4, {0}, &touched);  // at S * 64: may be anywhere
  AddKernel(&p, 1, {0}, &touched);  // an output: never workspace
  EXPECT_EQ(StepPhases(p, touched), (std::vector<int>{0, 1, 1}));
}

// Temps placed after a symbolic one, at the same symbolic offset plus a constant, compare
// by the constants (the decode layer's gate and up outputs at S-dependent offsets), and
// lie above constant ranges that end at or below that constant.
ExprPtr AtS64Plus(int64_t c) {
  return Op(ScalarOp::kAdd, Op(ScalarOp::kMul, SymbolValue(0), ConstI(64)), ConstI(c));
}

TEST(StepPhases, OffsetsThatDifferByAConstantCompareByIt) {
  for (auto [second, apart] : {std::pair<int64_t, bool>{64, true}, {32, false}}) {
    Program p = Memory({0, 64, 128}, false);
    p.buffers[3].workspace_offset = AtS64Plus(64);           // b2 (0..63) lies below it
    p.buffers[4].workspace_offset = AtS64Plus(64 + second);  // after b3, or into it
    std::vector<std::vector<int>> touched;
    AddKernel(&p, 2, {0}, &touched);
    AddKernel(&p, 3, {2}, &touched);
    AddKernel(&p, 4, {2}, &touched);  // beside k1 only if their bytes are apart
    EXPECT_EQ(StepPhases(p, touched), (std::vector<int>{0, 1, apart ? 1 : 2})) << second;
  }
}

TEST(StepPhases, AConstantRangeAboveASymbolicOffsetMayOverlapIt) {
  Program p = Memory({64, 0}, false);
  p.buffers[3].workspace_offset = AtS64Plus(0);  // S * 64: at 64 when S = 1, like b2
  std::vector<std::vector<int>> touched;
  AddKernel(&p, 2, {0}, &touched);
  AddKernel(&p, 3, {0}, &touched);
  EXPECT_EQ(StepPhases(p, touched), (std::vector<int>{0, 1}));
}

TEST(StepPhases, AnOutputInPlaceOfAnInputIsThatInput) {
  for (bool in_place : {false, true}) {
    Program p = Memory({0}, in_place);
    std::vector<std::vector<int>> touched;
    AddKernel(&p, 2, {0}, &touched);  // reads x
    AddKernel(&p, 1, {}, &touched);   // writes y, which is x when in place
    EXPECT_EQ(StepPhases(p, touched), (std::vector<int>{0, in_place ? 1 : 0})) << in_place;
  }
}

}  // namespace
}  // namespace graphjit::compiler
