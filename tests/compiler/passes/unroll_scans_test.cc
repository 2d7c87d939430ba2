#include "compiler/passes/unroll_scans.h"

#include "gtest/gtest.h"
#include "pass_test_util.h"

namespace graphjit::compiler {
namespace {

using testing::RunPassOnText;

// Running sums of two rows, stacked: the body twice, rows sliced, outputs concatenated.
TEST(UnrollScans, AShortKnownLengthBecomesStraightLineCode) {
  absl::StatusOr<std::string> out = RunPassOnText("unroll_scans", R"(graph g {
  %0 = input {name="xs"} : f32[2, 3]
  %1 = full {value=0.0} : f32[3]
  %2 = scan(%1, %0) {carried=1, scanned=1} : f32[3]
    region graph body {
      %0 = input {name="acc"} : f32[3]
      %1 = input {name="x"} : f32[3]
      %2 = add(%0, %1) : f32[3]
      return %2, %2
    }
  %3 = scan_output(%2) {dtype=f32, index=0, shape=[2, 3]} : f32[2, 3]
  return %2, %3
})");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"(graph g {
  %0 = input {name="xs"} : f32[2, 3]
  %1 = full {value=0.0} : f32[3]
  %2 = slice(%0) {axis=0, end=1, start=0} : f32[1, 3]
  %3 = reshape(%2) {shape=[3]} : f32[3]
  %4 = add(%1, %3) : f32[3]
  %5 = reshape(%4) {shape=[1, 3]} : f32[1, 3]
  %6 = slice(%0) {axis=0, end=2, start=1} : f32[1, 3]
  %7 = reshape(%6) {shape=[3]} : f32[3]
  %8 = add(%4, %7) : f32[3]
  %9 = reshape(%8) {shape=[1, 3]} : f32[1, 3]
  %10 = concat(%5, %9) {axis=0} : f32[2, 3]
  return %8, %10
}
)");
}

// Must not fire: a symbolic length (one compile for every length) and a long one.
TEST(UnrollScans, KeepsSymbolicAndLongScans) {
  for (const char* rows : {"T", "129"}) {
    const std::string text = std::string(R"(graph g {
  %0 = input {name="xs"} : f32[)") +
                             rows + R"(, 3]
  %1 = full {value=0.0} : f32[3]
  %2 = scan(%1, %0) {carried=1, scanned=1} : f32[3]
    region graph body {
      %0 = input {name="acc"} : f32[3]
      %1 = input {name="x"} : f32[3]
      %2 = add(%0, %1) : f32[3]
      return %2
    }
  return %2
}
)";
    bool changed = true;
    absl::StatusOr<std::string> out = RunPassOnText("unroll_scans", text, nullptr, &changed);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_FALSE(changed) << rows;
    EXPECT_EQ(*out, text);
  }
}

}  // namespace
}  // namespace graphjit::compiler
