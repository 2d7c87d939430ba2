// The interpreter's while (ir/regions.h): trips until the cond region says stop, the
// trip limit, invariants and weights read inside the regions, symbolic carried shapes,
// and errors inside a region named as such.
#include <cmath>

#include "gmock/gmock.h"
#include "ir/parser.h"
#include "runtime/interpreter.h"
#include "tests/runtime/test_util.h"

namespace graphjit::runtime::testutil {
namespace {

using ::testing::HasSubstr;

COVERS_OPS(OpCode::kWhile, OpCode::kLoopResult, OpCode::kIf, OpCode::kScan, OpCode::kScanOutput);

// Doubles x (f64[S]) and adds the weight b while n < limit; returns x and n.
constexpr absl::string_view kDoubling = R"(graph doubling {
  %0 = input {name="x"} : f64[S]
  %1 = input {name="limit"} : i64[]
  %2 = full {value=0.0} : i64[]
  %3 = while(%0, %2, %1) {carried=2, max_trips=100} : f64[S]
    region graph cond {
      %0 = input {name="x"} : f64[S]
      %1 = input {name="n"} : i64[]
      %2 = input {name="limit"} : i64[]
      %3 = lt(%1, %2) : bool[]
      return %3
    }
    region graph body {
      %0 = input {name="x"} : f64[S]
      %1 = input {name="n"} : i64[]
      %2 = input {name="limit"} : i64[]
      %3 = param {name="b"} : f64[]
      %4 = constant {value=[2.0]} : f64[]
      %5 = mul(%0, %4) : f64[S]
      %6 = add(%5, %3) : f64[S]
      %7 = constant {value=[1.0]} : i64[]
      %8 = add(%1, %7) : i64[]
      return %6, %8
    }
  %4 = loop_result(%3, %2) {index=1} : i64[]
  return %3, %4
}
)";

ir::Graph Parse(absl::string_view text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : ir::Graph();
}

Tensor I64Scalar(int64_t v) { return FromValues(DType::kI64, {}, {static_cast<double>(v)}); }

TEST(ControlFlowTest, WhileRunsUntilItsCondSaysStop) {
  const ir::Graph g = Parse(kDoubling);
  for (int64_t limit : {0, 1, 4}) {
    for (int64_t s : {1, 3}) {
      std::vector<double> x(s, 1.0);
      absl::StatusOr<std::vector<Tensor>> out =
          Interpret(g, {{"x", FromValues(DType::kF64, {s}, x)}, {"limit", I64Scalar(limit)}},
                    {{"b", FromValues(DType::kF64, {}, {0.5})}});
      ASSERT_TRUE(out.ok()) << out.status();
      // x_{k+1} = 2 x_k + 0.5 from 1: 1, 2.5, 5.5, 11.5, 23.5.
      const double want[] = {1, 2.5, 5.5, 11.5, 23.5};
      EXPECT_EQ((*out)[1].data<int64_t>()[0], limit);
      for (int64_t i = 0; i < s; ++i) EXPECT_EQ((*out)[0].data<double>()[i], want[limit]);
    }
  }
}

TEST(ControlFlowTest, TheTripLimitEndsALoopWhoseCondStaysTrue) {
  std::string text(kDoubling);
  text.replace(text.find("max_trips=100"), 13, "max_trips=2");
  absl::StatusOr<std::vector<Tensor>> out =
      Interpret(Parse(text), {{"x", FromValues(DType::kF64, {2}, {1, 1})}, {"limit", I64Scalar(9)}},
                {{"b", FromValues(DType::kF64, {}, {0.5})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[1].data<int64_t>()[0], 2);
  EXPECT_EQ((*out)[0].data<double>()[0], 5.5);
}

TEST(ControlFlowTest, AnErrorInsideARegionNamesTheRegion) {
  absl::StatusOr<std::vector<Tensor>> out = Interpret(
      Parse(kDoubling), {{"x", FromValues(DType::kF64, {2}, {1, 1})}, {"limit", I64Scalar(1)}}, {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("while body"));
  EXPECT_THAT(out.status().message(), HasSubstr("missing parameter 'b'"));
}

// exp(x) if p else x + w (a param read in the branch).
constexpr absl::string_view kBranch = R"(graph branch {
  %0 = input {name="x"} : f64[S]
  %1 = input {name="p"} : bool[]
  %2 = if(%1, %0) {dtype=f64, shape=[S]} : f64[S]
    region graph then {
      %0 = input {name="x"} : f64[S]
      %1 = exp(%0) : f64[S]
      return %1
    }
    region graph else {
      %0 = input {name="x"} : f64[S]
      %1 = param {name="w"} : f64[]
      %2 = add(%0, %1) : f64[S]
      return %2
    }
  return %2
}
)";

TEST(ControlFlowTest, AnIfRunsTheBranchItsConditionTakes) {
  const ir::Graph g = Parse(kBranch);
  const TensorMap params = {{"w", FromValues(DType::kF64, {}, {10})}};
  for (bool p : {true, false}) {
    absl::StatusOr<std::vector<Tensor>> out =
        Interpret(g,
                  {{"x", FromValues(DType::kF64, {2}, {0, 1})},
                   {"p", FromValues(DType::kBool, {}, {p ? 1.0 : 0.0})}},
                  params);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].data<double>()[1], p ? std::exp(1.0) : 11.0);
  }
  // The untaken branch's missing weight is no error; the taken one's is, named.
  absl::StatusOr<std::vector<Tensor>> out = Interpret(
      g, {{"x", FromValues(DType::kF64, {2}, {0, 1})}, {"p", FromValues(DType::kBool, {}, {1})}},
      {});
  EXPECT_TRUE(out.ok()) << out.status();
  out = Interpret(
      g, {{"x", FromValues(DType::kF64, {2}, {0, 1})}, {"p", FromValues(DType::kBool, {}, {0})}},
      {});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("if else: missing parameter 'w'"));
}

// Running sums of the rows of xs [T, 2] with their squares stacked, and the row count.
constexpr absl::string_view kRunningSums = R"(graph sums {
  %0 = input {name="xs"} : f64[T, 2]
  %1 = full {value=0.0} : f64[2]
  %2 = full {value=0.0} : i64[]
  %3 = scan(%1, %2, %0) {carried=2, scanned=1} : f64[2]
    region graph body {
      %0 = input {name="acc"} : f64[2]
      %1 = input {name="n"} : i64[]
      %2 = input {name="x"} : f64[2]
      %3 = add(%0, %2) : f64[2]
      %4 = mul(%3, %3) : f64[2]
      %5 = constant {value=[1.0]} : i64[]
      %6 = add(%1, %5) : i64[]
      return %3, %6, %4
    }
  %4 = loop_result(%3, %2) {index=1} : i64[]
  %5 = scan_output(%3) {dtype=f64, index=0, shape=[T, 2]} : f64[T, 2]
  return %3, %4, %5
}
)";

TEST(ControlFlowTest, AScanRunsItsBodyOncePerRowAndStacks) {
  const ir::Graph g = Parse(kRunningSums);
  for (int64_t t : {0, 1, 3}) {
    std::vector<double> xs;
    for (int64_t i = 0; i < 2 * t; ++i) xs.push_back(i + 1);
    absl::StatusOr<std::vector<Tensor>> out =
        Interpret(g, {{"xs", FromValues(DType::kF64, {t, 2}, xs)}}, {});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[1].data<int64_t>()[0], t);
    EXPECT_EQ((*out)[2].shape(), (std::vector<int64_t>{t, 2}));
    double acc = 0;
    for (int64_t i = 0; i < t; ++i) {
      acc += xs[2 * i];
      EXPECT_EQ((*out)[2].data<double>()[2 * i], acc * acc);
    }
    EXPECT_EQ((*out)[0].data<double>()[0], acc);
  }
}

TEST(ControlFlowTest, ALoopResultWithoutItsWhileIsAnError) {
  ir::Node orphan{OpCode::kLoopResult, {0, 1}, ir::Attrs{{"index", int64_t{1}}}, {}};
  Tensor a = I64Scalar(1);
  const Tensor* args[] = {&a, &a};
  absl::StatusOr<Tensor> r = EvalNode(orphan, args, {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("loop_result"));
}

}  // namespace
}  // namespace graphjit::runtime::testutil
