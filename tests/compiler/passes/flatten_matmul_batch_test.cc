#include "compiler/passes/flatten_matmul_batch.h"

#include "gtest/gtest.h"
#include "pass_test_util.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using testing::RunPassOnText;

// A Linear layer on a transposed [seq, batch, d] activation, as torch exports attention's
// input projection.
const char kLinear[] = R"(graph g {
  %0 = input {name="x"} : f64[B, S, 4]
  %1 = transpose(%0) {perm=[1, 0, 2]} : f64[S, B, 4]
  %2 = param {name="W"} : f64[4, 3]
  %3 = matmul(%1, %2) : f64[S, B, 3]
  return %3
})";

TEST(FlattenMatmulBatch, FoldsTheBatchIntoTheRows) {
  absl::StatusOr<std::string> out = RunPassOnText("flatten_matmul_batch", kLinear);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"(graph g {
  %0 = input {name="x"} : f64[B, S, 4]
  %1 = transpose(%0) {perm=[1, 0, 2]} : f64[S, B, 4]
  %2 = param {name="W"} : f64[4, 3]
  %3 = reshape(%1) {shape=[B*S, 4]} : f64[B*S, 4]
  %4 = matmul(%3, %2) : f64[B*S, 3]
  %5 = reshape(%4) {shape=[S, B, 3]} : f64[S, B, 3]
  return %5
}
)");
  // The same bits: every output is the same sum in the same order.
  std::vector<double> x(2 * 5 * 4), w(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.1 * static_cast<double>(i % 9) - 0.3;
  for (size_t i = 0; i < w.size(); ++i) w[i] = 1.0 / (1.0 + static_cast<double>(i));
  runtime::TensorMap in = {{"x", *Tensor::FromDoubles(ir::DType::kF64, {2, 5, 4}, x)}};
  runtime::TensorMap params = {{"W", *Tensor::FromDoubles(ir::DType::kF64, {4, 3}, w)}};
  auto before = runtime::Interpret(*ir::ParseGraph(kLinear), in, params);
  auto after = runtime::Interpret(*ir::ParseGraph(*out), in, params);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(runtime::MaxAbsDiff((*before)[0], (*after)[0]), 0.0);
}

TEST(FlattenMatmulBatch, DoesNotFire) {
  for (const char* text : {
           // already one product
           R"(graph g {
  %0 = input {name="x"} : f64[S, 4]
  %1 = param {name="W"} : f64[4, 3]
  %2 = matmul(%0, %1) : f64[S, 3]
  return %2
})",
           // a batched right operand (attention's P @ V)
           R"(graph g {
  %0 = input {name="p"} : f64[H, S, S]
  %1 = input {name="v"} : f64[H, S, 16]
  %2 = matmul(%0, %1) : f64[H, S, 16]
  return %2
})",
           // the batch is one row block already
           R"(graph g {
  %0 = input {name="x"} : f64[1, 1, S, 4]
  %1 = param {name="W"} : f64[4, 3]
  %2 = matmul(%0, %1) : f64[1, 1, S, 3]
  return %2
})",
       }) {
    bool changed = true;
    absl::StatusOr<std::string> out =
        RunPassOnText("flatten_matmul_batch", text, nullptr, &changed);
    ASSERT_TRUE(out.ok()) << out.status() << "\n" << text;
    EXPECT_FALSE(changed) << text;
  }
}

}  // namespace
}  // namespace graphjit::compiler
