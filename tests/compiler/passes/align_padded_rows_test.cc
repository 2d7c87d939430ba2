#include "compiler/passes/align_padded_rows.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pass_test_util.h"

namespace graphjit::compiler {
namespace {

using testing::RunPassOnText;

// A 1 x 1 convolution's product of `depth` terms over rows of `width`, clipped, padded by
// `left` and 1 along its rows and by 1 along its columns, read by two taps (slices) of a
// convolution.
std::string Padded(int depth, int width, int left) {
  return absl::StrCat(R"(graph g {
  %0 = input {name="x"} : f32[)",
                      depth, ", ", width, R"(]
  %1 = param {name="w"} : f32[8, )",
                      depth, R"(]
  %2 = matmul(%1, %0) : f32[8, )",
                      width, R"(]
  %3 = full {value=6.0} : f32[]
  %4 = minimum(%2, %3) : f32[8, )",
                      width, R"(]
  %5 = full {value=0.0} : f32[1, )",
                      width, R"(]
  %6 = concat(%5, %4, %5) {axis=0} : f32[10, )",
                      width, R"(]
  %7 = full {value=0.0} : f32[10, )",
                      left, R"(]
  %8 = full {value=0.0} : f32[10, 1]
  %9 = concat(%7, %6, %8) {axis=1} : f32[10, )",
                      left + width + 1, R"(]
  %10 = slice(%9) {axis=1, end=)",
                      left + width - 1, R"(, start=)", left - 1, R"(} : f32[10, )", width, R"(]
  %11 = slice(%9) {axis=1, end=)",
                      left + width + 1, R"(, start=)", left + 1, R"(} : f32[10, )", width, R"(]
  %12 = add(%10, %11) : f32[10, )",
                      width, R"(]
  return %12
})");
}

TEST(AlignPaddedRows, WidensTheLeftBorderToAVector) {
  PassContext ctx;
  ctx.tile_vector_bytes = 64;  // 16 f32 lanes
  absl::StatusOr<std::string> out = RunPassOnText("align_padded_rows", Padded(16, 112, 1), &ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  // 1 + 112 + 1 = 114 columns become 16 + 112 + 16 = 144, read from column 15 on.
  EXPECT_NE(out->find("full {value=0.0} : f32[10, 16]"), std::string::npos) << *out;
  EXPECT_NE(out->find("{axis=1} : f32[10, 144]"), std::string::npos) << *out;
  EXPECT_NE(out->find("{axis=-1, end=129, start=15} : f32[10, 114]"), std::string::npos) << *out;
}

TEST(AlignPaddedRows, MustNotFire) {
  PassContext ctx;
  ctx.tile_vector_bytes = 64;
  struct Case {
    const char* why;
    int depth, width, left;
  };
  for (const Case& c : {Case{"a deep product (compute-bound)", 147, 112, 1},
                        Case{"short rows", 16, 56, 1}, Case{"aligned already", 16, 112, 16}}) {
    SCOPED_TRACE(c.why);
    const std::string in = Padded(c.depth, c.width, c.left);
    absl::StatusOr<std::string> out = RunPassOnText("align_padded_rows", in, &ctx);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->find("axis=-1"), std::string::npos) << *out;
  }
  // The padded buffer returned: the caller would get a copy of the wider one.
  std::string returned = Padded(16, 112, 1);
  returned.replace(returned.find("return %12"), 10, "return %9");
  absl::StatusOr<std::string> as_output = RunPassOnText("align_padded_rows", returned, &ctx);
  ASSERT_TRUE(as_output.ok()) << as_output.status();
  EXPECT_EQ(as_output->find("axis=-1"), std::string::npos) << *as_output;
  PassContext no_tiles;  // products not run as tiles: the vector width is unknown
  absl::StatusOr<std::string> out =
      RunPassOnText("align_padded_rows", Padded(16, 112, 1), &no_tiles);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->find("axis=-1"), std::string::npos) << *out;
}

}  // namespace
}  // namespace graphjit::compiler
