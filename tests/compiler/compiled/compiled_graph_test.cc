// The decode layer and TinyGPT through the whole compiler into native code.
#include "compiler/compiled/compiled_graph.h"

#include <cmath>
#include <fstream>

#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "models/model.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using runtime::TensorMap;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;

// Copies of the caches, since compiled code updates donated inputs in place.
TensorMap Fresh(const TensorMap& in) {
  TensorMap out = in;
  for (const char* name : {"k_cache", "v_cache"}) out[name] = in.at(name).Clone();
  return out;
}

TEST(CompiledDecode, MatchesInterpreterExactSymbolicMaskedUnmasked) {
  auto model = *models::CreateModel("decode");
  for (bool padded : {false, true}) {
    for (bool symbolic : {true, false}) {
      for (int64_t S : {2, 7, 64}) {
        SCOPED_TRACE(absl::StrCat(padded ? "masked " : "unmasked ", symbolic ? "symbolic" : "exact",
                                  " S=", S));
        models::TraceOptions options;
        options.padded = padded;
        if (!symbolic) options.fixed_dims = {{"S", S}};
        ir::Graph g = *models::TraceModel(*model, options);
        auto cg = CompiledGraph::Compile(g, model->params());
        ASSERT_TRUE(cg.ok()) << cg.status();
        TensorMap in = *model->ExampleInputs({{"S", S}}, 9);
        if (padded) {
          // The last two rows are padding.
          std::vector<double> mask(S, 0.0);
          for (int64_t j = std::max<int64_t>(1, S - 2); j < S; ++j) mask[j] = -INFINITY;
          in["kmask"] = *Tensor::FromDoubles(ir::DType::kF64, {1, 1, S}, mask);
        }
        ir::Bindings bind = {{"P", padded ? std::max<int64_t>(0, S - 3) : S - 1}};
        auto want = runtime::Interpret(g, in, model->params(), bind);
        auto got = (*cg)->Run(Fresh(in), bind);
        ASSERT_TRUE(want.ok()) << want.status();
        ASSERT_TRUE(got.ok()) << got.status();
        for (int i = 0; i < 3; ++i)
          EXPECT_LT(runtime::MaxAbsDiff((*want)[i], (*got)[i]), 1e-12) << i;
      }
    }
  }
}

TEST(CompiledDecode, SymbolicCodeAgreesWithExactCode) {
  auto model = *models::CreateModel("decode");
  auto symbolic = CompiledGraph::Compile(*models::TraceModel(*model), model->params());
  ASSERT_TRUE(symbolic.ok()) << symbolic.status();
  for (int64_t S : {2, 7, 64, 500}) {
    models::TraceOptions options;
    options.fixed_dims = {{"S", S}};
    auto exact = CompiledGraph::Compile(*models::TraceModel(*model, options), model->params());
    ASSERT_TRUE(exact.ok()) << exact.status();
    TensorMap in = *model->ExampleInputs({{"S", S}}, 4);
    auto a = (*symbolic)->Run(Fresh(in), {{"P", S - 1}});
    auto b = (*exact)->Run(Fresh(in), {{"P", S - 1}});
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_LT(runtime::MaxAbsDiff((*a)[0], (*b)[0]), 1e-12) << "S=" << S;
  }
}

TEST(CompiledDecode, CacheWriteIsInPlace) {
  auto model = *models::CreateModel("decode");
  auto cg = CompiledGraph::Compile(*models::TraceModel(*model), model->params());
  ASSERT_TRUE(cg.ok()) << cg.status();
  EXPECT_THAT((*cg)->donated_inputs(), ::testing::UnorderedElementsAre("k_cache", "v_cache"));
  const int64_t S = 12, P = 11;
  TensorMap in = *model->ExampleInputs({{"S", S}}, 2);
  Tensor before = in.at("v_cache").Clone();
  auto out = (*cg)->Run(in, {{"P", P}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[2].SharesBufferWith(in.at("v_cache")));
  std::vector<double> b = before.ToDoubles(), a = (*out)[2].ToDoubles();
  for (int64_t g = 0; g < 2; ++g) {
    for (int64_t r = 0; r < S; ++r) {
      bool changed = false;
      for (int64_t j = 0; j < 16; ++j)
        changed |= a[(g * S + r) * 16 + j] != b[(g * S + r) * 16 + j];
      EXPECT_EQ(changed, r == P) << g << " " << r;
    }
  }
}

// Matmuls above the lowering threshold call the runtime's BLAS helper: batched with a
// broadcast rhs batch, a transposed rhs read in place, an inlined lhs materialized first.
TEST(CompiledMatmul, BlasCallsMatchInterpreter) {
  for (const char* dtype : {"f64", "f32"}) {
    SCOPED_TRACE(dtype);
    std::string text = absl::StrReplaceAll(R"(graph g {
  %0 = input {name="a"} : DT[3, 24, 40]
  %1 = input {name="b"} : DT[1, 56, 40]
  %2 = input {name="c"} : DT[40, 56]
  %3 = add(%0, %0) : DT[3, 24, 40]
  %4 = transpose(%1) {perm=[0, 2, 1]} : DT[1, 40, 56]
  %5 = matmul(%3, %4) : DT[3, 24, 56]
  %6 = matmul(%0, %2) : DT[3, 24, 56]
  return %5, %6
})",
                                           {{"DT", dtype}});
    absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
    ASSERT_TRUE(g.ok()) << g.status();
    CompileGraphOptions options;
    options.codegen.keep_ir = true;
    auto cg = CompiledGraph::Compile(*g, {}, options);
    ASSERT_TRUE(cg.ok()) << cg.status();
    EXPECT_THAT((*cg)->kernels().llvm_ir(), HasSubstr(absl::StrCat("@graphjit_rt_matmul_", dtype)));
    const ir::DType dt = std::string(dtype) == "f64" ? ir::DType::kF64 : ir::DType::kF32;
    std::vector<double> a(3 * 24 * 40), b(56 * 40), c(40 * 56);
    for (size_t i = 0; i < a.size(); ++i) a[i] = std::sin(0.37 * i);
    for (size_t i = 0; i < b.size(); ++i) b[i] = std::cos(0.11 * i);
    for (size_t i = 0; i < c.size(); ++i) c[i] = std::sin(0.05 * i + 1);
    TensorMap in = {{"a", *Tensor::FromDoubles(dt, {3, 24, 40}, a)},
                    {"b", *Tensor::FromDoubles(dt, {1, 56, 40}, b)},
                    {"c", *Tensor::FromDoubles(dt, {40, 56}, c)}};
    auto want = runtime::Interpret(*g, in, {});
    auto got = (*cg)->Run(in);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    const double tolerance = dt == ir::DType::kF64 ? 1e-12 : 1e-5;
    for (int i = 0; i < 2; ++i)
      EXPECT_LT(runtime::MaxAbsDiff((*want)[i], (*got)[i]), tolerance) << i;
  }
}

// Symbolic rows through BLAS: S = 0 (nothing to do), S = 1 (gemv with the rhs transposed
// or not) and more; a column-vector rhs (N = 1) also goes to gemv.
TEST(CompiledMatmul, BlasHandlesSymbolicRowsAndVectors) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(R"(graph g {
  %0 = input {name="a"} : f64[S, 128]
  %1 = input {name="w"} : f64[48, 128]
  %2 = input {name="u"} : f64[128, 1]
  %3 = transpose(%1) {perm=[1, 0]} : f64[128, 48]
  %4 = matmul(%0, %3) : f64[S, 48]
  %5 = matmul(%1, %2) : f64[48, 1]
  return %4, %5
})");
  ASSERT_TRUE(g.ok()) << g.status();
  CompileGraphOptions options;
  options.codegen.keep_ir = true;
  auto cg = CompiledGraph::Compile(*g, {}, options);
  ASSERT_TRUE(cg.ok()) << cg.status();
  EXPECT_THAT((*cg)->kernels().llvm_ir(), HasSubstr("@graphjit_rt_matmul_f64"));
  for (int64_t S : {0, 1, 5}) {
    SCOPED_TRACE(absl::StrCat("S=", S));
    std::vector<double> a(S * 128), w(48 * 128), u(128);
    for (size_t i = 0; i < a.size(); ++i) a[i] = std::sin(0.3 * i);
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(0.7 * i);
    for (size_t i = 0; i < u.size(); ++i) u[i] = std::sin(0.9 * i + 2);
    TensorMap in = {{"a", *Tensor::FromDoubles(ir::DType::kF64, {S, 128}, a)},
                    {"w", *Tensor::FromDoubles(ir::DType::kF64, {48, 128}, w)},
                    {"u", *Tensor::FromDoubles(ir::DType::kF64, {128, 1}, u)}};
    auto want = runtime::Interpret(*g, in, {});
    auto got = (*cg)->Run(in);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    for (int i = 0; i < 2; ++i) EXPECT_LT(runtime::MaxAbsDiff((*want)[i], (*got)[i]), 1e-12) << i;
  }
}

TEST(CompiledDecode, HotLoopsAreVectorized) {
  auto model = *models::CreateModel("decode");
  CompileGraphOptions options;
  options.codegen.keep_ir = true;
  auto cg = CompiledGraph::Compile(*models::TraceModel(*model), model->params(), options);
  ASSERT_TRUE(cg.ok()) << cg.status();
  // Vectors of the host's width: 2 (SSE2), 4 (AVX2) or 8 (AVX-512) doubles.
  EXPECT_THAT((*cg)->kernels().optimized_ir(), ContainsRegex("<[248] x double>"));
  EXPECT_FALSE((*cg)->kernels().llvm_ir().empty());
  const PhaseTimings& t = (*cg)->timings();
  EXPECT_GT(t.optimize, 0);
  EXPECT_GT(t.codegen, 0);
}

TEST(CompiledDecode, BadInputsAreRefusedBeforeRunning) {
  auto model = *models::CreateModel("decode");
  auto cg = CompiledGraph::Compile(*models::TraceModel(*model), model->params());
  ASSERT_TRUE(cg.ok());
  TensorMap in = *model->ExampleInputs({{"S", 8}}, 1);
  auto no_p = (*cg)->Run(in, {});
  ASSERT_FALSE(no_p.ok());
  EXPECT_THAT(std::string(no_p.status().message()), HasSubstr("'P'"));
  TensorMap bad = in;
  bad["v_cache"] = *Tensor::Zeros(ir::DType::kF64, {2, 9, 16});
  auto mismatch = (*cg)->Run(bad, {{"P", 7}});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_THAT(std::string(mismatch.status().message()), HasSubstr("'v_cache'"));
  bad = in;
  bad["x"] = *Tensor::Zeros(ir::DType::kF32, {1, 128});
  EXPECT_FALSE((*cg)->Run(bad, {{"P", 7}}).ok());
  // A write position outside the cache would write out of bounds: refused.
  auto outside = (*cg)->Run(in, {{"P", 8}});
  EXPECT_FALSE(outside.ok());
}

TEST(CompiledTinyGPT, LossMatchesInterpreter) {
  auto model = *models::CreateModel("tinygpt:L=2,d=32,T=16,V=21,B=2");
  ir::Graph g = *models::TraceModel(*model);
  auto cg = CompiledGraph::Compile(g, model->params());
  ASSERT_TRUE(cg.ok()) << cg.status();
  TensorMap in = *model->ExampleInputs({}, 3);
  auto want = runtime::Interpret(g, in, model->params());
  auto got = (*cg)->Run(in);
  ASSERT_TRUE(want.ok() && got.ok());
  EXPECT_NEAR((*want)[0].ValueAt(0), (*got)[0].ValueAt(0), 1e-12);
}

long ResidentPages() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  return resident;
}

TEST(CompiledGraphMemory, CompilingAndDroppingGraphsStaysBounded) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(R"(graph small {
  %0 = input {name="x"} : f64[S]
  %1 = exp(%0) : f64[S]
  %2 = tanh(%1) : f64[S]
  return %2
})");
  ASSERT_TRUE(g.ok());
  long after_warmup = 0;
  for (int i = 0; i < 2000; ++i) {
    auto cg = CompiledGraph::Compile(*g, {});
    ASSERT_TRUE(cg.ok()) << cg.status();
    if (i == 199) after_warmup = ResidentPages();
  }
  long growth_mib = (ResidentPages() - after_warmup) * 4096 / (1 << 20);
  EXPECT_LT(growth_mib, 64) << "resident memory grew by " << growth_mib << " MiB";
}

}  // namespace
}  // namespace graphjit::compiler
