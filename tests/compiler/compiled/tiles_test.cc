// Tiled products (MatmulOrder::kTiles, compiler/codegen/codegen_tiles.cc) against the
// interpreter and OpenBLAS over edge shapes: M, N, K of 1, a vector's lanes - 1 and + 1,
// primes, more than one K-block, row and column block; batched and broadcast operands; a
// symbolic N; f32 and f64, both tiers, the host's vectors and AVX2's; bit-identical on
// 1, 2 and 3 threads.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/types/span.h"
#include "compiler/compiled/compiled_graph.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "runtime/interpreter.h"
#include "tests/compiler/compiled/test_tensors.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using runtime::TensorMap;

struct Case {
  std::string a, b, out;  // dims, e.g. "3, 13, 31"
  std::vector<int64_t> a_shape, b_shape;
};

std::string Graph(const char* dtype, const Case& c) {
  return absl::StrReplaceAll(R"(graph g {
  %0 = input {name="a"} : DT[A]
  %1 = input {name="b"} : DT[B]
  %2 = matmul(%0, %1) : DT[O]
  return %2
})",
                             {{"DT", dtype}, {"A", c.a}, {"B", c.b}, {"O", c.out}});
}

absl::StatusOr<std::unique_ptr<CompiledGraph>> CompileWith(const ir::Graph& g,
                                                           ProductKernels products,
                                                           CodeTier tier = CodeTier::kOptimized,
                                                           int vector_bytes = 0, int threads = 1) {
  CompileGraphOptions options;
  options.products = products;
  options.codegen.tier = tier;
  options.codegen.max_vector_bytes = vector_bytes;
  options.threads = threads;
  options.min_parallel_work = 0;  // split every parallel loop, however small
  options.env = &CompileEnv::MemoryOnly();
  return CompiledGraph::Compile(g, {}, options);
}

bool UsesTiles(const CompiledGraph& cg) {
  return absl::StrContains(ProgramToString(cg.program()), "matmul(tiles)");
}

// Whether the tiles' rhs in `program` reads weights orient_products packed (a product run
// the other way round): its buffer is a param named panels<NR>(..), where pack_weight_rows
// packs the lhs's.
bool RhsIsPackedWeights(const std::string& program) {
  const size_t at = program.find("matmul(tiles) lhs ");
  if (at == std::string::npos) return false;
  const size_t rhs = program.find(" rhs b", at);
  if (rhs == std::string::npos) return false;
  const std::string buffer = program.substr(rhs + 5, program.find('[', rhs) - rhs - 5);
  return absl::StrContains(program, absl::StrCat("  ", buffer, " param panels"));
}

void Check(const char* dtype, const Case& c, CodeTier tier, int vector_bytes) {
  SCOPED_TRACE(absl::StrCat(dtype, " [", c.a, "] @ [", c.b, "] tier ", CodeTierName(tier),
                            " vector bytes ", vector_bytes));
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(Graph(dtype, c));
  ASSERT_TRUE(g.ok()) << g.status();
  const ir::DType dt = std::string(dtype) == "f64" ? ir::DType::kF64 : ir::DType::kF32;
  TensorMap in = {{"a", Wave(dt, c.a_shape, 0.1)}, {"b", Wave(dt, c.b_shape, 0.7)}};
  auto want = runtime::Interpret(*g, in, {});
  ASSERT_TRUE(want.ok()) << want.status();
  auto tiles = CompileWith(*g, ProductKernels::kTiles, tier, vector_bytes);
  ASSERT_TRUE(tiles.ok()) << tiles.status();
  EXPECT_TRUE(UsesTiles(**tiles)) << ProgramToString((*tiles)->program());
  auto got = (*tiles)->Run(in);
  ASSERT_TRUE(got.ok()) << got.status();
  const int64_t k = c.a_shape.back();
  const double tolerance = (dt == ir::DType::kF64 ? 1e-13 : 1e-6) * (k + 1);
  EXPECT_LT(runtime::MaxAbsDiff((*want)[0], (*got)[0]), tolerance);
  auto blas = CompileWith(*g, ProductKernels::kBlas, tier, vector_bytes);
  ASSERT_TRUE(blas.ok()) << blas.status();
  EXPECT_FALSE(UsesTiles(**blas));
  auto blas_out = (*blas)->Run(in);
  ASSERT_TRUE(blas_out.ok()) << blas_out.status();
  EXPECT_LT(runtime::MaxAbsDiff((*blas_out)[0], (*got)[0]), tolerance);
}

// M, N, K around the vector widths (8 and 16 f32 lanes, 4 and 8 f64), the tiles' rows
// (3..12), and past one K-block (>= 128) and one row and column block; A packed once per
// call (up to 256 KiB) and per block.
const Case kCases[] = {
    {"13, 31", "31, 17", "13, 17", {13, 31}, {31, 17}},
    {"67, 71", "71, 1", "67, 1", {67, 71}, {71, 1}},
    {"97, 1", "1, 61", "97, 61", {97, 1}, {1, 61}},
    {"2, 257", "257, 15", "2, 15", {2, 257}, {257, 15}},
    {"7, 300", "300, 9", "7, 9", {7, 300}, {300, 9}},
    {"5, 129", "129, 33", "5, 33", {5, 129}, {129, 33}},
    {"37, 600", "600, 23", "37, 23", {37, 600}, {600, 23}},
    {"131, 77", "77, 1031", "131, 1031", {131, 77}, {77, 1031}},
    {"3, 11, 29", "3, 29, 47", "3, 11, 47", {3, 11, 29}, {3, 29, 47}},
    {"11, 29", "2, 29, 47", "2, 11, 47", {11, 29}, {2, 29, 47}},
    // An A over 256 KiB: packed per block of k and row block, not once per call.
    {"300, 257", "257, 19", "300, 19", {300, 257}, {257, 19}},
    // 196 columns (a 14 x 14 map): the last panel's tiles compute its vectors in N only.
    {"64, 384", "384, 196", "64, 196", {64, 384}, {384, 196}},
    // A B of 12 MB (f32) or more, beyond four L2s of up to 3 MB: packed with prefetches of
    // the rows a few panels on (at N's end, of the panel's own).
    {"13, 96", "96, 32771", "13, 32771", {13, 96}, {96, 32771}},
};

TEST(TilesTest, EdgeShapesMatchTheInterpreterAndBlas) {
  for (const char* dtype : {"f32", "f64"}) {
    for (const Case& c : kCases) Check(dtype, c, CodeTier::kOptimized, 0);
  }
}

TEST(TilesTest, BaselineTierAndAvx2VectorsRunTheSameTiles) {
  for (const char* dtype : {"f32", "f64"}) {
    for (int i : {0, 3, 6, 7}) {
      Check(dtype, kCases[i], CodeTier::kBaseline, 0);
      Check(dtype, kCases[i], CodeTier::kOptimized, 32);
      Check(dtype, kCases[i], CodeTier::kBaseline, 16);
    }
  }
}

// Below 64-byte vectors a tile whose lanes are all in C stores plain vectors (AVX's
// masked stores are microcoded on AMD's Zen 1 to 3), the edge tiles masked ones; the
// product is the interpreter's on 1 to 3 threads (kCases[7]: 131 x 1031, edges both ways).
// 64-byte vectors keep one masked store per vector.
TEST(TilesTest, WholeTilesStorePlainVectorsBelow64ByteVectors) {
  const Case& c = kCases[7];
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(Graph("f32", c));
  ASSERT_TRUE(g.ok()) << g.status();
  TensorMap in = {{"a", Wave(ir::DType::kF32, c.a_shape, 0.1)},
                  {"b", Wave(ir::DType::kF32, c.b_shape, 0.7)}};
  auto want = runtime::Interpret(*g, in, {});
  ASSERT_TRUE(want.ok()) << want.status();
  std::vector<int> widths = {32};
  if (__builtin_cpu_supports("avx512f")) widths.push_back(64);
  for (int vector_bytes : widths) {
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(absl::StrCat("vector bytes ", vector_bytes, " threads ", threads));
      CompileGraphOptions options;
      options.products = ProductKernels::kTiles;
      options.codegen.max_vector_bytes = vector_bytes;
      options.codegen.keep_ir = true;
      options.threads = threads;
      options.min_parallel_work = 0;
      options.env = &CompileEnv::MemoryOnly();
      auto cg = CompiledGraph::Compile(*g, {}, options);
      ASSERT_TRUE(cg.ok()) << cg.status();
      const std::string& ir = (*cg)->kernels().llvm_ir();
      EXPECT_EQ(absl::StrContains(ir, "c_whole"), vector_bytes < 64);
      EXPECT_TRUE(absl::StrContains(ir, "llvm.masked.store"));
      auto got = (*cg)->Run(in);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_LT(runtime::MaxAbsDiff((*want)[0], (*got)[0]), 1e-6 * 78);
    }
  }
}

TEST(TilesTest, SymbolicColumns) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(R"(graph g {
  %0 = input {name="a"} : f32[67, 70]
  %1 = input {name="b"} : f32[70, S]
  %2 = matmul(%0, %1) : f32[67, S]
  return %2
})");
  ASSERT_TRUE(g.ok()) << g.status();
  auto tiles = CompileWith(*g, ProductKernels::kTiles);
  ASSERT_TRUE(tiles.ok()) << tiles.status();
  EXPECT_TRUE(UsesTiles(**tiles));
  for (int64_t s : {1, 15, 16, 17, 100, 333}) {
    SCOPED_TRACE(absl::StrCat("S = ", s));
    TensorMap in = {{"a", Wave(ir::DType::kF32, {67, 70}, 0.1)},
                    {"b", Wave(ir::DType::kF32, {70, s}, 0.2)}};
    auto want = runtime::Interpret(*g, in, {});
    auto got = (*tiles)->Run(in);
    ASSERT_TRUE(want.ok() && got.ok());
    EXPECT_LT(runtime::MaxAbsDiff((*want)[0], (*got)[0]), 1e-4);
  }
}

TEST(TilesTest, SameBitsOnOneTwoAndThreeThreads) {
  for (const Case& c : {kCases[6], kCases[7], kCases[8]}) {
    SCOPED_TRACE(c.a);
    absl::StatusOr<ir::Graph> g = ir::ParseGraph(Graph("f32", c));
    ASSERT_TRUE(g.ok()) << g.status();
    TensorMap in = {{"a", Wave(ir::DType::kF32, c.a_shape, 0.3)},
                    {"b", Wave(ir::DType::kF32, c.b_shape, 0.9)}};
    std::vector<Tensor> outs;
    for (int threads : {1, 2, 3}) {
      auto cg = CompileWith(*g, ProductKernels::kTiles, CodeTier::kOptimized, 0, threads);
      ASSERT_TRUE(cg.ok()) << cg.status();
      auto out = (*cg)->Run(in);
      ASSERT_TRUE(out.ok()) << out.status();
      outs.push_back((*out)[0]);
    }
    EXPECT_TRUE(SameBits(outs[0], outs[1]));
    EXPECT_TRUE(SameBits(outs[0], outs[2]));
  }
}

// Known weights times a narrow operand of windows (a convolution in a CNN's last stages):
// orient_products runs it the other way round over the weights packed into the tiles'
// panels, 1 x 1 and 1 x 3 windows, against the interpreter, BLAS (as written) and 1-3
// threads (the same bits).
TEST(TilesTest, KnownWeightsTimesANarrowOperandRunTheOtherWayRound) {
  struct Shape {
    int64_t m, c, n;
  };
  for (const Shape& s : {Shape{67, 131, 5}, Shape{40, 100, 17}, Shape{129, 37, 2}}) {
    for (int64_t kw : {1, 3}) {
      SCOPED_TRACE(absl::StrCat(s.m, " x ", s.c, " x ", s.n, " window 1 x ", kw));
      const int64_t k = s.c * kw;
      absl::StatusOr<ir::Graph> g = ir::ParseGraph(absl::StrCat(
          "graph g {\n  %0 = input {name=\"x\"} : f32[1, ", s.c, ", 1, ", s.n + kw - 1,
          "]\n  %1 = window(%0) {dilations=[1, 1], kernel=[1, ", kw, "], strides=[1, 1]} : f32[1, ",
          s.c, ", 1, ", kw, ", 1, ", s.n, "]\n  %2 = reshape(%1) {shape=[", k, ", ", s.n,
          "]} : f32[", k, ", ", s.n, "]\n  %3 = param {name=\"w\"} : f32[", s.m, ", ", k,
          "]\n  %4 = matmul(%3, %2) : f32[", s.m, ", ", s.n, "]\n  return %4\n}\n"));
      ASSERT_TRUE(g.ok()) << g.status();
      TensorMap in = {{"x", Wave(ir::DType::kF32, {1, s.c, 1, s.n + kw - 1}, 0.3)}};
      TensorMap params = {{"w", Wave(ir::DType::kF32, {s.m, k}, 0.8)}};
      auto want = runtime::Interpret(*g, in, params);
      ASSERT_TRUE(want.ok()) << want.status();
      std::vector<Tensor> outs;
      for (auto [products, threads] : {std::pair{ProductKernels::kTiles, 1},
                                       {ProductKernels::kTiles, 2},
                                       {ProductKernels::kTiles, 3},
                                       {ProductKernels::kBlas, 1}}) {
        CompileGraphOptions options;
        options.products = products;
        options.threads = threads;
        options.min_parallel_work = 0;
        options.env = &CompileEnv::MemoryOnly();
        auto cg = CompiledGraph::Compile(*g, params, options);
        ASSERT_TRUE(cg.ok()) << cg.status();
        const std::string program = ProgramToString((*cg)->program());
        // OpenBLAS runs it as written.
        const bool tiles = products == ProductKernels::kTiles;
        EXPECT_EQ(RhsIsPackedWeights(program), tiles) << program;
        EXPECT_EQ(UsesTiles(**cg), tiles) << program;
        auto out = (*cg)->Run(in);
        ASSERT_TRUE(out.ok()) << out.status();
        EXPECT_LT(runtime::MaxAbsDiff((*want)[0], (*out)[0]), 1e-6 * (k + 1));
        outs.push_back((*out)[0]);
      }
      EXPECT_TRUE(SameBits(outs[0], outs[1]));
      EXPECT_TRUE(SameBits(outs[0], outs[2]));
    }
  }
}

// A convolution as the ONNX importer writes it: x [N, C, H, W] padded by concats of
// zeros (top, bottom, left, right; none when all are 0), its windows reshaped to [N, C*kh*kw,
// OH*OW], weights [M, C*kh*kw] times that.
struct Conv {
  int64_t n, c, h, w, m, kh, kw, stride, dilation, top, bottom, left, right;
  int64_t ph() const { return h + top + bottom; }
  int64_t pw() const { return w + left + right; }
  int64_t oh() const { return (ph() - dilation * (kh - 1) - 1) / stride + 1; }
  int64_t ow() const { return (pw() - dilation * (kw - 1) - 1) / stride + 1; }
  int64_t k() const { return c * kh * kw; }
  std::string Text(const char* dt) const {
    auto t = [&](int64_t a, int64_t b, int64_t cc, int64_t d) {
      return absl::StrCat(dt, "[", a, ", ", b, ", ", cc, ", ", d, "]");
    };
    std::string text = absl::StrCat("graph conv {\n  %0 = input {name=\"x\"} : ", t(n, c, h, w));
    int padded = 0;  // no pads: the windows of x itself, as the importer writes them
    if (top + bottom + left + right > 0) {
      absl::StrAppend(&text, "\n  %1 = full {value=0} : ", t(n, c, top, w),
                      "\n  %2 = full {value=0} : ", t(n, c, bottom, w),
                      "\n  %3 = concat(%1, %0, %2) {axis=2} : ", t(n, c, ph(), w),
                      "\n  %4 = full {value=0} : ", t(n, c, ph(), left),
                      "\n  %5 = full {value=0} : ", t(n, c, ph(), right),
                      "\n  %6 = concat(%4, %3, %5) {axis=3} : ", t(n, c, ph(), pw()));
      padded = 6;
    }
    absl::StrAppend(&text, "\n  %7 = window(%", padded, ") {dilations=[", dilation, ", ", dilation,
                    "], kernel=[", kh, ", ", kw, "], strides=[", stride, ", ", stride, "]} : ", dt,
                    "[", n, ", ", c, ", ", kh, ", ", kw, ", ", oh(), ", ", ow(),
                    "]\n  %8 = reshape(%7) {shape=[", n, ", ", k(), ", ", oh() * ow(), "]} : ", dt,
                    "[", n, ", ", k(), ", ", oh() * ow(), "]\n  %9 = param {name=\"w\"} : ", dt,
                    "[", m, ", ", k(), "]\n  %10 = matmul(%9, %8) : ", dt, "[", n, ", ", m, ", ",
                    oh() * ow(), "]\n  return %10\n}\n");
    return text;
  }
};

// Each of `convs` in f32 and f64, compiled as tiles at the host's vectors and AVX2's on 1,
// 2 and 3 threads: `check` on each compiled graph, outputs within `bound(conv, dtype,
// interpreter's output)` of the interpreter's and the same bits on every thread count.
void ExpectConvsMatchOnAnyThreads(
    absl::Span<const Conv> convs,
    const std::function<void(const Conv&, const CompiledGraph&)>& check,
    const std::function<double(const Conv&, ir::DType, const Tensor&)>& bound) {
  for (const char* dtype : {"f32", "f64"}) {
    const ir::DType dt = std::string(dtype) == "f64" ? ir::DType::kF64 : ir::DType::kF32;
    for (const Conv& c : convs) {
      SCOPED_TRACE(c.Text(dtype));
      absl::StatusOr<ir::Graph> g = ir::ParseGraph(c.Text(dtype));
      ASSERT_TRUE(g.ok()) << g.status();
      TensorMap in = {{"x", Wave(dt, {c.n, c.c, c.h, c.w}, 0.3)}};
      TensorMap params = {{"w", Wave(dt, {c.m, c.k()}, 0.8)}};
      auto want = runtime::Interpret(*g, in, params);
      ASSERT_TRUE(want.ok()) << want.status();
      for (int vector_bytes : {0, 32}) {
        std::vector<Tensor> outs;
        for (int threads : {1, 2, 3}) {
          CompileGraphOptions options;
          options.products = ProductKernels::kTiles;
          options.codegen.max_vector_bytes = vector_bytes;
          options.threads = threads;
          options.min_parallel_work = 0;
          options.codegen.keep_ir = true;
          options.env = &CompileEnv::MemoryOnly();
          auto cg = CompiledGraph::Compile(*g, params, options);
          ASSERT_TRUE(cg.ok()) << cg.status();
          check(c, **cg);
          auto out = (*cg)->Run(in);
          ASSERT_TRUE(out.ok()) << out.status();
          EXPECT_LT(runtime::MaxAbsDiff((*want)[0], (*out)[0]), bound(c, dt, (*want)[0]));
          outs.push_back((*out)[0]);
        }
        EXPECT_TRUE(SameBits(outs[0], outs[1]));
        EXPECT_TRUE(SameBits(outs[0], outs[2]));
      }
    }
  }
}

// The tiles read a convolution's windows in place, gathering them (or loading them where
// a vector's elements are consecutive, or a run per image row where they are so within
// each row) as they pack: no im2col kernel, the interpreter's
// sums, the same bits on 1-3 threads, at the host's vectors and AVX2's, f32 and f64. Wide
// outputs run as written (the windows are B); narrow ones with many channels are turned
// round by orient_products (the windows are A, gathered a tile's rows at a time).
TEST(TilesTest, ConvolutionWindowsAreReadInPlace) {
  const Conv kConvs[] = {
      {1, 3, 7, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1},     // rows of 7: every panel crosses one
      {5, 17, 11, 13, 9, 5, 5, 2, 1, 1, 2, 0, 1},   // stride 2, asymmetric pads, N = 5
      {1, 5, 9, 9, 7, 3, 3, 1, 2, 2, 2, 2, 2},      // dilation 2
      {1, 64, 8, 8, 13, 3, 3, 1, 1, 1, 1, 1, 1},    // K = 576: several blocks of k
      {2, 2, 2, 47, 33, 1, 1, 1, 1, 0, 0, 0, 0},    // 1 x 1, rows of 47: consecutive panels
      {1, 40, 1, 13, 67, 1, 3, 1, 1, 0, 0, 1, 1},   // turned: 13 columns in one row
      {1, 37, 5, 5, 131, 3, 3, 2, 1, 1, 1, 1, 1},   // turned: 3 x 3 outputs, stride 2
      {1, 29, 7, 7, 70, 7, 7, 1, 1, 3, 3, 3, 3},    // turned: 7 x 7 windows
      {1, 4, 20, 20, 16, 3, 3, 1, 1, 1, 1, 1, 1},   // 400 columns: threads split them
      {1, 64, 32, 32, 16, 3, 3, 1, 1, 1, 1, 1, 1},  // blocks of k and of n: a row table each
      {1, 8, 3, 3, 400, 3, 3, 1, 1, 1, 1, 1, 1},    // turned: threads split 400 channels
      {1, 16, 5, 56, 32, 3, 3, 1, 1, 1, 1, 1, 1},   // rows of 56: two runs across a row end
      {1, 8, 6, 14, 24, 3, 3, 1, 1, 1, 1, 1, 1},    // rows of 14: a vector across three rows
      {1, 6, 9, 5, 11, 3, 3, 1, 1, 1, 1, 1, 1},     // rows of 5: more rows than runs, gathers
      {1, 3, 9, 40, 16, 3, 3, 2, 1, 1, 1, 1, 1},    // stride 2, rows of 20: every other element
      {1, 24, 14, 14, 40, 3, 3, 1, 1, 1, 1, 1, 1},  // 196 columns: a part-full last panel
  };
  // Packings of windows that take their rows' addresses from a table made once per block
  // of k (blocks of 8 panels or more) and that compute them per panel.
  int row_tables = 0, per_panel = 0;
  ExpectConvsMatchOnAnyThreads(
      kConvs,
      [&](const Conv& c, const CompiledGraph& cg) {
        const std::string program = ProgramToString(cg.program());
        const std::string& llvm_ir = cg.kernels().llvm_ir();
        if (absl::StrContains(llvm_ir, "pack_kr")) {
          (absl::StrContains(llvm_ir, "pack_rows") ? row_tables : per_panel) += 1;
        }
        EXPECT_TRUE(UsesTiles(cg)) << program;
        EXPECT_FALSE(absl::StrContains(program, "_reshape")) << program;
        // Turned round (packed weights), the windows are A, gathered a tile at a time;
        // else B, gathered a panel at a time.
        const bool turned = RhsIsPackedWeights(program);
        EXPECT_EQ(turned, c.m > c.oh() * c.ow()) << program;
        EXPECT_TRUE(absl::StrContains(cg.kernels().llvm_ir(), turned ? "pack_ag" : "pack_kg"));
        // A panel of windows across an image's row ends loads each row's run (one or two
        // per vector at stride 1) where every vector's lanes fall in its runs.
        if (!turned) {
          EXPECT_TRUE(absl::StrContains(cg.kernels().llvm_ir(), "pack_kr"));
        }
      },
      [](const Conv& c, ir::DType dt, const Tensor&) {
        return (dt == ir::DType::kF64 ? 1e-13 : 1e-6) * static_cast<double>(c.k() + 1);
      });
  EXPECT_GT(row_tables, 0);
  EXPECT_GT(per_panel, 0);
}

// 3 x 3 stride-1 convolutions with 16 or more input channels, 64 or more output channels,
// sides of 8 or more and 32 or more columns (tile rows x width x images) run
// as Winograd's F(4, 3) along the rows (winograd_convolutions): the interpreter's results
// within 1e-5 of the largest output (F(4, 3)'s transforms round several times more than
// the direct sums), the same bits on 1-3 threads, at the host's vectors and AVX2's.
TEST(TilesTest, WinogradConvolutionsMatchTheInterpreterOnAnyThreads) {
  const Conv kConvs[] = {
      {1, 16, 9, 44, 64, 3, 3, 1, 1, 1, 1, 1, 1},   // 9 rows: the last tile has one
      {2, 32, 16, 16, 72, 3, 3, 1, 1, 1, 1, 1, 1},  // N = 2, rows a multiple of 4
      {1, 17, 8, 70, 65, 3, 3, 1, 1, 0, 2, 2, 0},   // asymmetric pads
      {1, 20, 10, 66, 64, 3, 3, 1, 1, 0, 0, 0, 0},  // no pads: x's own windows
  };
  ExpectConvsMatchOnAnyThreads(
      kConvs,
      [](const Conv&, const CompiledGraph& cg) {
        EXPECT_TRUE(absl::StrContains(ir::PrintGraph(cg.graph()), "winograd(w)"));
        EXPECT_TRUE(UsesTiles(cg));
      },
      [](const Conv&, ir::DType dt, const Tensor& want) {
        double scale = 0;
        for (double v : want.ToDoubles()) scale = std::max(scale, std::abs(v));
        return (dt == ir::DType::kF64 ? 1e-13 : 1e-5) * scale;
      });
}

// A computed lhs (neg of an input) is packed a scalar at a time; a plain one a vector of
// k at a time; both the same sums.
TEST(TilesTest, ComputedLhsIsPackedElementByElement) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(R"(graph g {
  %0 = input {name="a"} : f32[37, 300]
  %1 = neg(%0) : f32[37, 300]
  %2 = input {name="b"} : f32[300, 23]
  %3 = matmul(%1, %2) : f32[37, 23]
  return %3
})");
  ASSERT_TRUE(g.ok()) << g.status();
  TensorMap in = {{"a", Wave(ir::DType::kF32, {37, 300}, 0.1)},
                  {"b", Wave(ir::DType::kF32, {300, 23}, 0.7)}};
  auto want = runtime::Interpret(*g, in, {});
  auto tiles = CompileWith(*g, ProductKernels::kTiles);
  ASSERT_TRUE(want.ok() && tiles.ok());
  EXPECT_TRUE(UsesTiles(**tiles));
  auto got = (*tiles)->Run(in);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_LT(runtime::MaxAbsDiff((*want)[0], (*got)[0]), 1e-6 * 301);
}

// The weights orient_products packed into panels are read in place by the tiles (no pack
// of B in the kernel: no `bp` buffer), at the host's vectors and AVX2's, f32 and f64.
TEST(TilesTest, PackedWeightsAreReadInPlace) {
  for (const char* dtype : {"f32", "f64"}) {
    for (int vector_bytes : {0, 32}) {
      SCOPED_TRACE(absl::StrCat(dtype, " vector bytes ", vector_bytes));
      const ir::DType dt = std::string(dtype) == "f64" ? ir::DType::kF64 : ir::DType::kF32;
      absl::StatusOr<ir::Graph> g = ir::ParseGraph(absl::StrReplaceAll(R"(graph g {
  %0 = input {name="x"} : DT[1, 131, 1, 5]
  %1 = window(%0) {dilations=[1, 1], kernel=[1, 1], strides=[1, 1]} : DT[1, 131, 1, 1, 1, 5]
  %2 = reshape(%1) {shape=[131, 5]} : DT[131, 5]
  %3 = param {name="w"} : DT[67, 131]
  %4 = matmul(%3, %2) : DT[67, 5]
  return %4
})",
                                                                       {{"DT", dtype}}));
      ASSERT_TRUE(g.ok()) << g.status();
      TensorMap in = {{"x", Wave(dt, {1, 131, 1, 5}, 0.3)}};
      TensorMap params = {{"w", Wave(dt, {67, 131}, 0.8)}};
      auto want = runtime::Interpret(*g, in, params);
      ASSERT_TRUE(want.ok()) << want.status();
      CompileGraphOptions options;
      options.products = ProductKernels::kTiles;
      options.codegen.max_vector_bytes = vector_bytes;
      options.codegen.keep_ir = true;
      options.env = &CompileEnv::MemoryOnly();
      auto cg = CompiledGraph::Compile(*g, params, options);
      ASSERT_TRUE(cg.ok()) << cg.status();
      const std::string ir = (*cg)->kernels().llvm_ir();
      EXPECT_TRUE(absl::StrContains(ir, "tile_k")) << ir;
      EXPECT_FALSE(absl::StrContains(ir, "%bp = alloca")) << ir;
      auto out = (*cg)->Run(in);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_LT(runtime::MaxAbsDiff((*want)[0], (*out)[0]), dt == ir::DType::kF64 ? 1e-12 : 1e-4);
    }
  }
}

TEST(TilesTest, AutoKeepsBlasForATransposedRhsAndLoopsForSmallProducts) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(R"(graph g {
  %0 = input {name="a"} : f32[64, 128]
  %1 = input {name="b"} : f32[600, 128]
  %2 = transpose(%1) {perm=[1, 0]} : f32[128, 600]
  %3 = matmul(%0, %2) : f32[64, 600]
  %4 = input {name="c"} : f32[8, 8]
  %5 = matmul(%4, %4) : f32[8, 8]
  return %3, %5
})");
  ASSERT_TRUE(g.ok()) << g.status();
  auto cg = CompileWith(*g, ProductKernels::kAuto);
  ASSERT_TRUE(cg.ok()) << cg.status();
  const std::string program = ProgramToString((*cg)->program());
  EXPECT_FALSE(absl::StrContains(program, "matmul(tiles)")) << program;
  EXPECT_TRUE(absl::StrContains(program, "_blas")) << program;
}

// Weights scaled per call (a squeeze-and-excitation gate sink_channel_scale folded into a
// 1 x 1 convolution's weights) run as tiles under auto, which scale them as they pack them.
TEST(TilesTest, AutoTakesTheTilesForWeightsScaledPerCall) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(R"(graph g {
  %0 = param {name="w"} : f32[48, 96]
  %1 = input {name="gate"} : f32[1, 96]
  %2 = mul(%0, %1) : f32[48, 96]
  %3 = input {name="x"} : f32[96, 200]
  %4 = matmul(%2, %3) : f32[48, 200]
  return %4
})");
  ASSERT_TRUE(g.ok()) << g.status();
  const TensorMap params = {{"w", Wave(ir::DType::kF32, {48, 96}, 0.3)}};
  const TensorMap in = {{"gate", Wave(ir::DType::kF32, {1, 96}, 0.5)},
                        {"x", Wave(ir::DType::kF32, {96, 200}, 0.7)}};
  CompileGraphOptions options;
  options.products = ProductKernels::kAuto;
  options.env = &CompileEnv::MemoryOnly();
  auto cg = CompiledGraph::Compile(*g, params, options);
  ASSERT_TRUE(cg.ok()) << cg.status();
  EXPECT_TRUE(UsesTiles(**cg)) << ProgramToString((*cg)->program());
  auto got = (*cg)->Run(in);
  ASSERT_TRUE(got.ok()) << got.status();
  auto want = runtime::Interpret(*g, in, params);
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_LT(runtime::MaxAbsDiff((*want)[0], (*got)[0]), 1e-5);
}

// Tools that run the passes themselves (graphjit-dump, Python's OnnxModel.ir) take the
// context a compile would: orient_products follows the products' kernels.
TEST(TilesTest, PassContextForFollowsTheProductPolicy) {
  CompileGraphOptions options;
  options.products = ProductKernels::kTiles;
  EXPECT_GT(PassContextFor({}, options).tile_vector_bytes, 0);
  options.products = ProductKernels::kBlas;
  EXPECT_EQ(PassContextFor({}, options).tile_vector_bytes, 0);
  options.products = ProductKernels::kAuto;
  EXPECT_GT(PassContextFor({}, options).tile_vector_bytes, 0);
  options.params_are_constant = false;
  EXPECT_FALSE(PassContextFor({}, options).params_are_constant);
}

TEST(TilesTest, ProductKernelsNamesRoundTrip) {
  for (ProductKernels p : {ProductKernels::kAuto, ProductKernels::kTiles, ProductKernels::kBlas}) {
    EXPECT_EQ(ParseProductKernels(ProductKernelsName(p)), p);
  }
  EXPECT_EQ(ParseProductKernels("openblas"), std::nullopt);
  EXPECT_EQ(ParseProductKernels(""), std::nullopt);
}

}  // namespace
}  // namespace graphjit::compiler
