// Shared helpers of the codegen tests: a builder of kernel programs, compiling one with
// CompileProgram and running its function on real buffers, and a closeness check for floats.
#ifndef GRAPHJIT_TESTS_COMPILER_CODEGEN_CODEGEN_TEST_UTIL_H_
#define GRAPHJIT_TESTS_COMPILER_CODEGEN_CODEGEN_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/codegen/native_code.h"
#include "compiler/lower/kernel_ir.h"
#include "gtest/gtest.h"

namespace graphjit::compiler::codegen_testutil {

using ir::DType;

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

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

// Compiles `program`; on an error fails the test (printing the program) and returns null.
inline std::unique_ptr<NativeCode> Compile(const Program& program,
                                           const CompileOptions& options = {}) {
  absl::StatusOr<std::unique_ptr<NativeCode>> code = CompileProgram(program, options);
  EXPECT_TRUE(code.ok()) << code.status() << "\n" << ProgramToString(program);
  return code.ok() ? *std::move(code) : nullptr;
}

// Calls the function with `args` (buffer pointers in arg-index order), the symbols' values and
// the workspace.
inline void RunEntry(const NativeCode& code, std::vector<void*> args,
                     std::vector<int64_t> symbols = {}, char* workspace = nullptr) {
  symbols.push_back(0);  // never an empty vector's null data()
  code.function()(args.data(), symbols.data(), workspace);
}

// How many times `what` occurs in `text` (e.g. loops marked `!llvm.loop !` in emitted IR).
inline int CountOf(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// Shorthands: loop variable v, an i64 constant, a float constant.
inline ExprPtr I(int v) { return LoopVar(v); }
inline ExprPtr C(int64_t v) { return ConstI(v); }
inline ExprPtr F(double v, DType dtype = DType::kF64) { return ConstF(v, dtype); }

// `count` values of T in [-2, 2] (sevenths), a different sequence per seed.
template <typename T>
std::vector<T> Values(int64_t count, int seed) {
  std::vector<T> v(count);
  for (int64_t i = 0; i < count; ++i) {
    v[i] = static_cast<T>(((i * 37 + seed * 11) % 29) / 7.0 - 2.0);
  }
  return v;
}

// Relative closeness that treats equal infinities and two NaNs as equal.
inline ::testing::AssertionResult Close(double got, double want, double rel) {
  if (std::isnan(want) ? std::isnan(got) : got == want) return ::testing::AssertionSuccess();
  if (std::abs(got - want) <= rel * std::max(1.0, std::abs(want))) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << got << " vs expected " << want;
}

}  // namespace graphjit::compiler::codegen_testutil

#endif  // GRAPHJIT_TESTS_COMPILER_CODEGEN_CODEGEN_TEST_UTIL_H_
