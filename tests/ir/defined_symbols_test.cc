// The unbacked symbols runtime ops define (ir/graph.h: DefinedSymbolOf, BindDefinedSymbol):
// which nodes define one, and binding it from a run's or a trace's dims.
#include <optional>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "ir/parser.h"

namespace graphjit::ir {
namespace {

constexpr const char* kGraph = R"(graph g {
  %0 = input {name="x"} : f32[2, H]
  %1 = factor_dim(%0) {axis=1, factor=4, symbol="h"} : f32[2, 4*h]
  %2 = nonzero(%0) {symbol="k"} : i64[2, k]
  %3 = assert_dim(%2) {axis=1, dim=k} : i64[2, k]
  %4 = top_k(%0) {k=1, axis=1, largest=true} : f32[2, 1]
  return %1, %3, %4
})";

TEST(DefinedSymbols, OnlyTheOpsThatNameOneDefineIt) {
  absl::StatusOr<Graph> g = ParseGraph(kGraph);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(DefinedSymbolOf(g->node(0)), nullptr);  // an input
  ASSERT_NE(DefinedSymbolOf(g->node(1)), nullptr);
  EXPECT_EQ(*DefinedSymbolOf(g->node(1)), "h");
  EXPECT_EQ(*DefinedSymbolOf(g->node(2)), "k");
  EXPECT_EQ(DefinedSymbolOf(g->node(3)), nullptr);  // assert_dim checks, defines nothing
  EXPECT_EQ(DefinedSymbolOf(g->node(4)), nullptr);  // top_k's k is an attribute
  EXPECT_EQ(g->DefinedSymbols(), (std::set<std::string>{"h", "k"}));
}

TEST(DefinedSymbols, BoundFromTheFirstDimThatHasAValue) {
  absl::StatusOr<Graph> g = ParseGraph(kGraph);
  ASSERT_TRUE(g.ok()) << g.status();
  Bindings b;
  // factor_dim's 4*h = 12: h = 3.
  BindDefinedSymbol(g->node(1), [](int i) { return std::optional<int64_t>(i == 1 ? 12 : 2); }, &b);
  EXPECT_EQ(b.at("h"), 3);
  // An unknown dim binds nothing (factor_dim's kernel checks that a dim is a multiple).
  Bindings unknown;
  BindDefinedSymbol(g->node(2), [](int) { return std::optional<int64_t>(); }, &unknown);
  EXPECT_TRUE(unknown.empty());
  // A node that defines none leaves the bindings alone.
  BindDefinedSymbol(g->node(3), [](int) { return std::optional<int64_t>(5); }, &unknown);
  EXPECT_TRUE(unknown.empty());
  BindDefinedSymbol(g->node(2), [](int i) { return std::optional<int64_t>(i == 1 ? 0 : 2); }, &b);
  EXPECT_EQ(b.at("k"), 0);
}

}  // namespace
}  // namespace graphjit::ir
