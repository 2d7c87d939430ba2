// The interpreter on a small attention graph with symbolic S and P (kv_write): runs under
// several S, agrees bitwise with the same ops called eagerly, and rejects bad inputs with
// messages that name the input, parameter or symbol.
#include "runtime/interpreter.h"

#include <cstring>
#include <functional>

#include "gmock/gmock.h"
#include "ir/builder.h"
#include "tests/runtime/test_util.h"

namespace graphjit::runtime::testutil {
namespace {

using ir::SymExpr;
using ir::ValueId;
using ::testing::HasSubstr;

constexpr int64_t kG = 2, kDh = 4, kD = kG * kDh;

// x [1, 8]; caches [2, S, 4]; params wq, wk [8, 8]. Writes k and 2k at row P of the
// caches and attends over them. Outputs: y [1, 8], K, V.
ir::Graph AttentionGraph() {
  const SymExpr s = SymExpr::Symbol("S"), p = SymExpr::Symbol("P");
  ir::GraphBuilder b("attention");
  ValueId x = b.Input("x", DType::kF64, {1, kD});
  ValueId k_cache = b.Input("k_cache", DType::kF64, {kG, s, kDh});
  ValueId v_cache = b.Input("v_cache", DType::kF64, {kG, s, kDh});
  ValueId wq = b.Param("wq", DType::kF64, {kD, kD});
  ValueId wk = b.Param("wk", DType::kF64, {kD, kD});
  ValueId h = b.Add(OpCode::kRmsNorm, {x}, {{"eps", 1e-6}});
  ir::Attrs heads = {{"shape", ir::Shape{kG, 1, kDh}}};
  ValueId q = b.Add(OpCode::kReshape, {b.Add(OpCode::kMatmul, {h, wq})}, heads);
  ValueId k = b.Add(OpCode::kReshape, {b.Add(OpCode::kMatmul, {h, wk})}, heads);
  ValueId v = b.Add(OpCode::kMul, {k, b.Scalar(2, DType::kF64)});
  ValueId kk = b.Add(OpCode::kKvWrite, {k_cache, k}, {{"pos", p}});
  ValueId vv = b.Add(OpCode::kKvWrite, {v_cache, v}, {{"pos", p}});
  ValueId kt = b.Add(OpCode::kTranspose, {kk}, {{"perm", std::vector<int64_t>{0, 2, 1}}});
  ValueId scores =
      b.Add(OpCode::kMul, {b.Add(OpCode::kMatmul, {q, kt}), b.Scalar(0.5, DType::kF64)});
  ValueId attn = b.Add(OpCode::kSoftmax, {scores}, {{"axis", int64_t{-1}}});
  ValueId o = b.Add(OpCode::kMatmul, {attn, vv});
  ValueId y = b.Add(OpCode::kReshape, {o}, {{"shape", ir::Shape{1, kD}}});
  b.Output(y);
  b.Output(kk);
  b.Output(vv);
  absl::StatusOr<ir::Graph> g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

struct Fixture {
  TensorMap inputs, params;
};

Fixture MakeInputs(std::mt19937_64& rng, int64_t s) {
  Fixture f;
  f.inputs["x"] = Random(rng, DType::kF64, {1, kD});
  f.inputs["k_cache"] = Random(rng, DType::kF64, {kG, s, kDh});
  f.inputs["v_cache"] = Random(rng, DType::kF64, {kG, s, kDh});
  f.params["wq"] = Random(rng, DType::kF64, {kD, kD});
  f.params["wk"] = Random(rng, DType::kF64, {kD, kD});
  return f;
}

// The same computation written as eager calls, the way user code would run it.
std::vector<Tensor> RunEagerly(const Fixture& f, int64_t pos) {
  const ir::Bindings bind = {{"P", pos}};
  auto call = [&](OpCode op, std::vector<const Tensor*> in, ir::Attrs attrs = {}) {
    absl::StatusOr<Tensor> r = EvalOp(op, std::move(in), std::move(attrs), bind);
    EXPECT_TRUE(r.ok()) << ir::OpName(op) << ": " << r.status();
    return r.ok() ? *std::move(r) : Tensor();
  };
  ir::Attrs heads = {{"shape", ir::Shape{kG, 1, kDh}}};
  Tensor two = Tensor::Scalar(DType::kF64, 2), half = Tensor::Scalar(DType::kF64, 0.5);
  Tensor h = call(OpCode::kRmsNorm, {&f.inputs.at("x")}, {{"eps", 1e-6}});
  Tensor q0 = call(OpCode::kMatmul, {&h, &f.params.at("wq")});
  Tensor q = call(OpCode::kReshape, {&q0}, heads);
  Tensor k0 = call(OpCode::kMatmul, {&h, &f.params.at("wk")});
  Tensor k = call(OpCode::kReshape, {&k0}, heads);
  Tensor v = call(OpCode::kMul, {&k, &two});
  ir::Attrs at_p = {{"pos", SymExpr::Symbol("P")}};
  Tensor kk = call(OpCode::kKvWrite, {&f.inputs.at("k_cache"), &k}, at_p);
  Tensor vv = call(OpCode::kKvWrite, {&f.inputs.at("v_cache"), &v}, at_p);
  Tensor kt = call(OpCode::kTranspose, {&kk}, {{"perm", std::vector<int64_t>{0, 2, 1}}});
  Tensor s0 = call(OpCode::kMatmul, {&q, &kt});
  Tensor s = call(OpCode::kMul, {&s0, &half});
  Tensor a = call(OpCode::kSoftmax, {&s}, {{"axis", int64_t{-1}}});
  Tensor o = call(OpCode::kMatmul, {&a, &vv});
  Tensor y = call(OpCode::kReshape, {&o}, {{"shape", ir::Shape{1, kD}}});
  return {y, kk, vv};
}

void ExpectBitwiseEqual(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.TypeString(), b.TypeString()) << what;
  EXPECT_EQ(0, std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.nbytes()))) << what;
}

TEST(InterpreterTest, RunsUnderSeveralLengthsAndMatchesEagerBitwise) {
  ir::Graph g = AttentionGraph();
  std::mt19937_64 rng(60);
  for (int64_t s : {1, 2, 5, 17, 64}) {
    for (int64_t pos : {s - 1, s / 2}) {
      Fixture f = MakeInputs(rng, s);
      absl::StatusOr<std::vector<Tensor>> out = Interpret(g, f.inputs, f.params, {{"P", pos}});
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ(out->size(), 3u);
      EXPECT_EQ((*out)[0].shape(), (Dims{1, kD}));
      EXPECT_EQ((*out)[1].shape(), (Dims{kG, s, kDh}));
      std::vector<Tensor> eager = RunEagerly(f, pos);
      for (int i = 0; i < 3; ++i) {
        ExpectBitwiseEqual((*out)[i], eager[i], absl::StrCat("output ", i, " at S=", s));
      }
      // The cache rows other than P are the inputs', and the inputs are untouched.
      const Tensor& k_in = f.inputs.at("k_cache");
      for (int64_t g_i = 0; g_i < kG; ++g_i) {
        for (int64_t r = 0; r < s; ++r) {
          if (r == pos) continue;
          for (int64_t j = 0; j < kDh; ++j) {
            const int64_t at = (g_i * s + r) * kDh + j;
            EXPECT_EQ((*out)[1].ValueAt(at), k_in.ValueAt(at));
          }
        }
      }
      EXPECT_FALSE((*out)[1].SharesBufferWith(k_in));
    }
  }
}

TEST(InterpreterTest, BindInputsBindsBareSymbols) {
  ir::Graph g = AttentionGraph();
  std::mt19937_64 rng(61);
  Fixture f = MakeInputs(rng, 7);
  absl::StatusOr<ir::Bindings> b = BindInputs(g, f.inputs, {{"P", 3}});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->at("S"), 7);
  EXPECT_EQ(b->at("P"), 3);
}

// Runs the attention graph with one change to the fixture and expects an error naming it.
void ExpectError(const std::function<void(Fixture*, ir::Bindings*)>& change,
                 const std::vector<std::string>& substrings) {
  ir::Graph g = AttentionGraph();
  std::mt19937_64 rng(62);
  Fixture f = MakeInputs(rng, 128);
  ir::Bindings bindings = {{"P", 127}};
  change(&f, &bindings);
  absl::StatusOr<std::vector<Tensor>> out = Interpret(g, f.inputs, f.params, bindings);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
  for (const std::string& s : substrings) EXPECT_THAT(out.status().message(), HasSubstr(s));
}

TEST(InterpreterTest, RejectsBadInputsWithMessagesNamingThem) {
  std::mt19937_64 rng(63);
  ExpectError(
      [&](Fixture* f, ir::Bindings*) { f->inputs["x"] = Random(rng, DType::kF32, {1, kD}); },
      {"input 'x': expected f64[1, 8], got f32[1, 8]"});
  ExpectError(
      [&](Fixture* f, ir::Bindings*) { f->inputs["k_cache"] = Random(rng, DType::kF64, {2, 128}); },
      {"input 'k_cache': expected f64[2, S, 4], got f64[2, 128]"});
  ExpectError([&](Fixture* f, ir::Bindings*) { f->inputs["x"] = Random(rng, DType::kF64, {1, 9}); },
              {"input 'x': expected f64[1, 8], got f64[1, 9]"});
  ExpectError([&](Fixture* f, ir::Bindings*) { f->inputs.erase("v_cache"); },
              {"missing input 'v_cache'"});
  ExpectError([&](Fixture* f, ir::Bindings*) { f->params.erase("wq"); },
              {"missing parameter 'wq'"});
  ExpectError(
      [&](Fixture* f, ir::Bindings*) { f->params["wk"] = Random(rng, DType::kF64, {8, 7}); },
      {"parameter 'wk': expected f64[8, 8], got f64[8, 7]"});
  ExpectError([&](Fixture*, ir::Bindings* b) { b->clear(); }, {"symbol 'P' is not bound"});
  ExpectError([&](Fixture* f,
                  ir::Bindings*) { f->inputs["v_cache"] = Random(rng, DType::kF64, {2, 129, 4}); },
              {"input 'v_cache': expected f64[2, S, 4] with S=128, got f64[2, 129, 4]"});
  ExpectError([&](Fixture*, ir::Bindings* b) { (*b)["S"] = 100; },
              {"input 'k_cache': expected f64[2, S, 4] with S=100, got f64[2, 128, 4]"});
  ExpectError([&](Fixture*, ir::Bindings* b) { (*b)["P"] = 128; }, {"kv_write", "[128, 129)"});
  ExpectError([&](Fixture*, ir::Bindings* b) { (*b)["P"] = -1; }, {"kv_write"});
  ExpectError([&](Fixture* f, ir::Bindings*) { f->inputs["x"] = Tensor(); }, {"input 'x'"});
}

TEST(InterpreterTest, GatherIndexOutOfRange) {
  ir::GraphBuilder b("embed");
  ValueId ids = b.Input("ids", DType::kI64, {SymExpr::Symbol("T")});
  ValueId table = b.Param("table", DType::kF32, {10, 3});
  b.Output(b.Add(OpCode::kGather, {table, ids}));
  absl::StatusOr<ir::Graph> g = std::move(b).Build();
  ASSERT_TRUE(g.ok()) << g.status();
  std::mt19937_64 rng(64);
  TensorMap params = {{"table", Random(rng, DType::kF32, {10, 3})}};
  absl::StatusOr<std::vector<Tensor>> ok =
      Interpret(*g, {{"ids", FromValues(DType::kI64, {3}, {0, 9, 4})}}, params);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)[0].shape(), (Dims{3, 3}));
  EXPECT_EQ((*ok)[0].ValueAt(3), params.at("table").ValueAt(27));
  absl::StatusOr<std::vector<Tensor>> bad =
      Interpret(*g, {{"ids", FromValues(DType::kI64, {2}, {0, 10})}}, params);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("gather"));
  EXPECT_THAT(bad.status().message(), HasSubstr("index 10"));
}

TEST(InterpreterTest, DerivedDimsUseSymbolsBoundByLaterInputs) {
  // `a` is declared [S+1] but only `b` binds S: binding must not depend on input order.
  const SymExpr s = SymExpr::Symbol("S");
  ir::GraphBuilder b("derived");
  ValueId a = b.Input("a", DType::kF64, {s + 1});
  ValueId c = b.Input("b", DType::kF64, {s});
  ValueId head =
      b.Add(OpCode::kSlice, {a}, {{"axis", int64_t{0}}, {"start", SymExpr(0)}, {"end", s}});
  b.Output(b.Add(OpCode::kAdd, {head, c}));
  absl::StatusOr<ir::Graph> g = std::move(b).Build();
  ASSERT_TRUE(g.ok()) << g.status();
  TensorMap in = {{"a", FromValues(DType::kF64, {3}, {1, 2, 3})},
                  {"b", FromValues(DType::kF64, {2}, {10, 20})}};
  absl::StatusOr<std::vector<Tensor>> out = Interpret(*g, in, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToDoubles(), (std::vector<double>{11, 22}));
  in["a"] = FromValues(DType::kF64, {2}, {1, 2});
  out = Interpret(*g, in, {});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("input 'a': expected f64[S+1] with S=2, got f64[2]"));
}

}  // namespace
}  // namespace graphjit::runtime::testutil
