// TimeCompileSteps: every step of a compile runs (the IR passes of the tier asked for,
// instruction selection, register allocation, the link) on the engine's target; bad IR
// is InvalidArgument. No assertion on how long anything takes.
#include "compiler/orc/compile_steps.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphjit::compiler {
namespace {

using ::testing::HasSubstr;

// out[i] = in[i] * 2 for i < n: a loop O2 vectorizes, called through a kernel-style
// entry (the callee is internalized and inlined, as the engine does).
constexpr char kLoop[] = R"(
define void @scale(ptr noalias %out, ptr noalias %in, i64 %n) {
entry:
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %src = getelementptr double, ptr %in, i64 %i
  %x = load double, ptr %src
  %y = fmul double %x, 2.0
  %dst = getelementptr double, ptr %out, i64 %i
  store double %y, ptr %dst
  %next = add i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}

define void @entry(ptr %args) {
  %out = load ptr, ptr %args
  %in.slot = getelementptr ptr, ptr %args, i64 1
  %in = load ptr, ptr %in.slot
  call void @scale(ptr %out, ptr %in, i64 1024)
  ret void
}
)";

bool HasPass(const std::vector<std::pair<std::string, double>>& passes, const std::string& name) {
  for (const auto& [pass, seconds] : passes) {
    if (pass.find(name) != std::string::npos) return true;
  }
  return false;
}

TEST(CompileSteps, TheOptimizedTierRunsO2AndTheGreedyAllocator) {
  absl::StatusOr<CompileSteps> steps = TimeCompileSteps(kLoop, CodeTier::kOptimized);
  ASSERT_TRUE(steps.ok()) << steps.status();
  EXPECT_GT(steps->instructions, 10);
  EXPECT_TRUE(HasPass(steps->ir_pass_seconds, "LoopVectorizePass"));
  EXPECT_TRUE(HasPass(steps->ir_pass_seconds, "GVNPass"));
  EXPECT_TRUE(HasPass(steps->machine_pass_seconds, "isel"));
  EXPECT_TRUE(HasPass(steps->machine_pass_seconds, "greedy"));
  EXPECT_FALSE(HasPass(steps->machine_pass_seconds, "regallocfast"));
  EXPECT_TRUE(HasPass(steps->machine_pass_seconds, "loop-reduce"));
  EXPECT_GE(steps->total(), steps->ir_passes + steps->isel + steps->link);
}

// -O0 machine code (no loop strength reduction, which -O1 and up run) with O2's register
// allocator (AllocateRegistersAtO0). The loop passes and the vectorizer run only on a
// function with a loop codegen marked for it (llvm.loop.vectorize.enable).
TEST(CompileSteps, TheBaselineTierRunsItsShortListAndTheGreedyAllocatorAtO0) {
  absl::StatusOr<CompileSteps> steps = TimeCompileSteps(kLoop, CodeTier::kBaseline);
  ASSERT_TRUE(steps.ok()) << steps.status();
  EXPECT_TRUE(HasPass(steps->ir_pass_seconds, "InstCombinePass"));
  EXPECT_FALSE(HasPass(steps->ir_pass_seconds, "LoopVectorizePass"));
  EXPECT_FALSE(HasPass(steps->ir_pass_seconds, "LoopRotatePass"));
  EXPECT_FALSE(HasPass(steps->ir_pass_seconds, "GVNPass"));
  EXPECT_TRUE(HasPass(steps->machine_pass_seconds, "greedy"));
  EXPECT_FALSE(HasPass(steps->machine_pass_seconds, "regallocfast"));
  EXPECT_FALSE(HasPass(steps->machine_pass_seconds, "loop-reduce"));
}

TEST(CompileSteps, TheBaselineVectorizesOnlyMarkedLoops) {
  std::string marked = kLoop;
  const std::string latch = "br i1 %more, label %loop, label %done";
  marked.replace(marked.find(latch), latch.size(), latch + ", !llvm.loop !0");
  marked += "!0 = distinct !{!0, !1}\n!1 = !{!\"llvm.loop.vectorize.enable\", i1 true}\n";
  absl::StatusOr<CompileSteps> steps = TimeCompileSteps(marked, CodeTier::kBaseline);
  ASSERT_TRUE(steps.ok()) << steps.status();
  EXPECT_TRUE(HasPass(steps->ir_pass_seconds, "LoopRotatePass"));
  EXPECT_TRUE(HasPass(steps->ir_pass_seconds, "LoopVectorizePass"));
  EXPECT_GT(steps->optimized_instructions, steps->instructions) << "the loop was not vectorized";
}

TEST(CompileSteps, AnEmptyModuleAndTheSameModuleTwiceCompileAndLink) {
  // "" is LLVM's fixed cost per module; the same IR twice must not clash in the JIT.
  for (const char* ir : {"", kLoop, kLoop}) {
    absl::StatusOr<CompileSteps> steps = TimeCompileSteps(ir, CodeTier::kBaseline);
    ASSERT_TRUE(steps.ok()) << steps.status();
    EXPECT_FALSE(steps->machine_pass_seconds.empty());
  }
}

TEST(CompileSteps, BadIrIsInvalidArgument) {
  absl::StatusOr<CompileSteps> garbage =
      TimeCompileSteps("define void @f( {", CodeTier::kOptimized);
  EXPECT_EQ(garbage.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(garbage.status().message(), HasSubstr("does not parse"));

  absl::StatusOr<CompileSteps> declarations =
      TimeCompileSteps("declare void @f()\n", CodeTier::kOptimized);
  EXPECT_EQ(declarations.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(declarations.status().message(), HasSubstr("no entry function"));
}

}  // namespace
}  // namespace graphjit::compiler
