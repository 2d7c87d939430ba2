// Epilogues (compiler/lower/fuse_epilogues.h): the pointwise ops after a tiled product
// applied as its tiles are stored. Each case runs fused and unfused against the
// interpreter, f32 and f64, at both tiers and with AVX2's vectors, and the same bits on 1,
// 2 and 3 threads; the step fires where it should (the program shows `then`) and not
// where it must not (a second reader, a transposed read, a BLAS product).
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/lower/lower.h"
#include "compiler/lower/program_codec.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/interpreter.h"
#include "runtime/jit_helpers.h"
#include "tests/compiler/compiled/test_tensors.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using runtime::TensorMap;

struct Case {
  const char* name;
  const char* graph;                         // DT for the dtype; inputs a, b and maybe r
  std::vector<std::vector<int64_t>> shapes;  // a, b, r
  bool fuses;
};

// M, N, K past a vector's lanes and the tiles' rows; K = 300 takes two blocks of k, so the
// epilogue must wait for the last one.
const Case kCases[] = {
    {"bias then relu",
     R"(graph g {
  %0 = input {name="a"} : DT[37, 300]
  %1 = input {name="b"} : DT[300, 77]
  %2 = input {name="r"} : DT[77]
  %3 = matmul(%0, %1) : DT[37, 77]
  %4 = add(%3, %2) : DT[37, 77]
  %5 = full {value=0} : DT[]
  %6 = maximum(%4, %5) : DT[37, 77]
  return %6
})",
     {{37, 300}, {300, 77}, {77}},
     true},
    {"row bias then clip (a turned product's channels)",
     R"(graph g {
  %0 = input {name="a"} : DT[29, 40]
  %1 = input {name="b"} : DT[40, 131]
  %2 = input {name="r"} : DT[29, 1]
  %3 = matmul(%0, %1) : DT[29, 131]
  %4 = add(%3, %2) : DT[29, 131]
  %5 = full {value=0} : DT[]
  %6 = full {value=6} : DT[]
  %7 = maximum(%4, %5) : DT[29, 131]
  %8 = minimum(%7, %6) : DT[29, 131]
  return %8
})",
     {{29, 40}, {40, 131}, {29, 1}},
     true},
    {"residual then silu",
     R"(graph g {
  %0 = input {name="a"} : DT[2, 19, 33]
  %1 = input {name="b"} : DT[2, 33, 50]
  %2 = input {name="r"} : DT[2, 19, 50]
  %3 = matmul(%0, %1) : DT[2, 19, 50]
  %4 = add(%3, %2) : DT[2, 19, 50]
  %5 = sigmoid(%4) : DT[2, 19, 50]
  %6 = mul(%4, %5) : DT[2, 19, 50]
  return %6
})",
     {{2, 19, 33}, {2, 33, 50}, {2, 19, 50}},
     true},
    {"through a reshape to an image's shape and back (1x1 convolutions in a row)",
     R"(graph g {
  %0 = input {name="a"} : DT[1, 16, 24]
  %1 = input {name="b"} : DT[1, 24, 143]
  %2 = input {name="r"} : DT[16, 1, 1]
  %3 = matmul(%0, %1) : DT[1, 16, 143]
  %4 = reshape(%3) {shape=[1, 16, 11, 13]} : DT[1, 16, 11, 13]
  %5 = add(%4, %2) : DT[1, 16, 11, 13]
  %6 = full {value=0} : DT[]
  %7 = maximum(%5, %6) : DT[1, 16, 11, 13]
  %8 = reshape(%7) {shape=[1, 16, 143]} : DT[1, 16, 143]
  %9 = reshape(%0) {shape=[1, 24, 16]} : DT[1, 24, 16]
  %10 = matmul(%9, %8) : DT[1, 24, 143]
  return %10
})",
     {{1, 16, 24}, {1, 24, 143}, {16, 1, 1}},
     true},
    {"stored in an image's shape (rows of 80 in a 16 x 2 x 80 output)",
     R"(graph g {
  %0 = input {name="a"} : DT[1, 16, 24]
  %1 = input {name="b"} : DT[1, 24, 160]
  %2 = input {name="r"} : DT[16, 1, 1]
  %3 = matmul(%0, %1) : DT[1, 16, 160]
  %4 = reshape(%3) {shape=[1, 16, 2, 80]} : DT[1, 16, 2, 80]
  %5 = add(%4, %2) : DT[1, 16, 2, 80]
  return %5
})",
     {{1, 16, 24}, {1, 24, 160}, {16, 1, 1}},
     true},
    {"residual then relu stored in an image's shape of short rows (13 x 11, as a 1x1 "
     "convolution's output is: consecutive in memory; two blocks of k)",
     R"(graph g {
  %0 = input {name="a"} : DT[1, 16, 300]
  %1 = input {name="b"} : DT[1, 300, 143]
  %2 = input {name="r"} : DT[1, 16, 11, 13]
  %3 = matmul(%0, %1) : DT[1, 16, 143]
  %4 = reshape(%3) {shape=[1, 16, 11, 13]} : DT[1, 16, 11, 13]
  %5 = add(%4, %2) : DT[1, 16, 11, 13]
  %6 = full {value=0} : DT[]
  %7 = maximum(%5, %6) : DT[1, 16, 11, 13]
  return %7
})",
     {{1, 16, 300}, {1, 300, 143}, {1, 16, 11, 13}},
     true},
    {"into a padded buffer's interior (its border fills move before the product; vectors "
     "across a row end stored as two runs)",
     R"(graph g {
  %0 = input {name="a"} : DT[1, 16, 24]
  %1 = input {name="b"} : DT[1, 24, 160]
  %2 = input {name="r"} : DT[16, 1, 1]
  %3 = matmul(%0, %1) : DT[1, 16, 160]
  %4 = reshape(%3) {shape=[1, 16, 2, 80]} : DT[1, 16, 2, 80]
  %5 = add(%4, %2) : DT[1, 16, 2, 80]
  %6 = full {value=0} : DT[1, 16, 2, 1]
  %7 = concat(%6, %5, %6) {axis=3} : DT[1, 16, 2, 82]
  %8 = full {value=0} : DT[1, 16, 1, 82]
  %9 = concat(%8, %7, %8) {axis=2} : DT[1, 16, 4, 82]
  return %9
})",
     {{1, 16, 24}, {1, 24, 160}, {16, 1, 1}},
     true},
    {"into a padded buffer's interior, blocks of k (C read back by runs between them)",
     R"(graph g {
  %0 = input {name="a"} : DT[1, 16, 1500]
  %1 = input {name="b"} : DT[1, 1500, 160]
  %2 = input {name="r"} : DT[16, 1, 1]
  %3 = matmul(%0, %1) : DT[1, 16, 160]
  %4 = reshape(%3) {shape=[1, 16, 2, 80]} : DT[1, 16, 2, 80]
  %5 = add(%4, %2) : DT[1, 16, 2, 80]
  %6 = full {value=0} : DT[1, 16, 2, 1]
  %7 = concat(%6, %5, %6) {axis=3} : DT[1, 16, 2, 82]
  %8 = full {value=0} : DT[1, 16, 1, 82]
  %9 = concat(%8, %7, %8) {axis=2} : DT[1, 16, 4, 82]
  return %9
})",
     {{1, 16, 1500}, {1, 1500, 160}, {16, 1, 1}},
     true},
    {"into a padded image of 24 rows of 160 (hardswish, every side padded)",
     R"(graph g {
  %0 = input {name="a"} : DT[1, 16, 27]
  %1 = input {name="b"} : DT[1, 27, 3840]
  %2 = input {name="r"} : DT[16, 1, 1]
  %3 = matmul(%0, %1) : DT[1, 16, 3840]
  %4 = reshape(%3) {shape=[1, 16, 24, 160]} : DT[1, 16, 24, 160]
  %5 = add(%4, %2) : DT[1, 16, 24, 160]
  %6 = full {value=3} : DT[]
  %7 = full {value=0} : DT[]
  %8 = full {value=6} : DT[]
  %9 = add(%5, %6) : DT[1, 16, 24, 160]
  %10 = maximum(%9, %7) : DT[1, 16, 24, 160]
  %11 = minimum(%10, %8) : DT[1, 16, 24, 160]
  %12 = mul(%5, %11) : DT[1, 16, 24, 160]
  %13 = full {value=0} : DT[1, 16, 24, 1]
  %14 = concat(%13, %12, %13) {axis=3} : DT[1, 16, 24, 162]
  %15 = full {value=0} : DT[1, 16, 1, 162]
  %16 = concat(%15, %14, %15) {axis=2} : DT[1, 16, 26, 162]
  return %16
})",
     {{1, 16, 27}, {1, 27, 3840}, {16, 1, 1}},
     true},
    {"residual over packed weights, two blocks of k (a transformer's projection)",
     R"(graph g {
  %0 = input {name="a"} : DT[1, 40, 240]
  %1 = param {name="b"} : DT[240, 120]
  %2 = input {name="r"} : DT[1, 40, 120]
  %3 = matmul(%0, %1) : DT[1, 40, 120]
  %5 = param {name="c"} : DT[120]
  %6 = add(%3, %5) : DT[1, 40, 120]
  %4 = add(%2, %6) : DT[1, 40, 120]
  %7 = reduce_mean(%4) {axis=2, keepdim=true} : DT[1, 40, 1]
  %8 = sub(%4, %7) : DT[1, 40, 120]
  return %8
})",
     {{1, 40, 240}, {240, 120}, {1, 40, 120}},
     true},
    {"must not fire: a padded buffer of short rows (13)",
     R"(graph g {
  %0 = input {name="a"} : DT[1, 16, 24]
  %1 = input {name="b"} : DT[1, 24, 143]
  %2 = input {name="r"} : DT[16, 1, 1]
  %3 = matmul(%0, %1) : DT[1, 16, 143]
  %4 = reshape(%3) {shape=[1, 16, 11, 13]} : DT[1, 16, 11, 13]
  %5 = add(%4, %2) : DT[1, 16, 11, 13]
  %6 = full {value=0} : DT[1, 16, 11, 1]
  %7 = concat(%6, %5, %6) {axis=3} : DT[1, 16, 11, 15]
  return %7
})",
     {{1, 16, 24}, {1, 24, 143}, {16, 1, 1}},
     false},
    {"must not fire: two readers",
     R"(graph g {
  %0 = input {name="a"} : DT[37, 30]
  %1 = input {name="b"} : DT[30, 77]
  %2 = input {name="r"} : DT[77]
  %3 = matmul(%0, %1) : DT[37, 77]
  %4 = add(%3, %2) : DT[37, 77]
  %5 = mul(%3, %3) : DT[37, 77]
  return %4, %5
})",
     {{37, 30}, {30, 77}, {77}},
     false},
    {"must not fire: read transposed",
     R"(graph g {
  %0 = input {name="a"} : DT[37, 30]
  %1 = input {name="b"} : DT[30, 77]
  %2 = input {name="r"} : DT[77, 37]
  %3 = matmul(%0, %1) : DT[37, 77]
  %4 = transpose(%3) {perm=[1, 0]} : DT[77, 37]
  %5 = add(%4, %2) : DT[77, 37]
  return %5
})",
     {{37, 30}, {30, 77}, {77, 37}},
     false},
};

absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(const ir::Graph& g, bool fuse,
                                                       ProductKernels products, CodeTier tier,
                                                       int vector_bytes, int threads,
                                                       const TensorMap& params = {}) {
  CompileGraphOptions options;
  options.products = products;
  options.fuse_epilogues = fuse;
  options.codegen.tier = tier;
  options.codegen.max_vector_bytes = vector_bytes;
  options.threads = threads;
  options.min_parallel_work = 0;  // split every parallel loop, however small
  options.env = &CompileEnv::MemoryOnly();
  return CompiledGraph::Compile(g, params, options);
}

bool Fused(const CompiledGraph& cg) {
  return absl::StrContains(ProgramToString(cg.program()), "      then b");
}

TEST(EpilogueTest, FusedAndUnfusedMatchTheInterpreterOnEveryTierAndThreadCount) {
  for (const char* dtype : {"f32", "f64"}) {
    const ir::DType dt = std::string(dtype) == "f64" ? ir::DType::kF64 : ir::DType::kF32;
    for (const Case& c : kCases) {
      SCOPED_TRACE(absl::StrCat(c.name, " ", dtype));
      absl::StatusOr<ir::Graph> g = ir::ParseGraph(absl::StrReplaceAll(c.graph, {{"DT", dtype}}));
      ASSERT_TRUE(g.ok()) << g.status();
      TensorMap in = {{"a", Wave(dt, c.shapes[0], 0.1)},
                      {"b", Wave(dt, c.shapes[1], 0.7)},
                      {"r", Wave(dt, c.shapes[2], 1.3)}};
      // b as a param: weights the tiles read from panels packed at compile time.
      TensorMap params;
      if (absl::StrContains(c.graph, "param {name=\"b\"}")) {
        params["b"] = in["b"];
        in.erase("b");
        params["c"] = Wave(dt, {c.shapes[1].back()}, 2.1);
      }
      absl::StatusOr<std::vector<Tensor>> want = runtime::Interpret(*g, in, params);
      ASSERT_TRUE(want.ok()) << want.status();
      const double tolerance = dt == ir::DType::kF64 ? 1e-10 : 1e-4;
      struct Config {
        CodeTier tier;
        int vector_bytes;
      };
      for (const Config& config : {Config{CodeTier::kOptimized, 0}, Config{CodeTier::kBaseline, 0},
                                   Config{CodeTier::kOptimized, 32}}) {
        SCOPED_TRACE(
            absl::StrCat(CodeTierName(config.tier), " vector bytes ", config.vector_bytes));
        std::vector<Tensor> first;
        for (const bool fuse : {true, false}) {
          for (int threads : {1, 2, 3}) {
            SCOPED_TRACE(absl::StrCat(fuse ? "fused" : "unfused", ", ", threads, " threads"));
            auto cg = Compile(*g, fuse, ProductKernels::kTiles, config.tier, config.vector_bytes,
                              threads, params);
            ASSERT_TRUE(cg.ok()) << cg.status();
            EXPECT_EQ(Fused(**cg), fuse && c.fuses) << ProgramToString((*cg)->program());
            auto got = (*cg)->Run(in);
            ASSERT_TRUE(got.ok()) << got.status();
            for (size_t i = 0; i < want->size(); ++i) {
              EXPECT_LT(runtime::MaxAbsDiff((*want)[i], (*got)[i]), tolerance) << "output " << i;
            }
            // Fused, every thread count gives the bits of one thread.
            if (!fuse) continue;
            if (threads == 1) {
              first = *got;
            } else {
              for (size_t i = 0; i < first.size(); ++i) {
                EXPECT_EQ(runtime::MaxAbsDiff(first[i], (*got)[i]), 0.0) << "output " << i;
              }
            }
          }
        }
      }
    }
  }
}

TEST(EpilogueTest, BlasProductsKeepTheirConsumerKernel) {
  absl::StatusOr<ir::Graph> g =
      ir::ParseGraph(absl::StrReplaceAll(kCases[0].graph, {{"DT", "f32"}}));
  ASSERT_TRUE(g.ok()) << g.status();
  auto cg = Compile(*g, true, ProductKernels::kBlas, CodeTier::kOptimized, 0, 1);
  ASSERT_TRUE(cg.ok()) << cg.status();
  EXPECT_FALSE(Fused(**cg)) << ProgramToString((*cg)->program());
}

}  // namespace
}  // namespace graphjit::compiler

namespace graphjit::compiler {
namespace {

TEST(EpilogueTest, AFusedProgramRoundTripsThroughItsRecordBytes) {
  absl::StatusOr<ir::Graph> g =
      ir::ParseGraph(absl::StrReplaceAll(kCases[2].graph, {{"DT", "f32"}}));
  ASSERT_TRUE(g.ok()) << g.status();
  LowerOptions options;
  options.products = ProductKernels::kTiles;
  absl::StatusOr<LoweredGraph> lowered = Lower(*g, options);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  const std::string text = ProgramToString(lowered->program);
  ASSERT_TRUE(absl::StrContains(text, "      then b")) << text;
  absl::StatusOr<LoweredGraph> decoded = DecodeLoweredGraph(EncodeLoweredGraph(*lowered));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(ProgramToString(decoded->program), text);
}

}  // namespace
}  // namespace graphjit::compiler

namespace graphjit::compiler {
namespace {

// A transformer block's feed-forward half as the OCR recognizer has it: layer norm, FC1
// + bias + silu, FC2 + bias + the residual: two fused products in a row, the second's lhs
// the first's fused output.
TEST(EpilogueTest, TwoFusedProductsInARow) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(R"(graph g {
  %0 = input {name="x"} : f32[1, 40, 120]
  %1 = param {name="w1"} : f32[120, 240]
  %2 = param {name="b1"} : f32[240]
  %3 = param {name="w2"} : f32[240, 120]
  %4 = param {name="b2"} : f32[120]
  %5 = reduce_mean(%0) {axis=2, keepdim=true} : f32[1, 40, 1]
  %6 = sub(%0, %5) : f32[1, 40, 120]
  %7 = matmul(%6, %1) : f32[1, 40, 240]
  %8 = add(%7, %2) : f32[1, 40, 240]
  %9 = sigmoid(%8) : f32[1, 40, 240]
  %10 = mul(%8, %9) : f32[1, 40, 240]
  %11 = matmul(%10, %3) : f32[1, 40, 120]
  %12 = add(%11, %4) : f32[1, 40, 120]
  %13 = add(%0, %12) : f32[1, 40, 120]
  %14 = reduce_mean(%13) {axis=2, keepdim=true} : f32[1, 40, 1]
  %15 = sub(%13, %14) : f32[1, 40, 120]
  return %15
})");
  ASSERT_TRUE(g.ok()) << g.status();
  const ir::DType f32 = ir::DType::kF32;
  TensorMap params = {{"w1", Wave(f32, {120, 240}, 0.3)},
                      {"b1", Wave(f32, {240}, 0.5)},
                      {"w2", Wave(f32, {240, 120}, 0.9)},
                      {"b2", Wave(f32, {120}, 1.1)}};
  TensorMap in = {{"x", Wave(f32, {1, 40, 120}, 0.2)}};
  absl::StatusOr<std::vector<Tensor>> want = runtime::Interpret(*g, in, params);
  ASSERT_TRUE(want.ok()) << want.status();
  for (int threads : {1, 2}) {
    auto cg = Compile(*g, true, ProductKernels::kTiles, CodeTier::kOptimized, 0, threads, params);
    ASSERT_TRUE(cg.ok()) << cg.status();
    EXPECT_TRUE(Fused(**cg));
    auto got = (*cg)->Run(in);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_LT(runtime::MaxAbsDiff((*want)[0], (*got)[0]), 1e-4)
        << ProgramToString((*cg)->program());
  }
}

}  // namespace
}  // namespace graphjit::compiler

namespace graphjit::compiler {
namespace {

// Two products of the same shapes with different epilogues are different kernels: the
// epilogue is part of the kernel's content key (they once shared compiled code).
TEST(EpilogueTest, EqualProductsWithOtherEpiloguesAreOtherKernels) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(R"(graph g {
  %0 = input {name="a"} : f32[37, 30]
  %1 = input {name="b"} : f32[30, 77]
  %2 = input {name="c"} : f32[37, 30]
  %3 = matmul(%0, %1) : f32[37, 77]
  %4 = matmul(%2, %1) : f32[37, 77]
  %5 = full {value=2} : f32[]
  %6 = add(%3, %5) : f32[37, 77]
  %7 = mul(%4, %5) : f32[37, 77]
  return %6, %7
})");
  ASSERT_TRUE(g.ok()) << g.status();
  TensorMap in = {{"a", Wave(ir::DType::kF32, {37, 30}, 0.1)},
                  {"b", Wave(ir::DType::kF32, {30, 77}, 0.4)},
                  {"c", Wave(ir::DType::kF32, {37, 30}, 0.8)}};
  absl::StatusOr<std::vector<Tensor>> want = runtime::Interpret(*g, in, {});
  ASSERT_TRUE(want.ok()) << want.status();
  auto cg = Compile(*g, true, ProductKernels::kTiles, CodeTier::kOptimized, 0, 1);
  ASSERT_TRUE(cg.ok()) << cg.status();
  ASSERT_TRUE(Fused(**cg)) << ProgramToString((*cg)->program());
  auto got = (*cg)->Run(in);
  ASSERT_TRUE(got.ok()) << got.status();
  for (int i = 0; i < 2; ++i) {
    EXPECT_LT(runtime::MaxAbsDiff((*want)[i], (*got)[i]), 1e-4) << "output " << i;
  }
}

}  // namespace
}  // namespace graphjit::compiler
