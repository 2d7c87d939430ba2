#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/printer.h"

namespace graphjit::ir {
namespace {

TEST(BuilderSmoke, BuildsAndPrints) {
  GraphBuilder b("g");
  SymExpr s = SymExpr::Symbol("S");
  ValueId x = b.Input("x", DType::kF64, {2, s});
  ValueId y = b.Add(OpCode::kExp, {x});
  b.Output(y);
  absl::StatusOr<Graph> g = std::move(b).Build();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(PrintGraph(*g),
            "graph g {\n  %0 = input {name=\"x\"} : f64[2, S]\n  %1 = exp(%0) : f64[2, S]\n"
            "  return %1\n}\n");
}

}  // namespace
}  // namespace graphjit::ir
