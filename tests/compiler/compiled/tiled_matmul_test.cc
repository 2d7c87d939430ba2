// Register-tiled and row-jammed matrix-vector products (compiler/codegen/codegen_matmul.cc):
// at edge widths (one lane, one vector, a full strip and one more, primes, symbolic N),
// depths (K not a multiple of the jammed rows, symbolic K) and with an inlined lhs
// (staged per k, or recomputed when K is symbolic), the generated code equals the untiled
// axpy loops bit for bit where it keeps their order (a plain lhs, and K < 32 or rows wider
// than any host's strip) and the interpreter within rounding.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/jit.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/check.h"
#include "ir/parser.h"
#include "runtime/interpreter.h"
#include "tests/compiler/compiled/test_tensors.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using runtime::TensorMap;

struct Compiled {
  std::unique_ptr<CompiledGraph> tiled, untiled;
};

Compiled CompileBoth(const ir::Graph& g, CodeTier tier = CodeTier::kOptimized,
                     int vector_bytes = 0) {
  Compiled c;
  for (bool tile : {true, false}) {
    CompileGraphOptions options;
    options.codegen.tile_matmuls = tile;
    options.codegen.tier = tier;
    options.codegen.max_vector_bytes = vector_bytes;
    options.codegen.keep_ir = true;
    auto cg = CompiledGraph::Compile(g, {}, options);
    GJ_CHECK(cg.ok()) << cg.status().message();
    (tile ? c.tiled : c.untiled) = *std::move(cg);
  }
  return c;
}

// The interpreter's, the tiled and the untiled code's outputs on the same inputs.
struct Outputs {
  std::vector<Tensor> want, tiled, untiled;
};

void RunAll(const ir::Graph& g, const Compiled& c, const TensorMap& in, Outputs* out) {
  auto want = runtime::Interpret(g, in, {});
  auto tiled = c.tiled->Run(in);
  auto untiled = c.untiled->Run(in);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(tiled.ok()) << tiled.status();
  ASSERT_TRUE(untiled.ok()) << untiled.status();
  *out = {*std::move(want), *std::move(tiled), *std::move(untiled)};
}

// x @ w and exp(x) @ w (an inlined lhs) for x [1, K], w [K, N].
constexpr char kMatvec[] = R"(graph g {
  %0 = input {name="x"} : DT[1, KD]
  %1 = input {name="w"} : DT[KD, ND]
  %2 = matmul(%0, %1) : DT[1, ND]
  %3 = exp(%0) : DT[1, KD]
  %4 = matmul(%3, %1) : DT[1, ND]
  return %2, %4
})";

// `tiled`, where it does not depend on the host's vector width: whether the tiled code
// must use vectors (>= 16 columns are at least one vector of either dtype on x86).
void CheckMatvec(const char* dtype, const std::string& k_dim, const std::string& n_dim, int64_t K,
                 int64_t N, std::optional<bool> tiled = std::nullopt,
                 CodeTier tier = CodeTier::kOptimized, int vector_bytes = 0) {
  SCOPED_TRACE(absl::StrCat(dtype, " K=", k_dim, "=", K, " N=", n_dim, "=", N, " tier ",
                            CodeTierName(tier), " vector bytes ", vector_bytes));
  absl::StatusOr<ir::Graph> g =
      ir::ParseGraph(absl::StrReplaceAll(kMatvec, {{"DT", dtype}, {"KD", k_dim}, {"ND", n_dim}}));
  ASSERT_TRUE(g.ok()) << g.status();
  Compiled c = CompileBoth(*g, tier, vector_bytes);
  // The tiled code works on vectors before LLVM's vectorizers run; the untiled does not.
  const ir::DType dt = std::string(dtype) == "f64" ? ir::DType::kF64 : ir::DType::kF32;
  const std::string vector = dt == ir::DType::kF64 ? " x double>" : " x float>";
  if (tiled) {
    EXPECT_EQ(absl::StrContains(c.tiled->kernels().llvm_ir(), vector), *tiled);
  }
  EXPECT_FALSE(absl::StrContains(c.untiled->kernels().llvm_ir(), vector));
  TensorMap in = {{"x", Wave(dt, {1, K}, 0.1)}, {"w", Wave(dt, {K, N}, 0.7)}};
  Outputs o;
  ASSERT_NO_FATAL_FAILURE(RunAll(*g, c, in, &o));
  const double tolerance = dt == ir::DType::kF64 ? 1e-12 : 2e-5;
  // With a constant K below 32 x @ w and exp(x) @ w sum the same products in the same
  // order either way (narrow strips over a longer or symbolic k split it over accumulator
  // sets); the staged exp runs vectorized, with the scalar exp's bits (it is inline).
  // Rows wider than one strip (128 columns, f32 with AVX-512, is the widest) or of
  // unknown width are jammed, which keeps the order at any K.
  const bool jammed = n_dim != absl::StrCat(N) || N > 128;
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(absl::StrCat("output ", i));
    if ((k_dim == absl::StrCat(K) && K < 32) || jammed) {
      EXPECT_TRUE(SameBits(o.tiled[i], o.untiled[i]))
          << "max diff " << runtime::MaxAbsDiff(o.tiled[i], o.untiled[i]);
    }
    EXPECT_LT(runtime::MaxAbsDiff(o.tiled[i], o.untiled[i]), tolerance * (K + 1));
    EXPECT_LT(runtime::MaxAbsDiff(o.want[i], o.tiled[i]), tolerance * (K + 1));
  }
}

TEST(TiledMatmul, ConstantWidthsEqualUntiledBitForBit) {
  for (const char* dtype : {"f64", "f32"}) {
    for (int64_t N : {1, 2, 3, 4, 7, 8, 31, 32, 33, 63, 64, 65, 127, 129, 344, 500}) {
      for (int64_t K : {1, 3, 128}) {
        CheckMatvec(dtype, absl::StrCat(K), absl::StrCat(N), K, N,
                    N >= 16 ? std::optional(true) : std::nullopt);
      }
    }
  }
}

TEST(TiledMatmul, SymbolicWidthAndDepth) {
  for (const char* dtype : {"f64", "f32"}) {
    for (int64_t N : {1, 5, 16, 33, 64, 97, 500}) {
      CheckMatvec(dtype, "40", "N", 40, N, true);  // a symbolic width is jammed
      CheckMatvec(dtype, "K", "N", 13, N, true);
    }
    CheckMatvec(dtype, "K", "64", 2, 64);            // symbolic K: tiled only if 64 is one strip
    CheckMatvec(dtype, "K", "16", 203, 16, true);    // one strip: k split, a remainder
    CheckMatvec(dtype, "515", "16", 515, 16, true);  // one narrow strip, staged lhs, k split
    CheckMatvec(dtype, "K", "16", 70, 16, true);     // one strip: any K
  }
}

// Weights larger than the caches, or of unknown size, are jammed (their rows stream in
// order), at depths around the jammed rows' multiple.
TEST(TiledMatmul, LargeOrUnsizedWeightsAreJammed) {
  for (const char* dtype : {"f64", "f32"}) {
    CheckMatvec(dtype, "1024", "1024", 1024, 1024, true);
    CheckMatvec(dtype, "40", "N", 40, 70, true);
    for (int64_t K : {1, 7, 8, 9, 15, 16, 17, 203}) CheckMatvec(dtype, "K", "N", K, 70, true);
    for (int64_t K : {7, 9, 344}) CheckMatvec(dtype, absl::StrCat(K), "129", K, 129, true);
  }
}

// The baseline tier emits its own, leaner jammed rows (half the rows per block, one
// output vector per step): the same checks at the edges of both.
TEST(TiledMatmul, BaselineTierAtEdgeSizes) {
  for (const char* dtype : {"f64", "f32"}) {
    for (int64_t N : {1, 7, 8, 9, 17, 33, 129, 344}) {
      for (int64_t K : {1, 3, 4, 5, 9, 128}) {
        CheckMatvec(dtype, absl::StrCat(K), absl::StrCat(N), K, N,
                    N >= 16 ? std::optional(true) : std::nullopt, CodeTier::kBaseline);
      }
      CheckMatvec(dtype, "K", "N", 13, N, true, CodeTier::kBaseline);
    }
    CheckMatvec(dtype, "1024", "1024", 1024, 1024, true, CodeTier::kBaseline);
  }
}

// Zero-size products: nothing to sum (zeros) or nothing to store.
TEST(TiledMatmul, ZeroSizeDims) {
  for (auto [K, N] : {std::pair<int64_t, int64_t>{0, 40}, {5, 0}, {0, 0}}) {
    CheckMatvec("f64", "K", "N", K, N);
    CheckMatvec("f64", absl::StrCat(K), absl::StrCat(N), K, N);  // tiled where N > 0
  }
}

// A batched product (batch and M loops outside the strips) and an rhs read through a
// transpose (not contiguous along n: the untiled loops run).
TEST(TiledMatmul, BatchedAndTransposedRhs) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(R"(graph g {
  %0 = input {name="a"} : f64[3, 2, 6]
  %1 = input {name="b"} : f64[3, 6, 37]
  %2 = input {name="c"} : f64[37, 6]
  %3 = matmul(%0, %1) : f64[3, 2, 37]
  %4 = transpose(%2) {perm=[1, 0]} : f64[6, 37]
  %5 = matmul(%0, %4) : f64[3, 2, 37]
  return %3, %5
})");
  ASSERT_TRUE(g.ok()) << g.status();
  Compiled c = CompileBoth(*g);
  TensorMap in = {{"a", Wave(ir::DType::kF64, {3, 2, 6}, 0.2)},
                  {"b", Wave(ir::DType::kF64, {3, 6, 37}, 0.5)},
                  {"c", Wave(ir::DType::kF64, {37, 6}, 0.9)}};
  Outputs o;
  ASSERT_NO_FATAL_FAILURE(RunAll(*g, c, in, &o));
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(SameBits(o.tiled[i], o.untiled[i])) << i;
    EXPECT_LT(runtime::MaxAbsDiff(o.want[i], o.tiled[i]), 1e-12) << i;
  }
}

// Attention's products (decode: one query row per head, heads sharing a KV head): scores
// q @ K^T in the tiled dot order (blocks of n reduced into one vector, heads jammed over
// each block of K rows) and the weighted sum P @ V, exp(scores) @ V and scores @ V, in
// one strip with the heads sharing each V row. At lengths around a vector's width and
// primes, head counts not a multiple of the jam, head dims the tiled dot does or does
// not take (32 f64 lanes exceed its registers on AVX2), constant and symbolic S: the
// same as the untiled loops and the interpreter, within rounding.
constexpr char kAttention[] = R"(graph g {
  %0 = input {name="q"} : DT[2, H, 1, D]
  %1 = input {name="k"} : DT[2, 1, SD, D]
  %2 = input {name="v"} : DT[2, 1, SD, D]
  %3 = transpose(%1) {perm=[0, 1, 3, 2]} : DT[2, 1, D, SD]
  %4 = matmul(%0, %3) : DT[2, H, 1, SD]
  %5 = exp(%4) : DT[2, H, 1, SD]
  %6 = matmul(%5, %2) : DT[2, H, 1, D]
  %7 = matmul(%4, %2) : DT[2, H, 1, D]
  return %4, %6, %7
})";

// Attention's heads sharing K and V (one fused kernel) against the interpreter and the
// untiled code, with `vector_bytes` (0: the host's) vectors.
void CheckAttention(const char* dtype, int64_t H, int64_t D, int64_t S, bool symbolic,
                    int vector_bytes = 0) {
  const ir::DType dt = std::string(dtype) == "f64" ? ir::DType::kF64 : ir::DType::kF32;
  const std::string s_dim = symbolic ? "S" : absl::StrCat(S);
  SCOPED_TRACE(absl::StrCat(dtype, " H=", H, " D=", D, " S=", s_dim, "=", S, " vector bytes ",
                            vector_bytes));
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(absl::StrReplaceAll(
      kAttention, {{"DT", dtype}, {"H", absl::StrCat(H)}, {"SD", s_dim}, {"D", absl::StrCat(D)}}));
  ASSERT_TRUE(g.ok()) << g.status();
  Compiled c = CompileBoth(*g, CodeTier::kOptimized, vector_bytes);
  // Scores of moderate size, so exp stays within range.
  TensorMap in = {{"q", Wave(dt, {2, H, 1, D}, 0.1)},
                  {"k", Wave(dt, {2, 1, S, D}, 0.4)},
                  {"v", Wave(dt, {2, 1, S, D}, 0.8)}};
  Outputs o;
  ASSERT_NO_FATAL_FAILURE(RunAll(*g, c, in, &o));
  // Relative to the output's largest magnitude (exp(scores) reaches e^D).
  const double tolerance = (dt == ir::DType::kF64 ? 1e-14 : 1e-6) * (S + D);
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    double scale = 1;
    for (double w : o.want[i].ToDoubles()) scale = std::max(scale, std::abs(w));
    EXPECT_LT(runtime::MaxAbsDiff(o.want[i], o.tiled[i]), tolerance * scale);
    EXPECT_LT(runtime::MaxAbsDiff(o.untiled[i], o.tiled[i]), tolerance * scale);
  }
}

TEST(TiledMatmul, AttentionHeadsShareKeysAndValues) {
  for (const char* dtype : {"f64", "f32"}) {
    for (int64_t H : {1, 3, 4}) {
      for (int64_t D : {8, 16, 32}) {
        for (int64_t S : {1, 2, 3, 7, 64, 500}) {
          for (bool symbolic : {false, true}) {
            if (symbolic && S != 7 && S != 500) continue;
            CheckAttention(dtype, H, D, S, symbolic);
          }
        }
      }
    }
  }
}

// Codegen's own vector code at the narrower widths of an AVX-512 host (32 bytes: AVX2's,
// with its 16 registers; 16: SSE's), at lengths around each width (1, lanes - 1, lanes,
// lanes + 1, primes): the matvec strips and jammed rows in both tiers, and attention.
// On a narrower host the widths above its own run at its own.
TEST(TiledMatmul, NarrowerVectorsAtEdgeSizes) {
  for (int bytes : {16, 32}) {
    for (const char* dtype : {"f64", "f32"}) {
      const int lanes = bytes / (std::string(dtype) == "f64" ? 8 : 4);
      for (int64_t N : {int64_t{1}, int64_t{lanes - 1}, int64_t{lanes}, int64_t{lanes + 1},
                        int64_t{13}, int64_t{8 * lanes + 1}, int64_t{129}, int64_t{344}}) {
        if (N < 1) continue;
        for (int64_t K : {1, 5, 128}) {
          for (CodeTier tier : {CodeTier::kOptimized, CodeTier::kBaseline}) {
            CheckMatvec(dtype, absl::StrCat(K), absl::StrCat(N), K, N,
                        N >= 16 ? std::optional(true) : std::nullopt, tier, bytes);
          }
        }
        CheckMatvec(dtype, "K", "N", 13, N, true, CodeTier::kOptimized, bytes);
      }
      // The emitted IR (before LLVM's passes) holds vectors of this width and no wider.
      absl::StatusOr<ir::Graph> g = ir::ParseGraph(
          absl::StrReplaceAll(kMatvec, {{"DT", dtype}, {"KD", "128"}, {"ND", "344"}}));
      ASSERT_TRUE(g.ok()) << g.status();
      const std::string ir =
          CompileBoth(*g, CodeTier::kOptimized, bytes).tiled->kernels().llvm_ir();
      const char* element = std::string(dtype) == "f64" ? " x double>" : " x float>";
      EXPECT_TRUE(absl::StrContains(ir, absl::StrCat("<", lanes, element))) << bytes;
      EXPECT_FALSE(absl::StrContains(ir, absl::StrCat("<", 2 * lanes, element))) << bytes;
      for (int64_t S : {1, 3, 7, 500}) CheckAttention(dtype, 4, 16, S, /*symbolic=*/false, bytes);
      CheckAttention(dtype, 4, 16, 7, /*symbolic=*/true, bytes);
      CheckAttention(dtype, 3, 8, 64, /*symbolic=*/false, bytes);
    }
  }
}

// A width codegen has no vectors of is refused with the option's name.
TEST(TiledMatmul, BadVectorWidthIsRefused) {
  absl::StatusOr<ir::Graph> g =
      ir::ParseGraph(absl::StrReplaceAll(kMatvec, {{"DT", "f64"}, {"KD", "8"}, {"ND", "24"}}));
  ASSERT_TRUE(g.ok()) << g.status();
  CompileGraphOptions options;
  options.codegen.max_vector_bytes = 24;
  auto cg = CompiledGraph::Compile(*g, {}, options);
  ASSERT_FALSE(cg.ok());
  EXPECT_EQ(cg.status().code(), absl::StatusCode::kInvalidArgument) << cg.status();
  EXPECT_THAT(std::string(cg.status().message()),
              ::testing::HasSubstr("CompileGraphOptions::codegen.max_vector_bytes"));
  JitOptions jit_options;
  jit_options.compile.codegen.max_vector_bytes = -32;
  auto fn =
      Jit("f", [](frontend::Context&) { return std::vector<frontend::Value>{}; }, {}, jit_options);
  ASSERT_FALSE(fn.ok());
  EXPECT_EQ(fn.status().code(), absl::StatusCode::kInvalidArgument) << fn.status();
  EXPECT_THAT(std::string(fn.status().message()),
              ::testing::HasSubstr("JitOptions::compile.codegen.max_vector_bytes"));
}

// The tiled dot is chosen for a head dim of a few vectors, and not for one of 6 (no
// whole vector of either dtype on AVX2 or AVX-512 divides it). (Shapes no other test
// compiles: a kernel compiled before is reused, and then has no IR to show.)
TEST(TiledMatmul, DotTilesOnlyWholeVectorHeadDims) {
  for (auto [D, tiled] : {std::pair<int, bool>{16, true}, {6, false}}) {
    absl::StatusOr<ir::Graph> g = ir::ParseGraph(absl::StrReplaceAll(
        kAttention, {{"DT", "f64"}, {"H", "4"}, {"SD", "40"}, {"D", absl::StrCat(D)}}));
    ASSERT_TRUE(g.ok()) << g.status();
    Compiled c = CompileBoth(*g);
    // The even-lanes shuffles of the transposing add tree appear only in the tiled dot.
    constexpr char kEvenLanes[] = "<i32 0, i32 2";
    EXPECT_EQ(absl::StrContains(c.tiled->kernels().llvm_ir(), kEvenLanes), tiled) << D;
    EXPECT_FALSE(absl::StrContains(c.untiled->kernels().llvm_ir(), kEvenLanes)) << D;
  }
}

// The option is part of the kernels' content keys: tiled and untiled code never share.
TEST(TiledMatmul, OptionChangesKernelKeys) {
  absl::StatusOr<ir::Graph> g =
      ir::ParseGraph(absl::StrReplaceAll(kMatvec, {{"DT", "f64"}, {"KD", "8"}, {"ND", "40"}}));
  ASSERT_TRUE(g.ok()) << g.status();
  Compiled c = CompileBoth(*g);
  EXPECT_NE(c.tiled->kernels().keys().front().ToHex(), c.untiled->kernels().keys().front().ToHex());
}

}  // namespace
}  // namespace graphjit::compiler
