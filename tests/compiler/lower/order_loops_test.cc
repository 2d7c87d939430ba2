// order_loops (compiler/lower/order_loops.h): golden kernels where the step moves a loop
// innermost and where it must not, and the moved kernels' results, bit for bit, against
// the interpreter.
#include "compiler/lower/order_loops.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "compiler/compiled/call_frame.h"
#include "compiler/lower/lower.h"
#include "compiler/lower/program_eval.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using runtime::TensorMap;

ir::Graph Parse(const std::string& text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : ir::Graph();
}

// The two lines (loops, body) of the program's kernel whose name contains `name`.
std::string KernelText(const Program& p, const std::string& name) {
  const std::vector<std::string> lines = absl::StrSplit(ProgramToString(p), '\n');
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (absl::StrContains(lines[i], "kernel ") && absl::StrContains(lines[i], name)) {
      return lines[i] + "\n" + lines[i + 1];
    }
  }
  return "";
}

// Lowered and evaluated by the reference evaluator; equal to the interpreter bit for bit.
void ExpectSameAsInterpreter(const ir::Graph& g, const LoweredGraph& lowered) {
  TensorMap inputs;
  int seed = 1;
  for (ir::ValueId id = 0; id < g.num_nodes(); ++id) {
    const ir::Node& n = g.node(id);
    if (n.op != ir::OpCode::kInput) continue;
    std::vector<int64_t> dims;
    for (const ir::SymExpr& d : n.type.shape) dims.push_back(*d.AsConstant());
    std::vector<double> values;
    int64_t size = 1;
    for (int64_t d : dims) size *= d;
    for (int64_t i = 0; i < size; ++i) values.push_back(0.37 * ((i * 7 + seed) % 23) - 3.1);
    inputs[n.attrs.Get<std::string>("name")] = *Tensor::FromDoubles(n.type.dtype, dims, values);
    ++seed;
  }
  absl::StatusOr<std::vector<Tensor>> want = runtime::Interpret(g, inputs, {}, {});
  ASSERT_TRUE(want.ok()) << want.status();
  std::vector<Tensor> constants = ConstantTensors(g, lowered);
  absl::StatusOr<CallFrame> frame = PrepareCall(g, lowered, inputs, {}, constants, {});
  ASSERT_TRUE(frame.ok()) << frame.status();
  ASSERT_TRUE(EvaluateProgram(lowered.program, frame->args.data(), frame->symbols.data(),
                              frame->workspace.get())
                  .ok());
  ASSERT_EQ(frame->outputs.size(), want->size());
  for (size_t i = 0; i < want->size(); ++i) {
    EXPECT_EQ(frame->outputs[i].ToDoubles(), (*want)[i].ToDoubles());
  }
}

// A sum written transposed, [C, H, W] -> [H, W, C]: two loads consecutive along W, the
// store along C. W (extent `w`) goes innermost when it is long enough.
std::string TransposedSum(int w) {
  const std::string in = absl::StrCat("f32[16, 10, ", w, "]");
  const std::string out = absl::StrCat("f32[10, ", w, ", 16]");
  return absl::StrCat("graph g {\n  %0 = input {name=\"a\"} : ", in,
                      "\n  %1 = input {name=\"b\"} : ", in, "\n  %2 = add(%0, %1) : ", in,
                      "\n  %3 = transpose(%2) {perm=[1, 2, 0]} : ", out, "\n  return %3\n}\n");
}

TEST(OrderLoops, RunsATransposedSumAlongTheRowsItReads) {
  const ir::Graph g = Parse(TransposedSum(12));
  absl::StatusOr<LoweredGraph> lowered = Lower(g);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ(KernelText(lowered->program, "k0"),
            "  kernel k0_transpose for i0 < 10, i1 < 16, i2 < 12:\n"
            "    b2[i0, i2, i1] = (b0[i1, i0, i2] + b1[i1, i0, i2])");
  ExpectSameAsInterpreter(g, *lowered);
}

TEST(OrderLoops, MustNotFireOnShortRowsPlainCopiesOrInPlaceKernels) {
  // W = 4: shorter than a vector; the store's loop stays innermost.
  absl::StatusOr<LoweredGraph> short_rows = Lower(Parse(TransposedSum(4)));
  ASSERT_TRUE(short_rows.ok()) << short_rows.status();
  EXPECT_EQ(KernelText(short_rows->program, "k0"),
            "  kernel k0_transpose for i0 < 10, i1 < 4, i2 < 16:\n"
            "    b2 = (b0[i2, i0, i1] + b1[i2, i0, i1])");
  // A transposed copy: one load, one store; a tie keeps the order.
  const ir::Graph copy = Parse(
      "graph g {\n  %0 = input {name=\"a\"} : f32[16, 10, 12]\n"
      "  %1 = transpose(%0) {perm=[1, 2, 0]} : f32[10, 12, 16]\n  return %1\n}\n");
  absl::StatusOr<LoweredGraph> copied = Lower(copy);
  ASSERT_TRUE(copied.ok()) << copied.status();
  EXPECT_EQ(KernelText(copied->program, "k0"),
            "  kernel k0_transpose for i0 < 10, i1 < 12, i2 < 16:\n"
            "    b1 = b0[i2, i0, i1]");
}

TEST(OrderLoops, KernelsReadingWhatTheyWriteKeepTheirOrder) {
  // Built by hand: out[i, j] = out[j, i] + 1 reads the buffer it writes.
  Program p;
  p.buffers.push_back({.name = "x",
                       .dtype = ir::DType::kF32,
                       .shape = {ir::SymExpr(16), ir::SymExpr(16)},
                       .dims = {ConstI(16), ConstI(16)},
                       .kind = BufferKind::kOutput,
                       .arg_index = 0,
                       .workspace_offset = nullptr});
  Kernel k;
  k.name = "k0_add";
  k.out = 0;
  k.loops = {ConstI(16), ConstI(16)};
  k.value = Op(ScalarOp::kAdd,
               Op(ScalarOp::kAdd, Load(0, ir::DType::kF32, {LoopVar(1), LoopVar(0)}),
                  Load(0, ir::DType::kF32, {LoopVar(1), LoopVar(0)})),
               ConstF(1, ir::DType::kF32));
  p.kernels.push_back(k);
  const std::string before = ProgramToString(p);
  OrderLoops(&p);
  EXPECT_EQ(ProgramToString(p), before);
  // The same kernel writing another buffer turns.
  p.buffers.push_back(p.buffers[0]);
  p.buffers[1].name = "y";
  p.buffers[1].arg_index = 1;
  p.kernels[0].out = 1;
  OrderLoops(&p);
  EXPECT_TRUE(absl::StrContains(ProgramToString(p), "b1[i1, i0] = ((b0[i0, i1] + b0[i0, i1]) + 1)"))
      << ProgramToString(p);
}

// A pointwise kernel over a CNN's 7 x 7 map with a per-channel bias: its rows of 7 and the
// 7 rows of each channel run as one loop of 49, split back into (row, column) in the
// indices; the channel loop stays, the bias reading it.
TEST(OrderLoops, MergesShortRowsThatEveryAccessWalksWhole) {
  const ir::Graph g = Parse(R"(graph g {
  %0 = input {name="x"} : f32[2, 6, 7, 7]
  %1 = input {name="b"} : f32[6, 1, 1]
  %2 = add(%0, %1) : f32[2, 6, 7, 7]
  %3 = sigmoid(%2) : f32[2, 6, 7, 7]
  %4 = mul(%2, %3) : f32[2, 6, 7, 7]
  return %4
})");
  absl::StatusOr<LoweredGraph> lowered = Lower(g);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ(KernelText(lowered->program, "k0"),
            "  kernel k0_mul for i0 < 2, i1 < 6, i2 < 49:\n"
            "    b2[i0, i1, (i2 / 7), (i2 % 7)] = ((b0[i0, i1, (i2 / 7), (i2 % 7)] + b1[i1, 0, 0]) "
            "* sigmoid((b0[i0, i1, (i2 / 7), (i2 % 7)] + b1[i1, 0, 0])))");
  ExpectSameAsInterpreter(g, *lowered);
}

TEST(OrderLoops, MustNotMergeLongRowsBroadcastRowsOrWindows) {
  struct Case {
    const char* why;
    const char* text;
  };
  const Case cases[] = {
      {"rows of 64: vectors fill them already", R"(graph g {
  %0 = input {name="x"} : f32[6, 3, 64]
  %1 = sigmoid(%0) : f32[6, 3, 64]
  return %1
})"},
      {"a row broadcast down the rows (it uses the column, not the row)", R"(graph g {
  %0 = input {name="x"} : f32[6, 7, 7]
  %1 = input {name="r"} : f32[7]
  %2 = add(%0, %1) : f32[6, 7, 7]
  return %2
})"},
      {"a slice of a padded map (rows of 9 read 7 at a time)", R"(graph g {
  %0 = input {name="x"} : f32[6, 9, 9]
  %1 = slice(%0) {axis=2, end=8, start=1} : f32[6, 9, 7]
  %2 = slice(%1) {axis=1, end=8, start=1} : f32[6, 7, 7]
  %3 = sigmoid(%2) : f32[6, 7, 7]
  return %3
})"},
  };
  for (const Case& c : cases) {
    const ir::Graph g = Parse(c.text);
    absl::StatusOr<LoweredGraph> lowered = Lower(g);
    ASSERT_TRUE(lowered.ok()) << c.why << ": " << lowered.status();
    const std::string text = KernelText(lowered->program, "k0");
    EXPECT_FALSE(absl::StrContains(text, "/")) << c.why << "\n" << text;
    EXPECT_TRUE(absl::StrContains(text, "i2 < ")) << c.why << "\n" << text;
    ExpectSameAsInterpreter(g, *lowered);
  }
}

}  // namespace
}  // namespace graphjit::compiler
