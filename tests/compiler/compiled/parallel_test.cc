// Kernels split across threads (issue 32): the decode layer's outputs are the same bits on
// 1, 2 and 3 threads (3 on a 2-core machine: uneven splits, a worker waiting for a core),
// large kernels do split (products, stencil rows), one compiled graph called from several
// threads at once shares the pool, and bad thread counts are refused naming the option.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>
#include <tuple>
#include <vector>

#include "compiler/compiled/compiled_graph.h"
#include "compiler/jit.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "models/model.h"
#include "runtime/jit_helpers.h"
#include "tests/compiler/compiled/test_tensors.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using runtime::TensorMap;
using ::testing::HasSubstr;

TensorMap Fresh(const TensorMap& in) {
  TensorMap out = in;
  for (auto& [name, t] : out) t = t.Clone();  // the caches are updated in place
  return out;
}

// The program symbols' values of a decode call at length S.
std::vector<int64_t> DecodeSymbols(const CompiledGraph& cg, int64_t S) {
  std::vector<int64_t> values;
  for (const std::string& s : cg.program().symbols) values.push_back(s == "P" ? S - 1 : S);
  return values;
}

TEST(Parallel, DecodeLayerIsTheSameBitsOnOneTwoAndThreeThreads) {
  for (const char* spec : {"decode", "decode:dtype=f32"}) {
    auto model = *models::CreateModel(spec);
    for (bool symbolic : {true, false}) {
      for (int64_t S : {64, 512}) {
        SCOPED_TRACE(absl::StrCat(spec, symbolic ? " symbolic" : " exact", " S=", S));
        models::TraceOptions options;
        if (!symbolic) options.fixed_dims = {{"S", S}};
        ir::Graph g = *models::TraceModel(*model, options);
        TensorMap in = *model->ExampleInputs({{"S", S}}, 7);
        const ir::Bindings bind = {{"P", S - 1}};
        auto one = CompiledGraph::Compile(g, model->params(), {.threads = 1});
        ASSERT_TRUE(one.ok()) << one.status();
        auto want = (*one)->Run(Fresh(in), bind);
        ASSERT_TRUE(want.ok()) << want.status();
        for (int threads : {2, 3}) {
          for (int64_t min_work : {int64_t{-1}, int64_t{0}}) {
            SCOPED_TRACE(absl::StrCat(threads, " threads, min work ", min_work));
            auto many = CompiledGraph::Compile(g, model->params(),
                                               {.threads = threads, .min_parallel_work = min_work});
            ASSERT_TRUE(many.ok()) << many.status();
            // The measured threshold still splits the step's big kernels (attention and
            // the wide matvecs).
            const std::vector<int64_t> symbols = DecodeSymbols(**many, S);
            int split = 0;
            for (size_t k = 0; k < (*many)->program().kernels.size(); ++k) {
              split += (*many)->kernels().PartsOf(static_cast<int>(k), symbols.data()) > 1;
            }
            EXPECT_GE(split, 3);
            for (int call = 0; call < 3; ++call) {
              auto got = (*many)->Run(Fresh(in), bind);
              ASSERT_TRUE(got.ok()) << got.status();
              ASSERT_EQ(got->size(), want->size());
              for (size_t i = 0; i < want->size(); ++i) {
                EXPECT_TRUE(SameBits((*want)[i], (*got)[i])) << "output " << i;
              }
            }
          }
        }
      }
    }
  }
}

// A convolution-sized BLAS product splits by rows or columns on the pool (OpenBLAS
// single-threaded in each part) and gives the same bits; a small one never splits, whatever
// min_parallel_work says, so OpenBLAS never switches to its small-matrix kernels, and
// neither does one whose uneven split would leave a small part (80 rows as 48 + 32).
TEST(Parallel, BlasProductsSplitByRowsOrColumnsWithTheSameBits) {
  // Columns where N >= 2M (convolutions' products: 64 channels x 3025 positions, and 16 x
  // 3136, neither a multiple of 48 columns) and OpenBLAS's kernels keep the bits of a
  // block of columns (its AVX-512 ones; not Haswell's), else rows.
  for (auto [m, n, k, splits] :
       std::vector<std::tuple<int64_t, int64_t, int64_t, bool>>{{96, 1920, 48, true},
                                                                {17, 33, 65, false},
                                                                {80, 120, 240, false},
                                                                {64, 3025, 144, true},
                                                                {16, 3136, 128, true},
                                                                {192, 200, 96, true},
                                                                {49, 3072, 96, true}}) {
    SCOPED_TRACE(absl::StrCat(m, "x", n, "x", k));
    ir::GraphBuilder b("product");
    ir::ValueId x = b.Input("x", ir::DType::kF32, {m, k});
    ir::ValueId w = b.Input("w", ir::DType::kF32, {k, n});
    b.Output(b.Add(ir::OpCode::kMatmul, {x, w}));
    ir::Graph g = *std::move(b).Build();
    std::vector<double> xv(m * k), wv(k * n);
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(0.37 * static_cast<double>(i));
    for (size_t i = 0; i < wv.size(); ++i) wv[i] = std::cos(0.11 * static_cast<double>(i));
    TensorMap in = {{"x", *Tensor::FromDoubles(ir::DType::kF32, {m, k}, xv)},
                    {"w", *Tensor::FromDoubles(ir::DType::kF32, {k, n}, wv)}};
    auto one = CompiledGraph::Compile(g, {}, {.threads = 1, .products = ProductKernels::kBlas});
    ASSERT_TRUE(one.ok()) << one.status();
    auto want = (*one)->Run(in);
    ASSERT_TRUE(want.ok()) << want.status();
    for (int threads : {2, 3}) {
      auto many = CompiledGraph::Compile(
          g, {}, {.threads = threads, .min_parallel_work = 0, .products = ProductKernels::kBlas});
      ASSERT_TRUE(many.ok()) << many.status();
      ASSERT_EQ((*many)->program().kernels.size(), 1u);
      const Kernel& kernel = (*many)->program().kernels[0];
      EXPECT_EQ(kernel.kind, KernelKind::kExternMatmul);
      const int rows = static_cast<int>(kernel.loops.size()) - 3;
      const bool by_columns = n >= 2 * m && runtime::BlasColumnSplitsExact();
      EXPECT_EQ(kernel.parallel_loop, by_columns ? rows + 1 : rows);
      // 16 rows are less than one block of rows: they split only by columns; 49 rows split
      // 24 / 25 where OpenBLAS's kernels unroll 24 rows (Haswell's), else 48 / 1.
      const int64_t row_align = runtime::BlasRowSplitAlign();
      EXPECT_EQ((*many)->kernels().PartsOf(0, nullptr) > 1, splits && (by_columns || m > row_align))
          << threads << " threads";
      if (!by_columns && threads == 2 && splits && m > row_align) {
        // Rows cut at the first multiple of the unroll past half their blocks: 49 rows as
        // 24 + 25 on Haswell's kernels, not 48 + 1.
        const int64_t first = (m + row_align - 1) / row_align / 2 * row_align;
        int64_t largest = 0;
        for (const KernelSet::StepTask& task : (*many)->kernels().PlanOf(nullptr)) {
          largest = std::max(largest, task.end - task.begin);
        }
        EXPECT_EQ(largest, std::max(first, m - first));
      }
      auto got = (*many)->Run(in);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_TRUE(SameBits((*want)[0], (*got)[0])) << threads << " threads";
    }
  }
}

// A stencil over rows (a depthwise convolution's shape: rows r, r + 1, r + 2 of one input)
// computes four rows per vector and the rest one by one (codegen_lanes.cc); split by rows
// over 2 and 3 threads, in uneven ranges, each row still gives the same bits.
TEST(Parallel, StencilRowsSplitAcrossThreadsWithTheSameBits) {
  const int64_t rows = 67, width = 45;
  ir::GraphBuilder b("stencil");
  ir::ValueId x = b.Input("x", ir::DType::kF32, {1, rows + 2, width});
  auto tap = [&](int64_t at) {
    return b.Add(
        ir::OpCode::kSlice, {x},
        {{"axis", int64_t{1}}, {"start", ir::SymExpr(at)}, {"end", ir::SymExpr(at + rows)}});
  };
  ir::ValueId w = b.Input("w", ir::DType::kF32, {1, rows, width});
  b.Output(b.Add(ir::OpCode::kAdd,
                 {b.Add(ir::OpCode::kMul, {tap(0), w}),
                  b.Add(ir::OpCode::kAdd, {tap(1), b.Add(ir::OpCode::kMul, {tap(2), w})})}));
  ir::Graph g = *std::move(b).Build();
  std::vector<double> xv((rows + 2) * width), wv(rows * width);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(0.37 * static_cast<double>(i));
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = std::cos(0.11 * static_cast<double>(i));
  TensorMap in = {{"x", *Tensor::FromDoubles(ir::DType::kF32, {1, rows + 2, width}, xv)},
                  {"w", *Tensor::FromDoubles(ir::DType::kF32, {1, rows, width}, wv)}};
  auto one = CompiledGraph::Compile(g, {}, {.threads = 1});
  ASSERT_TRUE(one.ok()) << one.status();
  auto want = (*one)->Run(in);
  ASSERT_TRUE(want.ok()) << want.status();
  for (int threads : {2, 3}) {
    auto many = CompiledGraph::Compile(g, {}, {.threads = threads, .min_parallel_work = 0});
    ASSERT_TRUE(many.ok()) << many.status();
    ASSERT_EQ((*many)->program().kernels.size(), 1u);
    EXPECT_EQ((*many)->program().kernels[0].parallel_loop, 1) << "split by rows";
    EXPECT_GT((*many)->kernels().PartsOf(0, nullptr), 1) << threads << " threads";
    auto got = (*many)->Run(in);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(SameBits((*want)[0], (*got)[0])) << threads << " threads";
  }
}

// On one thread too OpenBLAS runs single-threaded: its own threads sum some products in
// another order (the Haswell kernels at 128 x 3840 x 64), which the 1-thread bits would
// then depend on.
TEST(Parallel, OneThreadRunsOpenBlasOnTheCallingThread) {
  ir::GraphBuilder b("product");
  ir::ValueId x = b.Input("x", ir::DType::kF32, {128, 64});
  ir::ValueId w = b.Input("w", ir::DType::kF32, {64, 3840});
  b.Output(b.Add(ir::OpCode::kMatmul, {x, w}));
  ir::Graph g = *std::move(b).Build();
  auto cg = CompiledGraph::Compile(g, {}, {.threads = 1, .products = ProductKernels::kBlas});
  ASSERT_TRUE(cg.ok()) << cg.status();
  ASSERT_EQ((*cg)->program().kernels[0].kind, KernelKind::kExternMatmul);
  TensorMap in = {{"x", *Tensor::Zeros(ir::DType::kF32, {128, 64})},
                  {"w", *Tensor::Zeros(ir::DType::kF32, {64, 3840})}};
  ASSERT_TRUE((*cg)->Run(in).ok());
  EXPECT_EQ(openblas_get_num_threads(), 1);
}

TEST(Parallel, OneThreadNeverSplits) {
  auto model = *models::CreateModel("decode");
  auto cg = CompiledGraph::Compile(*models::TraceModel(*model), model->params(),
                                   {.threads = 1, .min_parallel_work = 0});
  ASSERT_TRUE(cg.ok()) << cg.status();
  const std::vector<int64_t> symbols = DecodeSymbols(**cg, 512);
  for (size_t k = 0; k < (*cg)->program().kernels.size(); ++k) {
    EXPECT_EQ((*cg)->kernels().PartsOf(static_cast<int>(k), symbols.data()), 1) << k;
  }
}

TEST(Parallel, ConcurrentCallsOfOneGraphShareThePool) {
  auto model = *models::CreateModel("decode");
  constexpr int64_t kS = 256;
  constexpr int kCallers = 4, kCalls = 20;
  auto cg = CompiledGraph::Compile(*models::TraceModel(*model), model->params(), {.threads = 2});
  ASSERT_TRUE(cg.ok()) << cg.status();
  std::vector<TensorMap> inputs;
  std::vector<std::vector<Tensor>> want;
  for (int c = 0; c < kCallers; ++c) {
    inputs.push_back(*model->ExampleInputs({{"S", kS}}, 100 + c));
    want.push_back(*(*cg)->Run(Fresh(inputs[c]), {{"P", kS - 1}}));
  }
  std::vector<int> mismatches(kCallers, 0);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int i = 0; i < kCalls; ++i) {
        auto got = (*cg)->Run(Fresh(inputs[c]), {{"P", kS - 1}});
        if (!got.ok()) {
          ++mismatches[c];
          continue;
        }
        for (size_t o = 0; o < want[c].size(); ++o)
          mismatches[c] += !SameBits(want[c][o], (*got)[o]);
      }
    });
  }
  for (std::thread& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) EXPECT_EQ(mismatches[c], 0) << "caller " << c;
}

TEST(Parallel, BadThreadCountsAreRefusedNamingTheOption) {
  auto model = *models::CreateModel("decode");
  ir::Graph g = *models::TraceModel(*model);
  for (int threads : {0, -1, 1025}) {
    SCOPED_TRACE(threads);
    auto cg = CompiledGraph::Compile(g, model->params(), {.threads = threads});
    ASSERT_FALSE(cg.ok());
    EXPECT_EQ(cg.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(cg.status().message(), HasSubstr("CompileGraphOptions::threads"));
    EXPECT_THAT(cg.status().message(), HasSubstr(absl::StrCat("got ", threads)));

    JitOptions options;
    options.compile.threads = threads;
    auto fn =
        Jit("f", [](frontend::Context&) { return std::vector<frontend::Value>{}; }, {}, options);
    ASSERT_FALSE(fn.ok());
    EXPECT_EQ(fn.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(fn.status().message(), HasSubstr("JitOptions::compile.threads"));
  }
  EXPECT_TRUE(CompiledGraph::Compile(g, model->params(), {.threads = 1024}).ok());
}

}  // namespace
}  // namespace graphjit::compiler
