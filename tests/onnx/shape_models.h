// Models of the shape computations exporters write, shared by the importer's tests
// (import_test.cc) and the ONNX fuzz target's seeds (fuzz_seeds_test.cc).
#ifndef GRAPHJIT_TESTS_ONNX_SHAPE_MODELS_H_
#define GRAPHJIT_TESTS_ONNX_SHAPE_MODELS_H_

#include <string>

#include "tests/onnx/model_builder.h"

namespace graphjit::onnx::testing {

// torch's expand(n, -1, -1) (ViT's class token) on x: f32[N, M]:
// Expand(tok, Where(Equal([N, -1, -1], -1), 1, [N, -1, -1])) -> f32[N, 1, 4]. With
// `compare_with_dim` the target is compared with M instead of -1, which no range decides.
inline ModelBuilder ExpandOfMinusOnes(bool compare_with_dim) {
  constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;
  ModelBuilder m;
  m.Input("x", kF32, {std::string("N"), std::string("M")}).Output("y", kF32);
  m.Initializer(I64Tensor("zero", {}, {0}));
  m.Initializer(I64Tensor("one", {}, {1}));
  m.Initializer(I64Tensor("axes", {1}, {0}));
  m.Initializer(I64Tensor("minus_ones", {2}, {-1, -1}));
  m.Initializer(I64Tensor("ones", {3}, {1, 1, 1}));
  m.Initializer(I64Tensor("minus_one", {1}, {-1}));
  m.Initializer(F32Tensor("tok", {1, 1, 4}, {0, 1, 2, 3}));
  m.Node("Shape", {"x"}, {"shape"});
  m.Node("Gather", {"shape", "zero"}, {"n"});
  m.Node("Gather", {"shape", "one"}, {"w"});
  m.Node("Unsqueeze", {"n", "axes"}, {"n1"});
  m.Node("Unsqueeze", {"w", "axes"}, {"w1"});
  SetInt(m.Node("Concat", {"n1", "minus_ones"}, {"target"}), "axis", 0);
  m.Node("Equal", {"target", compare_with_dim ? "w1" : "minus_one"}, {"eq"});
  m.Node("Where", {"eq", "ones", "target"}, {"dims"});
  m.Node("Expand", {"tok", "dims"}, {"y"});
  return m;
}

// torch's F.pad lowering of pads [0, 1, 0, 2] (last dim first) on x: f32[N, 5]: a [-1, 2]
// view, a step -1 slice, a transpose and a flatten, then Pad -> f32[N+2, 6].
inline ModelBuilder TorchPadList() {
  constexpr int32_t kF32 = ::onnx::TensorProto::FLOAT;
  ModelBuilder m;
  m.Input("x", kF32, {std::string("N"), int64_t{5}}).Output("y", kF32);
  m.Initializer(I64Tensor("pads4", {4}, {0, 1, 0, 2}));
  m.Initializer(I64Tensor("grid", {2}, {-1, 2}));
  m.Initializer(I64Tensor("start", {1}, {-1}));
  m.Initializer(I64Tensor("end", {1}, {-9223372036854775807}));
  m.Initializer(I64Tensor("axis0", {1}, {0}));
  m.Initializer(I64Tensor("step", {1}, {-1}));
  m.Initializer(I64Tensor("flat", {1}, {-1}));
  m.Node("Reshape", {"pads4", "grid"}, {"pairs"});
  m.Node("Slice", {"pairs", "start", "end", "axis0", "step"}, {"reversed"});
  SetInts(m.Node("Transpose", {"reversed"}, {"t"}), "perm", {1, 0});
  m.Node("Reshape", {"t", "flat"}, {"pads"});
  m.Node("Pad", {"x", "pads"}, {"y"});
  return m;
}

}  // namespace graphjit::onnx::testing

#endif  // GRAPHJIT_TESTS_ONNX_SHAPE_MODELS_H_
