// Codegen end to end: hand-built kernel programs compiled by CompileProgram (EmitModule,
// verifyModule, O2, JIT) and run on real buffers against values computed here.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/codegen/native_code.h"
#include "compiler/lower/kernel_ir.h"
#include "compiler/lower/program_eval.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphjit::compiler {
namespace {

using ir::DType;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Builds a Program buffer by buffer and kernel by kernel.
class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::vector<std::string> symbols = {}) {
    program_.name = "test";
    program_.symbols = std::move(symbols);
  }

  // An input/param/output buffer passed as args[next arg]; returns its buffer index.
  int Arg(const std::string& name, DType dtype, std::vector<ExprPtr> dims,
          BufferKind kind = BufferKind::kInput) {
    Buffer b = MakeBuffer(name, dtype, std::move(dims), kind);
    b.arg_index = program_.num_args++;
    return Add(std::move(b));
  }
  int Temp(const std::string& name, DType dtype, std::vector<ExprPtr> dims, int64_t offset) {
    Buffer b = MakeBuffer(name, dtype, std::move(dims), BufferKind::kTemp);
    b.workspace_offset = ConstI(offset);
    return Add(std::move(b));
  }

  Kernel& Pointwise(int out, std::vector<ExprPtr> loops, ExprPtr value,
                    std::vector<ExprPtr> store_indices = {}) {
    Kernel& k = NewKernel(KernelKind::kPointwise, out, std::move(loops));
    k.value = std::move(value);
    k.store_indices = std::move(store_indices);
    return k;
  }
  Kernel& Reduce(int out, std::vector<ExprPtr> loops, ExprPtr extent, ScalarOp combine,
                 ExprPtr value, ExprPtr finish_scale = nullptr) {
    Kernel& k = NewKernel(KernelKind::kReduce, out, std::move(loops));
    k.reduce_extent = std::move(extent);
    k.combine = combine;
    k.value = std::move(value);
    k.finish_scale = std::move(finish_scale);
    return k;
  }
  Kernel& ArgReduce(int out, std::vector<ExprPtr> loops, ExprPtr extent, ScalarOp combine,
                    ExprPtr value) {
    Kernel& k = Reduce(out, std::move(loops), std::move(extent), combine, std::move(value));
    k.kind = KernelKind::kArgReduce;
    return k;
  }
  Kernel& Scan(int out, std::vector<ExprPtr> loops, ExprPtr extent, ExprPtr value,
               std::vector<ExprPtr> store_indices = {}) {
    Kernel& k = Reduce(out, std::move(loops), std::move(extent), ScalarOp::kAdd, std::move(value));
    k.kind = KernelKind::kScan;
    k.store_indices = std::move(store_indices);
    return k;
  }
  Kernel& Matmul(int out, std::vector<ExprPtr> loops, ExprPtr lhs, ExprPtr rhs, MatmulOrder order) {
    Kernel& k = NewKernel(KernelKind::kMatmul, out, std::move(loops));
    k.lhs = std::move(lhs);
    k.rhs = std::move(rhs);
    k.order = order;
    return k;
  }

  const Program& program() const { return program_; }
  Program& mutable_program() { return program_; }

 private:
  Buffer MakeBuffer(const std::string& name, DType dtype, std::vector<ExprPtr> dims,
                    BufferKind kind) {
    Buffer b;
    b.name = name;
    b.dtype = dtype;
    b.kind = kind;
    for (const ExprPtr& d : dims) {
      b.shape.push_back(d->kind == ExprKind::kSymbol
                            ? ir::SymExpr::Symbol(program_.symbols[d->index])
                            : ir::SymExpr(d->i_value));
    }
    b.dims = std::move(dims);
    return b;
  }
  int Add(Buffer b) {
    program_.buffers.push_back(std::move(b));
    return static_cast<int>(program_.buffers.size()) - 1;
  }
  Kernel& NewKernel(KernelKind kind, int out, std::vector<ExprPtr> loops) {
    Kernel k;
    k.kind = kind;
    k.name = "k" + std::to_string(program_.kernels.size());
    k.out = out;
    k.loops = std::move(loops);
    program_.kernels.push_back(std::move(k));
    return program_.kernels.back();
  }

  Program program_;
};

std::unique_ptr<NativeCode> Compile(const Program& program, const CompileOptions& options = {}) {
  absl::StatusOr<std::unique_ptr<NativeCode>> code = CompileProgram(program, options);
  EXPECT_TRUE(code.ok()) << code.status() << "\n" << ProgramToString(program);
  return code.ok() ? *std::move(code) : nullptr;
}

void RunEntry(const NativeCode& code, std::vector<void*> args, std::vector<int64_t> symbols = {},
              char* workspace = nullptr) {
  symbols.push_back(0);  // never an empty vector's null data()
  code.entry()(args.data(), symbols.data(), workspace);
}

ExprPtr I(int v) { return LoopVar(v); }
ExprPtr C(int64_t v) { return ConstI(v); }
ExprPtr F(double v, DType dtype = DType::kF64) { return ConstF(v, dtype); }

// Relative closeness that treats equal infinities and two NaNs as equal.
::testing::AssertionResult Close(double got, double want, double rel) {
  if (std::isnan(want) ? std::isnan(got) : got == want) return ::testing::AssertionSuccess();
  if (std::abs(got - want) <= rel * std::max(1.0, std::abs(want))) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << got << " vs expected " << want;
}

// out[i, j] = x[i, j] > 0 ? exp(x[i, j]) + bias[j] : tanh(x[i, j]) * bias[j], where the
// bias load ignores loop variable 0 (a broadcast).
template <typename T>
void PointwiseChain(DType dtype, double rel) {
  constexpr int kRows = 4, kCols = 37;
  ProgramBuilder pb;
  int x = pb.Arg("x", dtype, {C(kRows), C(kCols)});
  int bias = pb.Arg("bias", dtype, {C(kCols)});
  int out = pb.Arg("out", dtype, {C(kRows), C(kCols)}, BufferKind::kOutput);
  ExprPtr xv = Load(x, dtype, {I(0), I(1)});
  ExprPtr bv = Load(bias, dtype, {I(1)});
  pb.Pointwise(
      out, {C(kRows), C(kCols)},
      Select(Op(ScalarOp::kGt, xv, F(0, dtype)), Op(ScalarOp::kAdd, Op(ScalarOp::kExp, xv), bv),
             Op(ScalarOp::kMul, Op(ScalarOp::kTanh, xv), bv)));
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<T> xs(kRows * kCols), bs(kCols), os(kRows * kCols);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<T>(std::sin(i * 0.7) * 3);
  for (size_t j = 0; j < bs.size(); ++j) bs[j] = static_cast<T>(0.5 + j * 0.25);
  RunEntry(*code, {xs.data(), bs.data(), os.data()});
  for (int i = 0; i < kRows; ++i) {
    for (int j = 0; j < kCols; ++j) {
      T v = xs[i * kCols + j];
      T want = v > 0 ? std::exp(v) + bs[j] : std::tanh(v) * bs[j];
      EXPECT_TRUE(Close(os[i * kCols + j], want, rel)) << i << "," << j;
    }
  }
}

TEST(CodegenTest, PointwiseExpTanhSelectBroadcastF64) {
  PointwiseChain<double>(DType::kF64, 1e-13);
}
TEST(CodegenTest, PointwiseExpTanhSelectBroadcastF32) { PointwiseChain<float>(DType::kF32, 1e-6); }

TEST(CodegenTest, UnaryAndBinaryFloatOpsMatchTheInterpreterSemantics) {
  // One output column per op, with NaN, infinities and signed values.
  const std::vector<double> a = {1.5, -2.0, 0.0, kNaN, kInf, -kInf, 3.0, 0.25};
  const std::vector<double> b = {2.0, 3.0, -1.0, 1.0, kNaN, 2.0, 3.0, -0.5};
  const int n = static_cast<int>(a.size());
  struct Case {
    ExprPtr (*make)(ExprPtr, ExprPtr);
    double (*want)(double, double);
  };
  const std::vector<Case> cases = {
      {[](ExprPtr x, ExprPtr y) { return Op(ScalarOp::kMax, x, y); },
       [](double x, double y) { return std::isnan(x) || std::isnan(y) ? kNaN : std::max(x, y); }},
      {[](ExprPtr x, ExprPtr y) { return Op(ScalarOp::kMin, x, y); },
       [](double x, double y) { return std::isnan(x) || std::isnan(y) ? kNaN : std::min(x, y); }},
      {[](ExprPtr x, ExprPtr y) { return Op(ScalarOp::kPow, x, y); },
       [](double x, double y) { return std::pow(x, y); }},
      {[](ExprPtr x, ExprPtr y) { return Cast(Op(ScalarOp::kNe, x, y), DType::kF64); },
       [](double x, double y) { return double(x != y); }},
      {[](ExprPtr x, ExprPtr y) { return Cast(Op(ScalarOp::kLe, x, y), DType::kF64); },
       [](double x, double y) { return double(x <= y); }},
      {[](ExprPtr x, ExprPtr) { return Op(ScalarOp::kRsqrt, x); },
       [](double x, double) { return 1 / std::sqrt(x); }},
      {[](ExprPtr x, ExprPtr) { return Op(ScalarOp::kSigmoid, x); },
       [](double x, double) { return 1 / (1 + std::exp(-x)); }},
      {[](ExprPtr x, ExprPtr) { return Op(ScalarOp::kAbs, Op(ScalarOp::kNeg, x)); },
       [](double x, double) { return std::abs(x); }},
      {[](ExprPtr x, ExprPtr) { return Op(ScalarOp::kLog, x); },
       [](double x, double) { return std::log(x); }},
      {[](ExprPtr x, ExprPtr) { return Cast(Cast(x, DType::kBool), DType::kF64); },
       [](double x, double) { return double(x != 0); }},
      {[](ExprPtr x, ExprPtr) { return Cast(Cast(x, DType::kF32), DType::kF64); },
       [](double x, double) { return double(static_cast<float>(x)); }},
  };
  const int m = static_cast<int>(cases.size());
  ProgramBuilder pb;
  int in_a = pb.Arg("a", DType::kF64, {C(n)});
  int in_b = pb.Arg("b", DType::kF64, {C(n)});
  int out = pb.Arg("out", DType::kF64, {C(m), C(n)}, BufferKind::kOutput);
  for (int c = 0; c < m; ++c) {
    pb.Pointwise(out, {C(n)},
                 cases[c].make(Load(in_a, DType::kF64, {I(0)}), Load(in_b, DType::kF64, {I(0)})),
                 {C(c), I(0)});
  }
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<double> os(m * n);
  RunEntry(*code, {const_cast<double*>(a.data()), const_cast<double*>(b.data()), os.data()});
  for (int c = 0; c < m; ++c) {
    for (int i = 0; i < n; ++i) {
      EXPECT_TRUE(Close(os[c * n + i], cases[c].want(a[i], b[i]), 1e-14))
          << "case " << c << " element " << i;
    }
  }
}

TEST(CodegenTest, SymbolicExtentsAreReadFromTheSymbolsArray) {
  // out[i, j] = x[i, j] * 2 + i over [S, 3]; dims and extents read symbols[0].
  ProgramBuilder pb({"S"});
  ExprPtr s = SymbolValue(0);
  int x = pb.Arg("x", DType::kF64, {s, C(3)});
  int out = pb.Arg("out", DType::kF64, {s, C(3)}, BufferKind::kOutput);
  pb.Pointwise(out, {s, C(3)},
               Op(ScalarOp::kAdd, Op(ScalarOp::kMul, Load(x, DType::kF64, {I(0), I(1)}), F(2)),
                  Cast(I(0), DType::kF64)));
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  for (int64_t rows : {3, 7}) {
    std::vector<double> xs(rows * 3), os(rows * 3 + 1, -1.0);  // one guard element
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = i * 0.5;
    RunEntry(*code, {xs.data(), os.data()}, {rows});
    for (int64_t i = 0; i < rows; ++i) {
      for (int j = 0; j < 3; ++j) EXPECT_EQ(os[i * 3 + j], xs[i * 3 + j] * 2 + i);
    }
    EXPECT_EQ(os.back(), -1.0) << "wrote past S rows";
  }
}

int64_t PyFloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

TEST(CodegenTest, IntegerDivisionAndModuloFloor) {
  const std::vector<int64_t> a = {7, -7, 7, -7, 0, 6, -6, 13, -1, 5};
  const std::vector<int64_t> b = {2, 2, -2, -2, 3, 3, -3, -5, 4, 1};
  const int n = static_cast<int>(a.size());
  ProgramBuilder pb;
  int in_a = pb.Arg("a", DType::kI64, {C(n)});
  int in_b = pb.Arg("b", DType::kI64, {C(n)});
  int out = pb.Arg("out", DType::kI64, {C(4), C(n)}, BufferKind::kOutput);
  ExprPtr av = Load(in_a, DType::kI64, {I(0)});
  ExprPtr bv = Load(in_b, DType::kI64, {I(0)});
  pb.Pointwise(out, {C(n)}, Op(ScalarOp::kDiv, av, bv), {C(0), I(0)});
  pb.Pointwise(out, {C(n)}, Op(ScalarOp::kMod, av, bv), {C(1), I(0)});
  // Constant divisors take LLVM's strength-reduced paths.
  pb.Pointwise(out, {C(n)}, Op(ScalarOp::kDiv, av, C(-3)), {C(2), I(0)});
  pb.Pointwise(out, {C(n)}, Op(ScalarOp::kMod, av, C(4)), {C(3), I(0)});
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<int64_t> os(4 * n);
  RunEntry(*code, {const_cast<int64_t*>(a.data()), const_cast<int64_t*>(b.data()), os.data()});
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(os[i], PyFloorDiv(a[i], b[i])) << a[i] << " // " << b[i];
    EXPECT_EQ(os[n + i], a[i] - PyFloorDiv(a[i], b[i]) * b[i]) << a[i] << " % " << b[i];
    EXPECT_EQ(os[2 * n + i], PyFloorDiv(a[i], -3)) << a[i] << " // -3";
    EXPECT_EQ(os[3 * n + i], a[i] - PyFloorDiv(a[i], 4) * 4) << a[i] << " % 4";
  }
}

TEST(CodegenTest, IntegerDivisionByZeroDoesNotTrap) {
  ProgramBuilder pb;
  int in = pb.Arg("a", DType::kI64, {C(2)});
  int out = pb.Arg("out", DType::kI64, {C(2)}, BufferKind::kOutput);
  ExprPtr av = Load(in, DType::kI64, {I(0)});
  pb.Pointwise(out, {C(2)},
               Op(ScalarOp::kAdd, Op(ScalarOp::kDiv, C(5), av), Op(ScalarOp::kMod, C(5), av)));
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<int64_t> as = {0, 2}, os(2);
  RunEntry(*code, {as.data(), os.data()});  // the result for 0 is unspecified, but no SIGFPE
  EXPECT_EQ(os[1], 2 + 1);
}

TEST(CodegenTest, SumMeanAndMaxReductions) {
  constexpr int kRows = 4, kCols = 37;
  ProgramBuilder pb;
  int x = pb.Arg("x", DType::kF64, {C(kRows), C(kCols)});
  int sum = pb.Arg("sum", DType::kF64, {C(kRows)}, BufferKind::kOutput);
  int mean = pb.Arg("mean", DType::kF64, {C(kRows), C(1)}, BufferKind::kOutput);
  int max = pb.Arg("max", DType::kF64, {C(kRows)}, BufferKind::kOutput);
  int empty = pb.Arg("empty", DType::kF64, {C(2)}, BufferKind::kOutput);
  ExprPtr xv = Load(x, DType::kF64, {I(0), I(1)});
  pb.Reduce(sum, {C(kRows)}, C(kCols), ScalarOp::kAdd, xv);
  pb.Reduce(mean, {C(kRows)}, C(kCols), ScalarOp::kAdd, xv, F(1.0 / kCols)).store_indices = {
      I(0), C(0)};  // keepdims
  pb.Reduce(max, {C(kRows)}, C(kCols), ScalarOp::kMax, xv);
  // Empty reductions give the identities.
  pb.Reduce(empty, {}, C(0), ScalarOp::kAdd, F(1)).store_indices = {C(0)};
  pb.Reduce(empty, {}, C(0), ScalarOp::kMax, F(1)).store_indices = {C(1)};
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);

  std::vector<double> xs(kRows * kCols);
  for (int i = 0; i < kRows; ++i) {
    for (int j = 0; j < kCols; ++j) xs[i * kCols + j] = std::cos(i * 31 + j) * 10;
  }
  for (int j = 0; j < kCols; ++j) xs[1 * kCols + j] = -kInf;  // row 1: all -inf
  xs[2 * kCols + 20] = kNaN;                                  // row 2: one NaN
  xs[3 * kCols + 36] = 1e3;                                   // row 3: max in the tail
  std::vector<double> sums(kRows), means(kRows), maxes(kRows), empties(2);
  RunEntry(*code, {xs.data(), sums.data(), means.data(), maxes.data(), empties.data()});
  for (int i = 0; i < kRows; ++i) {
    double s = 0, m = -kInf;
    for (int j = 0; j < kCols; ++j) {
      double v = xs[i * kCols + j];
      s += v;
      m = std::isnan(m) || std::isnan(v) ? kNaN : std::max(m, v);
    }
    EXPECT_TRUE(Close(sums[i], s, 1e-12)) << "row " << i;
    EXPECT_TRUE(Close(means[i], s * (1.0 / kCols), 1e-12)) << "row " << i;
    EXPECT_TRUE(Close(maxes[i], m, 0)) << "row " << i;
  }
  EXPECT_EQ(maxes[1], -kInf);
  EXPECT_TRUE(std::isnan(maxes[2]));
  EXPECT_EQ(maxes[3], 1e3);
  EXPECT_EQ(empties[0], 0.0);
  EXPECT_EQ(empties[1], -kInf);
}

TEST(CodegenTest, IntegerSumAndMaxReductions) {
  ProgramBuilder pb;
  int x = pb.Arg("x", DType::kI64, {C(2), C(5)});
  int out = pb.Arg("out", DType::kI64, {C(2), C(2)}, BufferKind::kOutput);
  ExprPtr xv = Load(x, DType::kI64, {I(0), I(1)});
  pb.Reduce(out, {C(2)}, C(5), ScalarOp::kAdd, xv).store_indices = {I(0), C(0)};
  pb.Reduce(out, {C(2)}, C(5), ScalarOp::kMax, xv).store_indices = {I(0), C(1)};
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<int64_t> xs = {1, -2, 3, -4, 5, -10, -20, -3, -40, -50}, os(4);
  RunEntry(*code, {xs.data(), os.data()});
  EXPECT_THAT(os, ::testing::ElementsAre(3, 5, -123, -3));
}

// The first extremum per row (ties, a row of +inf, NaNs) for f64, f32 and i64 values, and
// an empty extent, which stores 0.
TEST(CodegenTest, ArgMinAndArgMaxKeepTheFirstExtremumAndTheFirstNaN) {
  constexpr int kRows = 5, kCols = 37;
  std::vector<double> xs(kRows * kCols);
  for (int i = 0; i < kRows * kCols; ++i) xs[i] = std::round(std::cos(i * 0.9) * 3);  // ties
  for (int j = 0; j < kCols; ++j) xs[1 * kCols + j] = kInf;                           // all +inf
  xs[2 * kCols + 5] = kNaN;  // row 2: NaNs after values
  xs[2 * kCols + 30] = kNaN;
  xs[3 * kCols + 36] = -100;  // row 3: the minimum in the vector tail
  xs[4 * kCols + 0] = -kInf;  // row 4: -inf first
  std::vector<float> fs(xs.begin(), xs.end());
  std::vector<int64_t> is(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) is[i] = std::isfinite(xs[i]) ? int64_t(xs[i]) : -7;
  auto first = [&](int row, bool min, bool as_int) {
    int best = 0;
    for (int j = 0; j < kCols; ++j) {
      const double v = as_int ? double(is[row * kCols + j]) : xs[row * kCols + j];
      const double b = as_int ? double(is[row * kCols + best]) : xs[row * kCols + best];
      if (std::isnan(v)) return int64_t{j};
      if (min ? v < b : v > b) best = j;
    }
    return int64_t{best};
  };

  ProgramBuilder pb;
  int x64 = pb.Arg("x64", DType::kF64, {C(kRows), C(kCols)});
  int x32 = pb.Arg("x32", DType::kF32, {C(kRows), C(kCols)});
  int xi = pb.Arg("xi", DType::kI64, {C(kRows), C(kCols)});
  int out = pb.Arg("out", DType::kI64, {C(6), C(kRows)}, BufferKind::kOutput);
  int empty = pb.Arg("empty", DType::kI64, {C(1)}, BufferKind::kOutput);
  const int loads[] = {x64, x32, xi};
  const DType dtypes[] = {DType::kF64, DType::kF32, DType::kI64};
  for (int t = 0; t < 3; ++t) {
    for (int m = 0; m < 2; ++m) {
      pb.ArgReduce(out, {C(kRows)}, C(kCols), m == 0 ? ScalarOp::kMin : ScalarOp::kMax,
                   Load(loads[t], dtypes[t], {I(0), I(1)}))
          .store_indices = {C(2 * t + m), I(0)};
    }
  }
  pb.ArgReduce(empty, {}, C(0), ScalarOp::kMin, F(1)).store_indices = {C(0)};
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<int64_t> os(6 * kRows, -1), es = {-1};
  RunEntry(*code, {xs.data(), fs.data(), is.data(), os.data(), es.data()});
  for (int t = 0; t < 3; ++t) {
    for (int m = 0; m < 2; ++m) {
      for (int r = 0; r < kRows; ++r) {
        EXPECT_EQ(os[(2 * t + m) * kRows + r], first(r, m == 0, t == 2))
            << ir::DTypeName(dtypes[t]) << (m == 0 ? " argmin" : " argmax") << " row " << r;
      }
    }
  }
  EXPECT_EQ(os[1 * kRows + 2], 5) << "the first NaN wins argmax";
  EXPECT_EQ(os[0 * kRows + 1], 0) << "argmin of all +inf is the first";
  EXPECT_EQ(os[0 * kRows + 3], 36);
  EXPECT_EQ(es[0], 0);
}

// Running sums along the contiguous axis (identity store) and along a strided one, f32
// accumulating in f64 (so the result is the double sum rounded per element), i64 wrapping.
TEST(CodegenTest, ScansAreRunningSumsInIndexOrder) {
  constexpr int kRows = 3, kCols = 37;
  ProgramBuilder pb;
  int x64 = pb.Arg("x64", DType::kF64, {C(kRows), C(kCols)});
  int x32 = pb.Arg("x32", DType::kF32, {C(kRows), C(kCols)});
  int xi = pb.Arg("xi", DType::kI64, {C(2)});
  int rows64 = pb.Arg("rows64", DType::kF64, {C(kRows), C(kCols)}, BufferKind::kOutput);
  int cols64 = pb.Arg("cols64", DType::kF64, {C(kRows), C(kCols)}, BufferKind::kOutput);
  int rows32 = pb.Arg("rows32", DType::kF32, {C(kRows), C(kCols)}, BufferKind::kOutput);
  int wrapped = pb.Arg("wrapped", DType::kI64, {C(2)}, BufferKind::kOutput);
  pb.Scan(rows64, {C(kRows)}, C(kCols), Load(x64, DType::kF64, {I(0), I(1)}));
  // Along axis 0: the loop runs over columns, the scan variable i1 over rows.
  pb.Scan(cols64, {C(kCols)}, C(kRows), Load(x64, DType::kF64, {I(1), I(0)}), {I(1), I(0)});
  pb.Scan(rows32, {C(kRows)}, C(kCols), Load(x32, DType::kF32, {I(0), I(1)}));
  pb.Scan(wrapped, {}, C(2), Load(xi, DType::kI64, {I(0)}));
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<double> xs(kRows * kCols), r64(xs.size()), c64(xs.size());
  std::vector<float> xf(xs.size()), r32(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    xs[i] = std::sin(i * 1.3) * 1e3 + 1e-3 * i;
    xf[i] = static_cast<float>(std::cos(i * 0.7) * 1e4);
  }
  std::vector<int64_t> xi_v = {std::numeric_limits<int64_t>::max(), 1}, wi(2);
  RunEntry(*code,
           {xs.data(), xf.data(), xi_v.data(), r64.data(), c64.data(), r32.data(), wi.data()});
  for (int i = 0; i < kRows; ++i) {
    double acc = 0, acc32 = 0;
    for (int j = 0; j < kCols; ++j) {
      acc += xs[i * kCols + j];
      acc32 += xf[i * kCols + j];
      EXPECT_EQ(r64[i * kCols + j], acc) << i << "," << j;
      EXPECT_EQ(r32[i * kCols + j], static_cast<float>(acc32)) << i << "," << j;
    }
  }
  for (int j = 0; j < kCols; ++j) {
    double acc = 0;
    for (int i = 0; i < kRows; ++i) {
      acc += xs[i * kCols + j];
      EXPECT_EQ(c64[i * kCols + j], acc) << i << "," << j;
    }
  }
  EXPECT_EQ(wi[0], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(wi[1], std::numeric_limits<int64_t>::min());
}

// out[b, m, n] = sum_k a[b, m, k] * w[(b,) k, n] for both loop orders, against naive loops.
void MatmulCase(MatmulOrder order, bool broadcast_rhs) {
  constexpr int kB = 2, kM = 5, kN = 19, kK = 33;
  ProgramBuilder pb;
  int a = pb.Arg("a", DType::kF64, {C(kB), C(kM), C(kK)});
  int w = broadcast_rhs ? pb.Arg("w", DType::kF64, {C(kK), C(kN)})
                        : pb.Arg("w", DType::kF64, {C(kB), C(kK), C(kN)});
  int out = pb.Arg("out", DType::kF64, {C(kB), C(kM), C(kN)}, BufferKind::kOutput);
  // Loop variables: b = 0, m = 1, n = 2, k = 3.
  ExprPtr lhs = Load(a, DType::kF64, {I(0), I(1), I(3)});
  ExprPtr rhs =
      broadcast_rhs ? Load(w, DType::kF64, {I(3), I(2)}) : Load(w, DType::kF64, {I(0), I(3), I(2)});
  pb.Matmul(out, {C(kB), C(kM), C(kN), C(kK)}, lhs, rhs, order);
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<double> as(kB * kM * kK), ws((broadcast_rhs ? 1 : kB) * kK * kN);
  std::vector<double> os(kB * kM * kN, kNaN);  // kAxpy must zero it first
  for (size_t i = 0; i < as.size(); ++i) as[i] = std::sin(i * 0.37);
  for (size_t i = 0; i < ws.size(); ++i) ws[i] = std::cos(i * 0.11) - 0.3;
  RunEntry(*code, {as.data(), ws.data(), os.data()});
  for (int b = 0; b < kB; ++b) {
    const double* wb = ws.data() + (broadcast_rhs ? 0 : b * kK * kN);
    for (int m = 0; m < kM; ++m) {
      for (int n = 0; n < kN; ++n) {
        double acc = 0;
        for (int k = 0; k < kK; ++k) acc += as[(b * kM + m) * kK + k] * wb[k * kN + n];
        EXPECT_TRUE(Close(os[(b * kM + m) * kN + n], acc, 1e-12)) << b << "," << m << "," << n;
      }
    }
  }
}

TEST(CodegenTest, MatmulDotOrderWithBatch) { MatmulCase(MatmulOrder::kDot, false); }
TEST(CodegenTest, MatmulAxpyOrderWithBatch) { MatmulCase(MatmulOrder::kAxpy, false); }
TEST(CodegenTest, MatmulAxpyOrderBroadcastRhs) { MatmulCase(MatmulOrder::kAxpy, true); }

TEST(CodegenTest, TempBufferInWorkspaceFeedsALaterKernel) {
  constexpr int kN = 10;
  constexpr int64_t kOffset = 128;
  ProgramBuilder pb;
  int x = pb.Arg("x", DType::kF32, {C(kN)});
  int t = pb.Temp("t", DType::kF32, {C(kN)}, kOffset);
  int out = pb.Arg("out", DType::kF32, {C(kN)}, BufferKind::kOutput);
  pb.Pointwise(t, {C(kN)}, Op(ScalarOp::kMul, Load(x, DType::kF32, {I(0)}), F(2, DType::kF32)));
  pb.Pointwise(out, {C(kN)},
               Op(ScalarOp::kAdd, Load(t, DType::kF32, {Op(ScalarOp::kSub, C(kN - 1), I(0))}),
                  F(1, DType::kF32)));
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<float> xs(kN), os(kN);
  for (int i = 0; i < kN; ++i) xs[i] = i * 1.5f;
  alignas(64) char workspace[kOffset + kN * sizeof(float)];
  std::memset(workspace, 0, sizeof(workspace));
  RunEntry(*code, {xs.data(), os.data()}, {}, workspace);
  for (int i = 0; i < kN; ++i) EXPECT_EQ(os[i], xs[kN - 1 - i] * 2 + 1);
  float t3;
  std::memcpy(&t3, workspace + kOffset + 3 * sizeof(float), sizeof(float));
  EXPECT_EQ(t3, xs[3] * 2);  // the temp is where its offset says
}

TEST(CodegenTest, StoreAtASymbolicRowOfACache) {
  // cache[pos, j] = row[j] * 10 for j < D, pos = symbols[0]: a KV cache append.
  constexpr int kRows = 8, kD = 6;
  ProgramBuilder pb({"pos"});
  int row = pb.Arg("row", DType::kF64, {C(kD)});
  int cache = pb.Arg("cache", DType::kF64, {C(kRows), C(kD)}, BufferKind::kOutput);
  pb.Pointwise(cache, {C(kD)}, Op(ScalarOp::kMul, Load(row, DType::kF64, {I(0)}), F(10)),
               {SymbolValue(0), I(0)});
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<double> rs(kD), cs(kRows * kD, -1);
  for (int j = 0; j < kD; ++j) rs[j] = j + 1;
  RunEntry(*code, {rs.data(), cs.data()}, {2});
  RunEntry(*code, {rs.data(), cs.data()}, {5});
  for (int r = 0; r < kRows; ++r) {
    for (int j = 0; j < kD; ++j) {
      EXPECT_EQ(cs[r * kD + j], r == 2 || r == 5 ? (j + 1) * 10.0 : -1) << r << "," << j;
    }
  }
}

TEST(CodegenTest, BoolLoadsAndStores) {
  constexpr int kN = 9;
  ProgramBuilder pb;
  int mask = pb.Arg("mask", DType::kBool, {C(kN)});
  int x = pb.Arg("x", DType::kF64, {C(kN)});
  int out_bool = pb.Arg("out_bool", DType::kBool, {C(kN)}, BufferKind::kOutput);
  int out_num = pb.Arg("out_num", DType::kI64, {C(kN)}, BufferKind::kOutput);
  ExprPtr mv = Load(mask, DType::kBool, {I(0)});
  ExprPtr xv = Load(x, DType::kF64, {I(0)});
  // (x > 0 and not mask) or (x == 0)
  pb.Pointwise(
      out_bool, {C(kN)},
      Op(ScalarOp::kOr, Op(ScalarOp::kAnd, Op(ScalarOp::kGt, xv, F(0)), Op(ScalarOp::kNot, mv)),
         Op(ScalarOp::kEq, xv, F(0))));
  // mask as 0/1 plus 10 * (mask != (x < 0))
  pb.Pointwise(out_num, {C(kN)},
               Op(ScalarOp::kAdd, Cast(mv, DType::kI64),
                  Op(ScalarOp::kMul, C(10),
                     Cast(Op(ScalarOp::kNe, mv, Op(ScalarOp::kLt, xv, F(0))), DType::kI64))));
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  // Any nonzero byte is true.
  std::vector<uint8_t> ms = {0, 1, 0, 1, 0, 7, 0, 1, 0};
  std::vector<double> xs = {1, 1, -1, -1, 0, 2, kNaN, 0, 3};
  std::vector<uint8_t> ob(kN, 0xAA);
  std::vector<int64_t> on(kN);
  RunEntry(*code, {ms.data(), xs.data(), ob.data(), on.data()});
  for (int i = 0; i < kN; ++i) {
    bool m = ms[i] != 0;
    EXPECT_EQ(ob[i], ((xs[i] > 0 && !m) || xs[i] == 0) ? 1 : 0) << i;
    EXPECT_EQ(on[i], int64_t{m} + 10 * int64_t{m != (xs[i] < 0)}) << i;
  }
}

TEST(CodegenTest, SelectArmLoadsOnlyWhenTaken) {
  // Concatenation: out[i] = i < 3 ? a[i] : b[i - 3]. Each arm's index is out of range
  // when the other arm is taken, so the arms must be branches, not a `select` of loads.
  ProgramBuilder pb;
  int a = pb.Arg("a", DType::kF64, {C(3)});
  int b = pb.Arg("b", DType::kF64, {C(5)});
  int out = pb.Arg("out", DType::kF64, {C(8)}, BufferKind::kOutput);
  pb.Pointwise(out, {C(8)},
               Select(Op(ScalarOp::kLt, I(0), C(3)), Load(a, DType::kF64, {I(0)}),
                      Load(b, DType::kF64, {Op(ScalarOp::kSub, I(0), C(3))})));
  CompileOptions options;
  options.keep_ir = true;
  auto code = Compile(pb.program(), options);
  ASSERT_NE(code, nullptr);
  EXPECT_THAT(code->llvm_ir(), HasSubstr("sel.true"));  // a branch, not a `select`
  std::vector<double> as = {1, 2, 3}, bs = {4, 5, 6, 7, 8}, os(8);
  RunEntry(*code, {as.data(), bs.data(), os.data()});
  EXPECT_THAT(os, ::testing::ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));
}

// Loads at the same index share its address arithmetic: out[i, j] = a[i, j] * b[i, j] +
// a[i, j + 0] emits i * 7 (+ j) once, not once per load, and `+ 0` not at all.
TEST(CodegenTest, EqualIndexArithmeticIsEmittedOncePerBlock) {
  ProgramBuilder pb;
  int a = pb.Arg("a", DType::kF64, {C(5), C(7)});
  int b = pb.Arg("b", DType::kF64, {C(5), C(7)});
  int out = pb.Arg("out", DType::kF64, {C(5), C(7)}, BufferKind::kOutput);
  pb.Pointwise(
      out, {C(5), C(7)},
      Op(ScalarOp::kAdd,
         Op(ScalarOp::kMul, Load(a, DType::kF64, {I(0), I(1)}), Load(b, DType::kF64, {I(0), I(1)})),
         Load(a, DType::kF64, {I(0), Op(ScalarOp::kAdd, I(1), C(0))})));
  CompileOptions options;
  options.keep_ir = true;
  auto code = Compile(pb.program(), options);
  ASSERT_NE(code, nullptr);
  const std::string& ir = code->llvm_ir();
  auto count = [&](const std::string& what) {
    int n = 0;
    for (size_t p = ir.find(what); p != std::string::npos; p = ir.find(what, p + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("= mul nsw i64 %i0, 7\n"), 1) << ir;  // the row stride, once
  EXPECT_EQ(count(", 0\n"), 0) << ir;                   // no `add x, 0`
  std::vector<double> as(35), bs(35), os(35);
  for (int i = 0; i < 35; ++i) {
    as[i] = i;
    bs[i] = 2;
  }
  RunEntry(*code, {as.data(), bs.data(), os.data()});
  for (int i = 0; i < 35; ++i) EXPECT_EQ(os[i], 3.0 * i) << i;
}

// exp is emitted inline (no call, so it vectorizes anywhere); log is libm's, which the
// vectorizer maps to libmvec's 4 x f64 variant.
TEST(CodegenTest, EntryCallsInternalKernelsAndVectorizesMath) {
  constexpr int kN = 1024;
  ProgramBuilder pb;
  int x = pb.Arg("x", DType::kF64, {C(kN)});
  int out = pb.Arg("out", DType::kF64, {C(kN)}, BufferKind::kOutput);
  int out2 = pb.Arg("out2", DType::kF64, {C(kN)}, BufferKind::kOutput);
  pb.Pointwise(out, {C(kN)}, Op(ScalarOp::kExp, Load(x, DType::kF64, {I(0)})));
  pb.Pointwise(out2, {C(kN)}, Op(ScalarOp::kLog, Load(out, DType::kF64, {I(0)})));
  CompileOptions options;
  options.keep_ir = true;
  auto code = Compile(pb.program(), options);
  ASSERT_NE(code, nullptr);
  EXPECT_THAT(code->llvm_ir(), HasSubstr("define internal void @gj.k0("));
  EXPECT_THAT(code->llvm_ir(), Not(HasSubstr("@exp(")));
  EXPECT_THAT(code->llvm_ir(), HasSubstr("declare double @log(double) #"));
  EXPECT_THAT(code->optimized_ir(), HasSubstr("<4 x double>"));
  EXPECT_THAT(code->optimized_ir(), HasSubstr("_ZGVdN4v_log"));
  std::vector<double> xs(kN), os(kN), logs(kN);
  for (int i = 0; i < kN; ++i) xs[i] = (i - 512) / 50.0;
  RunEntry(*code, {xs.data(), os.data(), logs.data()});
  for (int i = 0; i < kN; ++i) {
    EXPECT_TRUE(Close(os[i], std::exp(xs[i]), 1e-14)) << i;
    EXPECT_TRUE(Close(logs[i], xs[i], 1e-13)) << i;
  }
}

TEST(CodegenTest, KernelsNamedLikeLibmFunctions) {
  // Kernel functions must not take the names of the libm functions they call.
  ProgramBuilder pb;
  int x = pb.Arg("x", DType::kF64, {C(3)});
  int out = pb.Arg("out", DType::kF64, {C(3)}, BufferKind::kOutput);
  ExprPtr xv = Load(x, DType::kF64, {I(0)});
  pb.Pointwise(out, {C(3)}, Op(ScalarOp::kTanh, xv)).name = "tanh";
  pb.Pointwise(out, {C(3)}, Op(ScalarOp::kExp, Load(out, DType::kF64, {I(0)}))).name = "exp";
  auto code = Compile(pb.program());
  ASSERT_NE(code, nullptr);
  std::vector<double> xs = {-1, 0, 2}, os(3);
  RunEntry(*code, {xs.data(), os.data()});
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(Close(os[i], std::exp(std::tanh(xs[i])), 1e-14)) << i;
}

// --- Differential: random programs, compiled vs the reference evaluator (program_eval).

// Random expressions over x[R, C] (float), row[C] (float, broadcast over rows),
// n[R, C] (i64) and flag[R] (bool). Values stay bounded (no division by ~0, exp only of
// tanh), so FMA contraction and libmvec's few-ulp differences stay near rounding.
class RandomExprs {
 public:
  RandomExprs(uint32_t seed, DType dtype) : rng_(seed), dtype_(dtype) {}

  ExprPtr Float(int depth) {
    if (depth == 0 || Pick(4) == 0) return FloatLeaf();
    ExprPtr a = Float(depth - 1);
    switch (Pick(12)) {
      case 0:
        return Op(ScalarOp::kAdd, a, Float(depth - 1));
      case 1:
        return Op(ScalarOp::kSub, a, Float(depth - 1));
      case 2:
        return Op(ScalarOp::kMul, a, Float(depth - 1));
      case 3:
        return Op(Pick(2) ? ScalarOp::kMax : ScalarOp::kMin, a, Float(depth - 1));
      case 4:
        return Op(ScalarOp::kDiv, a,
                  Op(ScalarOp::kAdd, F(1, dtype_), Op(ScalarOp::kAbs, Float(depth - 1))));
      case 5:
        return Op(ScalarOp::kTanh, a);
      case 6:
        return Op(ScalarOp::kExp, Op(ScalarOp::kTanh, a));
      case 7:
        return Op(ScalarOp::kSigmoid, a);
      case 8:
        return Op(ScalarOp::kSqrt, Op(ScalarOp::kAbs, a));
      case 9:
        return Op(ScalarOp::kNeg, a);
      case 10:
        return Select(Bool(depth - 1), a, Float(depth - 1));
      default:
        return Cast(Int(depth - 1), dtype_);
    }
  }
  ExprPtr Int(int depth) {
    if (depth == 0 || Pick(3) == 0) {
      switch (Pick(3)) {
        case 0:
          return Load(kN, DType::kI64, {I(0), I(1)});
        case 1:
          return Op(ScalarOp::kSub, I(Pick(2)), C(2));
        default:
          return C(static_cast<int64_t>(Pick(11)) - 5);
      }
    }
    ExprPtr a = Int(depth - 1);
    switch (Pick(6)) {
      case 0:
        return Op(ScalarOp::kAdd, a, Int(depth - 1));
      case 1:
        return Op(ScalarOp::kMul, a, Int(depth - 1));
      case 2:
        return Op(ScalarOp::kDiv, a, C(Pick(2) ? 3 : -4));
      case 3:
        return Op(ScalarOp::kMod, a, C(Pick(2) ? 5 : -2));
      case 4:
        return Op(Pick(2) ? ScalarOp::kMax : ScalarOp::kMin, a, Int(depth - 1));
      default:
        return Op(ScalarOp::kAbs, a);
    }
  }
  ExprPtr Bool(int depth) {
    switch (Pick(4)) {
      case 0:
        return Load(kFlag, DType::kBool, {I(0)});
      case 1:
        return Op(static_cast<ScalarOp>(static_cast<int>(ScalarOp::kEq) + Pick(6)), Float(depth),
                  Float(depth));
      case 2:
        return Op(ScalarOp::kLt, Int(depth), Int(depth));
      default:
        return Op(Pick(2) ? ScalarOp::kAnd : ScalarOp::kOr, Load(kFlag, DType::kBool, {I(0)}),
                  Op(ScalarOp::kNot, Op(ScalarOp::kGe, Float(depth), F(0, dtype_))));
    }
  }

  static constexpr int kX = 0, kRow = 1, kN = 2, kFlag = 3;

 private:
  uint32_t Pick(uint32_t n) { return rng_() % n; }
  ExprPtr FloatLeaf() {
    switch (Pick(4)) {
      case 0:
        return Load(kX, dtype_, {I(0), I(1)});
      case 1:
        return Load(kRow, dtype_, {I(1)});
      case 2:
        return Cast(I(Pick(2)), dtype_);
      default:
        return F(std::ldexp(static_cast<double>(Pick(64)) - 32, -3), dtype_);
    }
  }

  std::mt19937 rng_;
  DType dtype_;
};

template <typename T>
void RandomProgramsMatchTheEvaluator(DType dtype, double rel) {
  constexpr int kRows = 3, kCols = 11, kPrograms = 12;
  std::mt19937 data_rng(7);
  std::uniform_real_distribution<double> uniform(-3, 3);
  std::vector<T> x(kRows * kCols), row(kCols);
  std::vector<int64_t> n(kRows * kCols);
  std::vector<uint8_t> flag = {1, 0, 1};
  for (T& v : x) v = static_cast<T>(uniform(data_rng));
  for (T& v : row) v = static_cast<T>(uniform(data_rng));
  for (int64_t& v : n) v = static_cast<int64_t>(uniform(data_rng) * 10);
  for (int p = 0; p < kPrograms; ++p) {
    SCOPED_TRACE(p);
    RandomExprs gen(1000 + p, dtype);
    ProgramBuilder pb;
    pb.Arg("x", dtype, {C(kRows), C(kCols)});
    pb.Arg("row", dtype, {C(kCols)});
    pb.Arg("n", DType::kI64, {C(kRows), C(kCols)});
    pb.Arg("flag", DType::kBool, {C(kRows)});
    int out_f = pb.Arg("out_f", dtype, {C(kRows), C(kCols)}, BufferKind::kOutput);
    int out_i = pb.Arg("out_i", DType::kI64, {C(kRows), C(kCols)}, BufferKind::kOutput);
    int out_b = pb.Arg("out_b", DType::kBool, {C(kRows), C(kCols)}, BufferKind::kOutput);
    int out_r = pb.Arg("out_r", dtype, {C(kRows)}, BufferKind::kOutput);
    int out_s = pb.Arg("out_s", dtype, {C(kRows), C(kCols)}, BufferKind::kOutput);
    pb.Pointwise(out_f, {C(kRows), C(kCols)}, gen.Float(4));
    pb.Pointwise(out_i, {C(kRows), C(kCols)}, gen.Int(4));
    pb.Pointwise(out_b, {C(kRows), C(kCols)}, gen.Bool(3));
    pb.Reduce(out_r, {C(kRows)}, C(kCols), p % 2 ? ScalarOp::kMax : ScalarOp::kAdd, gen.Float(3));
    pb.Scan(out_s, {C(kRows)}, C(kCols), gen.Float(3));
    auto code = Compile(pb.program());
    ASSERT_NE(code, nullptr);

    std::vector<T> want_f(kRows * kCols), got_f(want_f.size()), want_r(kRows), got_r(kRows);
    std::vector<T> want_s(want_f.size()), got_s(want_f.size());
    std::vector<int64_t> want_i(kRows * kCols), got_i(want_i.size());
    std::vector<uint8_t> want_b(kRows * kCols), got_b(want_b.size());
    std::vector<void*> want_args = {x.data(),      row.data(),    n.data(),
                                    flag.data(),   want_f.data(), want_i.data(),
                                    want_b.data(), want_r.data(), want_s.data()};
    int64_t no_symbols = 0;
    absl::Status status =
        EvaluateProgram(pb.program(), want_args.data(), &no_symbols, /*workspace=*/nullptr);
    ASSERT_TRUE(status.ok()) << status << "\n" << ProgramToString(pb.program());
    RunEntry(*code, {x.data(), row.data(), n.data(), flag.data(), got_f.data(), got_i.data(),
                     got_b.data(), got_r.data(), got_s.data()});
    for (size_t i = 0; i < want_f.size(); ++i) {
      ASSERT_TRUE(Close(got_f[i], want_f[i], rel)) << i << "\n" << ProgramToString(pb.program());
      ASSERT_EQ(got_i[i], want_i[i]) << i << "\n" << ProgramToString(pb.program());
      ASSERT_EQ(got_b[i], want_b[i]) << i << "\n" << ProgramToString(pb.program());
    }
    for (int r = 0; r < kRows; ++r) {
      ASSERT_TRUE(Close(got_r[r], want_r[r], rel * kCols)) << "row " << r << "\n"
                                                           << ProgramToString(pb.program());
    }
    for (size_t i = 0; i < want_s.size(); ++i) {
      ASSERT_TRUE(Close(got_s[i], want_s[i], rel * kCols)) << "scan " << i << "\n"
                                                           << ProgramToString(pb.program());
    }
  }
}

TEST(CodegenTest, RandomProgramsMatchTheEvaluatorF64) {
  RandomProgramsMatchTheEvaluator<double>(DType::kF64, 1e-12);
}
TEST(CodegenTest, RandomProgramsMatchTheEvaluatorF32) {
  RandomProgramsMatchTheEvaluator<float>(DType::kF32, 1e-5);
}

// --- Invalid programs fail with a status that names the kernel, never crash.

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
}  // namespace graphjit::compiler
