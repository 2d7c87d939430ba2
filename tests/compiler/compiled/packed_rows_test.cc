// Weights packed into panels of the tiles' rows when the code is built (pack_weight_rows)
// and read in place as the tiles' lhs (compiler/codegen/codegen_tiles.cc): against the
// interpreter over M, N and K around the tiles' rows and lanes, f32 and f64, the host's
// vectors and AVX2's, both tiers, bit-identical on 1, 2 and 3 threads (row splits start at
// a panel); no pack of A in the kernel.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/compiled/compiled_graph.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/interpreter.h"
#include "runtime/jit_helpers.h"
#include "tests/compiler/compiled/test_tensors.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using runtime::TensorMap;

struct Shape {
  int64_t m, n, k;
};

// W [m, k] @ x [k, n], W a parameter: a 1 x 1 convolution's product.
std::string Product(const char* dt, const Shape& s) {
  return absl::StrCat("graph g {\n  %0 = input {name=\"x\"} : ", dt, "[", s.k, ", ", s.n,
                      "]\n  %1 = param {name=\"w\"} : ", dt, "[", s.m, ", ", s.k,
                      "]\n  %2 = matmul(%1, %0) : ", dt, "[", s.m, ", ", s.n,
                      "]\n  return %2\n}\n");
}

TEST(PackedRows, WeightsAsTheLhsAreReadInPlaceOverEdgeShapes) {
  // Rows past a panel (13, 25, 37 over 12, 8 or 6), one panel exactly (24), columns
  // around the lanes and a 14 x 14 map (196), K of 2, primes and more than one block.
  const Shape shapes[] = {{13, 65, 17},   {24, 196, 64}, {37, 67, 3},
                          {25, 129, 300}, {131, 70, 2},  {300, 66, 40}};
  for (const char* dt : {"f32", "f64"}) {
    const ir::DType dtype = std::string(dt) == "f64" ? ir::DType::kF64 : ir::DType::kF32;
    for (const Shape& s : shapes) {
      absl::StatusOr<ir::Graph> g = ir::ParseGraph(Product(dt, s));
      ASSERT_TRUE(g.ok()) << g.status();
      TensorMap in = {{"x", Wave(dtype, {s.k, s.n}, 0.3)}};
      TensorMap params = {{"w", Wave(dtype, {s.m, s.k}, 0.8)}};
      auto want = runtime::Interpret(*g, in, params);
      ASSERT_TRUE(want.ok()) << want.status();
      for (int vector_bytes : {0, 32}) {
        for (CodeTier tier : {CodeTier::kOptimized, CodeTier::kBaseline}) {
          std::vector<Tensor> outs;
          for (int threads : {1, 2, 3}) {
            SCOPED_TRACE(absl::StrCat(dt, " ", s.m, " x ", s.n, " x ", s.k, " vector bytes ",
                                      vector_bytes, " tier ", CodeTierName(tier), " threads ",
                                      threads));
            CompileGraphOptions options;
            options.products = ProductKernels::kTiles;
            options.codegen.max_vector_bytes = vector_bytes;
            options.codegen.tier = tier;
            options.codegen.keep_ir = true;
            options.threads = threads;
            options.min_parallel_work = 0;  // split every parallel loop, however small
            options.env = &CompileEnv::MemoryOnly();
            auto cg = CompiledGraph::Compile(*g, params, options);
            ASSERT_TRUE(cg.ok()) << cg.status();
            const std::string program = ProgramToString((*cg)->program());
            EXPECT_TRUE(absl::StrContains(program, "matmul(tiles) lhs")) << program;
            EXPECT_TRUE(absl::StrContains(program, "param panels")) << program;
            // Read in place: no kernel copies the panels back out, no pack of A.
            EXPECT_EQ((*cg)->program().kernels.size(), 1u) << program;
            const std::string llvm_ir = (*cg)->kernels().llvm_ir();
            EXPECT_TRUE(absl::StrContains(llvm_ir, "tile_k")) << llvm_ir;
            EXPECT_FALSE(absl::StrContains(llvm_ir, "pack_t")) << llvm_ir;
            EXPECT_FALSE(absl::StrContains(llvm_ir, "pack_whole_a")) << llvm_ir;
            auto out = (*cg)->Run(in);
            ASSERT_TRUE(out.ok()) << out.status();
            const double tolerance = (dtype == ir::DType::kF64 ? 1e-13 : 1e-6) * (s.k + 1);
            EXPECT_LT(runtime::MaxAbsDiff((*want)[0], (*out)[0]), tolerance);
            outs.push_back((*out)[0]);
          }
          if (outs.size() == 3) {
            EXPECT_TRUE(SameBits(outs[0], outs[1]));
            EXPECT_TRUE(SameBits(outs[0], outs[2]));
          }
        }
      }
    }
  }
}

// OpenBLAS's products read W as it is; the tiles' rows come from the tiles' plan (a row
// count of one of their register tiles), and auto packs a plain product's weights (a 1 x 1
// convolution's) and gives it to the tiles, which read them in place, on any host.
TEST(PackedRows, OnlyProductsThatRunAsTilesPackTheirWeights) {
  const Shape s{40, 100, 64};
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(Product("f32", s));
  ASSERT_TRUE(g.ok()) << g.status();
  TensorMap params = {{"w", Wave(ir::DType::kF32, {s.m, s.k}, 0.8)}};
  CompileGraphOptions options;
  options.products = ProductKernels::kBlas;
  options.env = &CompileEnv::MemoryOnly();
  auto cg = CompiledGraph::Compile(*g, params, options);
  ASSERT_TRUE(cg.ok()) << cg.status();
  EXPECT_FALSE(absl::StrContains(ProgramToString((*cg)->program()), "panels"));
  EXPECT_TRUE(absl::StrContains(ProgramToString((*cg)->program()), "blas"));
  EXPECT_FALSE(PassContextFor(params, options).tile_rows);
  options.products = ProductKernels::kAuto;
  EXPECT_TRUE(PassContextFor(params, options).tile_rows);
  cg = CompiledGraph::Compile(*g, params, options);
  ASSERT_TRUE(cg.ok()) << cg.status();
  const std::string program = ProgramToString((*cg)->program());
  EXPECT_TRUE(absl::StrContains(program, "panels")) << program;
  EXPECT_FALSE(absl::StrContains(program, "blas")) << program;
  options.products = ProductKernels::kTiles;
  for (int vector_bytes : {0, 32}) {
    options.codegen.max_vector_bytes = vector_bytes;
    const PassContext ctx = PassContextFor(params, options);
    ASSERT_TRUE(ctx.tile_rows);
    const int rows = ctx.tile_rows(40, 100, 4);
    EXPECT_TRUE(rows == 12 || rows == 8 || rows == 6 || rows == 4 || rows == 3) << rows;
  }
}

}  // namespace
}  // namespace graphjit::compiler
