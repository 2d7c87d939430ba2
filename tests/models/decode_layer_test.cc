// The decode layer: eager vs interpreted trace vs an independent loop implementation,
// plus hand-worked GQA and RoPE cases and bad-input errors.
#include "models/decode_layer.h"

#include <cmath>
#include <random>

#include "frontend/eager_context.h"
#include "frontend/ops.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "runtime/interpreter.h"

namespace graphjit::models {
namespace {

using runtime::Tensor;
using runtime::TensorMap;
using ::testing::HasSubstr;

// Straightforward reference: plain loops over heads and positions, sharing no code with
// the model (only the parameter and input values).
std::vector<double> ReferenceDecode(const LayerCfg& c, const TensorMap& p, const TensorMap& in,
                                    int64_t P, std::vector<double>* k_out,
                                    std::vector<double>* v_out) {
  auto vals = [](const Tensor& t) { return t.ToDoubles(); };
  std::vector<double> x = vals(in.at("x")), cosv = vals(in.at("cos")), sinv = vals(in.at("sin"));
  std::vector<double> K = vals(in.at("k_cache")), V = vals(in.at("v_cache"));
  const int64_t S = in.at("k_cache").dim(1), d = c.d, dh = c.dh;
  auto rms = [&](const std::vector<double>& v, const std::vector<double>& w) {
    double ss = 0;
    for (double e : v) ss += e * e;
    double r = std::sqrt(ss / static_cast<double>(v.size()) + c.eps);
    std::vector<double> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) out[i] = v[i] / r * w[i];
    return out;
  };
  auto matvec = [](const std::vector<double>& v, const std::vector<double>& W, int64_t n) {
    std::vector<double> out(n, 0.0);
    for (size_t i = 0; i < v.size(); ++i) {
      for (int64_t j = 0; j < n; ++j) out[j] += v[i] * W[i * n + j];
    }
    return out;
  };
  auto rope = [&](std::vector<double>& t, int64_t heads) {
    for (int64_t h = 0; h < heads; ++h) {
      std::vector<double> r(dh);
      for (int64_t j = 0; j < dh; ++j) {
        double rot = j < dh / 2 ? -t[h * dh + j + dh / 2] : t[h * dh + j - dh / 2];
        r[j] = t[h * dh + j] * cosv[j] + rot * sinv[j];
      }
      std::copy(r.begin(), r.end(), t.begin() + h * dh);
    }
  };
  std::vector<double> h = rms(x, vals(p.at("attn_norm")));
  std::vector<double> q = matvec(h, vals(p.at("wq")), c.H * dh);
  std::vector<double> k = matvec(h, vals(p.at("wk")), c.G * dh);
  std::vector<double> v = matvec(h, vals(p.at("wv")), c.G * dh);
  rope(q, c.H);
  rope(k, c.G);
  for (int64_t g = 0; g < c.G; ++g) {
    for (int64_t j = 0; j < dh; ++j) {
      K[(g * S + P) * dh + j] = k[g * dh + j];
      V[(g * S + P) * dh + j] = v[g * dh + j];
    }
  }
  std::vector<double> attn(c.H * dh, 0.0);
  for (int64_t hd = 0; hd < c.H; ++hd) {
    int64_t g = hd / (c.H / c.G);
    std::vector<double> s(S);
    double mx = -INFINITY;
    for (int64_t t = 0; t < S; ++t) {
      double dot = 0;
      for (int64_t j = 0; j < dh; ++j) dot += q[hd * dh + j] * K[(g * S + t) * dh + j];
      s[t] = dot / std::sqrt(static_cast<double>(dh));
      mx = std::max(mx, s[t]);
    }
    double sum = 0;
    for (double& e : s) sum += (e = std::exp(e - mx));
    for (int64_t t = 0; t < S; ++t) {
      for (int64_t j = 0; j < dh; ++j) attn[hd * dh + j] += s[t] / sum * V[(g * S + t) * dh + j];
    }
  }
  std::vector<double> o = matvec(attn, vals(p.at("wo")), d);
  std::vector<double> x2(d);
  for (int64_t i = 0; i < d; ++i) x2[i] = x[i] + o[i];
  std::vector<double> h2 = rms(x2, vals(p.at("mlp_norm")));
  std::vector<double> gate = matvec(h2, vals(p.at("w_gate")), c.f);
  std::vector<double> up = matvec(h2, vals(p.at("w_up")), c.f);
  for (int64_t i = 0; i < c.f; ++i) gate[i] = gate[i] / (1 + std::exp(-gate[i])) * up[i];
  std::vector<double> down = matvec(gate, vals(p.at("w_down")), d);
  std::vector<double> y(d);
  for (int64_t i = 0; i < d; ++i) y[i] = x2[i] + down[i];
  *k_out = K;
  *v_out = V;
  return y;
}

double MaxAbsDiff(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

TEST(DecodeLayer, TracedGraphIsSymbolicInSAndP) {
  auto model = MakeDecodeModel(LayerCfg{}, ir::DType::kF64, 0);
  absl::StatusOr<ir::Graph> g = TraceModel(*model);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->Symbols(), (std::set<std::string>{"P", "S"}));
  std::string text = ir::PrintGraph(*g);
  EXPECT_THAT(text, HasSubstr("kv_write(%1, %"));
  EXPECT_THAT(text, HasSubstr("{pos=P} : f64[2, S, 16]"));
  EXPECT_THAT(text, HasSubstr("input {name=\"k_cache\"} : f64[2, S, 16]"));
  EXPECT_EQ(g->outputs().size(), 3u);
  EXPECT_EQ(g->type(g->outputs()[0]), (ir::ValueType{ir::DType::kF64, {1, 128}}));
}

class DecodeLayerAgreement : public ::testing::TestWithParam<int64_t> {};

TEST_P(DecodeLayerAgreement, EagerInterpreterAndReferenceAgreeF64) {
  const int64_t S = GetParam();
  LayerCfg cfg;
  auto model = MakeDecodeModel(cfg, ir::DType::kF64, 7);
  absl::StatusOr<TensorMap> in = model->ExampleInputs({{"S", S}}, 11);
  ASSERT_TRUE(in.ok()) << in.status();
  ir::Bindings bind = {{"P", S - 1}};

  absl::StatusOr<std::vector<Tensor>> eager = RunEager(*model, *in, bind);
  ASSERT_TRUE(eager.ok()) << eager.status();
  for (bool symbolic : {true, false}) {
    TraceOptions options;
    if (!symbolic) options.fixed_dims = {{"S", S}};
    absl::StatusOr<ir::Graph> g = TraceModel(*model, options);
    ASSERT_TRUE(g.ok()) << g.status();
    absl::StatusOr<std::vector<Tensor>> interp = runtime::Interpret(*g, *in, model->params(), bind);
    ASSERT_TRUE(interp.ok()) << interp.status();
    for (int i = 0; i < 3; ++i) {
      // The same kernels in the same order: bitwise equal.
      EXPECT_EQ((*eager)[i].ToDoubles(), (*interp)[i].ToDoubles()) << "output " << i;
    }
  }
  std::vector<double> K, V;
  std::vector<double> y = ReferenceDecode(cfg, model->params(), *in, S - 1, &K, &V);
  EXPECT_LT(MaxAbsDiff((*eager)[0].ToDoubles(), y), 1e-12);
  EXPECT_LT(MaxAbsDiff((*eager)[1].ToDoubles(), K), 1e-12);
  EXPECT_LT(MaxAbsDiff((*eager)[2].ToDoubles(), V), 1e-12);
}

INSTANTIATE_TEST_SUITE_P(CacheLengths, DecodeLayerAgreement, ::testing::Values(1, 2, 7, 64, 129));

TEST(DecodeLayer, F32MatchesF64Reference) {
  LayerCfg cfg;
  auto m32 = MakeDecodeModel(cfg, ir::DType::kF32, 3);
  auto m64 = MakeDecodeModel(cfg, ir::DType::kF64, 3);
  absl::StatusOr<TensorMap> in32 = m32->ExampleInputs({{"S", 33}}, 5);
  absl::StatusOr<TensorMap> in64 = m64->ExampleInputs({{"S", 33}}, 5);
  ASSERT_TRUE(in32.ok() && in64.ok());
  auto y32 = RunEager(*m32, *in32, {{"P", 32}});
  auto y64 = RunEager(*m64, *in64, {{"P", 32}});
  ASSERT_TRUE(y32.ok()) << y32.status();
  ASSERT_TRUE(y64.ok()) << y64.status();
  EXPECT_EQ((*y32)[0].dtype(), ir::DType::kF32);
  EXPECT_LT(MaxAbsDiff((*y32)[0].ToDoubles(), (*y64)[0].ToDoubles()), 1e-4);
}

// Hand-worked GQA case: with zero key weights and an all-zero key cache every score is
// 0, so attention averages V uniformly. Group g's cache rows all hold c_g, the new row is
// 0 (zero value weights), so head h outputs (S-1)/S * c_{h / (H/G)}. With x = 0, wo the
// identity and a zero MLP down projection, y is exactly the concatenated head outputs.
TEST(DecodeLayer, GroupedQueryHeadsReadTheirGroup) {
  LayerCfg c{/*d=*/8, /*H=*/4, /*G=*/2, /*dh=*/2, /*f=*/4};
  const int64_t S = 4;
  auto dt = ir::DType::kF64;
  TensorMap p = LayerParams(c, dt, 1);
  auto zeros = [&](std::vector<int64_t> shape) { return *Tensor::Zeros(dt, shape); };
  p["wk"] = zeros({c.d, c.G * c.dh});
  p["wv"] = zeros({c.d, c.G * c.dh});
  p["w_down"] = zeros({c.f, c.d});
  std::vector<double> eye(c.H * c.dh * c.d, 0.0);
  for (int64_t i = 0; i < c.d; ++i) eye[i * c.d + i] = 1.0;
  p["wo"] = *Tensor::FromDoubles(dt, {c.H * c.dh, c.d}, eye);
  const double c0[2] = {1.5, -2.0}, c1[2] = {3.0, 0.25};
  std::vector<double> vcache(c.G * S * c.dh, 0.0);
  for (int64_t t = 0; t < S - 1; ++t) {
    for (int64_t j = 0; j < 2; ++j) {
      vcache[(0 * S + t) * 2 + j] = c0[j];
      vcache[(1 * S + t) * 2 + j] = c1[j];
    }
  }
  auto [cos, sin] = RopeTables(S - 1, c.dh, c.theta, dt);
  TensorMap in = {{"x", zeros({1, c.d})},
                  {"k_cache", zeros({c.G, S, c.dh})},
                  {"v_cache", *Tensor::FromDoubles(dt, {c.G, S, c.dh}, vcache)},
                  {"cos", cos},
                  {"sin", sin}};
  frontend::EagerContext ctx(in, p, {{"P", S - 1}});
  std::vector<frontend::Value> out = DecodeLayer(ctx, c, ir::SymExpr::Symbol("P"));
  auto results = ctx.Results(out);
  ASSERT_TRUE(results.ok()) << results.status();
  std::vector<double> y = (*results)[0].ToDoubles();
  const double w = (S - 1.0) / S;
  std::vector<double> expected = {w * c0[0], w * c0[1], w * c0[0], w * c0[1],
                                  w * c1[0], w * c1[1], w * c1[0], w * c1[1]};
  EXPECT_LT(MaxAbsDiff(y, expected), 1e-15);
}

// rope([a, b]) = [a, b] * cos + [-b, a] * sin on the halves of the last axis.
TEST(DecodeLayer, RopeRotatesHalves) {
  auto dt = ir::DType::kF64;
  auto [cos, sin] = RopeTables(/*pos=*/1, /*dh=*/4, /*theta=*/10000.0, dt);
  // inv_freq = [1, 10000^-0.5] = [1, 0.01]; angle = pos * inv_freq.
  EXPECT_EQ(cos.ToDoubles(),
            (std::vector<double>{std::cos(1.0), std::cos(0.01), std::cos(1.0), std::cos(0.01)}));
  EXPECT_EQ(sin.ToDoubles(),
            (std::vector<double>{std::sin(1.0), std::sin(0.01), std::sin(1.0), std::sin(0.01)}));
  TensorMap in = {
      {"t", *Tensor::FromDoubles(dt, {1, 1, 4}, {1, 2, 3, 4})}, {"cos", cos}, {"sin", sin}};
  TensorMap none;
  frontend::EagerContext ctx(in, none);
  frontend::Value r = frontend::Rope(ctx.Input("t"), ctx.Input("cos"), ctx.Input("sin"));
  ASSERT_TRUE(ctx.status().ok()) << ctx.status();
  double c0 = std::cos(1.0), c1 = std::cos(0.01), s0 = std::sin(1.0), s1 = std::sin(0.01);
  std::vector<double> expected = {1 * c0 - 3 * s0, 2 * c1 - 4 * s1, 3 * c0 + 1 * s0,
                                  4 * c1 + 2 * s1};
  EXPECT_LT(MaxAbsDiff(ctx.tensor(r).ToDoubles(), expected), 1e-15);
}

TEST(DecodeLayer, BadInputsGiveClearErrors) {
  auto model = MakeDecodeModel(LayerCfg{}, ir::DType::kF64, 0);
  absl::StatusOr<TensorMap> good = model->ExampleInputs({{"S", 8}}, 1);
  ASSERT_TRUE(good.ok());
  absl::StatusOr<ir::Graph> g = TraceModel(*model);
  ASSERT_TRUE(g.ok());
  ir::Bindings bind = {{"P", 7}};
  auto expect_error = [&](const TensorMap& in, const ir::Bindings& b, const std::string& what) {
    auto eager = RunEager(*model, in, b);
    EXPECT_FALSE(eager.ok());
    EXPECT_THAT(std::string(eager.status().message()), HasSubstr(what));
    auto interp = runtime::Interpret(*g, in, model->params(), b);
    EXPECT_FALSE(interp.ok());
    EXPECT_THAT(std::string(interp.status().message()), HasSubstr(what));
  };
  TensorMap in = *good;
  in["x"] = *Tensor::Zeros(ir::DType::kF32, {1, 128});
  expect_error(in, bind, "'x'");
  in = *good;
  in["x"] = *Tensor::Zeros(ir::DType::kF64, {128});
  expect_error(in, bind, "'x'");
  in = *good;
  in["v_cache"] = *Tensor::Zeros(ir::DType::kF64, {2, 9, 16});  // S differs from k_cache
  expect_error(in, bind, "'v_cache'");
  in = *good;
  in["cos"] = *Tensor::Zeros(ir::DType::kF64, {1, 1, 8});
  expect_error(in, bind, "'cos'");
  in = *good;
  in.erase("sin");
  expect_error(in, bind, "'sin'");
  expect_error(*good, {}, "P");                 // the write position is not bound
  expect_error(*good, {{"P", 8}}, "kv_write");  // row 8 of an 8-row cache
}

}  // namespace
}  // namespace graphjit::models
