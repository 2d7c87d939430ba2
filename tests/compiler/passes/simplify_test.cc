#include "compiler/passes/simplify.h"

#include "gtest/gtest.h"
#include "pass_test_util.h"

namespace graphjit::compiler {
namespace {

using testing::RunPassOnText;

TEST(Simplify, AppliesIdentitiesOnSymbolicShapes) {
  absl::StatusOr<std::string> out = RunPassOnText("simplify", R"(graph g {
  %0 = input {name="x"} : f64[2, S]
  %1 = constant {value=[1.0]} : f64[]
  %2 = mul(%0, %1) : f64[2, S]
  %3 = constant {value=[0.0]} : f64[]
  %4 = add(%3, %2) : f64[2, S]
  %5 = neg(%4) : f64[2, S]
  %6 = neg(%5) : f64[2, S]
  %7 = constant {value=[4.0]} : f64[]
  %8 = div(%6, %7) : f64[2, S]
  %9 = reshape(%8) {shape=[S, 2]} : f64[S, 2]
  %10 = reshape(%9) {shape=[2*S]} : f64[2*S]
  %11 = transpose(%0) {perm=[1, 0]} : f64[S, 2]
  %12 = transpose(%11) {perm=[1, 0]} : f64[2, S]
  %13 = reshape(%12) {shape=[2, S]} : f64[2, S]
  %14 = sub(%13, %13) : f64[2, S]
  return %10, %14
})");
  ASSERT_TRUE(out.ok()) << out.status();
  // Dead leftovers (the 1, 0 and 4 constants, the first neg and reshape) are dce's job.
  EXPECT_EQ(*out, R"(graph g {
  %0 = input {name="x"} : f64[2, S]
  %1 = constant {value=[1.0]} : f64[]
  %2 = constant {value=[0.0]} : f64[]
  %3 = neg(%0) : f64[2, S]
  %4 = constant {value=[4.0]} : f64[]
  %5 = constant {value=[0.25]} : f64[]
  %6 = mul(%0, %5) : f64[2, S]
  %7 = reshape(%6) {shape=[S, 2]} : f64[S, 2]
  %8 = reshape(%6) {shape=[2*S]} : f64[2*S]
  %9 = transpose(%0) {perm=[1, 0]} : f64[S, 2]
  %10 = sub(%0, %0) : f64[2, S]
  return %8, %10
}
)");
}

// x - x is 0 for i64 only: a float x may be inf or nan (found by fuzz_differential).
TEST(Simplify, SubOfItselfIsZeroOnlyOnIntegers) {
  absl::StatusOr<std::string> out = RunPassOnText("simplify", R"(graph g {
  %0 = input {name="x"} : f32[S]
  %1 = sub(%0, %0) : f32[S]
  %2 = input {name="i"} : i64[S]
  %3 = sub(%2, %2) : i64[S]
  return %1, %3
})");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"(graph g {
  %0 = input {name="x"} : f32[S]
  %1 = sub(%0, %0) : f32[S]
  %2 = input {name="i"} : i64[S]
  %3 = full {value=0.0} : i64[S]
  return %1, %3
}
)");
}

TEST(Simplify, ComposesTransposes) {
  absl::StatusOr<std::string> out = RunPassOnText("simplify", R"(graph g {
  %0 = input {name="x"} : f32[2, 3, 4]
  %1 = transpose(%0) {perm=[1, 2, 0]} : f32[3, 4, 2]
  %2 = transpose(%1) {perm=[1, 0, 2]} : f32[4, 3, 2]
  return %2
})");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"(graph g {
  %0 = input {name="x"} : f32[2, 3, 4]
  %1 = transpose(%0) {perm=[1, 2, 0]} : f32[3, 4, 2]
  %2 = transpose(%0) {perm=[2, 1, 0]} : f32[4, 3, 2]
  return %2
}
)");
}

TEST(Simplify, ExpOfLogOnlyWhereExact) {
  absl::StatusOr<std::string> out = RunPassOnText("simplify", R"(graph g {
  %0 = input {name="x"} : f64[3]
  %1 = exp(%0) : f64[3]
  %2 = log(%1) : f64[3]
  %3 = exp(%2) : f64[3]
  return %3
})");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"(graph g {
  %0 = input {name="x"} : f64[3]
  %1 = exp(%0) : f64[3]
  %2 = log(%1) : f64[3]
  return %1
}
)");
}

TEST(Simplify, DoesNotFire) {
  // add with a zero that broadcasts x to a bigger shape; exp(log x) of a value that may be
  // negative; division by a non-scalar constant; a transpose that permutes; a sub of two
  // different values; integer division by a constant.
  const std::string text = R"(graph g {
  %0 = input {name="x"} : f64[S]
  %1 = full {value=0.0} : f64[2, S]
  %2 = add(%0, %1) : f64[2, S]
  %3 = log(%0) : f64[S]
  %4 = exp(%3) : f64[S]
  %5 = constant {value=[2.0, 4.0]} : f64[2, 1]
  %6 = div(%2, %5) : f64[2, S]
  %7 = transpose(%6) {perm=[1, 0]} : f64[S, 2]
  %8 = sub(%4, %0) : f64[S]
  %9 = input {name="n"} : i64[4]
  %10 = constant {value=[2.0]} : i64[]
  %11 = div(%9, %10) : i64[4]
  return %7, %8, %11
}
)";
  bool changed = true;
  absl::StatusOr<std::string> out = RunPassOnText("simplify", text, nullptr, &changed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(changed);
  EXPECT_EQ(*out, text);
}

}  // namespace
}  // namespace graphjit::compiler
