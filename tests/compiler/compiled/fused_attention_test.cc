// Attention in one kernel (compiler/lower/fuse_attention.h, compiler/codegen/
// codegen_attention.cc): at edge lengths (1, 2, 3, a prime, 500: whole blocks and a
// partial one), head counts that are no multiple of the jam or the vector width, head
// dims that are no multiple of a vector (the untiled scores), several query rows, f32 and
// f64, exact and symbolic N, and masks that make leading positions (a whole block) or a
// whole row -inf or put a NaN or +inf in a row, the compiled kernel, the reference program
// evaluator on the fused program and the unfused compiled code agree with the
// interpreter. And the pass must not
// fire where p or the max has another reader, or the max and the exp see different x.
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "compiler/compiled/call_frame.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/lower/lower.h"
#include "compiler/lower/program_eval.h"
#include "compiler/orc/code_tier.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using runtime::TensorMap;
using ::testing::HasSubstr;
using ::testing::Not;

// softmax(q @ k^T * 0.25 + bias) @ v, query heads H sharing each of G KV heads.
constexpr char kAttention[] = R"(graph attn {
  %0 = input {name="q"} : DT[G, H, M, D]
  %1 = input {name="k"} : DT[G, 1, N, D]
  %2 = input {name="v"} : DT[G, 1, N, E]
  %3 = input {name="bias"} : DT[G, H, M, N]
  %4 = transpose(%1) {perm=[0, 1, 3, 2]} : DT[G, 1, D, N]
  %5 = matmul(%0, %4) : DT[G, H, M, N]
  %6 = constant {value=[0.25]} : DT[]
  %7 = mul(%5, %6) : DT[G, H, M, N]
  %8 = add(%7, %3) : DT[G, H, M, N]
  %9 = reduce_max(%8) {axis=-1, keepdim=true} : DT[G, H, M, 1]
  %10 = sub(%8, %9) : DT[G, H, M, N]
  %11 = exp(%10) : DT[G, H, M, N]
  %12 = reduce_sum(%11) {axis=-1, keepdim=true} : DT[G, H, M, 1]
  %13 = matmul(%11, %2) : DT[G, H, M, E]
  %14 = div(%13, %12) : DT[G, H, M, E]
  return %14
})";

struct Shape {
  int64_t G, H, M, D, E;
};

std::string AttentionText(const char* dtype, const Shape& s, const std::string& n) {
  return absl::StrReplaceAll(kAttention, {{"DT", dtype},
                                          {"G", absl::StrCat(s.G)},
                                          {"H", absl::StrCat(s.H)},
                                          {"M", absl::StrCat(s.M)},
                                          {"N", n},
                                          {"D", absl::StrCat(s.D)},
                                          {"E", absl::StrCat(s.E)}});
}

Tensor Wave(ir::DType dtype, std::vector<int64_t> shape, double phase, double scale) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37 * i + phase);
  return *Tensor::FromDoubles(dtype, shape, v);
}

enum class Mask { kNone, kLeading, kRowAndBlock, kNanAndInf };

// The bias: 0, or -inf on the first 300 positions of every row but the last position
// (past the kernel's first block of 256) and, with kRowAndBlock, on the whole first row;
// with kNanAndInf, a NaN at the last position of row 0 and the first of row 2, +inf in
// the middle of row 1 (every output of those rows NaN; the max passes over a NaN, its p
// must still poison the row).
Tensor Bias(ir::DType dtype, const Shape& s, int64_t N, Mask mask) {
  std::vector<double> v(s.G * s.H * s.M * N, 0.0);
  const double inf = std::numeric_limits<double>::infinity();
  if (mask == Mask::kNanAndInf) {
    v[N - 1] = std::numeric_limits<double>::quiet_NaN();
    v[N + N / 2] = inf;
    v[2 * N] = std::numeric_limits<double>::quiet_NaN();
    return *Tensor::FromDoubles(dtype, {s.G, s.H, s.M, N}, v);
  }
  for (int64_t row = 0; row < s.G * s.H * s.M; ++row) {
    for (int64_t j = 0; j < N; ++j) {
      const bool masked =
          (mask != Mask::kNone && j < 300 && j + 1 < N) || (mask == Mask::kRowAndBlock && row == 0);
      if (masked) v[row * N + j] = -inf;
    }
  }
  return *Tensor::FromDoubles(dtype, {s.G, s.H, s.M, N}, v);
}

// Within `tol` relative, NaN where the reference is NaN.
void ExpectClose(const Tensor& want, const Tensor& got, double tol, const std::string& what) {
  std::vector<double> x = want.ToDoubles(), y = got.ToDoubles();
  ASSERT_EQ(x.size(), y.size()) << what;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(y[i])) << what << " element " << i << ": " << y[i] << ", want NaN";
      continue;
    }
    EXPECT_LE(std::abs(x[i] - y[i]), tol * (1 + std::abs(x[i])))
        << what << " element " << i << ": " << y[i] << ", want " << x[i];
  }
}

std::unique_ptr<CompiledGraph> Compile(const ir::Graph& g, bool fuse, CodeTier tier) {
  CompileGraphOptions options;
  options.fuse_attention = fuse;
  options.codegen.tier = tier;
  options.env = &CompileEnv::MemoryOnly();
  auto cg = CompiledGraph::Compile(g, {}, options);
  EXPECT_TRUE(cg.ok()) << cg.status();
  return cg.ok() ? *std::move(cg) : nullptr;
}

// The fused program run by the reference evaluator.
absl::StatusOr<std::vector<Tensor>> Evaluate(const CompiledGraph& cg, const TensorMap& in,
                                             const ir::Bindings& bind) {
  // Lowering is deterministic: the program of the compiled graph's optimized graph.
  absl::StatusOr<LoweredGraph> lowered = Lower(cg.graph());
  if (!lowered.ok()) return lowered.status();
  EXPECT_EQ(ProgramToString(lowered->program), ProgramToString(cg.program()));
  std::vector<Tensor> constants = ConstantTensors(cg.graph(), *lowered);
  absl::StatusOr<CallFrame> frame =
      PrepareCall(cg.graph(), *lowered, in, cg.params(), constants, bind);
  if (!frame.ok()) return frame.status();
  absl::Status s = EvaluateProgram(lowered->program, frame->args.data(), frame->symbols.data(),
                                   frame->workspace.get());
  if (!s.ok()) return s;
  return frame->outputs;
}

// The fused kernel at `tier` (both tiers when unset) against the interpreter, the unfused
// kernels and the program evaluator.
void Check(const char* dtype_name, const Shape& s, int64_t N, bool symbolic, Mask mask,
           std::optional<CodeTier> only_tier = std::nullopt) {
  if (!only_tier) {
    for (CodeTier tier : {CodeTier::kOptimized, CodeTier::kBaseline}) {
      Check(dtype_name, s, N, symbolic, mask, tier);
    }
    return;
  }
  const CodeTier tier = *only_tier;
  SCOPED_TRACE(absl::StrCat(dtype_name, " G=", s.G, " H=", s.H, " M=", s.M, " D=", s.D, " E=", s.E,
                            " N=", N, symbolic ? " (symbolic)" : "",
                            " mask=", static_cast<int>(mask), " tier ", CodeTierName(tier)));
  const ir::DType dtype = std::string(dtype_name) == "f32" ? ir::DType::kF32 : ir::DType::kF64;
  absl::StatusOr<ir::Graph> g =
      ir::ParseGraph(AttentionText(dtype_name, s, symbolic ? "S" : absl::StrCat(N)));
  ASSERT_TRUE(g.ok()) << g.status();
  std::unique_ptr<CompiledGraph> fused = Compile(*g, true, tier),
                                 unfused = Compile(*g, false, tier);
  ASSERT_NE(fused, nullptr);
  ASSERT_NE(unfused, nullptr);
  const std::string listing = ProgramToString(fused->program());
  if (N == 1 && !symbolic) {
    // Indices into a dim of 1 are 0, not j: the pass leaves this softmax of one alone.
    EXPECT_THAT(listing, Not(HasSubstr("attention")));
  } else {
    EXPECT_THAT(listing, HasSubstr("= attention over"));
    EXPECT_THAT(listing, Not(HasSubstr("reduce_max")));
  }
  EXPECT_THAT(ProgramToString(unfused->program()), Not(HasSubstr("attention")));
  TensorMap in = {{"q", Wave(dtype, {s.G, s.H, s.M, s.D}, 0.1, 2.0)},
                  {"k", Wave(dtype, {s.G, 1, N, s.D}, 0.7, 2.0)},
                  {"v", Wave(dtype, {s.G, 1, N, s.E}, 1.3, 1.0)},
                  {"bias", Bias(dtype, s, N, mask)}};
  absl::StatusOr<std::vector<Tensor>> want = runtime::Interpret(*g, in, {});
  ASSERT_TRUE(want.ok()) << want.status();
  const double tol = dtype == ir::DType::kF32 ? 2e-5 : 1e-12;
  auto compiled = fused->Run(in);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ExpectClose((*want)[0], (*compiled)[0], tol, "compiled");
  auto plain = unfused->Run(in);
  ASSERT_TRUE(plain.ok()) << plain.status();
  ExpectClose((*want)[0], (*plain)[0], tol, "unfused");
  ir::Bindings bind;
  if (symbolic) bind["S"] = N;
  auto evaluated = Evaluate(*fused, in, bind);
  ASSERT_TRUE(evaluated.ok()) << evaluated.status();
  ExpectClose((*want)[0], (*evaluated)[0], tol, "program_eval");
}

TEST(FusedAttention, DecodeShapesAtEdgeLengths) {
  for (const char* dtype : {"f64", "f32"}) {
    for (int64_t N : {1, 2, 3, 7, 256, 257, 500}) {
      for (bool symbolic : {false, true}) {
        Check(dtype, {2, 4, 1, 16, 16}, N, symbolic, Mask::kNone);
      }
    }
  }
}

TEST(FusedAttention, OddHeadsAndDims) {
  for (const char* dtype : {"f64", "f32"}) {
    for (int64_t N : {1, 3, 131}) {
      // 3 heads (jammed 3), head dims of 12 (no whole vector: untiled scores, scalar
      // columns) and 20 (a vector and scalars); 5 heads of one row (a jam of 4 or 2 and
      // the rest alone); 5 heads over 2 query rows (not jammed; symbolic N, or lowering
      // would give P @ V of 131 positions to BLAS).
      Check(dtype, {1, 3, 1, 12, 12}, N, true, Mask::kNone);
      Check(dtype, {2, 5, 1, 16, 16}, N, N > 100, Mask::kNone);
      Check(dtype, {3, 5, 2, 8, 20}, N, true, Mask::kNone);
      if (N < 100) Check(dtype, {3, 5, 2, 8, 20}, N, false, Mask::kNone);
    }
  }
}

TEST(FusedAttention, MaskedPositionsAndRows) {
  for (const char* dtype : {"f64", "f32"}) {
    for (int64_t N : {7, 131, 500}) {
      // Leading -inf positions (past a whole block): exp against 0 until a finite x
      // arrives; a row of only -inf: NaN, as exp(-inf - -inf) in the unfused kernels.
      Check(dtype, {2, 4, 1, 16, 16}, N, true, Mask::kLeading);
      Check(dtype, {2, 4, 1, 16, 16}, N, false, Mask::kRowAndBlock);
      Check(dtype, {2, 4, 1, 16, 16}, N, true, Mask::kNanAndInf);
    }
  }
}

// The pass on its own (Lower's listing): it must not fire on near misses.
std::string Lowered(const std::string& text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return "";
  absl::StatusOr<LoweredGraph> lowered = Lower(*g);
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  return lowered.ok() ? ProgramToString(lowered->program) : "";
}

TEST(FuseAttention, FiresOnceAndDropsTheMaxAndPBuffers) {
  const std::string listing = Lowered(AttentionText("f64", {2, 4, 1, 16, 16}, "S"));
  EXPECT_THAT(listing, HasSubstr("kernel k0_attention for i0 < 2, i1 < 4, i2 < 1, i3 < s0"));
  EXPECT_THAT(listing, HasSubstr("softmax of ((b4[i0, i1, 0, i3] * 0.25) + b3[i0, i1, 0, i3])"));
  EXPECT_THAT(listing, HasSubstr("kernel k1_div"));
  EXPECT_THAT(listing, HasSubstr("times i5 < 16 of b2[i0, 0, i3, i5]"));
  // The scores scratch, the sum and the output (before the division): three temps.
  EXPECT_THAT(listing, HasSubstr("b6 temp"));
  EXPECT_THAT(listing, Not(HasSubstr("b7 temp")));
  EXPECT_THAT(listing, Not(HasSubstr("reduce_")));
}

TEST(FuseAttention, MustNotFireWhenPOrTheMaxHasAnotherReader) {
  // p returned too: it is an output, not a temp the kernel may drop.
  std::string text = AttentionText("f64", {2, 4, 1, 16, 16}, "S");
  text = absl::StrReplaceAll(text, {{"return %14", "return %14, %11"}});
  EXPECT_THAT(Lowered(text), Not(HasSubstr("attention")));
  // The max read again after the softmax.
  text = AttentionText("f64", {2, 4, 1, 16, 16}, "S");
  text = absl::StrReplaceAll(
      text, {{"  return %14", "  %15 = add(%14, %9) : f64[2, 4, 1, 16]\n  return %15"}});
  EXPECT_THAT(Lowered(text), Not(HasSubstr("attention")));
}

TEST(FuseAttention, MustNotFireWhenTheMaxAndTheExpSeeDifferentX) {
  // The max of the unmasked scores, the exp of the masked ones.
  std::string text = AttentionText("f64", {2, 4, 1, 16, 16}, "S");
  text = absl::StrReplaceAll(text, {{"%9 = reduce_max(%8)", "%9 = reduce_max(%7)"}});
  EXPECT_THAT(Lowered(text), Not(HasSubstr("attention")));
}

}  // namespace
}  // namespace graphjit::compiler
