// The kernel-program verifier: lowering's real programs pass it; each broken invariant
// is an InvalidArgument naming the kernel or buffer and what was expected.
#include "compiler/lower/verify_program.h"

#include <functional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/compiler/lower/decode_program.h"

namespace graphjit::compiler {
namespace {

using ::testing::HasSubstr;

// The first kernel of `kind` in `p`.
Kernel* FirstOf(Program& p, KernelKind kind) {
  for (Kernel& k : p.kernels) {
    if (k.kind == kind) return &k;
  }
  return nullptr;
}

int FirstBufferOf(const Program& p, BufferKind kind) {
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    if (p.buffers[b].kind == kind) return static_cast<int>(b);
  }
  return -1;
}

TEST(VerifyProgram, LoweredProgramsPass) {
  for (const char* spec : {"decode", "decode:dtype=f32"}) {
    EXPECT_TRUE(VerifyProgram(DecodeProgram(spec, std::nullopt)).ok()) << spec;
    EXPECT_TRUE(VerifyProgram(DecodeProgram(spec, 64)).ok()) << spec;
  }
}

// Each case breaks one invariant of the decode program; the verifier must name it.
struct BrokenCase {
  const char* name;
  std::function<void(Program&)> breaks;
  const char* message;
};

TEST(VerifyProgram, BrokenProgramsFailNamingWhat) {
  const std::vector<BrokenCase> cases = {
      {"load past the buffers",
       [](Program& p) {
         Kernel* k = FirstOf(p, KernelKind::kPointwise);
         k->value = Load(static_cast<int>(p.buffers.size()) + 3, ir::DType::kF64, {});
       },
       "a load of buffer b"},
      {"loop variable past the kernel's",
       [](Program& p) {
         Kernel* k = FirstOf(p, KernelKind::kPointwise);
         k->value = Op(ScalarOp::kAdd, k->value, Cast(LoopVar(17), k->value->dtype));
       },
       "loop variable i17"},
      {"symbol past the program's", [](Program& p) { p.kernels[0].loops[0] = SymbolValue(40); },
       "symbol s40"},
      {"load with too few indices",
       [](Program& p) {
         Kernel* k = FirstOf(p, KernelKind::kPointwise);
         const int b = FirstBufferOf(p, BufferKind::kInput);
         k->value = Load(b, p.buffers[b].dtype, {ConstI(0)});
       },
       "operands, expected"},
      {"load with a float index",
       [](Program& p) {
         Kernel* k = FirstOf(p, KernelKind::kPointwise);
         const int b = FirstBufferOf(p, BufferKind::kInput);
         std::vector<ExprPtr> indices(p.buffers[b].dims.size(), ConstF(0, ir::DType::kF64));
         k->value = Load(b, p.buffers[b].dtype, indices);
       },
       "index, expected i64"},
      {"writes an input",
       [](Program& p) { p.kernels[0].out = FirstBufferOf(p, BufferKind::kInput); },
       "an input or a parameter"},
      {"writes past the buffers", [](Program& p) { p.kernels[1].out = 999; }, "buffer b999"},
      {"two kernels of one name", [](Program& p) { p.kernels[1].name = p.kernels[0].name; },
       "not unique"},
      {"store indices for another rank",
       [](Program& p) {
         Kernel* k = FirstOf(p, KernelKind::kPointwise);
         k->store_indices = {ConstI(0)};
         for (size_t d = 1; d < p.buffers[k->out].dims.size() + 1; ++d) {
           k->store_indices.push_back(ConstI(0));
         }
       },
       "store indices"},
      {"parallel loop past the loops", [](Program& p) { p.kernels[0].parallel_loop = 9; },
       "parallel loop"},
      {"matmul without a rhs", [](Program& p) { FirstOf(p, KernelKind::kMatmul)->rhs = nullptr; },
       "rhs: missing"},
      {"arg index past num_args",
       [](Program& p) { p.buffers[FirstBufferOf(p, BufferKind::kInput)].arg_index = 99; },
       "arg index 99"},
      {"output in place of a temp",
       [](Program& p) {
         p.buffers[FirstBufferOf(p, BufferKind::kOutput)].alias_of =
             FirstBufferOf(p, BufferKind::kTemp);
       },
       "in place of an input"},
      {"dims and dim expressions disagree", [](Program& p) { p.buffers[0].dims.pop_back(); },
       "dim expressions"},
      {"a select on a float",
       [](Program& p) {
         Kernel* k = FirstOf(p, KernelKind::kPointwise);
         k->value = Select(ConstF(1, k->value->dtype), k->value, k->value);
       },
       "condition is not bool"},
  };
  for (const BrokenCase& c : cases) {
    Program p = DecodeProgram("decode", std::nullopt);
    ASSERT_TRUE(VerifyProgram(p).ok());
    c.breaks(p);
    absl::Status s = VerifyProgram(p);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.name << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr(c.message)) << c.name;
  }
}

TEST(VerifyProgram, NamesTheKernel) {
  Program p = DecodeProgram("decode", std::nullopt);
  p.kernels[2].parallel_loop = 9;
  EXPECT_THAT(VerifyProgram(p).message(),
              HasSubstr(absl::StrCat("kernel 2 '", p.kernels[2].name, "'")));
}

}  // namespace
}  // namespace graphjit::compiler
