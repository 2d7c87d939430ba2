// Invalid kernel programs (bad buffers, indices, dtypes, combines, loop variables) fail to
// compile with a status that names the kernel and the problem, and never crash.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/codegen/codegen_test_util.h"

namespace graphjit::compiler::codegen_testutil {
namespace {

using ::testing::HasSubstr;

absl::Status CompileStatus(const Program& program) { return CompileProgram(program).status(); }

TEST(CodegenTest, InvalidProgramsAreErrors) {
  auto base = [] {
    ProgramBuilder pb;
    int x = pb.Arg("x", DType::kF64, {C(4), C(3)});
    pb.Arg("out", DType::kF64, {C(4), C(3)}, BufferKind::kOutput);
    (void)x;
    return pb;
  };
  ExprPtr good_load = Load(0, DType::kF64, {I(0), I(1)});
  struct Bad {
    const char* what;
    ExprPtr value;
    const char* message;
  };
  const std::vector<Bad> cases = {
      {"buffer out of range", Load(7, DType::kF64, {I(0), I(1)}), "b7 out of range"},
      {"negative buffer", Load(-1, DType::kF64, {I(0), I(1)}), "out of range"},
      {"wrong index count", Load(0, DType::kF64, {I(0)}), "indexed with 1 indices"},
      {"loop var out of range", Load(0, DType::kF64, {I(0), I(5)}), "loop variable i5"},
      {"load dtype", Cast(Load(0, DType::kF32, {I(0), I(1)}), DType::kF64),
       "but the buffer is f64"},
      {"float index", Load(0, DType::kF64, {I(0), F(1)}), "expected i64"},
      {"symbol out of range", Op(ScalarOp::kAdd, good_load, Cast(SymbolValue(3), DType::kF64)),
       "symbol s3"},
      {"mod on floats", Op(ScalarOp::kMod, good_load, F(2)), "not defined on f64"},
      {"missing value", nullptr, "value is missing"},
  };
  for (const Bad& bad : cases) {
    ProgramBuilder pb = base();
    pb.Pointwise(1, {C(4), C(3)}, bad.value).name = "bad_kernel";
    absl::Status status = CompileStatus(pb.program());
    EXPECT_FALSE(status.ok()) << bad.what;
    EXPECT_THAT(std::string(status.message()), HasSubstr("bad_kernel")) << bad.what;
    EXPECT_THAT(std::string(status.message()), HasSubstr(bad.message)) << bad.what;
  }
}

TEST(CodegenTest, InvalidKernelsAndBuffersAreErrors) {
  {
    ProgramBuilder pb;
    pb.Arg("out", DType::kF64, {C(4)}, BufferKind::kOutput);
    pb.Pointwise(9, {C(4)}, F(1));
    EXPECT_THAT(std::string(CompileStatus(pb.program()).message()), HasSubstr("output buffer b9"));
  }
  {
    ProgramBuilder pb;
    pb.Arg("out", DType::kF64, {C(4), C(2)}, BufferKind::kOutput);
    pb.Pointwise(0, {C(4)}, F(1));  // identity store with 1 index into a rank-2 buffer
    EXPECT_THAT(std::string(CompileStatus(pb.program()).message()), HasSubstr("indexed with 1"));
  }
  {
    ProgramBuilder pb;
    pb.Arg("out", DType::kF64, {C(4)}, BufferKind::kOutput);
    pb.mutable_program().buffers[0].arg_index = 3;
    pb.Pointwise(0, {C(4)}, F(1));
    EXPECT_THAT(std::string(CompileStatus(pb.program()).message()), HasSubstr("arg index 3"));
  }
  {
    ProgramBuilder pb;
    pb.Arg("out", DType::kF64, {C(4), C(4)}, BufferKind::kOutput);
    // kAxpy evaluates lhs outside the n loop: lhs may not use n (loop variable 1).
    pb.Matmul(0, {C(4), C(4), C(4)}, Load(0, DType::kF64, {I(0), I(1)}), F(1), MatmulOrder::kAxpy);
    EXPECT_THAT(std::string(CompileStatus(pb.program()).message()), HasSubstr("loop variable i1"));
  }
  {
    ProgramBuilder pb({"S"});
    int x = pb.Arg("x", DType::kF64, {C(4)});
    pb.Arg("out", DType::kF64, {C(4)}, BufferKind::kOutput);
    pb.mutable_program().buffers[x].dims[0] = I(0);  // dims may only use symbols
    pb.Pointwise(1, {C(4)}, Load(x, DType::kF64, {I(0)}));
    EXPECT_THAT(std::string(CompileStatus(pb.program()).message()), HasSubstr("buffer dim"));
  }
  {
    ProgramBuilder pb;
    pb.Arg("out", DType::kF64, {C(4)}, BufferKind::kOutput);
    pb.Reduce(0, {C(4)}, C(3), ScalarOp::kMul, F(1));
    EXPECT_THAT(std::string(CompileStatus(pb.program()).message()), HasSubstr("combine"));
  }
  {
    ProgramBuilder pb;
    pb.Arg("out", DType::kI64, {C(4)}, BufferKind::kOutput);
    pb.ArgReduce(0, {C(4)}, C(3), ScalarOp::kAdd, F(1));
    EXPECT_THAT(std::string(CompileStatus(pb.program()).message()),
                HasSubstr("arg reduction combine must be min or max"));
  }
  {
    ProgramBuilder pb;
    pb.Arg("out", DType::kF64, {C(4)}, BufferKind::kOutput);
    pb.ArgReduce(0, {C(4)}, C(3), ScalarOp::kMin, F(1));
    EXPECT_THAT(std::string(CompileStatus(pb.program()).message()), HasSubstr("indices are i64"));
  }
  {
    ProgramBuilder pb;
    pb.Arg("out", DType::kI64, {C(4)}, BufferKind::kOutput);
    pb.ArgReduce(0, {C(4)}, C(3), ScalarOp::kMin, ConstBool(true));
    EXPECT_THAT(std::string(CompileStatus(pb.program()).message()),
                HasSubstr("arg reduction over bool values"));
  }
  {
    ProgramBuilder pb;
    pb.Arg("out", DType::kF64, {C(4), C(3)}, BufferKind::kOutput);
    pb.Scan(0, {C(4)}, C(3), F(1)).combine = ScalarOp::kMax;
    EXPECT_THAT(std::string(CompileStatus(pb.program()).message()), HasSubstr("scan combine"));
  }
}

}  // namespace
}  // namespace graphjit::compiler::codegen_testutil
