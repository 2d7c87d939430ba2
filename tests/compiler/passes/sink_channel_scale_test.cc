#include "compiler/passes/sink_channel_scale.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "pass_test_util.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using testing::RunPassOnText;

// A squeeze-and-excitation scale before a 1 x 1 convolution: x [n, 8, 4, 5] times a gate
// s [ns, 8, 1, 1], reshaped to [n, 1, 8, 20] and multiplied by w [1, m, 8].
std::string SeText(int n, int ns, int m) {
  return absl::StrCat(R"(graph g {
  %0 = input {name="x"} : f32[)",
                      n, R"(, 8, 4, 5]
  %1 = input {name="g"} : f32[)",
                      ns, R"(, 8, 1, 1]
  %2 = sigmoid(%1) : f32[)",
                      ns, R"(, 8, 1, 1]
  %3 = mul(%2, %0) : f32[)",
                      n, R"(, 8, 4, 5]
  %4 = reshape(%3) {shape=[)",
                      n, R"(, 1, 8, 20]} : f32[)", n, R"(, 1, 8, 20]
  %5 = param {name="w"} : f32[1, )",
                      m, R"(, 8]
  %6 = matmul(%5, %4) : f32[)",
                      n, ", 1, ", m, R"(, 20]
  return %6
})");
}

Tensor Values(std::vector<int64_t> shape, int seed) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  std::vector<double> v(count);
  for (int64_t i = 0; i < count; ++i) v[i] = std::sin(0.7 * static_cast<double>(i) + seed);
  return *Tensor::FromDoubles(ir::DType::kF32, shape, v);
}

// The rewritten graph computes what `text` does, to rounding.
void ExpectSameResults(const std::string& text, const std::string& out, int n, int ns, int m) {
  runtime::TensorMap in = {{"x", Values({n, 8, 4, 5}, 1)}, {"g", Values({ns, 8, 1, 1}, 2)}};
  runtime::TensorMap params = {{"w", Values({1, m, 8}, 3)}};
  auto want = runtime::Interpret(*ir::ParseGraph(text), in, params);
  auto got = runtime::Interpret(*ir::ParseGraph(out), in, params);
  ASSERT_TRUE(want.ok() && got.ok()) << want.status() << got.status();
  ASSERT_EQ((*got)[0].shape(), (*want)[0].shape());
  EXPECT_LT(runtime::MaxAbsDiff((*want)[0], (*got)[0]), 1e-5);
}

// One gate for the batch, and one per image (the scaled lhs then has the images' dims).
TEST(SinkChannelScale, TheGateScalesTheWeightsColumnsInstead) {
  for (const auto& [n, ns] : {std::pair{1, 1}, std::pair{3, 1}, std::pair{3, 3}}) {
    SCOPED_TRACE(absl::StrCat("n ", n, " gates ", ns));
    const std::string text = SeText(n, ns, 6);
    bool changed = false;
    absl::StatusOr<std::string> out = RunPassOnText("sink_channel_scale", text, nullptr, &changed);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(changed);
    // The weights times the gate, the product over x itself.
    EXPECT_TRUE(absl::StrContains(*out, "mul(%5, ")) << *out;
    EXPECT_TRUE(absl::StrContains(*out, absl::StrCat("reshape(%0) {shape=[", n, ", 1, 8, 20]}")))
        << *out;
    ExpectSameResults(text, *out, n, ns, 6);
  }
}

// Must not fire: the scaled x has another use; the factor varies over the pixels; more
// weights (m = 20 rows) than pixels to scale (20).
TEST(SinkChannelScale, LeavesOtherProductsAlone) {
  const std::string used_twice = absl::StrReplaceAll(
      SeText(1, 1, 6),
      {{"  return %6\n",
        "  %7 = reduce_sum(%3) {axis=1, keepdim=false} : f32[1, 4, 5]\n  return %6, %7\n"}});
  const std::string per_pixel =
      absl::StrReplaceAll(SeText(1, 1, 6), {{"f32[1, 8, 1, 1]", "f32[1, 8, 4, 1]"}});
  for (const std::string& text : {used_twice, per_pixel, SeText(1, 1, 20)}) {
    bool changed = true;
    absl::StatusOr<std::string> out = RunPassOnText("sink_channel_scale", text, nullptr, &changed);
    ASSERT_TRUE(out.ok()) << out.status() << "\n" << text;
    EXPECT_FALSE(changed) << text;
  }
}

}  // namespace
}  // namespace graphjit::compiler
