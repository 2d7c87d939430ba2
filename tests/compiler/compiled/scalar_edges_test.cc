// The scalar semantics of docs/OPS.md at their edges (NaN, +-inf, -0, 1e300, INT64_MIN,
// INT64_MIN / -1, x / 0), every elementwise op and cast, computed five ways that must
// agree: eager (frontend::EagerContext), the interpreter, constant folding (the same graph with its
// operands as params the passes fold), the kernel program evaluator (lowering without
// LLVM) and compiled native code. Binary ops see every pair of edge values (a column
// against a row, broadcast). Results are compared bit for bit (any NaN equals any NaN),
// except that compiled transcendentals may differ by a few ulps (LLVM vectorizes them
// with libmvec); special values (NaN, inf, 0) must still match exactly there.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "compiler/compiled/call_frame.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/lower/lower.h"
#include "compiler/lower/program_eval.h"
#include "frontend/eager_context.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {
namespace {

using ir::DType;
using runtime::Tensor;
using runtime::TensorMap;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr double kInf = std::numeric_limits<double>::infinity();

const std::vector<double> kFloatEdges = {NAN,  kInf, -kInf, 1e300, -1e300, 0.0,
                                         -0.0, 1.0,  -1.0,  2.5,   -2.5,   1e-300};
const std::vector<int64_t> kIntEdges = {kMin, kMin + 1, -7, -1, 0, 1, 7, kMax};
constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();
constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
const std::vector<int32_t> kInt32Edges = {kMin32, kMin32 + 1, -7, -1, 0, 1, 7, kMax32};

Tensor Edges(DType dtype, std::vector<int64_t> shape) {
  if (dtype == DType::kI64) return *Tensor::FromVector<int64_t>(shape, kIntEdges);
  if (dtype == DType::kI32) return *Tensor::FromVector<int32_t>(shape, kInt32Edges);
  if (dtype == DType::kBool) return *Tensor::FromDoubles(dtype, shape, {0, 1});
  return *Tensor::FromDoubles(dtype, shape, kFloatEdges);
}

int64_t NumEdges(DType dtype) {
  if (dtype == DType::kI64 || dtype == DType::kI32) return 8;
  return dtype == DType::kBool ? 2 : 12;
}

// One op on edge inputs `a` (a column) and, for binary ops, `b` (a row).
struct EdgeCase {
  std::string op;  // the IR spelling, with attributes for cast
  DType in;
  DType out;
  bool binary;
  bool transcendental = false;  // compiled code may differ by a few ulps

  std::string Name() const {
    return absl::StrCat(op, " ", ir::DTypeName(in), "->", ir::DTypeName(out));
  }

  // The graph's text; `source` is `input` or `param` (then the passes fold everything).
  std::string Text(absl::string_view source) const {
    const int64_t n = NumEdges(in);
    const std::string t(ir::DTypeName(in)), o(ir::DTypeName(out));
    std::string text =
        absl::StrCat("graph edges {\n  %a = ", source, " {name=\"a\"} : ", t, "[", n, ", 1]\n");
    if (binary) {
      absl::StrAppend(&text, "  %b = ", source, " {name=\"b\"} : ", t, "[1, ", n, "]\n",
                      "  %r = ", op, "(%a, %b) : ", o, "[", n, ", ", n, "]\n");
    } else if (op == "cast") {
      absl::StrAppend(&text, "  %r = cast(%a) {dtype=", o, "} : ", o, "[", n, ", 1]\n");
    } else {
      absl::StrAppend(&text, "  %r = ", op, "(%a) : ", o, "[", n, ", 1]\n");
    }
    absl::StrAppend(&text, "  return %r\n}\n");
    return text;
  }

  TensorMap Operands() const {
    TensorMap m = {{"a", Edges(in, {NumEdges(in), 1})}};
    if (binary) m["b"] = Edges(in, {1, NumEdges(in)});
    return m;
  }
};

std::vector<EdgeCase> Cases() {
  std::vector<EdgeCase> cases;
  for (DType f : {DType::kF32, DType::kF64}) {
    for (const char* op : {"add", "sub", "mul", "div", "maximum", "minimum"}) {
      cases.push_back({op, f, f, true});
    }
    cases.push_back({"pow", f, f, true, true});
    for (const char* op : {"eq", "ne", "lt", "le", "gt", "ge"}) {
      cases.push_back({op, f, DType::kBool, true});
    }
    for (const char* op : {"neg", "abs", "sqrt", "rsqrt", "floor"}) {
      cases.push_back({op, f, f, false});
    }
    for (const char* op : {"exp", "log", "tanh", "sigmoid", "sin", "log1p"}) {
      cases.push_back({op, f, f, false, true});
    }
    for (DType to : {DType::kI64, DType::kBool, f == DType::kF32 ? DType::kF64 : DType::kF32}) {
      cases.push_back({"cast", f, to, false});
    }
  }
  for (const char* op : {"add", "sub", "mul", "div", "maximum", "minimum"}) {
    cases.push_back({op, DType::kI64, DType::kI64, true});
  }
  for (const char* op : {"eq", "lt", "ge"}) cases.push_back({op, DType::kI64, DType::kBool, true});
  for (const char* op : {"neg", "abs"}) cases.push_back({op, DType::kI64, DType::kI64, false});
  for (DType to : {DType::kF32, DType::kF64, DType::kBool}) {
    cases.push_back({"cast", DType::kI64, to, false});
  }
  for (const char* op : {"maximum", "minimum"}) {
    cases.push_back({op, DType::kBool, DType::kBool, true});
  }
  for (DType to : {DType::kI64, DType::kF32}) cases.push_back({"cast", DType::kBool, to, false});
  // i32, the storage type: casts both ways.
  for (DType other : {DType::kF32, DType::kF64, DType::kI64, DType::kBool}) {
    cases.push_back({"cast", other, DType::kI32, false});
    cases.push_back({"cast", DType::kI32, other, false});
  }
  return cases;
}

// The bits of element i (floats as doubles: f32 widens exactly).
uint64_t Bits(const Tensor& t, int64_t i) {
  uint64_t u = 0;
  if (t.dtype() == DType::kI64) {
    std::memcpy(&u, t.data<int64_t>() + i, 8);
  } else {
    double d = t.ToDoubles()[i];
    std::memcpy(&u, &d, 8);
  }
  return u;
}

// Empty if `got` equals `want`; else the first difference. `ulps` > 0 allows that many
// ulps of the dtype between finite nonzero values.
std::string Difference(const Tensor& got, const Tensor& want, double ulps) {
  if (got.TypeString() != want.TypeString()) {
    return absl::StrCat("type ", got.TypeString(), " vs ", want.TypeString());
  }
  const std::vector<double> g = got.ToDoubles(), w = want.ToDoubles();
  const bool fl = ir::IsFloat(got.dtype());
  const double eps = got.dtype() == DType::kF32 ? 0x1p-23 : 0x1p-52;
  for (int64_t i = 0; i < got.numel(); ++i) {
    if (fl && std::isnan(g[i]) && std::isnan(w[i])) continue;
    if (Bits(got, i) == Bits(want, i)) continue;
    const bool special = !std::isfinite(w[i]) || w[i] == 0 || !std::isfinite(g[i]);
    if (fl && ulps > 0 && !special && std::abs(g[i] - w[i]) <= ulps * eps * std::abs(w[i])) {
      continue;
    }
    return absl::StrCat("element ", i, ": ", got.DebugString(200), " vs ", want.DebugString(200));
  }
  return "";
}

// The op through the frontend's eager context (what model code runs).
absl::StatusOr<Tensor> Eager(const EdgeCase& c, const TensorMap& operands) {
  frontend::EagerContext ctx(operands, {});
  // Built whole: GCC 12 misreads a push_back onto a one-element list (-Warray-bounds).
  std::vector<frontend::Value> in =
      c.binary ? std::vector<frontend::Value>{ctx.Input("a"), ctx.Input("b")}
               : std::vector<frontend::Value>{ctx.Input("a")};
  ir::Attrs attrs;
  if (c.op == "cast") attrs = ir::Attrs{{"dtype", c.out}};
  frontend::Value r = ctx.Emit(*ir::OpFromName(c.op), in, attrs);
  absl::StatusOr<std::vector<Tensor>> out = ctx.Results({r});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

// Lowers `g` without passes and runs it through the kernel program evaluator.
absl::StatusOr<Tensor> Evaluate(const ir::Graph& g, const TensorMap& inputs) {
  absl::StatusOr<LoweredGraph> lowered = Lower(g);
  if (!lowered.ok()) return lowered.status();
  std::vector<Tensor> constants = ConstantTensors(g, *lowered);
  absl::StatusOr<CallFrame> frame = PrepareCall(g, *lowered, inputs, {}, constants, {});
  if (!frame.ok()) return frame.status();
  absl::Status s = EvaluateProgram(lowered->program, frame->args.data(), frame->symbols.data(),
                                   frame->workspace.get());
  if (!s.ok()) return s;
  return frame->outputs[0];
}

absl::StatusOr<Tensor> Compiled(const ir::Graph& g, const TensorMap& inputs,
                                const TensorMap& params, bool* folded) {
  absl::StatusOr<std::unique_ptr<CompiledGraph>> cg = CompiledGraph::Compile(g, params);
  if (!cg.ok()) return cg.status();
  if (folded != nullptr) {
    // Folded: the optimized graph is its result, a constant or a folded param.
    const ir::Graph& opt = (*cg)->graph();
    *folded = ir::IsSourceOp(opt.node(opt.outputs()[0]).op);
  }
  absl::StatusOr<std::vector<Tensor>> out = (*cg)->Run(inputs);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(ScalarEdges, InterpreterFoldingEvaluatorAndCompiledCodeAgree) {
  for (const EdgeCase& c : Cases()) {
    SCOPED_TRACE(c.Name());
    absl::StatusOr<ir::Graph> g = ir::ParseGraph(c.Text("input"));
    ASSERT_TRUE(g.ok()) << g.status() << "\n" << c.Text("input");
    absl::StatusOr<ir::Graph> pg = ir::ParseGraph(c.Text("param"));
    ASSERT_TRUE(pg.ok()) << pg.status();
    const TensorMap operands = c.Operands();

    absl::StatusOr<std::vector<Tensor>> want = runtime::Interpret(*g, operands, {});
    ASSERT_TRUE(want.ok()) << want.status();
    const Tensor& w = (*want)[0];

    absl::StatusOr<Tensor> eager = Eager(c, operands);
    ASSERT_TRUE(eager.ok()) << eager.status();
    EXPECT_EQ(Difference(*eager, w, 0), "") << "eager";

    bool folded = false;
    absl::StatusOr<Tensor> fold = Compiled(*pg, {}, operands, &folded);
    ASSERT_TRUE(fold.ok()) << fold.status();
    EXPECT_TRUE(folded) << "the passes did not fold " << c.Name();
    EXPECT_EQ(Difference(*fold, w, 0), "") << "constant folding";

    absl::StatusOr<Tensor> eval = Evaluate(*g, operands);
    ASSERT_TRUE(eval.ok()) << eval.status();
    EXPECT_EQ(Difference(*eval, w, 0), "") << "program_eval";

    absl::StatusOr<Tensor> jit = Compiled(*g, operands, {}, nullptr);
    ASSERT_TRUE(jit.ok()) << jit.status();
    EXPECT_EQ(Difference(*jit, w, c.transcendental ? 4 : 0), "") << "compiled";
  }
}

// maximum / minimum against a one-element parameter, which constant_fold makes a constant
// and codegen then compiles as one compare and select (ExtremumWithConstant): every edge
// value as the constant, on either side, over every edge value in vectors and in the
// scalar remainder, bit for bit as the interpreter (the signs of zeros included).
TEST(ScalarEdges, ExtremaWithAConstantAgreeWithTheInterpreter) {
  constexpr int64_t kRows = 12, kCols = 37;
  for (DType f : {DType::kF32, DType::kF64}) {
    std::vector<double> a(kRows * kCols);
    for (int64_t i = 0; i < kRows * kCols; ++i) a[i] = kFloatEdges[(i + i / kCols) % 12];
    const TensorMap inputs = {{"a", *Tensor::FromDoubles(f, {kRows, kCols}, a)}};
    const std::string t(ir::DTypeName(f));
    for (const char* op : {"maximum", "minimum"}) {
      for (bool constant_first : {false, true}) {
        const std::string text =
            absl::StrCat("graph edges {\n  %a = input {name=\"a\"} : ", t, "[", kRows, ", ", kCols,
                         "]\n  %c = param {name=\"c\"} : ", t, "[]\n  %r = ", op,
                         constant_first ? "(%c, %a)" : "(%a, %c)", " : ", t, "[", kRows, ", ",
                         kCols, "]\n  return %r\n}\n");
        absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
        ASSERT_TRUE(g.ok()) << g.status() << "\n" << text;
        for (double c : kFloatEdges) {
          SCOPED_TRACE(absl::StrCat(op, " ", t, " constant ", c, constant_first ? " first" : ""));
          const TensorMap params = {{"c", *Tensor::FromDoubles(f, {}, {c})}};
          absl::StatusOr<std::vector<Tensor>> want = runtime::Interpret(*g, inputs, params);
          ASSERT_TRUE(want.ok()) << want.status();
          absl::StatusOr<Tensor> jit = Compiled(*g, inputs, params, nullptr);
          ASSERT_TRUE(jit.ok()) << jit.status();
          EXPECT_EQ(Difference(*jit, (*want)[0], 0), "");
        }
      }
    }
  }
}

// The documented values themselves (the agreement above could be agreement on a bug).
TEST(ScalarEdges, DocumentedValues) {
  auto run = [](const EdgeCase& c) {
    absl::StatusOr<ir::Graph> g = ir::ParseGraph(c.Text("input"));
    EXPECT_TRUE(g.ok()) << g.status();
    absl::StatusOr<Tensor> out = Compiled(*g, c.Operands(), {}, nullptr);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : Tensor();
  };
  // i64 a // b over kIntEdges x kIntEdges: row a, column b.
  Tensor q = run({"div", DType::kI64, DType::kI64, true});
  auto at = [&](int i, int j) { return q.data<int64_t>()[i * 8 + j]; };
  EXPECT_EQ(at(0, 3), kMin);  // INT64_MIN // -1 wraps
  EXPECT_EQ(at(2, 4), 0);     // -7 // 0
  EXPECT_EQ(at(7, 4), 0);     // INT64_MAX // 0
  EXPECT_EQ(at(2, 6), -1);    // -7 // 7
  EXPECT_EQ(at(6, 2), -1);    // 7 // -7
  EXPECT_EQ(at(0, 7), -2);    // INT64_MIN // INT64_MAX floors
  // Float to i64 saturates, NaN is 0, truncation toward zero.
  Tensor i = run({"cast", DType::kF64, DType::kI64, false});
  EXPECT_EQ(std::vector<int64_t>(i.data<int64_t>(), i.data<int64_t>() + 12),
            (std::vector<int64_t>{0, kMax, kMin, kMax, kMin, 0, 0, 1, -1, 2, -2, 0}));
  // Float to i32 saturates at 32 bits the same way; i64 to i32 wraps.
  Tensor i32 = run({"cast", DType::kF64, DType::kI32, false});
  EXPECT_EQ(std::vector<int32_t>(i32.data<int32_t>(), i32.data<int32_t>() + 12),
            (std::vector<int32_t>{0, kMax32, kMin32, kMax32, kMin32, 0, 0, 1, -1, 2, -2, 0}));
  Tensor wrapped = run({"cast", DType::kI64, DType::kI32, false});
  EXPECT_EQ(std::vector<int32_t>(wrapped.data<int32_t>(), wrapped.data<int32_t>() + 8),
            (std::vector<int32_t>{0, 1, -7, -1, 0, 1, 7, -1}));
  // maximum: NaN wins both ways; -0 < +0.
  Tensor m = run({"maximum", DType::kF64, DType::kF64, true});
  const std::vector<double> mv = m.ToDoubles();
  EXPECT_TRUE(std::isnan(mv[0 * 12 + 1]) && std::isnan(mv[1 * 12 + 0]));
  EXPECT_FALSE(std::signbit(mv[5 * 12 + 6]));  // max(0, -0)
  EXPECT_FALSE(std::signbit(mv[6 * 12 + 5]));  // max(-0, 0)
  // pow's special cases: pow(NaN, 0) = 1, pow(1, NaN) = 1, pow(0, -1) = inf,
  // pow(-2.5, 2.5) = NaN.
  Tensor p = run({"pow", DType::kF64, DType::kF64, true, true});
  const std::vector<double> pv = p.ToDoubles();
  EXPECT_EQ(pv[0 * 12 + 5], 1.0);
  EXPECT_EQ(pv[7 * 12 + 0], 1.0);
  EXPECT_EQ(pv[5 * 12 + 8], kInf);
  EXPECT_TRUE(std::isnan(pv[10 * 12 + 9]));
  // floor rounds toward -inf and keeps -0, infinities, huge values and NaN.
  Tensor fl = run({"floor", DType::kF64, DType::kF64, false});
  const std::vector<double> fv = fl.ToDoubles();
  EXPECT_TRUE(std::isnan(fv[0]));
  EXPECT_EQ(std::vector<double>(fv.begin() + 1, fv.end()),
            (std::vector<double>{kInf, -kInf, 1e300, -1e300, 0, 0, 1, -1, 2, -3, 0}));
  EXPECT_TRUE(std::signbit(fv[6]));
}

}  // namespace
}  // namespace graphjit::compiler
