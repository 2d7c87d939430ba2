// Regressions of issue 16 in lowering and the program evaluator (no LLVM): zero-size
// constants (written in the IR, or made by constant folding) lower without reading a
// value, and program_eval computes casts and i64 arithmetic as the interpreter does.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "compiler/compiled/call_frame.h"
#include "compiler/lower/lower.h"
#include "compiler/lower/program_eval.h"
#include "compiler/passes/pipeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using runtime::TensorMap;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Optionally optimizes, lowers and evaluates `text` with program_eval.
std::vector<Tensor> Evaluate(const char* text, const TensorMap& inputs, bool optimize,
                             const ir::Bindings& bindings = {}) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return {};
  TensorMap params;
  if (optimize) {
    PassContext ctx{params};
    absl::Status s = Pipeline::Default().Run(&*g, &ctx);
    EXPECT_TRUE(s.ok()) << s;
    params = ctx.params;
  }
  absl::StatusOr<LoweredGraph> lowered = Lower(*g);
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  if (!lowered.ok()) return {};
  std::vector<Tensor> constants = ConstantTensors(*g, *lowered);
  absl::StatusOr<CallFrame> frame = PrepareCall(*g, *lowered, inputs, params, constants, bindings);
  EXPECT_TRUE(frame.ok()) << frame.status();
  if (!frame.ok()) return {};
  absl::Status s = EvaluateProgram(lowered->program, frame->args.data(), frame->symbols.data(),
                                   frame->workspace.get());
  EXPECT_TRUE(s.ok()) << s;
  return frame->outputs;
}

std::vector<int64_t> Ints(const Tensor& t) {
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}

// `graphjit-run z.gir --mode=jit` crashed in the lowering walk (now KernelBuilder::Inline,
// build_kernels.cc) reading value[0].
TEST(LowerZeroSize, EmptyConstant) {
  for (bool optimize : {false, true}) {
    std::vector<Tensor> out = Evaluate(R"(graph z {
      %0 = constant {value=[]} : f32[0, 5]
      return %0
    })",
                                       {}, optimize);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].TypeString(), "f32[0, 5]");
  }
}

// Constant folding turns neg of an empty iota into an empty constant, which is inlined.
TEST(LowerZeroSize, ConstantFoldedToEmpty) {
  std::vector<Tensor> out =
      Evaluate(R"(graph z {
    %0 = iota {axis=1} : i64[0, 5]
    %1 = neg(%0) : i64[0, 5]
    %2 = input {name="x"} : i64[0, 5]
    %3 = add(%1, %2) : i64[0, 5]
    return %1, %3
  })",
               {{"x", *Tensor::Zeros(ir::DType::kI64, {0, 5})}}, /*optimize=*/true);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].TypeString(), "i64[0, 5]");
  EXPECT_EQ(out[1].TypeString(), "i64[0, 5]");
}

TEST(LowerZeroSize, SymbolBoundToZero) {
  std::vector<Tensor> out =
      Evaluate(R"(graph z {
    %x = input {name="x"} : f64[S, 3]
    %c = constant {value=[]} : f64[0, 3]
    %j = concat(%x, %c, %x) {axis=0} : f64[2*S, 3]
    %s = reduce_sum(%j) {axis=0, keepdim=false} : f64[3]
    %m = reduce_max(%j) {axis=0, keepdim=false} : f64[3]
    return %j, %s, %m
  })",
               {{"x", *Tensor::Zeros(ir::DType::kF64, {0, 3})}}, /*optimize=*/true, {{"S", 0}});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].TypeString(), "f64[0, 3]");
  EXPECT_EQ(out[1].ToDoubles(), std::vector<double>(3, 0.0));
  EXPECT_EQ(out[2].ToDoubles(), std::vector<double>(3, -INFINITY));
}

// program_eval converted out-of-range floats with static_cast (undefined behaviour).
TEST(ProgramEvalSemantics, CastSaturatesLikeTheInterpreter) {
  const char* text = R"(graph c {
    %0 = input {name="x"} : f64[6]
    %1 = cast(%0) {dtype=i64} : i64[6]
    return %1
  })";
  TensorMap in = {{"x", *Tensor::FromDoubles(ir::DType::kF64, {6},
                                             {1e300, -1e300, INFINITY, -INFINITY, NAN, -2.5})}};
  std::vector<Tensor> out = Evaluate(text, in, /*optimize=*/false);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{kMax, kMin, kMax, kMin, 0, -2}));
}

// INT64_MIN // -1 and i64 overflow wrap (they were undefined behaviour in program_eval).
TEST(ProgramEvalSemantics, I64ArithmeticWraps) {
  const char* text = R"(graph d {
    %a = input {name="a"} : i64[4]
    %b = input {name="b"} : i64[4]
    %q = div(%a, %b) : i64[4]
    %s = add(%a, %a) : i64[4]
    %m = mul(%a, %b) : i64[4]
    %n = neg(%a) : i64[4]
    %x = abs(%a) : i64[4]
    return %q, %s, %m, %n, %x
  })";
  TensorMap in = {{"a", *Tensor::FromVector<int64_t>({4}, std::vector<int64_t>{kMin, 7, -7, kMax})},
                  {"b", *Tensor::FromVector<int64_t>({4}, std::vector<int64_t>{-1, -2, 2, -1})}};
  std::vector<Tensor> out = Evaluate(text, in, /*optimize=*/false);
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  absl::StatusOr<std::vector<Tensor>> want = runtime::Interpret(*g, in, {});
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_EQ(out.size(), want->size());
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(Ints(out[i]), Ints((*want)[i])) << i;
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{kMin, -4, -4, -kMax}));
}

}  // namespace
}  // namespace graphjit::compiler
