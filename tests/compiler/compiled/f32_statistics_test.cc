// f32 sums and norm statistics accumulate in f64 compiled as they do interpreted
// (docs/OPS.md): values whose squares or partial sums overflow f32 give the interpreter's
// finite answer, not inf or a normalization by inf. Found by the differential fuzzer: a
// layernorm of f32 values near 9.2e18 (an i64 1e300 saturated and cast) came out
// -1.418455 compiled and -1.755839 interpreted. Each case also runs at ordinary magnitudes,
// and f64 graphs (already in their accumulation type) must not change.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "compiler/compiled/compiled_graph.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/interpreter.h"
#include "tests/compiler/compiled/expect_close.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using runtime::TensorMap;

struct Case {
  std::string name;
  std::string body;  // the graph's nodes after %x (f32[2, 5]); DT is the dtype
};

const Case kCases[] = {
    {"reduce_sum", "  %r = reduce_sum(%x) {axis=-1, keepdim=false} : DT[2]\n"},
    {"reduce_mean", "  %r = reduce_mean(%x) {axis=-1, keepdim=true} : DT[2, 1]\n"},
    {"rmsnorm",
     "  %w = input {name=\"w\"} : DT[5]\n"
     "  %r = rmsnorm(%x, %w) {eps=1e-06} : DT[2, 5]\n"},
    {"layernorm",
     "  %w = input {name=\"w\"} : DT[5]\n"
     "  %b = input {name=\"b\"} : DT[5]\n"
     "  %r = layernorm(%x, %w, %b) {eps=1e-06} : DT[2, 5]\n"},
};

// Rows of x: the first row's partial sums exceed FLT_MAX (3.4e38) although its sum (2e38)
// does not; the second row's squares do (|x| > 1.8e19), as in the fuzzer's layernorm.
std::vector<double> Rows(double scale) {
  return {3e38 * scale,   3e38 * scale,    -3e38 * scale, -2e38 * scale,  1e38 * scale,
          9.2e18 * scale, -1.8e19 * scale, 3e28 * scale,  4.6e18 * scale, -2e19 * scale};
}

void ExpectCompiledEqualsInterpreted(const Case& c, const char* dtype, double scale) {
  SCOPED_TRACE(absl::StrCat(c.name, " ", dtype, " scale ", scale));
  const std::string text =
      absl::StrReplaceAll(absl::StrCat("graph stats {\n  %x = input {name=\"x\"} : DT[2, 5]\n",
                                       c.body, "  return %r\n}\n"),
                          {{"DT", dtype}});
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  ASSERT_TRUE(g.ok()) << g.status();
  const ir::DType dt = std::string(dtype) == "f32" ? ir::DType::kF32 : ir::DType::kF64;
  TensorMap in = {{"x", *Tensor::FromDoubles(dt, {2, 5}, Rows(scale))},
                  {"w", *Tensor::FromDoubles(dt, {5}, {1, -0.5, 2, 0.25, 1.5})},
                  {"b", *Tensor::FromDoubles(dt, {5}, {0.5, -1, 0, 2, -0.25})}};
  absl::StatusOr<std::vector<Tensor>> want = runtime::Interpret(*g, in, {});
  ASSERT_TRUE(want.ok()) << want.status();
  absl::StatusOr<std::unique_ptr<CompiledGraph>> cg = CompiledGraph::Compile(*g, {});
  ASSERT_TRUE(cg.ok()) << cg.status();
  absl::StatusOr<std::vector<Tensor>> got = (*cg)->Run(in);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  // The interpreter's answer is finite here, so the compiled one must be too.
  ExpectFiniteAndClose((*want)[0], (*got)[0], 1e-5);
}

TEST(F32Statistics, HugeValuesMatchTheInterpreter) {
  for (const Case& c : kCases) ExpectCompiledEqualsInterpreted(c, "f32", 1.0);
}

// Must not change anything where f32 has room: ordinary magnitudes, and f64.
TEST(F32Statistics, OrdinaryValuesAndF64Unchanged) {
  for (const Case& c : kCases) {
    ExpectCompiledEqualsInterpreted(c, "f32", 1e-38);
    ExpectCompiledEqualsInterpreted(c, "f64", 1e-38);
    ExpectCompiledEqualsInterpreted(c, "f64", 1.0);
  }
}

// The fuzzer's graph itself: an outer product of 9.2e18 with a param, then layernorm.
TEST(F32Statistics, FuzzedLayernormOfSaturatedCast) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(R"(graph fuzz {
  %p = param {name="p"} : f32[2, 1, 7]
  %x = input {name="x"} : f32[7]
  %y = input {name="y"} : f32[7]
  %4 = full {value=1e+300} : i64[2, 7, 1]
  %5 = cast(%4) {dtype=f32} : f32[2, 7, 1]
  %7 = matmul(%5, %p) : f32[2, 7, 7]
  %11 = layernorm(%7, %x, %y) {eps=1e-06} : f32[2, 7, 7]
  return %11
}
)");
  ASSERT_TRUE(g.ok()) << g.status();
  TensorMap params = {{"p", *Tensor::FromDoubles(ir::DType::kF32, {2, 1, 7},
                                                 {0.3, -1.2, 2.2, 0.7, -0.1, 1.9, -2.4, 1.1, -0.6,
                                                  0.2, 3e9, -1.5, 0.9, 0.4})}};
  TensorMap in = {
      {"x", *Tensor::FromDoubles(ir::DType::kF32, {7}, {1, -0.5, 2, 0.25, 1.5, -1, 0.75})},
      {"y", *Tensor::FromDoubles(ir::DType::kF32, {7}, {0.5, -1, 0, 2, -0.25, 1, -2})}};
  absl::StatusOr<std::vector<Tensor>> want = runtime::Interpret(*g, in, params);
  ASSERT_TRUE(want.ok()) << want.status();
  // Params are folded into constants, as in the fuzzer.
  absl::StatusOr<std::unique_ptr<CompiledGraph>> cg = CompiledGraph::Compile(*g, params);
  ASSERT_TRUE(cg.ok()) << cg.status();
  absl::StatusOr<std::vector<Tensor>> got = (*cg)->Run(in);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectFiniteAndClose((*want)[0], (*got)[0], 2e-3);
}

}  // namespace
}  // namespace graphjit::compiler
