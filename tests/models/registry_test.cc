// Model specs, TinyGPT at initialisation and the linear layer.
#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/model.h"
#include "models/tinygpt.h"
#include "runtime/interpreter.h"

namespace graphjit::models {
namespace {

using ::testing::HasSubstr;

TEST(Registry, SpecsFromTheIssueParse) {
  for (const char* spec :
       {"decode", "decode:d=128,H=8,G=2,dh=16,f=344,dtype=f64", "tinygpt:L=2,d=64,T=32,V=21,B=2",
        "linear:in=256,out=512,tokens=64", "decode:dtype=f32,seed=3"}) {
    absl::StatusOr<std::unique_ptr<Model>> m = CreateModel(spec);
    ASSERT_TRUE(m.ok()) << spec << ": " << m.status();
    // The canonical spec creates the same model again.
    absl::StatusOr<std::unique_ptr<Model>> again = CreateModel((*m)->Spec());
    ASSERT_TRUE(again.ok()) << (*m)->Spec();
    EXPECT_EQ((*again)->Spec(), (*m)->Spec());
  }
  EXPECT_EQ((*CreateModel("decode:dtype=f32"))->dtype(), ir::DType::kF32);
}

TEST(Registry, ErrorsListWhatIsValid) {
  auto expect = [](const char* spec, const char* what) {
    absl::StatusOr<std::unique_ptr<Model>> m = CreateModel(spec);
    ASSERT_FALSE(m.ok()) << spec;
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(m.status().message()), HasSubstr(what)) << spec;
  };
  expect("gpt5", "valid models: decode, linear, tinygpt");
  expect("decode:q=3", "valid keys: G, H, d, dh, dtype, f, seed");
  expect("decode:d=abc", "key 'd' must be a positive integer, got 'abc'");
  expect("decode:d=-4", "positive integer");
  expect("decode:H=8,G=3", "multiple of G");
  expect("decode:dh=15", "even");
  expect("decode:dtype=i64", "dtype must be f32 or f64");
  expect("linear:in", "expected key=value");
  expect("tinygpt:d=17", "multiple of n_head");  // n_head = 2
}

TEST(TinyGPT, LossAtInitIsNearLogV) {
  absl::StatusOr<std::unique_ptr<Model>> m = CreateModel("tinygpt:L=2,d=64,T=32,V=21,B=2");
  ASSERT_TRUE(m.ok());
  absl::StatusOr<runtime::TensorMap> in = (*m)->ExampleInputs({}, 4);
  ASSERT_TRUE(in.ok());
  auto eager = RunEager(**m, *in, {});
  ASSERT_TRUE(eager.ok()) << eager.status();
  double loss = (*eager)[0].ValueAt(0);
  EXPECT_TRUE(std::isfinite(loss));
  // Uniform predictions would give ln V. The targets are the input tokens and the head is
  // tied to wte, so the layer-normed residual (which contains wte[token]) already leans
  // towards the right logit by about d * 0.02 / sqrt(2) ~ 0.9 at d = 64: the loss sits a
  // little under ln V, never above it by much.
  EXPECT_GT(loss, std::log(21.0) - 0.6);
  EXPECT_LT(loss, std::log(21.0) + 0.1);
  absl::StatusOr<ir::Graph> g = TraceModel(**m);
  ASSERT_TRUE(g.ok()) << g.status();
  auto interp = runtime::Interpret(*g, *in, (*m)->params());
  ASSERT_TRUE(interp.ok()) << interp.status();
  EXPECT_EQ((*interp)[0].ValueAt(0), loss);
}

TEST(TinyGPT, ParameterCountsMatchTheSpec) {
  // N from docs/spec/tinygpt_flops.md.
  struct Row {
    int64_t L, d, T, V, N;
  };
  for (Row r : {Row{2, 8, 32, 21, 2184}, Row{2, 64, 32, 21, 103488}, Row{2, 64, 96, 44, 109056},
                Row{2, 256, 32, 21, 1593600}, Row{8, 512, 32, 21, 25247232}}) {
    GPTConfig c;
    c.n_layer = r.L;
    c.d_model = r.d;
    c.block_size = r.T;
    c.vocab_size = r.V;
    EXPECT_EQ(GPTNumParams(c), r.N) << "L=" << r.L << " d=" << r.d;
  }
  // And the generated parameters hold exactly that many values.
  auto m = CreateModel("tinygpt:L=2,d=8,T=32,V=21,B=2");
  int64_t n = 0;
  for (const auto& [name, t] : (*m)->params()) n += t.numel();
  EXPECT_EQ(n, 2184);
}

TEST(Linear, ComputesXTimesW) {
  auto m = CreateModel("linear:in=3,out=2,tokens=2");
  ASSERT_TRUE(m.ok());
  runtime::TensorMap in = *(*m)->ExampleInputs({}, 0);
  auto y = RunEager(**m, in, {});
  ASSERT_TRUE(y.ok()) << y.status();
  std::vector<double> x = in.at("x").ToDoubles(), w = (*m)->params().at("w").ToDoubles();
  std::vector<double> out = (*y)[0].ToDoubles();
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      double ref = 0;
      for (int k = 0; k < 3; ++k) ref += x[i * 3 + k] * w[k * 2 + j];
      EXPECT_NEAR(out[i * 2 + j], ref, 1e-14);
    }
  }
}

}  // namespace
}  // namespace graphjit::models
