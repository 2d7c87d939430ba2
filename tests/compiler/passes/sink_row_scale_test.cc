#include "compiler/passes/sink_row_scale.h"

#include <string>

#include "gtest/gtest.h"
#include "pass_test_util.h"

namespace graphjit::compiler {
namespace {

using testing::RunPassOnText;

// Runs sink_row_scale on `text` and returns the printed graph; `changed` says if it fired.
std::string Sink(const std::string& text, bool* changed) {
  absl::StatusOr<std::string> out = RunPassOnText("sink_row_scale", text, nullptr, changed);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : "";
}

// The softmax of attention followed by P @ V: the division moves after the product.
TEST(SinkRowScale, DividesTheProductOfASoftmax) {
  bool changed = false;
  EXPECT_EQ(Sink(R"(graph g {
  %0 = input {name="e"} : f64[2, 4, 1, S]
  %1 = reduce_sum(%0) {axis=-1, keepdim=true} : f64[2, 4, 1, 1]
  %2 = div(%0, %1) : f64[2, 4, 1, S]
  %3 = input {name="v"} : f64[2, 1, S, 16]
  %4 = matmul(%2, %3) : f64[2, 4, 1, 16]
  return %4
})",
                 &changed),
            R"(graph g {
  %0 = input {name="e"} : f64[2, 4, 1, S]
  %1 = reduce_sum(%0) {axis=-1, keepdim=true} : f64[2, 4, 1, 1]
  %2 = div(%0, %1) : f64[2, 4, 1, S]
  %3 = input {name="v"} : f64[2, 1, S, 16]
  %4 = matmul(%0, %3) : f64[2, 4, 1, 16]
  %5 = div(%4, %1) : f64[2, 4, 1, 16]
  return %5
}
)");
  EXPECT_TRUE(changed);
}

// A product by a per-row factor or a scalar, on either side; constant K >= N.
TEST(SinkRowScale, MultipliesByRowFactorsAndScalars) {
  bool changed = false;
  EXPECT_EQ(Sink(R"(graph g {
  %0 = input {name="a"} : f32[3, 64]
  %1 = input {name="r"} : f32[3, 1]
  %2 = mul(%1, %0) : f32[3, 64]
  %3 = input {name="b"} : f32[64, 8]
  %4 = matmul(%2, %3) : f32[3, 8]
  %5 = constant {value=[0.5]} : f32[]
  %6 = mul(%0, %5) : f32[3, 64]
  %7 = matmul(%6, %3) : f32[3, 8]
  return %4, %7
})",
                 &changed),
            R"(graph g {
  %0 = input {name="a"} : f32[3, 64]
  %1 = input {name="r"} : f32[3, 1]
  %2 = mul(%1, %0) : f32[3, 64]
  %3 = input {name="b"} : f32[64, 8]
  %4 = matmul(%0, %3) : f32[3, 8]
  %5 = mul(%4, %1) : f32[3, 8]
  %6 = constant {value=[0.5]} : f32[]
  %7 = mul(%0, %6) : f32[3, 64]
  %8 = matmul(%0, %3) : f32[3, 8]
  %9 = mul(%8, %6) : f32[3, 8]
  return %5, %9
}
)");
  EXPECT_TRUE(changed);
}

// Must not fire: the factor varies along K; the scaled value has another use or is an
// output; the divisor is the lhs; the factor broadcasts a; more divisions (N > K, or N
// symbolic).
TEST(SinkRowScale, LeavesOtherShapesAlone) {
  const char* cases[] = {
      R"(graph g {
  %0 = input {name="a"} : f64[3, 64]
  %1 = input {name="w"} : f64[64]
  %2 = mul(%0, %1) : f64[3, 64]
  %3 = input {name="b"} : f64[64, 8]
  %4 = matmul(%2, %3) : f64[3, 8]
  return %4
})",
      R"(graph g {
  %0 = input {name="a"} : f64[3, 64]
  %1 = input {name="r"} : f64[3, 1]
  %2 = div(%0, %1) : f64[3, 64]
  %3 = input {name="b"} : f64[64, 8]
  %4 = matmul(%2, %3) : f64[3, 8]
  %5 = neg(%2) : f64[3, 64]
  return %4, %5
})",
      R"(graph g {
  %0 = input {name="a"} : f64[3, 64]
  %1 = input {name="r"} : f64[3, 1]
  %2 = div(%0, %1) : f64[3, 64]
  %3 = input {name="b"} : f64[64, 8]
  %4 = matmul(%2, %3) : f64[3, 8]
  return %4, %2
})",
      R"(graph g {
  %0 = input {name="a"} : f64[3, 64]
  %1 = input {name="r"} : f64[3, 1]
  %2 = div(%1, %0) : f64[3, 64]
  %3 = input {name="b"} : f64[64, 8]
  %4 = matmul(%2, %3) : f64[3, 8]
  return %4
})",
      R"(graph g {
  %0 = input {name="a"} : f64[3, 1]
  %1 = input {name="r"} : f64[3, 1]
  %2 = input {name="x"} : f64[2, 3, 1]
  %3 = div(%0, %2) : f64[2, 3, 1]
  %4 = input {name="b"} : f64[1, 8]
  %5 = matmul(%3, %4) : f64[2, 3, 8]
  return %5
})",
      R"(graph g {
  %0 = input {name="a"} : f64[3, 8]
  %1 = input {name="r"} : f64[3, 1]
  %2 = div(%0, %1) : f64[3, 8]
  %3 = input {name="b"} : f64[8, 64]
  %4 = matmul(%2, %3) : f64[3, 64]
  return %4
})",
      R"(graph g {
  %0 = input {name="a"} : f64[3, S]
  %1 = input {name="r"} : f64[3, 1]
  %2 = div(%0, %1) : f64[3, S]
  %3 = input {name="b"} : f64[S, N]
  %4 = matmul(%2, %3) : f64[3, N]
  return %4
})",
  };
  for (const char* text : cases) {
    bool changed = true;
    absl::StatusOr<ir::Graph> in = ir::ParseGraph(text);
    ASSERT_TRUE(in.ok()) << in.status() << "\n" << text;
    EXPECT_EQ(Sink(text, &changed), ir::PrintGraph(*in)) << text;
    EXPECT_FALSE(changed) << text;
  }
}

}  // namespace
}  // namespace graphjit::compiler
