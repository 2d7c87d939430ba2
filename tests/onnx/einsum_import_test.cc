// Einsum at import: equations with batch, contracted, free and summed-out labels, three
// operands and a symbolic dim, against loops written here; and the refusals (ellipsis,
// diagonal, malformed equations) that name the node.
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/status_macros.h"
#include "onnx/import.h"
#include "runtime/interpreter.h"
#include "tests/onnx/model_builder.h"

namespace graphjit::onnx {
namespace {

using testing::Dim;
using ::testing::HasSubstr;
using testing::ModelBuilder;
using testing::SetString;

constexpr int32_t kF64 = ::onnx::TensorProto::DOUBLE;

// A model of one Einsum node over inputs a, b, (c) of these dims (strings are symbols).
ModelBuilder EinsumModel(const std::string& equation, const std::vector<std::vector<Dim>>& dims) {
  ModelBuilder m;
  std::vector<std::string> names;
  for (size_t i = 0; i < dims.size(); ++i) {
    names.push_back(std::string(1, static_cast<char>('a' + i)));
    m.Input(names.back(), kF64, dims[i]);
  }
  m.Output("y", kF64);
  SetString(m.Node("Einsum", names, {"y"}, "mix"), "equation", equation);
  return m;
}

absl::StatusOr<std::vector<runtime::Tensor>> RunEinsum(const ModelBuilder& m,
                                                       const runtime::TensorMap& in,
                                                       const ir::Bindings& dims = {}) {
  GJ_ASSIGN_OR_RETURN(ImportedModel model, ImportFromBytes(m.Bytes(), "einsum.onnx"));
  return runtime::Interpret(model.graph, in, model.params, dims);
}

runtime::Tensor Random(std::vector<int64_t> shape, std::mt19937_64& rng) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(n);
  std::uniform_real_distribution<double> u(-1, 1);
  for (double& e : v) e = u(rng);
  return *runtime::Tensor::FromDoubles(ir::DType::kF64, shape, v);
}

TEST(OnnxEinsum, BatchedProductWithASummedOutLabel) {
  // b: batch, i / k: free, j: contracted, l: only in a (summed before the product).
  std::mt19937_64 rng(7);
  const int64_t B = 2, I = 3, J = 4, K = 5, L = 2;
  runtime::Tensor a = Random({B, I, J, L}, rng), b = Random({B, K, J}, rng);
  absl::StatusOr<std::vector<runtime::Tensor>> y =
      RunEinsum(EinsumModel("bijl, bkj -> bki", {{B, I, J, L}, {B, K, J}}), {{"a", a}, {"b", b}});
  ASSERT_TRUE(y.ok()) << y.status();
  ASSERT_EQ((*y)[0].shape(), (std::vector<int64_t>{B, K, I}));
  for (int64_t bb = 0; bb < B; ++bb) {
    for (int64_t k = 0; k < K; ++k) {
      for (int64_t i = 0; i < I; ++i) {
        double want = 0;
        for (int64_t j = 0; j < J; ++j) {
          for (int64_t l = 0; l < L; ++l) {
            want += a.ValueAt(((bb * I + i) * J + j) * L + l) * b.ValueAt((bb * K + k) * J + j);
          }
        }
        EXPECT_NEAR((*y)[0].ValueAt((bb * K + k) * I + i), want, 1e-12);
      }
    }
  }
}

TEST(OnnxEinsum, ThreeOperandsImplicitOutputAndASymbolicDim) {
  // ij,jk,kl with no '->': the output is the labels used once, alphabetically (il).
  std::mt19937_64 rng(8);
  const int64_t I = 3, J = 4, K = 2, L = 5;
  runtime::Tensor a = Random({I, J}, rng), b = Random({J, K}, rng), c = Random({K, L}, rng);
  absl::StatusOr<std::vector<runtime::Tensor>> y =
      RunEinsum(EinsumModel("ij,jk,kl", {{std::string("N"), J}, {J, K}, {K, L}}),
                {{"a", a}, {"b", b}, {"c", c}}, {{"N", I}});
  ASSERT_TRUE(y.ok()) << y.status();
  ASSERT_EQ((*y)[0].shape(), (std::vector<int64_t>{I, L}));
  for (int64_t i = 0; i < I; ++i) {
    for (int64_t l = 0; l < L; ++l) {
      double want = 0;
      for (int64_t j = 0; j < J; ++j) {
        for (int64_t k = 0; k < K; ++k) {
          want += a.ValueAt(i * J + j) * b.ValueAt(j * K + k) * c.ValueAt(k * L + l);
        }
      }
      EXPECT_NEAR((*y)[0].ValueAt(i * L + l), want, 1e-12);
    }
  }
}

TEST(OnnxEinsum, OneOperandTransposesAndSums) {
  std::mt19937_64 rng(9);
  runtime::Tensor a = Random({2, 3, 4}, rng);
  absl::StatusOr<std::vector<runtime::Tensor>> y =
      RunEinsum(EinsumModel("ijk->ki", {{2, 3, 4}}), {{"a", a}});
  ASSERT_TRUE(y.ok()) << y.status();
  ASSERT_EQ((*y)[0].shape(), (std::vector<int64_t>{4, 2}));
  for (int64_t k = 0; k < 4; ++k) {
    for (int64_t i = 0; i < 2; ++i) {
      double want = 0;
      for (int64_t j = 0; j < 3; ++j) want += a.ValueAt((i * 3 + j) * 4 + k);
      EXPECT_NEAR((*y)[0].ValueAt(k * 2 + i), want, 1e-12);
    }
  }
}

TEST(OnnxEinsum, WhatItCannotDoIsRefusedNamingTheNode) {
  struct Case {
    std::string equation, want;
    absl::StatusCode code;
  };
  const Case cases[] = {
      {"...ij,...jk->...ik", "Einsum with an ellipsis", absl::StatusCode::kUnimplemented},
      {"ii,ij->j", "repeats label 'i' (a diagonal)", absl::StatusCode::kUnimplemented},
      {"ij->", "", absl::StatusCode::kOk},  // must not fire: a full sum is fine
      {"ij,jk,kl->il", "has 3 operands, the node 2 inputs", absl::StatusCode::kInvalidArgument},
      {"ijk,jk->i", "term 'ijk' has 3 labels, input 0 rank 2", absl::StatusCode::kInvalidArgument},
      {"ij,jk->iz", "label 'z' must appear once", absl::StatusCode::kInvalidArgument},
      {"i1,jk->i", "labels are letters", absl::StatusCode::kInvalidArgument},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.equation);
    const std::string inputs = c.equation.substr(0, c.equation.find("->"));
    const int operands = inputs.find(',') == std::string::npos ? 1 : 2;
    std::vector<std::vector<Dim>> dims(operands, {int64_t{3}, int64_t{3}});
    absl::StatusOr<ImportedModel> model =
        ImportFromBytes(EinsumModel(c.equation, dims).Bytes(), "einsum.onnx");
    EXPECT_EQ(model.status().code(), c.code) << model.status();
    if (c.code != absl::StatusCode::kOk) {
      EXPECT_THAT(model.status().message(), HasSubstr("node 'mix' (Einsum)"));
      EXPECT_THAT(model.status().message(), HasSubstr(c.want));
    }
  }
}

}  // namespace
}  // namespace graphjit::onnx
