// CompiledCall: the reusable call frame gives Run's results and Run's errors, and reuses
// its outputs while their shapes stay.
#include "compiler/compiled/compiled_call.h"

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "models/model.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using runtime::TensorMap;

constexpr char kTiny[] = R"(graph tiny {
  %0 = input {name="a"} : f64[N, 4]
  %1 = input {name="b"} : f64[N, 4]
  %2 = mul(%0, %1) : f64[N, 4]
  %3 = add(%2, %0) : f64[N, 4]
  %4 = exp(%3) : f64[N, 4]
  return %4, %3
})";

Tensor Ramp(int64_t rows, double scale) {
  std::vector<double> v(rows * 4);
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<double>(i) - 1;
  return *Tensor::FromDoubles(ir::DType::kF64, {rows, 4}, v);
}

TEST(CompiledCall, MatchesRunAndReusesOutputs) {
  auto cg = CompiledGraph::Compile(*ir::ParseGraph(kTiny), {});
  ASSERT_TRUE(cg.ok()) << cg.status();
  CompiledCall call(**cg);
  EXPECT_EQ(call.input_names(), (std::vector<std::string>{"a", "b"}));
  const void* first = nullptr;
  for (int64_t rows : {3, 3, 3, 5, 0, 5}) {
    SCOPED_TRACE(rows);
    std::vector<Tensor> in = {Ramp(rows, 0.1), Ramp(rows, 0.2)};
    ASSERT_TRUE(call.Run(in).ok());
    auto want = (*cg)->Run({{"a", in[0]}, {"b", in[1]}});
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_EQ(call.outputs().size(), 2u);
    for (int i = 0; i < 2; ++i) EXPECT_EQ(runtime::MaxAbsDiff((*want)[i], call.outputs()[i]), 0);
    if (rows == 3 && first == nullptr) first = call.outputs()[0].raw_data();
    if (rows == 3) {
      EXPECT_EQ(call.outputs()[0].raw_data(), first) << "rewritten in place";
    }
  }
}

// A loop that feeds a result back as the next input: the kept output must not be
// written while the kernels read it as an input (here w @ a: the first row of the
// result needs every row of a).
TEST(CompiledCall, OutputPassedBackAsInputIsNotOverwrittenWhileRead) {
  auto cg = CompiledGraph::Compile(*ir::ParseGraph(R"(graph feedback {
  %0 = input {name="a"} : f64[8, 8]
  %1 = input {name="w"} : f64[8, 8]
  %2 = matmul(%1, %0) : f64[8, 8]
  return %2
})"),
                                   {});
  ASSERT_TRUE(cg.ok()) << cg.status();
  std::vector<double> w(64);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01 * static_cast<double>(i % 9) - 0.03;
  const Tensor weight = *Tensor::FromDoubles(ir::DType::kF64, {8, 8}, w);
  CompiledCall call(**cg);
  Tensor a = Ramp(16, 0.05).Reshape({8, 8}).value();
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE(step);
    auto want = (*cg)->Run({{"a", a.Clone()}, {"w", weight}});
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(call.Run({a, weight}).ok());
    EXPECT_EQ(runtime::MaxAbsDiff((*want)[0], call.outputs()[0]), 0);
    a = call.outputs()[0];  // the next step reads this call's result
  }
}

TEST(CompiledCall, BadInputsGetRunsMessages) {
  auto cg = CompiledGraph::Compile(*ir::ParseGraph(kTiny), {});
  ASSERT_TRUE(cg.ok()) << cg.status();
  CompiledCall call(**cg);
  absl::Status count = call.Run({Ramp(2, 1)});
  EXPECT_EQ(count.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(count.message(), "expected 2 inputs (a, b), got 1");
  // Mismatched rows and a wrong dtype: exactly the errors Run gives.
  std::vector<std::vector<Tensor>> bad = {{Ramp(2, 1), Ramp(3, 1)},
                                          {Ramp(2, 1), *Tensor::Zeros(ir::DType::kF32, {2, 4})},
                                          {Ramp(2, 1), *Tensor::Zeros(ir::DType::kF64, {2, 5})}};
  for (const std::vector<Tensor>& in : bad) {
    absl::Status got = call.Run(in);
    auto want = (*cg)->Run({{"a", in[0]}, {"b", in[1]}});
    ASSERT_FALSE(want.ok());
    EXPECT_EQ(got, want.status());
  }
}

// The decode layer: caches updated in place, P from the bindings, its bounds checked.
TEST(CompiledCall, DecodeStepsMatchRun) {
  auto model = *models::CreateModel("decode");
  auto cg = CompiledGraph::Compile(*models::TraceModel(*model), model->params());
  ASSERT_TRUE(cg.ok()) << cg.status();
  CompiledCall call(**cg);
  for (int64_t S : {1, 4, 4, 9}) {
    SCOPED_TRACE(S);
    TensorMap named = *model->ExampleInputs({{"S", S}}, 2);
    TensorMap copy = named;
    for (auto& [name, t] : copy) t = t.Clone();
    std::vector<Tensor> in;
    for (const std::string& name : call.input_names()) in.push_back(named.at(name));
    ASSERT_TRUE(call.Run(in, {{"P", S - 1}}).ok());
    auto want = (*cg)->Run(copy, {{"P", S - 1}});
    ASSERT_TRUE(want.ok()) << want.status();
    for (size_t i = 0; i < want->size(); ++i) {
      EXPECT_EQ(runtime::MaxAbsDiff((*want)[i], call.outputs()[i]), 0) << i;
    }
    // Out-of-range and missing positions: Run's errors.
    for (const ir::Bindings& b : {ir::Bindings{{"P", S}}, ir::Bindings{}}) {
      absl::Status got = call.Run(in, b);
      auto run = (*cg)->Run(copy, b);
      ASSERT_FALSE(run.ok());
      EXPECT_EQ(got, run.status());
    }
  }
}

}  // namespace
}  // namespace graphjit::compiler
