// Every op of ir/ops.def has a reference test of its eager kernel: the test files record
// the ops they cover with COVERS_OPS, and this checks the union against the op list.
#include "ir/op.h"
#include "tests/runtime/test_util.h"

namespace graphjit::runtime::testutil {
namespace {

TEST(CoverageTest, EveryOpHasAKernelTest) {
  for (int i = 0; i < ir::kNumOps; ++i) {
    const auto op = static_cast<OpCode>(i);
    EXPECT_TRUE(CoveredOps().contains(op)) << "no runtime test covers op '" << ir::OpName(op)
                                           << "': add one and list it in COVERS_OPS";
  }
}

}  // namespace
}  // namespace graphjit::runtime::testutil
