// Every op, alone and in fused chains: compiled native code vs the interpreter, f32 and
// f64, random shapes with 1-sized and broadcast dims, symbolic and exact.
// Tolerances: 1e-12 (f64) / 1e-5 (f32), relative to 1 + |expected|.
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

#include "compiler/compiled/compiled_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/parser.h"
#include "ir/printer.h"

namespace graphjit::compiler {
namespace {

using ir::DType;
using ir::GraphBuilder;
using ir::OpCode;
using ir::Shape;
using ir::SymExpr;
using ir::ValueId;
using runtime::Tensor;
using runtime::TensorMap;

const SymExpr kS = SymExpr::Symbol("S");

// Builds a graph from inputs of the given shapes (S symbolic or fixed) and checks the
// compiled code against the interpreter for S in `sizes`.
struct Case {
  std::string name;
  std::vector<std::pair<DType, Shape>> inputs;  // may mention S
  // `S` is the symbol or, in exact graphs, its value (for shapes in attributes).
  std::function<ValueId(GraphBuilder&, const std::vector<ValueId>&, DType, const SymExpr& S)> body;
  bool float_only = true;
};

Shape Bind(const Shape& s, int64_t S) {
  Shape out;
  for (const SymExpr& d : s) out.push_back(d.Bind({{"S", S}}));
  return out;
}

TensorMap RandomInputs(const ir::Graph& g, std::mt19937_64& rng, const ir::Bindings& b) {
  std::normal_distribution<double> normal;
  TensorMap in;
  for (ValueId id : g.Inputs()) {
    const ir::Node& n = g.node(id);
    std::vector<int64_t> dims = *ir::EvaluateShape(n.type.shape, b);
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    std::vector<double> v(count);
    for (double& e : v) {
      e = n.type.dtype == DType::kI64    ? static_cast<double>(rng() % 5)
          : n.type.dtype == DType::kBool ? static_cast<double>(rng() % 2)
                                         : normal(rng);
    }
    // Keep log / sqrt / pow bases positive so both sides compute numbers, not NaNs.
    if (n.name() == "pos") {
      for (double& e : v) e = std::abs(e) + 0.1;
    }
    in[n.name()] = *Tensor::FromDoubles(n.type.dtype, dims, v);
  }
  return in;
}

// The case's graph in `dt`: symbolic in S, or exact at S.
absl::StatusOr<ir::Graph> BuildCase(const Case& c, DType dt, bool symbolic, int64_t S) {
  GraphBuilder b(c.name);
  std::vector<ValueId> ins;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    auto [idt, shape] = c.inputs[i];
    if (ir::IsFloat(idt)) idt = dt;
    std::string name =
        i == 0 && c.name.find("pos") != std::string::npos ? "pos" : absl::StrCat("in", i);
    ins.push_back(b.Input(name, idt, symbolic ? shape : Bind(shape, S)));
  }
  b.Output(c.body(b, ins, dt, symbolic ? kS : SymExpr(S)));
  return std::move(b).Build();
}

void Check(const Case& c, DType dt, bool symbolic, std::mt19937_64& rng,
           CodeTier tier = CodeTier::kOptimized) {
  for (int64_t S : {1, 3, 17}) {
    SCOPED_TRACE(absl::StrCat(c.name, " ", ir::DTypeName(dt), symbolic ? " symbolic" : " exact",
                              " S=", S, " tier ", CodeTierName(tier)));
    absl::StatusOr<ir::Graph> g = BuildCase(c, dt, symbolic, S);
    ASSERT_TRUE(g.ok()) << g.status();
    ir::Bindings bind = {{"S", S}};
    TensorMap in = RandomInputs(*g, rng, bind);
    CompileGraphOptions options;
    options.codegen.tier = tier;
    absl::StatusOr<std::unique_ptr<CompiledGraph>> cg = CompiledGraph::Compile(*g, {}, options);
    ASSERT_TRUE(cg.ok()) << cg.status() << "\n" << ir::PrintGraph(*g);
    auto want = runtime::Interpret(*g, in, {}, bind);
    auto got = (*cg)->Run(in, bind);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    std::vector<double> w = (*want)[0].ToDoubles(), v = (*got)[0].ToDoubles();
    ASSERT_EQ(w.size(), v.size());
    EXPECT_EQ((*want)[0].dtype(), (*got)[0].dtype());
    double tol = dt == DType::kF64 ? 1e-12 : 1e-5;
    for (size_t i = 0; i < w.size(); ++i) {
      if (std::isnan(w[i])) {
        EXPECT_TRUE(std::isnan(v[i])) << i;
      } else if (std::isinf(w[i])) {
        EXPECT_EQ(w[i], v[i]) << i;
      } else {
        EXPECT_NEAR(w[i], v[i], tol * (1 + std::abs(w[i]))) << i;
      }
    }
  }
}

// The case's graph compiled for 1 thread and for `threads` with every parallel loop split
// (tiny S, so uneven and empty ranges too): the outputs must be the same bits.
void CheckThreads(const Case& c, DType dt, bool symbolic, int threads, std::mt19937_64& rng) {
  for (int64_t S : {1, 3, 17}) {
    SCOPED_TRACE(absl::StrCat(c.name, " ", ir::DTypeName(dt), symbolic ? " symbolic" : " exact",
                              " S=", S, " threads=", threads));
    absl::StatusOr<ir::Graph> g = BuildCase(c, dt, symbolic, S);
    ASSERT_TRUE(g.ok()) << g.status();
    ir::Bindings bind = {{"S", S}};
    TensorMap in = RandomInputs(*g, rng, bind);
    auto one = CompiledGraph::Compile(*g, {}, {.threads = 1});
    auto many = CompiledGraph::Compile(*g, {}, {.threads = threads, .min_parallel_work = 0});
    ASSERT_TRUE(one.ok()) << one.status();
    ASSERT_TRUE(many.ok()) << many.status();
    auto want = (*one)->Run(in, bind);
    auto got = (*many)->Run(in, bind);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ((*want)[0].nbytes(), (*got)[0].nbytes());
    EXPECT_EQ(std::memcmp((*want)[0].raw_data(), (*got)[0].raw_data(), (*want)[0].nbytes()), 0);
  }
}

ValueId Bin(GraphBuilder& b, OpCode op, ValueId x, ValueId y) { return b.Add(op, {x, y}); }

std::vector<Case> Cases() {
  std::vector<Case> cases;
  auto binary = [&](OpCode op, bool float_only = true) {
    cases.push_back({std::string(ir::OpName(op)),
                     {{DType::kF64, {3, 1, kS}}, {DType::kF64, {4, 1}}},
                     [op](GraphBuilder& b, const std::vector<ValueId>& in, DType,
                          [[maybe_unused]] const SymExpr& S) { return Bin(b, op, in[0], in[1]); },
                     float_only});
  };
  for (OpCode op :
       {OpCode::kAdd, OpCode::kSub, OpCode::kMul, OpCode::kDiv, OpCode::kMaximum, OpCode::kMinimum,
        OpCode::kEq, OpCode::kNe, OpCode::kLt, OpCode::kLe, OpCode::kGt, OpCode::kGe}) {
    binary(op);
  }
  cases.push_back(
      {"pow_pos",
       {{DType::kF64, {2, kS}}, {DType::kF64, {kS}}},
       [](GraphBuilder& b, const std::vector<ValueId>& in, DType,
          [[maybe_unused]] const SymExpr& S) { return Bin(b, OpCode::kPow, in[0], in[1]); }});
  // Out-of-domain inputs (asin of 2) give NaN on both sides.
  for (OpCode op : {OpCode::kNeg, OpCode::kAbs, OpCode::kExp, OpCode::kTanh, OpCode::kSigmoid,
                    OpCode::kSin, OpCode::kSilu, OpCode::kGeluTanh, OpCode::kErf, OpCode::kCos,
                    OpCode::kTan, OpCode::kAsin, OpCode::kAcos, OpCode::kAtan, OpCode::kSinh,
                    OpCode::kCosh, OpCode::kAsinh, OpCode::kAcosh, OpCode::kAtanh}) {
    cases.push_back({std::string(ir::OpName(op)),
                     {{DType::kF64, {2, kS, 5}}},
                     [op](GraphBuilder& b, const std::vector<ValueId>& in, DType,
                          [[maybe_unused]] const SymExpr& S) { return b.Add(op, {in[0]}); }});
  }
  for (OpCode op : {OpCode::kLog, OpCode::kLog1p, OpCode::kSqrt, OpCode::kRsqrt}) {
    cases.push_back({absl::StrCat(ir::OpName(op), "_pos"),
                     {{DType::kF64, {kS, 7}}},
                     [op](GraphBuilder& b, const std::vector<ValueId>& in, DType,
                          [[maybe_unused]] const SymExpr& S) { return b.Add(op, {in[0]}); }});
  }
  cases.push_back({"where",
                   {{DType::kF64, {kS, 4}}, {DType::kF64, {4}}},
                   [](GraphBuilder& b, const std::vector<ValueId>& in, DType,
                      [[maybe_unused]] const SymExpr& S) {
                     ValueId c = Bin(b, OpCode::kGt, in[0],
                                     b.Add(OpCode::kExpand, {in[1]}, {{"shape", Shape{S, 4}}}));
                     return b.Add(OpCode::kWhere, {c, in[0], in[1]});
                   }});
  cases.push_back({"cast_i64_and_back",
                   {{DType::kF64, {kS, 3}}},
                   [](GraphBuilder& b, const std::vector<ValueId>& in, DType dt,
                      [[maybe_unused]] const SymExpr& S) {
                     ValueId s = b.Add(OpCode::kMul, {in[0], b.Scalar(10.0, dt)});
                     ValueId i = b.Add(OpCode::kCast, {s}, {{"dtype", DType::kI64}});
                     ValueId q = Bin(b, OpCode::kDiv, i, b.Scalar(3, DType::kI64));
                     return b.Add(OpCode::kCast, {q}, {{"dtype", dt}});
                   }});
  cases.push_back(
      {"matmul_batched_broadcast",
       {{DType::kF64, {2, 1, 3, kS}}, {DType::kF64, {4, kS, 5}}},
       [](GraphBuilder& b, const std::vector<ValueId>& in, DType,
          [[maybe_unused]] const SymExpr& S) { return Bin(b, OpCode::kMatmul, in[0], in[1]); }});
  cases.push_back({"matmul_transposed_rhs",
                   {{DType::kF64, {2, 3, 8}}, {DType::kF64, {2, kS, 8}}},
                   [](GraphBuilder& b, const std::vector<ValueId>& in, DType,
                      [[maybe_unused]] const SymExpr& S) {
                     ValueId t = b.Add(OpCode::kTranspose, {in[1]},
                                       {{"perm", std::vector<int64_t>{0, 2, 1}}});
                     return Bin(b, OpCode::kMatmul, in[0], t);
                   }});
  cases.push_back(
      {"transpose_reshape_slice_concat",
       {{DType::kF64, {2, kS, 6}}},
       [](GraphBuilder& b, const std::vector<ValueId>& in, DType,
          [[maybe_unused]] const SymExpr& S) {
         ValueId t = b.Add(OpCode::kTranspose, {in[0]}, {{"perm", std::vector<int64_t>{2, 0, 1}}});
         ValueId r = b.Add(OpCode::kReshape, {t}, {{"shape", Shape{12, S}}});
         ValueId s = b.Add(OpCode::kSlice, {r},
                           {{"axis", int64_t{0}}, {"start", SymExpr(2)}, {"end", SymExpr(7)}});
         return b.Add(OpCode::kConcat, {s, r, s}, {{"axis", int64_t{0}}});
       }});
  cases.push_back({"window_2d_strided_dilated",
                   {{DType::kF64, {2, kS + 6, 7}}},
                   [](GraphBuilder& b, const std::vector<ValueId>& in, DType,
                      [[maybe_unused]] const SymExpr& S) {
                     return b.Add(OpCode::kWindow, {in[0]},
                                  {{"kernel", std::vector<int64_t>{3, 2}},
                                   {"strides", std::vector<int64_t>{2, 1}},
                                   {"dilations", std::vector<int64_t>{2, 3}}});
                   }});
  // A 3x3 convolution of 2 groups as the importer builds it: zero padding (concat),
  // windows, a reshape to [n, groups, cin/groups * 9, oh * ow] and a matmul.
  cases.push_back({"conv_as_window_matmul",
                   {{DType::kF64, {1, 4, 5, kS}}, {DType::kF64, {2, 3, 18}}},
                   [](GraphBuilder& b, const std::vector<ValueId>& in, DType dt, const SymExpr& S) {
                     ValueId zw =
                         b.Add(OpCode::kFull, {},
                               {{"value", 0.0}, {"dtype", dt}, {"shape", Shape{1, 4, 5, 1}}});
                     ValueId pw = b.Add(OpCode::kConcat, {zw, in[0], zw}, {{"axis", int64_t{3}}});
                     ValueId zh =
                         b.Add(OpCode::kFull, {},
                               {{"value", 0.0}, {"dtype", dt}, {"shape", Shape{1, 4, 1, S + 2}}});
                     ValueId p = b.Add(OpCode::kConcat, {zh, pw, zh}, {{"axis", int64_t{2}}});
                     ValueId w = b.Add(OpCode::kWindow, {p},
                                       {{"kernel", std::vector<int64_t>{3, 3}},
                                        {"strides", std::vector<int64_t>{1, 1}},
                                        {"dilations", std::vector<int64_t>{1, 1}}});
                     ValueId r = b.Add(OpCode::kReshape, {w}, {{"shape", Shape{1, 2, 18, S * 5}}});
                     return Bin(b, OpCode::kMatmul, in[1], r);
                   }});
  cases.push_back(
      {"gather",
       {{DType::kF64, {6, kS}}, {DType::kI64, {2, 3}}},
       [](GraphBuilder& b, const std::vector<ValueId>& in, DType,
          [[maybe_unused]] const SymExpr& S) { return Bin(b, OpCode::kGather, in[0], in[1]); }});
  cases.push_back({"scatter_add",
                   {{DType::kF64, {6, kS}}, {DType::kI64, {2, 3}}, {DType::kF64, {2, 3, kS}}},
                   [](GraphBuilder& b, const std::vector<ValueId>& in, DType,
                      [[maybe_unused]] const SymExpr& S) {
                     return b.Add(OpCode::kScatterAdd, {in[0], in[1], in[2]});
                   }});
  for (OpCode op : {OpCode::kReduceSum, OpCode::kReduceMax, OpCode::kReduceMean}) {
    for (int64_t axis : {0, 1, -1}) {
      cases.push_back({absl::StrCat(ir::OpName(op), axis),
                       {{DType::kF64, {3, kS, 4}}},
                       [op, axis](GraphBuilder& b, const std::vector<ValueId>& in, DType,
                                  [[maybe_unused]] const SymExpr& S) {
                         return b.Add(op, {in[0]}, {{"axis", axis}, {"keepdim", axis == 1}});
                       }});
    }
  }
  // Index results are compared exactly (the tolerance is below 1 for any index). The
  // values are inputs or exact functions of them, so both sides see the same numbers.
  for (OpCode op : {OpCode::kArgMin, OpCode::kArgMax}) {
    for (int64_t axis : {0, 1, -1}) {
      cases.push_back({absl::StrCat(ir::OpName(op), axis),
                       {{DType::kF64, {3, kS, 4}}},
                       [op, axis](GraphBuilder& b, const std::vector<ValueId>& in, DType,
                                  [[maybe_unused]] const SymExpr& S) {
                         return b.Add(op, {in[0]}, {{"axis", axis}, {"keepdim", axis == 1}});
                       }});
    }
    // i64 values in [0, 5): ties on almost every line; fused with a negation.
    cases.push_back({absl::StrCat(ir::OpName(op), "_i64_ties"),
                     {{DType::kI64, {kS, 6}}},
                     [op](GraphBuilder& b, const std::vector<ValueId>& in, DType,
                          [[maybe_unused]] const SymExpr& S) {
                       ValueId neg = b.Add(OpCode::kNeg, {in[0]});
                       ValueId idx = b.Add(op, {neg}, {{"axis", int64_t{-1}}, {"keepdim", false}});
                       return b.Add(OpCode::kCast, {idx}, {{"dtype", DType::kF64}});
                     }});
  }
  for (int64_t axis : {0, 1, -1}) {
    cases.push_back({absl::StrCat("cumsum", axis),
                     {{DType::kF64, {3, kS, 4}}},
                     [axis](GraphBuilder& b, const std::vector<ValueId>& in, DType dt,
                            [[maybe_unused]] const SymExpr& S) {
                       // A fused producer and consumer around the scan.
                       ValueId x = Bin(b, OpCode::kMul, in[0], b.Scalar(2.0, dt));
                       ValueId c = b.Add(OpCode::kCumSum, {x}, {{"axis", axis}});
                       return b.Add(OpCode::kExp, {Bin(b, OpCode::kMul, c, b.Scalar(0.1, dt))});
                     }});
  }
  cases.push_back({"cumsum_i64",
                   {{DType::kI64, {2, kS}}},
                   [](GraphBuilder& b, const std::vector<ValueId>& in, DType,
                      [[maybe_unused]] const SymExpr& S) {
                     return b.Add(OpCode::kCumSum, {in[0]}, {{"axis", int64_t{1}}});
                   }});
  // The study's nearest-neighbour step: squared distances |a|^2 + |b|^2 - 2 a.b (a matmul
  // against the transposed training points), the arg-min over them, then a gather of the
  // neighbours' targets.
  cases.push_back(
      {"nearest_neighbor",
       {{DType::kF64, {kS, 3}}, {DType::kF64, {7, 3}}, {DType::kF64, {7}}},
       [](GraphBuilder& b, const std::vector<ValueId>& in, DType dt,
          [[maybe_unused]] const SymExpr& S) {
         auto sq = [&](ValueId v, bool keep) {
           return b.Add(OpCode::kReduceSum, {Bin(b, OpCode::kMul, v, v)},
                        {{"axis", int64_t{1}}, {"keepdim", keep}});
         };
         ValueId bt = b.Add(OpCode::kTranspose, {in[1]}, {{"perm", std::vector<int64_t>{1, 0}}});
         ValueId dot = Bin(b, OpCode::kMatmul, in[0], bt);
         ValueId d2 = Bin(b, OpCode::kSub, Bin(b, OpCode::kAdd, sq(in[0], true), sq(in[1], false)),
                          Bin(b, OpCode::kMul, b.Scalar(2.0, dt), dot));
         ValueId idx = b.Add(OpCode::kArgMin, {d2}, {{"axis", int64_t{1}}, {"keepdim", false}});
         return Bin(b, OpCode::kGather, in[2], idx);
       }});
  cases.push_back({"softmax",
                   {{DType::kF64, {3, kS}}},
                   [](GraphBuilder& b, const std::vector<ValueId>& in, DType,
                      [[maybe_unused]] const SymExpr& S) {
                     return b.Add(OpCode::kSoftmax, {in[0]}, {{"axis", int64_t{-1}}});
                   }});
  cases.push_back({"rmsnorm_layernorm",
                   {{DType::kF64, {kS, 8}}, {DType::kF64, {8}}, {DType::kF64, {8}}},
                   [](GraphBuilder& b, const std::vector<ValueId>& in, DType,
                      [[maybe_unused]] const SymExpr& S) {
                     ValueId r = b.Add(OpCode::kRmsNorm, {in[0], in[1]}, {{"eps", 1e-6}});
                     return b.Add(OpCode::kLayerNorm, {r, in[1], in[2]}, {{"eps", 1e-5}});
                   }});
  cases.push_back(
      {"rope",
       {{DType::kF64, {4, kS, 8}}, {DType::kF64, {1, kS, 8}}, {DType::kF64, {1, kS, 8}}},
       [](GraphBuilder& b, const std::vector<ValueId>& in, DType,
          [[maybe_unused]] const SymExpr& S) {
         return b.Add(OpCode::kRope, {in[0], in[1], in[2]});
       }});
  cases.push_back({"causal_mask_softmax",
                   {{DType::kF64, {2, kS, kS}}},
                   [](GraphBuilder& b, const std::vector<ValueId>& in, DType,
                      [[maybe_unused]] const SymExpr& S) {
                     ValueId m = b.Add(OpCode::kCausalMask, {in[0]});
                     return b.Add(OpCode::kSoftmax, {m}, {{"axis", int64_t{-1}}});
                   }});
  cases.push_back({"cross_entropy",
                   {{DType::kF64, {kS, 5}}, {DType::kI64, {kS}}},
                   [](GraphBuilder& b, const std::vector<ValueId>& in, DType,
                      [[maybe_unused]] const SymExpr& S) {
                     return Bin(b, OpCode::kCrossEntropy, in[0], in[1]);
                   }});
  cases.push_back({"kv_write_copy",
                   {{DType::kF64, {2, kS, 4}}, {DType::kF64, {2, 1, 4}}},
                   [](GraphBuilder& b, const std::vector<ValueId>& in, DType,
                      [[maybe_unused]] const SymExpr& S) {
                     ValueId w = b.Add(OpCode::kKvWrite, {in[0], in[1]}, {{"pos", S - 1}});
                     return b.Add(OpCode::kExp, {w});  // not an output: written to a copy
                   }});
  cases.push_back(
      {"iota_full_constant",
       {{DType::kF64, {kS, 3}}},
       [](GraphBuilder& b, const std::vector<ValueId>& in, DType dt,
          [[maybe_unused]] const SymExpr& S) {
         ValueId i = b.Add(OpCode::kIota, {},
                           {{"axis", int64_t{0}}, {"dtype", dt}, {"shape", Shape{S, 3}}});
         ValueId f =
             b.Add(OpCode::kFull, {}, {{"value", 0.5}, {"dtype", dt}, {"shape", Shape{S, 3}}});
         ValueId c =
             b.Add(OpCode::kConstant, {},
                   {{"value", std::vector<double>{1, -2, 3}}, {"dtype", dt}, {"shape", Shape{3}}});
         return Bin(b, OpCode::kAdd, Bin(b, OpCode::kMul, Bin(b, OpCode::kAdd, in[0], i), f), c);
       }});
  cases.push_back({"fused_chain",
                   {{DType::kF64, {kS, 16}}, {DType::kF64, {16}}},
                   [](GraphBuilder& b, const std::vector<ValueId>& in, DType dt,
                      [[maybe_unused]] const SymExpr& S) {
                     ValueId x = Bin(b, OpCode::kMul, in[0], in[1]);
                     x = b.Add(OpCode::kTanh, {Bin(b, OpCode::kAdd, x, b.Scalar(0.25, dt))});
                     x = b.Add(OpCode::kSilu, {Bin(b, OpCode::kSub, x, in[1])});
                     return b.Add(OpCode::kReduceSum, {b.Add(OpCode::kExp, {x})},
                                  {{"axis", int64_t{-1}}, {"keepdim", false}});
                   }});
  return cases;
}

TEST(OpDifferential, CompiledMatchesInterpreter) {
  std::mt19937_64 rng(1234);
  for (const Case& c : Cases()) {
    for (DType dt : {DType::kF64, DType::kF32}) {
      for (bool symbolic : {true, false}) Check(c, dt, symbolic, rng);
    }
  }
}

// The baseline tier's code (a short IR pipeline, -O0 machine code) computes the same.
TEST(OpDifferential, BaselineTierMatchesInterpreter) {
  std::mt19937_64 rng(31);
  for (const Case& c : Cases()) {
    for (DType dt : {DType::kF64, DType::kF32}) {
      for (bool symbolic : {true, false}) Check(c, dt, symbolic, rng, CodeTier::kBaseline);
    }
  }
}

// Every case split across 2 and 3 threads gives the 1-thread bits (issue 32).
TEST(OpDifferential, ThreadsGiveTheSameBits) {
  std::mt19937_64 rng(32);
  for (const Case& c : Cases()) {
    for (DType dt : {DType::kF64, DType::kF32}) {
      for (bool symbolic : {true, false}) {
        for (int threads : {2, 3}) CheckThreads(c, dt, symbolic, threads, rng);
      }
    }
  }
}

// Zero-size tensors (issue 16): every case above with S = 0, symbolic and exact, f64 and
// f32. Where the interpreter rejects the call (kv_write at pos S-1 = -1), the compiled code
// must reject it too, not write out of bounds.
TEST(OpDifferential, ZeroSizeDimsInEveryOp) {
  std::mt19937_64 rng(16);
  for (const Case& c : Cases()) {
    for (DType dt : {DType::kF64, DType::kF32}) {
      for (bool symbolic : {true, false}) {
        SCOPED_TRACE(absl::StrCat(c.name, " ", ir::DTypeName(dt), symbolic ? " symbolic" : " exact",
                                  " S=0"));
        absl::StatusOr<ir::Graph> g = BuildCase(c, dt, symbolic, 0);
        if (!symbolic && !g.ok()) {
          // An exact graph that is invalid at S = 0 (argmin over an empty axis, kv_write at
          // row -1) is refused when built, with a message: that is the check.
          EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << g.status();
          continue;
        }
        ASSERT_TRUE(g.ok()) << g.status();
        ir::Bindings bind = {{"S", 0}};
        TensorMap in = RandomInputs(*g, rng, bind);
        absl::StatusOr<std::unique_ptr<CompiledGraph>> cg = CompiledGraph::Compile(*g, {});
        ASSERT_TRUE(cg.ok()) << cg.status() << "\n" << ir::PrintGraph(*g);
        auto want = runtime::Interpret(*g, in, {}, bind);
        auto got = (*cg)->Run(in, bind);
        if (!want.ok()) {
          EXPECT_FALSE(got.ok()) << "the interpreter says " << want.status();
          continue;
        }
        ASSERT_TRUE(got.ok()) << got.status();
        const Tensor& w = (*want)[0];
        const Tensor& v = (*got)[0];
        EXPECT_EQ(w.TypeString(), v.TypeString());
        std::vector<double> wv = w.ToDoubles(), vv = v.ToDoubles();
        ASSERT_EQ(wv.size(), vv.size());
        for (size_t i = 0; i < wv.size(); ++i) {
          if (std::isnan(wv[i])) {
            EXPECT_TRUE(std::isnan(vv[i])) << i;
          } else if (std::isinf(wv[i])) {
            EXPECT_EQ(wv[i], vv[i]) << i;  // the max over an empty axis is -inf in both
          } else {
            EXPECT_NEAR(wv[i], vv[i], 1e-5 * (1 + std::abs(wv[i]))) << i;
          }
        }
      }
    }
  }
}

// Results fixed by the op semantics (docs/OPS.md), textual IR in, expected values out,
// compiled; each was a divergence between the interpreter and compiled code.
TEST(OpDifferential, TextualIrRegressions) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  auto run = [](const char* text, const TensorMap& in) -> std::vector<Tensor> {
    absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
    EXPECT_TRUE(g.ok()) << g.status();
    if (!g.ok()) return {};
    absl::StatusOr<std::unique_ptr<CompiledGraph>> cg = CompiledGraph::Compile(*g, {});
    EXPECT_TRUE(cg.ok()) << cg.status();
    if (!cg.ok()) return {};
    absl::StatusOr<std::vector<Tensor>> out = (*cg)->Run(in);
    EXPECT_TRUE(out.ok()) << out.status();
    absl::StatusOr<std::vector<Tensor>> want = runtime::Interpret(*g, in, {});
    EXPECT_TRUE(want.ok()) << want.status();
    if (!out.ok() || !want.ok()) return {};
    EXPECT_EQ(out->size(), want->size());
    for (size_t i = 0; i < out->size() && i < want->size(); ++i) {
      EXPECT_EQ((*out)[i].DebugString(100), (*want)[i].DebugString(100)) << "output " << i;
    }
    return *out;
  };
  auto ints = [](const Tensor& t) {
    return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
  };

  // An empty constant, and one made by constant folding (both crashed lowering).
  std::vector<Tensor> out = run(R"(graph z {
    %0 = constant {value=[]} : f32[0, 5]
    %1 = iota {axis=1} : i64[0, 5]
    %2 = neg(%1) : i64[0, 5]
    return %0, %2
  })",
                                {});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].TypeString(), "f32[0, 5]");
  EXPECT_EQ(out[1].TypeString(), "i64[0, 5]");

  // Float to i64 saturates (compiled gave INT64_MIN for every out-of-range value), from
  // inputs and from constants (folded).
  std::vector<double> x = {1e300, -1e300, INFINITY, -INFINITY, NAN, -2.5};
  out = run(R"(graph c {
    %0 = input {name="x"} : f64[6]
    %1 = cast(%0) {dtype=i64} : i64[6]
    %2 = input {name="y"} : f32[6]
    %3 = cast(%2) {dtype=i64} : i64[6]
    %4 = constant {value=[1e+300, -1e+300, inf, -inf, nan, -2.5]} : f64[6]
    %5 = cast(%4) {dtype=i64} : i64[6]
    return %1, %3, %5
  })",
            {{"x", *Tensor::FromDoubles(DType::kF64, {6}, x)},
             {"y", *Tensor::FromDoubles(DType::kF32, {6}, x)}});
  ASSERT_EQ(out.size(), 3u);
  for (const Tensor& t : out) {
    EXPECT_EQ(ints(t), (std::vector<int64_t>{kMax, kMin, kMax, kMin, 0, -2}));
  }

  // INT64_MIN // -1 wraps to INT64_MIN (it trapped, SIGFPE, in compiled code); % -1 is 0.
  out = run(R"(graph d {
    %a = input {name="a"} : i64[4]
    %b = input {name="b"} : i64[4]
    %q = div(%a, %b) : i64[4]
    %m = constant {value=[-1]} : i64[]
    %r = div(%a, %m) : i64[4]
    return %q, %r
  })",
            {{"a", *Tensor::FromVector<int64_t>({4}, std::vector<int64_t>{kMin, 7, -7, kMax})},
             {"b", *Tensor::FromVector<int64_t>({4}, std::vector<int64_t>{-1, -2, 2, -1})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(ints(out[0]), (std::vector<int64_t>{kMin, -4, -4, -kMax}));
  EXPECT_EQ(ints(out[1]), (std::vector<int64_t>{kMin, -7, 7, -kMax}));

  // i64 constants beyond 2^53 survive constant folding (folded values are not rounded
  // through the double-valued `constant` attribute).
  out = run(R"(graph big {
    %0 = full {value=4611686018427387904} : i64[2]
    %1 = constant {value=[1, 3]} : i64[2]
    %2 = add(%0, %1) : i64[2]
    return %2
  })",
            {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(ints(out[0]), (std::vector<int64_t>{4611686018427387905, 4611686018427387907}));
}

// argmin / argmax have no index to return on an empty axis: a constant one fails the
// build, a symbolic one bound to 0 is refused by the compiled code as by the interpreter.
TEST(OpDifferential, ArgReductionOverAnEmptyAxisIsRefused) {
  for (OpCode op : {OpCode::kArgMin, OpCode::kArgMax}) {
    SCOPED_TRACE(ir::OpName(op));
    GraphBuilder exact("exact");
    exact.Output(exact.Add(op, {exact.Input("x", DType::kF64, {3, 0})},
                           {{"axis", int64_t{1}}, {"keepdim", false}}));
    absl::StatusOr<ir::Graph> built = std::move(exact).Build();
    ASSERT_FALSE(built.ok());
    EXPECT_THAT(built.status().message(), ::testing::HasSubstr("is empty"));

    GraphBuilder b("symbolic");
    b.Output(b.Add(op, {b.Input("x", DType::kF64, {3, kS})},
                   {{"axis", int64_t{1}}, {"keepdim", false}}));
    absl::StatusOr<ir::Graph> g = std::move(b).Build();
    ASSERT_TRUE(g.ok()) << g.status();
    absl::StatusOr<std::unique_ptr<CompiledGraph>> cg = CompiledGraph::Compile(*g, {});
    ASSERT_TRUE(cg.ok()) << cg.status();
    TensorMap empty = {{"x", *Tensor::FromDoubles(DType::kF64, {3, 0}, {})}};
    EXPECT_FALSE(runtime::Interpret(*g, empty, {}).ok());
    absl::StatusOr<std::vector<Tensor>> got = (*cg)->Run(empty);
    ASSERT_FALSE(got.ok());
    EXPECT_THAT(got.status().message(), ::testing::HasSubstr("axis 1 is empty for these bindings"));
    // The same code serves a non-empty axis.
    TensorMap one = {{"x", *Tensor::FromDoubles(DType::kF64, {3, 2}, {1, 2, 4, 3, 5, 5})}};
    got = (*cg)->Run(one);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ((*got)[0].ToDoubles(), (op == OpCode::kArgMin ? std::vector<double>{0, 1, 0}
                                                            : std::vector<double>{1, 0, 0}));
  }
}

}  // namespace
}  // namespace graphjit::compiler
