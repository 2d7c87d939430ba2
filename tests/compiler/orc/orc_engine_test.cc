// OrcEngine: vector math through libmvec, assembly output, freeing code, concurrent
// compiles and clean failures, on modules written as LLVM IR text.
#include "compiler/orc/orc_engine.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/Support/SourceMgr.h"
#include "tests/proc_self.h"

namespace graphjit::compiler {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using UnaryLoopFn = void (*)(double* out, const double* in, int64_t n);
using UnaryLoopFnF32 = void (*)(float* out, const float* in, int64_t n);

// out[i] = CALL(in[i]) for i < n, where CALL is a scalar libm function of type TY.
constexpr char kUnaryLoop[] = R"(
declare TY @CALL(TY)

define void @f(ptr noalias %out, ptr noalias %in, i64 %n) {
entry:
  %nonempty = icmp sgt i64 %n, 0
  br i1 %nonempty, label %loop, label %exit
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %src = getelementptr inbounds TY, ptr %in, i64 %i
  %x = load TY, ptr %src
  %y = call TY @CALL(TY %x)
  %dst = getelementptr inbounds TY, ptr %out, i64 %i
  store TY %y, ptr %dst
  %next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
)";

// out[i] = in[i] * K + out[i] as llvm.fmuladd, plus an external helper that the engine
// must internalize (two live copies of this module would clash otherwise).
constexpr char kAxpyLoop[] = R"(
declare double @llvm.fmuladd.f64(double, double, double)

define double @helper_scale() {
  ret double K
}

define void @f(ptr noalias %out, ptr noalias %in, i64 %n) {
entry:
  %k = call double @helper_scale()
  %nonempty = icmp sgt i64 %n, 0
  br i1 %nonempty, label %loop, label %exit
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %src = getelementptr inbounds double, ptr %in, i64 %i
  %x = load double, ptr %src
  %dst = getelementptr inbounds double, ptr %out, i64 %i
  %acc = load double, ptr %dst
  %y = call double @llvm.fmuladd.f64(double %x, double %k, double %acc)
  store double %y, ptr %dst
  %next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
)";

std::string UnaryLoopIr(const std::string& call, const std::string& type) {
  return absl::StrReplaceAll(kUnaryLoop, {{"CALL", call}, {"TY", type}});
}

std::string AxpyLoopIr(double k) {
  // %.17e keeps the constant exact and gives LLVM IR the exponent it wants.
  char text[64];
  std::snprintf(text, sizeof(text), "%.17e", k);
  return absl::StrReplaceAll(kAxpyLoop, {{"K", text}});
}

OrcEngine& Engine() {
  absl::StatusOr<OrcEngine*> engine = OrcEngine::Get();
  if (!engine.ok()) {
    ADD_FAILURE() << engine.status();
    std::abort();
  }
  return **engine;
}

absl::StatusOr<std::unique_ptr<OrcCode>> CompileIr(const std::string& ir,
                                                   const std::string& entry = "f",
                                                   bool keep_ir = false, bool emit_asm = false,
                                                   CodeTier tier = CodeTier::kOptimized) {
  OrcRequest request;
  request.context = std::make_unique<llvm::LLVMContext>();
  llvm::SMDiagnostic diagnostic;
  request.module = llvm::parseAssemblyString(ir, diagnostic, *request.context);
  if (request.module == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("test IR does not parse: ", diagnostic.getMessage().str()));
  }
  request.function_name = entry;
  request.keep_ir = keep_ir;
  request.emit_asm = emit_asm;
  request.tier = tier;
  return Engine().Compile(std::move(request));
}

// Distance in units in the last place (0 for equal values, also +0 vs -0).
template <typename Float, typename Int>
int64_t UlpDistance(Float a, Float b) {
  auto ordered = [](Float x) -> int64_t {
    const Int bits = std::bit_cast<Int>(x);
    return bits < 0 ? std::numeric_limits<Int>::min() - bits : bits;
  };
  const int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

using proc_self::CodeMappings;
using proc_self::ResidentBytes;

TEST(OrcEngineTest, DescribesTheHost) {
  OrcEngine& engine = Engine();
  EXPECT_THAT(engine.triple(), HasSubstr("x86_64"));
  EXPECT_FALSE(engine.cpu_name().empty());
  EXPECT_THAT(engine.cpu_features(), HasSubstr("+avx2"));
  EXPECT_TRUE(engine.data_layout().isLittleEndian());
  EXPECT_EQ(LlvmVersion().rfind("19.", 0), 0u) << LlvmVersion();
}

// libm calls in a loop become libmvec calls on 4 x f64 (tanh via the mapping the engine
// adds to LLVM's table), and agree with the scalar libm within libmvec's 4 ulp.
TEST(OrcEngineTest, MathLoopsUseLibmvecAndMatchLibm) {
  struct Case {
    const char* call;
    double (*reference)(double);
    double lo, hi;
  };
  const Case cases[] = {{"tanh", [](double x) { return std::tanh(x); }, -6.0, 6.0},
                        {"exp", [](double x) { return std::exp(x); }, -30.0, 30.0}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.call);
    absl::StatusOr<std::unique_ptr<OrcCode>> code =
        CompileIr(UnaryLoopIr(c.call, "double"), "f", /*keep_ir=*/true);
    ASSERT_TRUE(code.ok()) << code.status();
    const std::string& ir = (*code)->optimized_ir();
    EXPECT_THAT(ir, HasSubstr(absl::StrCat("@_ZGVdN4v_", c.call, "(<4 x double>")));
    EXPECT_THAT(ir, HasSubstr("<4 x double>"));

    constexpr int kN = 1003;  // not a multiple of the vector width: the scalar tail runs too
    std::vector<double> in(kN), out(kN, -1.0);
    for (int i = 0; i < kN; ++i) in[i] = c.lo + (c.hi - c.lo) * i / (kN - 1);
    reinterpret_cast<UnaryLoopFn>((*code)->function())(out.data(), in.data(), kN);
    for (int i = 0; i < kN; ++i) {
      const double want = c.reference(in[i]);
      ASSERT_LE((UlpDistance<double, int64_t>(out[i], want)), 4)
          << c.call << "(" << in[i] << ") = " << out[i] << ", libm says " << want;
    }
  }
}

TEST(OrcEngineTest, FloatTanhUsesEightLaneLibmvec) {
  absl::StatusOr<std::unique_ptr<OrcCode>> code =
      CompileIr(UnaryLoopIr("tanhf", "float"), "f", /*keep_ir=*/true);
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_THAT((*code)->optimized_ir(), HasSubstr("@_ZGVdN8v_tanhf(<8 x float>"));
  constexpr int kN = 517;
  std::vector<float> in(kN), out(kN);
  for (int i = 0; i < kN; ++i) in[i] = -5.0f + 10.0f * i / (kN - 1);
  reinterpret_cast<UnaryLoopFnF32>((*code)->function())(out.data(), in.data(), kN);
  for (int i = 0; i < kN; ++i) {
    ASSERT_LE((UlpDistance<float, int32_t>(out[i], std::tanh(in[i]))), 4) << in[i];
  }
}

TEST(OrcEngineTest, EmitsAvx2Assembly) {
  absl::StatusOr<std::unique_ptr<OrcCode>> code =
      CompileIr(AxpyLoopIr(2.5), "f", /*keep_ir=*/false, /*emit_asm=*/true);
  ASSERT_TRUE(code.ok()) << code.status();
  const std::string& assembly = (*code)->assembly();
  EXPECT_TRUE(assembly.find("vfmadd") != std::string::npos ||
              assembly.find("ymm") != std::string::npos)
      << assembly;
  EXPECT_TRUE((*code)->optimized_ir().empty());  // keep_ir was off
  EXPECT_GT((*code)->timings().optimize, 0);
  EXPECT_GT((*code)->timings().codegen, 0);
}

// The baseline tier runs its own short pipeline (no inliner: the helper call stays) and
// its own machines; an O2 compile after it still gets O2 (the helper inlined) and vector
// code, so the tiers' machines never mix optimization levels.
TEST(OrcEngineTest, BaselineTierRunsItsOwnPipeline) {
  absl::StatusOr<std::unique_ptr<OrcCode>> baseline =
      CompileIr(AxpyLoopIr(2.0), "f", /*keep_ir=*/true, /*emit_asm=*/true, CodeTier::kBaseline);
  ASSERT_TRUE(baseline.ok()) << baseline.status();
  absl::StatusOr<std::unique_ptr<OrcCode>> optimized =
      CompileIr(AxpyLoopIr(2.0), "f", /*keep_ir=*/true, /*emit_asm=*/true);
  ASSERT_TRUE(optimized.ok()) << optimized.status();
  EXPECT_THAT((*baseline)->optimized_ir(), HasSubstr("call double @helper_scale"));
  EXPECT_THAT((*optimized)->optimized_ir(), Not(HasSubstr("call double @helper_scale")));
  EXPECT_NE((*baseline)->assembly(), (*optimized)->assembly());
  EXPECT_TRUE((*optimized)->assembly().find("vfmadd") != std::string::npos ||
              (*optimized)->assembly().find("ymm") != std::string::npos);
  std::vector<double> in = {1, 2, 3, 4, 5}, a(5, 1.0), b(5, 1.0);
  reinterpret_cast<UnaryLoopFn>((*baseline)->function())(a.data(), in.data(), 5);
  reinterpret_cast<UnaryLoopFn>((*optimized)->function())(b.data(), in.data(), 5);
  EXPECT_EQ(a, (std::vector<double>{3, 5, 7, 9, 11}));
  EXPECT_EQ(a, b);
}

TEST(OrcEngineTest, CodeTiersHaveNames) {
  for (CodeTier tier : {CodeTier::kOptimized, CodeTier::kBaseline}) {
    absl::StatusOr<CodeTier> parsed = ParseCodeTier(CodeTierName(tier));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, tier);
  }
  absl::StatusOr<CodeTier> unknown = ParseCodeTier("O3");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("expected o2 or baseline"));
}

TEST(OrcEngineTest, ModulesWithTheSameNamesLiveSideBySide) {
  absl::StatusOr<std::unique_ptr<OrcCode>> twice = CompileIr(AxpyLoopIr(2.0));
  absl::StatusOr<std::unique_ptr<OrcCode>> thrice = CompileIr(AxpyLoopIr(3.0));
  ASSERT_TRUE(twice.ok()) << twice.status();
  ASSERT_TRUE(thrice.ok()) << thrice.status();
  std::vector<double> in = {1, 2, 3}, a(3, 0.0), b(3, 0.0);
  reinterpret_cast<UnaryLoopFn>((*twice)->function())(a.data(), in.data(), 3);
  reinterpret_cast<UnaryLoopFn>((*thrice)->function())(b.data(), in.data(), 3);
  EXPECT_EQ(a, (std::vector<double>{2, 4, 6}));
  EXPECT_EQ(b, (std::vector<double>{3, 6, 9}));
}

// Code memory goes back when OrcCode is dropped: resident memory and the number of code
// mappings stop growing after a warm-up, however many modules come and go.
TEST(OrcEngineTest, DroppedCodeIsFreed) {
  constexpr int kWarmup = 200, kTotal = 2000;
  int64_t rss_warm = 0;
  int maps_warm = 0;
  std::vector<double> in = {1, 2, 3, 4, 5}, out(5);
  for (int i = 0; i < kTotal; ++i) {
    if (i == kWarmup) {
      rss_warm = ResidentBytes();
      maps_warm = CodeMappings();
    }
    absl::StatusOr<std::unique_ptr<OrcCode>> code = CompileIr(AxpyLoopIr(i));
    ASSERT_TRUE(code.ok()) << code.status();
    std::fill(out.begin(), out.end(), 1.0);
    reinterpret_cast<UnaryLoopFn>((*code)->function())(out.data(), in.data(), 5);
    ASSERT_EQ(out[4], 5.0 * i + 1.0);
  }
  const int64_t rss_end = ResidentBytes();
  const int maps_end = CodeMappings();
  std::printf(
      "[ info     ] RSS after %d modules: %.1f MiB, after %d: %.1f MiB; "
      "code mappings %d -> %d\n",
      kWarmup, rss_warm / 1048576.0, kTotal, rss_end / 1048576.0, maps_warm, maps_end);
  EXPECT_LT(rss_end - rss_warm, int64_t{64} << 20);
  EXPECT_LT(maps_end - maps_warm, 50);
}

TEST(OrcEngineTest, LiveCodeHoldsMappingsUntilDropped) {
  std::vector<std::unique_ptr<OrcCode>> live;
  const int maps_before = CodeMappings();
  for (int i = 0; i < 100; ++i) {
    absl::StatusOr<std::unique_ptr<OrcCode>> code = CompileIr(AxpyLoopIr(i));
    ASSERT_TRUE(code.ok()) << code.status();
    live.push_back(*std::move(code));
  }
  const int maps_live = CodeMappings();
  live.clear();
  const int maps_after = CodeMappings();
  std::printf("[ info     ] code mappings: %d before, %d with 100 live modules, %d after\n",
              maps_before, maps_live, maps_after);
  EXPECT_GT(maps_live, maps_before);
  EXPECT_LT(maps_after - maps_before, 20);
}

TEST(OrcEngineTest, ConcurrentCompilesAreCorrect) {
  constexpr int kThreads = 4, kPerThread = 20;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &failures] {
      for (int i = 0; i < kPerThread; ++i) {
        const double k = 100.0 * t + i;
        absl::StatusOr<std::unique_ptr<OrcCode>> code = CompileIr(AxpyLoopIr(k));
        if (!code.ok()) {
          ADD_FAILURE() << code.status();
          ++failures;
          continue;
        }
        std::vector<double> in(37), out(37, 0.5);
        for (int j = 0; j < 37; ++j) in[j] = j;
        reinterpret_cast<UnaryLoopFn>((*code)->function())(out.data(), in.data(), 37);
        for (int j = 0; j < 37; ++j) {
          if (out[j] != k * j + 0.5) {
            ADD_FAILURE() << "thread " << t << " compile " << i << " out[" << j << "] = " << out[j];
            ++failures;
            break;
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(OrcEngineTest, UndefinedEntryIsAnError) {
  absl::StatusOr<std::unique_ptr<OrcCode>> code =
      CompileIr(UnaryLoopIr("exp", "double"), "no_such_entry");
  EXPECT_EQ(code.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(code.status().message(), HasSubstr("no_such_entry"));
  // A declaration is not a definition (looking it up would find libm's exp).
  code = CompileIr(UnaryLoopIr("exp", "double"), "exp");
  EXPECT_EQ(code.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(OrcEngineTest, InternalEntryIsStillFound) {
  absl::StatusOr<std::unique_ptr<OrcCode>> code = CompileIr(R"(
define internal i64 @f(i64 %x) {
  %y = mul i64 %x, 7
  ret i64 %y
}
)");
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(reinterpret_cast<int64_t (*)(int64_t)>((*code)->function())(6), 42);
}

TEST(OrcEngineTest, UnresolvedSymbolKeepsLlvmMessage) {
  constexpr char kIr[] = R"(
declare void @graphjit_test_no_such_symbol()
define void @f() {
  call void @graphjit_test_no_such_symbol()
  ret void
}
)";
  absl::StatusOr<std::unique_ptr<OrcCode>> code = CompileIr(kIr);
  ASSERT_FALSE(code.ok());
  EXPECT_THAT(code.status().message(), HasSubstr("Symbols not found"));
  EXPECT_THAT(code.status().message(), HasSubstr("graphjit_test_no_such_symbol"));
  // The engine is still usable, and the failed module left nothing behind.
  code = CompileIr(AxpyLoopIr(1.0));
  EXPECT_TRUE(code.ok()) << code.status();
}

TEST(OrcEngineTest, BrokenModuleIsInvalidArgument) {
  OrcRequest request;
  request.context = std::make_unique<llvm::LLVMContext>();
  request.module = std::make_unique<llvm::Module>("broken", *request.context);
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(*request.context), false);
  llvm::Function* f =
      llvm::Function::Create(type, llvm::Function::ExternalLinkage, "f", *request.module);
  llvm::BasicBlock::Create(*request.context, "entry", f);  // no terminator
  request.function_name = "f";
  absl::StatusOr<std::unique_ptr<OrcCode>> code = Engine().Compile(std::move(request));
  EXPECT_EQ(code.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(code.status().message(), HasSubstr("does not have terminator"));

  EXPECT_EQ(Engine().Compile(OrcRequest()).status().code(), absl::StatusCode::kInvalidArgument);
}

extern "C" double GraphjitTestTriple(double x) { return 3 * x; }
extern "C" double GraphjitTestQuadruple(double x) { return 4 * x; }

TEST(OrcEngineTest, RegisteredHostSymbolsAreCallable) {
  OrcEngine& engine = Engine();
  void* triple = reinterpret_cast<void*>(&GraphjitTestTriple);
  void* quadruple = reinterpret_cast<void*>(&GraphjitTestQuadruple);
  ASSERT_TRUE(engine.RegisterHostSymbol("graphjit_test_triple", triple).ok());
  EXPECT_TRUE(engine.RegisterHostSymbol("graphjit_test_triple", triple).ok());
  EXPECT_EQ(engine.RegisterHostSymbol("graphjit_test_triple", quadruple).code(),
            absl::StatusCode::kAlreadyExists);

  absl::StatusOr<std::unique_ptr<OrcCode>> code =
      CompileIr(UnaryLoopIr("graphjit_test_triple", "double"));
  ASSERT_TRUE(code.ok()) << code.status();
  std::vector<double> in = {1, -2, 0.5}, out(3);
  reinterpret_cast<UnaryLoopFn>((*code)->function())(out.data(), in.data(), 3);
  EXPECT_EQ(out, (std::vector<double>{3, -6, 1.5}));
}

}  // namespace
}  // namespace graphjit::compiler
