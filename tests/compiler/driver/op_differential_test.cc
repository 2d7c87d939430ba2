// Every op, alone and in fused chains: compiled native code vs the interpreter, f32 and
// f64, random shapes with 1-sized and broadcast dims, symbolic and exact.
// Tolerances: 1e-12 (f64) / 1e-5 (f32), relative to 1 + |expected|.
#include <cmath>
#include <functional>
#include <random>

#include "compiler/compiled_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
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

void Check(const Case& c, DType dt, bool symbolic, std::mt19937_64& rng) {
  for (int64_t S : {1, 3, 17}) {
    SCOPED_TRACE(
        absl::StrCat(c.name, " ", ir::DTypeName(dt), symbolic ? " symbolic" : " exact", " S=", S));
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
    absl::StatusOr<ir::Graph> g = std::move(b).Build();
    ASSERT_TRUE(g.ok()) << g.status();
    ir::Bindings bind = {{"S", S}};
    TensorMap in = RandomInputs(*g, rng, bind);
    absl::StatusOr<std::unique_ptr<CompiledGraph>> cg = CompiledGraph::Compile(*g, {});
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
  for (OpCode op : {OpCode::kNeg, OpCode::kAbs, OpCode::kExp, OpCode::kTanh, OpCode::kSigmoid,
                    OpCode::kSilu, OpCode::kGeluTanh}) {
    cases.push_back({std::string(ir::OpName(op)),
                     {{DType::kF64, {2, kS, 5}}},
                     [op](GraphBuilder& b, const std::vector<ValueId>& in, DType,
                          [[maybe_unused]] const SymExpr& S) { return b.Add(op, {in[0]}); }});
  }
  for (OpCode op : {OpCode::kLog, OpCode::kSqrt, OpCode::kRsqrt}) {
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
  cases.push_back(
      {"matmul_transposed_rhs",
       {{DType::kF64, {2, 3, 8}}, {DType::kF64, {2, kS, 8}}},
       [](GraphBuilder& b, const std::vector<ValueId>& in, DType,
          [[maybe_unused]] const SymExpr& S) {
         ValueId t = b.Add(OpCode::kTranspose, {in[1]}, {{"perm", std::vector<int64_t>{0, 2, 1}}});
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

}  // namespace
}  // namespace graphjit::compiler
