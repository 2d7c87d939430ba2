// Bytes moved per fused kernel of a lowered program and per node of a graph.
#include "compiler/analysis/bytes_moved.h"

#include "compiler/lower/lower.h"
#include "gtest/gtest.h"
#include "ir/parser.h"

namespace graphjit::compiler {
namespace {

using ir::SymExpr;

ir::Graph Parse(const char* text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  return *g;
}

// x [S, 8] f64, w [8, 2] f64: exp(x) + 1 fuses into the matmul's lhs; the matmul kernel
// reads x and w once each and writes [S, 2].
constexpr char kGraph[] = R"(graph g {
  %0 = input {name="x"} : f64[S, 8]
  %1 = param {name="w"} : f64[8, 2]
  %2 = exp(%0) : f64[S, 8]
  %3 = constant {value=[1], dtype=f64, shape=[]} : f64[]
  %4 = add(%2, %3) : f64[S, 8]
  %5 = matmul(%4, %1) : f64[S, 2]
  return %5
}
)";

TEST(BytesMoved, FusedKernelsCountTheirBuffersOnce) {
  ir::Graph g = Parse(kGraph);
  absl::StatusOr<LoweredGraph> lowered = Lower(g);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  TrafficReport r = ProgramTraffic(lowered->program);
  const SymExpr S = SymExpr::Symbol("S");
  ASSERT_EQ(r.items.size(), 1u) << ProgramToString(lowered->program);
  EXPECT_EQ(r.items[0].bytes_read, 64 * S + 128);
  EXPECT_EQ(r.items[0].bytes_written, 16 * S);
  EXPECT_EQ(r.items[0].flops, 2 * 2 * 8 * S);
  EXPECT_EQ(r.bytes_read, r.items[0].bytes_read);
  EXPECT_EQ(r.flops, 32 * S);
}

TEST(BytesMoved, UnfusedNodesReadTheirOperandsAndWriteTheirResult) {
  TrafficReport r = GraphTraffic(Parse(kGraph));
  const SymExpr S = SymExpr::Symbol("S");
  ASSERT_EQ(r.items.size(), 3u);  // exp, add, matmul (sources excluded)
  EXPECT_EQ(r.items[0].name, "%2 (exp)");
  EXPECT_EQ(r.items[1].bytes_read, 64 * S + 8);
  EXPECT_EQ(r.items[2].bytes_read, 64 * S + 128);
  EXPECT_EQ(r.bytes_written, 64 * S + 64 * S + 16 * S);
  EXPECT_EQ(r.flops, 32 * S);
}

// kv_write in place: no copy kernel, and the row kernel writes only the new rows.
TEST(BytesMoved, KvWriteInPlaceWritesOnlyTheNewRows) {
  ir::Graph g = Parse(R"(graph g {
  %0 = input {name="cache"} : f32[2, S, 16]
  %1 = input {name="rows"} : f32[2, 1, 16]
  %2 = kv_write(%0, %1) {pos=P} : f32[2, S, 16]
  return %2
}
)");
  absl::StatusOr<LoweredGraph> lowered = Lower(g);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  TrafficReport r = ProgramTraffic(lowered->program);
  ASSERT_EQ(r.items.size(), 1u) << ProgramToString(lowered->program);
  EXPECT_EQ(r.items[0].bytes_read, SymExpr(128));
  EXPECT_EQ(r.items[0].bytes_written, SymExpr(128));
  EXPECT_EQ(r.flops, SymExpr(0));
}

}  // namespace
}  // namespace graphjit::compiler
