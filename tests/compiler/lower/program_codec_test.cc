// The lowered program as bytes (what the disk cache's graph-level record keeps): every
// field survives the round trip, shared expressions stay shared, and damaged bytes are
// refused as DataLoss naming what is wrong, never read past their end.
#include "compiler/lower/program_codec.h"

#include <random>
#include <string>

#include "compiler/passes/pipeline.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "models/model.h"

namespace graphjit::compiler {
namespace {

using ::testing::HasSubstr;

LoweredGraph LowerOptimized(ir::Graph g, const runtime::TensorMap& params = {}) {
  PassContext ctx{params};
  absl::Status s = Pipeline::Default().Run(&g, &ctx);
  EXPECT_TRUE(s.ok()) << s;
  // OpenBLAS products, whatever GRAPHJIT_PRODUCTS=auto would pick here: the codec's
  // cases include a BLAS kernel.
  absl::StatusOr<LoweredGraph> lowered = Lower(g, {.products = ProductKernels::kBlas});
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  return *std::move(lowered);
}

LoweredGraph LowerModel(const std::string& spec) {
  auto model = *models::CreateModel(spec);
  return LowerOptimized(*models::TraceModel(*model, {}), model->params());
}

// Scans, arg reductions, gathers and a large matmul (an OpenBLAS call): kinds the models
// above do not all have.
LoweredGraph LowerMixedKinds() {
  return LowerOptimized(*ir::ParseGraph(R"(
graph mixed {
  %0 = input {name="x"} : f32[N, 96]
  %1 = input {name="w"} : f32[96, 80]
  %2 = input {name="i"} : i64[4]
  %3 = cumsum(%0) {axis=1} : f32[N, 96]
  %4 = argmax(%3) {axis=1, keepdim=false} : i64[N]
  %5 = matmul(%3, %1) : f32[N, 80]
  %6 = gather(%5, %2) : f32[4, 80]
  return %4, %6
}
)"));
}

void ExpectRoundTrip(const LoweredGraph& lowered) {
  const std::string bytes = EncodeLoweredGraph(lowered);
  absl::StatusOr<LoweredGraph> decoded = DecodeLoweredGraph(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(ProgramToString(decoded->program), ProgramToString(lowered.program));
  // Every field is written, so writing the decoded program again gives the same bytes.
  EXPECT_EQ(EncodeLoweredGraph(*decoded), bytes);
  ASSERT_EQ(decoded->args.size(), lowered.args.size());
  for (size_t i = 0; i < lowered.args.size(); ++i) {
    EXPECT_EQ(decoded->args[i].kind, lowered.args[i].kind);
    EXPECT_EQ(decoded->args[i].name, lowered.args[i].name);
    EXPECT_EQ(decoded->args[i].value, lowered.args[i].value);
    EXPECT_EQ(decoded->args[i].output_index, lowered.args[i].output_index);
    EXPECT_EQ(decoded->args[i].donor_arg, lowered.args[i].donor_arg);
  }
}

TEST(ProgramCodec, RoundTripsTheDecodeLayer) { ExpectRoundTrip(LowerModel("decode")); }

TEST(ProgramCodec, RoundTripsTinyGpt) {
  ExpectRoundTrip(LowerModel("tinygpt:L=2,d=32,T=8,V=11,B=2,seed=3"));
}

TEST(ProgramCodec, RoundTripsScansArgReductionsGathersAndBlas) {
  const LoweredGraph lowered = LowerMixedKinds();
  std::set<KernelKind> kinds;
  for (const Kernel& k : lowered.program.kernels) kinds.insert(k.kind);
  EXPECT_TRUE(kinds.contains(KernelKind::kScan));
  EXPECT_TRUE(kinds.contains(KernelKind::kArgReduce));
  EXPECT_TRUE(kinds.contains(KernelKind::kExternMatmul));
  ExpectRoundTrip(lowered);
}

// An expression the kernels share is one row: the decoded kernels share it too.
TEST(ProgramCodec, SharedExpressionsStayShared) {
  LoweredGraph lowered = LowerModel("decode");
  ASSERT_GE(lowered.program.kernels.size(), 2u);
  ExprPtr shared = lowered.program.kernels[0].loops[0];
  lowered.program.kernels[1].loops[0] = shared;
  absl::StatusOr<LoweredGraph> decoded = DecodeLoweredGraph(EncodeLoweredGraph(lowered));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->program.kernels[0].loops[0].get(), decoded->program.kernels[1].loops[0].get());
}

TEST(ProgramCodec, EveryTruncationIsDataLoss) {
  const std::string bytes = EncodeLoweredGraph(LowerModel("decode:d=32,H=4,G=2,dh=8,f=64"));
  for (size_t n = 0; n < bytes.size(); n += 7) {
    absl::StatusOr<LoweredGraph> decoded = DecodeLoweredGraph(bytes.substr(0, n));
    ASSERT_FALSE(decoded.ok()) << "decoded a prefix of " << n << " bytes";
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << decoded.status();
  }
  absl::StatusOr<LoweredGraph> longer = DecodeLoweredGraph(bytes + "x");
  ASSERT_FALSE(longer.ok());
  EXPECT_THAT(longer.status().message(), HasSubstr("past the end"));
}

// Damage the record's checksum would catch, but the decoder must survive on its own:
// a byte changed anywhere decodes or fails cleanly (under ASan, never out of bounds).
TEST(ProgramCodec, FlippedBytesDecodeOrFailCleanly) {
  const std::string bytes = EncodeLoweredGraph(LowerModel("decode:d=32,H=4,G=2,dh=8,f=64"));
  std::mt19937 rng(7);
  int refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string damaged = bytes;
    damaged[rng() % damaged.size()] ^= static_cast<char>(1 + rng() % 255);
    absl::StatusOr<LoweredGraph> decoded = DecodeLoweredGraph(damaged);
    if (!decoded.ok()) {
      EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss) << decoded.status();
      ++refused;
    }
  }
  EXPECT_GT(refused, 100);  // most fields are counts, indices and enums
}

TEST(ProgramCodec, OutOfRangeReferencesAreNamed) {
  LoweredGraph lowered = LowerModel("decode:d=32,H=4,G=2,dh=8,f=64");
  Kernel& k = lowered.program.kernels[0];
  k.out = static_cast<int>(lowered.program.buffers.size());  // one past the last buffer
  absl::StatusOr<LoweredGraph> decoded = DecodeLoweredGraph(EncodeLoweredGraph(lowered));
  ASSERT_FALSE(decoded.ok());
  EXPECT_THAT(decoded.status().message(), HasSubstr("kernel output"));

  lowered = LowerModel("decode:d=32,H=4,G=2,dh=8,f=64");
  lowered.program.kernels[0].range_symbol = static_cast<int>(lowered.program.symbols.size());
  decoded = DecodeLoweredGraph(EncodeLoweredGraph(lowered));
  ASSERT_FALSE(decoded.ok());
  EXPECT_THAT(decoded.status().message(), HasSubstr("kernel range symbol"));

  // A load with fewer indices than its buffer has dims.
  lowered = LowerModel("decode:d=32,H=4,G=2,dh=8,f=64");
  const Buffer& b0 = lowered.program.buffers[0];
  ASSERT_GE(b0.dims.size(), 1u);
  lowered.program.kernels[0].value = Load(0, b0.dtype, {});
  decoded = DecodeLoweredGraph(EncodeLoweredGraph(lowered));
  ASSERT_FALSE(decoded.ok());
  EXPECT_THAT(decoded.status().message(), HasSubstr("indices"));
}

TEST(ProgramCodec, RefusesOtherBytes) {
  absl::StatusOr<LoweredGraph> decoded = DecodeLoweredGraph("");
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss);
  std::string other;
  other.append(8, '\0');
  decoded = DecodeLoweredGraph(other + "not a program");
  ASSERT_FALSE(decoded.ok());
  EXPECT_THAT(decoded.status().message(), HasSubstr("lowered program"));
}

}  // namespace
}  // namespace graphjit::compiler
