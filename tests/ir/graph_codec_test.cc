// Graphs as the compiler's private bytes (ir/graph_codec.h): the same graph as the text
// gives, for every kind of attribute and symbolic dims; damaged bytes are DataLoss.
#include "ir/graph_codec.h"

#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"

namespace graphjit::ir {
namespace {

// Every attribute kind: floats (with inf and nan), ints, dims, dtype, bool, string.
constexpr absl::string_view kGraphs[] = {
    R"(graph src {
  %0 = constant {value=[1, -2, 3.5, inf, -inf, nan]} : f64[2, 3]
  %1 = full {value=0.5} : f32[S, 3]
  %2 = iota {axis=0} : i64[S, 3]
  %3 = cast(%0) {dtype=bool} : bool[2, 3]
  return %0, %1, %2, %3
})",
    R"(graph layout {
  %0 = input {name="x"} : f32[2, S, 6]
  %1 = transpose(%0) {perm=[2, 0, 1]} : f32[6, 2, S]
  %2 = reshape(%1) {shape=[12, S]} : f32[12, S]
  %3 = slice(%2) {axis=0, start=2, end=7} : f32[5, S]
  %4 = concat(%3, %2, %3) {axis=0} : f32[22, S]
  %5 = argmax(%4) {axis=1, keepdim=true} : i64[22, 1]
  return %4, %5
})",
    R"(graph kv {
  %0 = input {name="k_cache"} : f64[2, S, 4]
  %1 = input {name="rows"} : f64[2, 1, 4]
  %2 = kv_write(%0, %1) {pos=P} : f64[2, S, 4]
  %3 = reshape(%2) {shape=[2, 4*S]} : f64[2, 4*S]
  return %2, %3
})",
    R"(graph loop {
  %0 = input {name="x"} : f64[S]
  %1 = full {value=0.0} : i64[]
  %2 = while(%0, %1) {carried=2, max_trips=7} : f64[S]
    region graph cond {
      %0 = input {name="x"} : f64[S]
      %1 = input {name="n"} : i64[]
      %2 = constant {value=[3.0]} : i64[]
      %3 = lt(%1, %2) : bool[]
      return %3
    }
    region graph body {
      %0 = input {name="x"} : f64[S]
      %1 = input {name="n"} : i64[]
      %2 = tanh(%0) : f64[S]
      %3 = constant {value=[1.0]} : i64[]
      %4 = add(%1, %3) : i64[]
      return %2, %4
    }
  %3 = loop_result(%2, %1) {index=1} : i64[]
  return %2, %3
})",
};

std::string Bytes(const Graph& g) {
  ByteWriter w;
  WriteGraph(g, w);
  return std::move(w).Take();
}

absl::StatusOr<Graph> FromBytes(absl::string_view bytes) {
  ByteReader r(bytes, "graph");
  absl::StatusOr<Graph> g = ReadGraph(r);
  if (g.ok()) r.ExpectEnd();
  if (!r.ok()) return r.status();
  return g;
}

TEST(GraphCodec, RoundTripsWhatTheTextSays) {
  for (absl::string_view text : kGraphs) {
    const Graph g = *ParseGraph(text);
    absl::StatusOr<Graph> back = FromBytes(Bytes(g));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(PrintGraph(*back), PrintGraph(g));
    EXPECT_EQ(back->name(), g.name());
    // The same kinds (a float attribute never reads back as an int; the printed text of
    // 2.0 and 2 could hide that).
    for (int i = 0; i < g.num_nodes(); ++i) {
      const auto& want = g.node(i).attrs.items();
      const auto& got = back->node(i).attrs.items();
      ASSERT_EQ(got.size(), want.size());
      for (size_t a = 0; a < want.size(); ++a) {
        EXPECT_EQ(KindOf(got[a].second), KindOf(want[a].second)) << PrintNode(g, i);
      }
    }
  }
}

TEST(GraphCodec, DamageIsRefusedNeverACrash) {
  const std::string bytes = Bytes(*ParseGraph(kGraphs[2]));
  for (size_t n = 0; n < bytes.size(); ++n) {
    absl::StatusOr<Graph> cut = FromBytes(bytes.substr(0, n));
    ASSERT_FALSE(cut.ok()) << n;
    EXPECT_EQ(cut.status().code(), absl::StatusCode::kDataLoss) << cut.status();
  }
  // Flipped bytes: refused (DataLoss from the reader, InvalidArgument from the
  // verifier) or a graph that verifies; under ASan, never out of bounds.
  std::mt19937 rng(3);
  int refused = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::string damaged = bytes;
    damaged[rng() % damaged.size()] ^= static_cast<char>(1 + rng() % 255);
    absl::StatusOr<Graph> g = FromBytes(damaged);
    if (!g.ok()) {
      ++refused;
      EXPECT_THAT(g.status().code(), ::testing::AnyOf(absl::StatusCode::kDataLoss,
                                                      absl::StatusCode::kInvalidArgument));
    }
  }
  EXPECT_GT(refused, 1000);
}

}  // namespace
}  // namespace graphjit::ir
