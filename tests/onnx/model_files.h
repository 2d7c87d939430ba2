// Test models as files, for the APIs that take a path (onnx::ImportSpecialized,
// models::OnnxFunction), and the small integer inputs such models take as values.
#ifndef GRAPHJIT_TESTS_ONNX_MODEL_FILES_H_
#define GRAPHJIT_TESTS_ONNX_MODEL_FILES_H_

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/tensor.h"
#include "tests/onnx/model_builder.h"

namespace graphjit::onnx::testing {

// `m` written to the test's temporary directory as NAME.onnx; its path.
inline std::string WriteModel(const ModelBuilder& m, const std::string& name) {
  const std::string path = ::testing::TempDir() + "/" + name + ".onnx";
  std::ofstream(path, std::ios::binary) << m.Bytes();
  return path;
}

// y = tile(unsqueeze(x, axes), repeats), x f32[3, 4]: axes and repeats are inputs the
// importer needs as values. Written as NAME.onnx; its path.
inline std::string WriteTileModel(const std::string& name) {
  constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT, kI64 = ::onnx::TensorProto::INT64;
  ModelBuilder m;
  m.Input("x", kF32, {int64_t{3}, int64_t{4}})
      .Input("axes", kI64, {int64_t{1}})
      .Input("repeats", kI64, {int64_t{3}})
      .Output("y", kF32);
  m.Node("Unsqueeze", {"x", "axes"}, {"u"});
  m.Node("Tile", {"u", "repeats"}, {"y"});
  return WriteModel(m, name);
}

// An i64 vector input holding `values`.
inline runtime::Tensor I64Values(std::vector<int64_t> values) {
  std::vector<double> v(values.begin(), values.end());
  return *runtime::Tensor::FromDoubles(ir::DType::kI64, {static_cast<int64_t>(values.size())}, v);
}

}  // namespace graphjit::onnx::testing

#endif  // GRAPHJIT_TESTS_ONNX_MODEL_FILES_H_
