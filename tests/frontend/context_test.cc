// One model function, two contexts: trace records what eager computes, and both report
// the first failing op by name.
#include "frontend/eager_context.h"
#include "frontend/ops.h"
#include "frontend/trace_context.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "runtime/interpreter.h"

namespace graphjit::frontend {
namespace {

using runtime::Tensor;
using runtime::TensorMap;
using ::testing::HasSubstr;

// y = softmax(x @ w) * 2 + x @ w
std::vector<Value> SmallModel(Context& ctx) {
  Value z = Matmul(ctx.Input("x"), ctx.Param("w"));
  return {Softmax(z) * 2.0 + z};
}

TEST(Contexts, TraceRecordsWhatEagerComputes) {
  TensorMap params = {{"w", *Tensor::FromDoubles(ir::DType::kF64, {3, 2}, {1, 2, 3, 4, 5, 6})}};
  TensorMap inputs = {{"x", *Tensor::FromDoubles(ir::DType::kF64, {2, 3}, {1, 0, -1, 2, 1, 0})}};

  TraceContext trace("small", {{"x", {ir::DType::kF64, {ir::SymExpr::Symbol("N"), 3}}}}, params);
  absl::StatusOr<ir::Graph> g = std::move(trace).Finish(SmallModel(trace));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ir::PrintGraph(*g),
            "graph small {\n"
            "  %0 = input {name=\"x\"} : f64[N, 3]\n"
            "  %1 = param {name=\"w\"} : f64[3, 2]\n"
            "  %2 = matmul(%0, %1) : f64[N, 2]\n"
            "  %3 = softmax(%2) {axis=-1} : f64[N, 2]\n"
            "  %4 = constant {value=[2.0]} : f64[]\n"
            "  %5 = mul(%3, %4) : f64[N, 2]\n"
            "  %6 = add(%5, %2) : f64[N, 2]\n"
            "  return %6\n"
            "}\n");

  EagerContext eager(inputs, params);
  auto out = eager.Results(SmallModel(eager));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(eager.num_ops(), 5);
  auto interp = runtime::Interpret(*g, inputs, params);
  ASSERT_TRUE(interp.ok()) << interp.status();
  EXPECT_EQ((*out)[0].ToDoubles(), (*interp)[0].ToDoubles());
}

TEST(Contexts, FirstErrorNamesTheOpAndLaterOpsFailQuietly) {
  TensorMap params = {{"w", *Tensor::Zeros(ir::DType::kF64, {4, 2})}};  // 4 != 3
  TensorMap inputs = {{"x", *Tensor::Zeros(ir::DType::kF64, {2, 3})}};
  EagerContext eager(inputs, params);
  std::vector<Value> out = SmallModel(eager);
  EXPECT_FALSE(out[0].valid());
  EXPECT_THAT(std::string(eager.status().message()), HasSubstr("matmul"));
  EXPECT_THAT(std::string(eager.status().message()), HasSubstr("contraction dims differ"));
  EXPECT_EQ(eager.num_ops(), 0);
  EXPECT_FALSE(eager.Results(out).ok());

  TraceContext trace("small", {{"x", {ir::DType::kF64, {2, 3}}}}, params);
  std::vector<Value> traced = SmallModel(trace);
  absl::StatusOr<ir::Graph> g = std::move(trace).Finish(traced);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("matmul"));
}

TEST(Contexts, MissingInputsAndParamsAreNamed) {
  TensorMap none;
  EagerContext eager(none, none);
  Value x = eager.Input("x");
  EXPECT_FALSE(x.valid());
  EXPECT_THAT(std::string(eager.status().message()), HasSubstr("missing input 'x'"));

  TraceContext trace("t", {{"x", {ir::DType::kF32, {2}}}}, none);
  EXPECT_FALSE(trace.Param("w").valid());
  EXPECT_THAT(std::string(trace.status().message()), HasSubstr("missing parameter 'w'"));
  TraceContext trace2("t", {{"x", {ir::DType::kF32, {2}}}}, none);
  EXPECT_FALSE(trace2.Input("y").valid());
  EXPECT_THAT(std::string(trace2.status().message()), HasSubstr("declared: x"));
}

TEST(Contexts, ValuesOfAnotherContextAreRejected) {
  TensorMap inputs = {{"x", *Tensor::Zeros(ir::DType::kF64, {2})}};
  TensorMap none;
  EagerContext a(inputs, none), b(inputs, none);
  Value xa = a.Input("x"), xb = b.Input("x");
  Value sum = Add(xa, xb);
  EXPECT_FALSE(sum.valid());
  EXPECT_THAT(std::string(a.status().message()), HasSubstr("another context"));
}

}  // namespace
}  // namespace graphjit::frontend
