// Small ONNX models built with the protobuf API, for the importer's unit tests.
#ifndef GRAPHJIT_TESTS_ONNX_MODEL_BUILDER_H_
#define GRAPHJIT_TESTS_ONNX_MODEL_BUILDER_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "onnx/onnx_pb.h"

namespace graphjit::onnx::testing {

// A dim: a value, a dim_param name, or unknown (neither).
using Dim = std::variant<int64_t, std::string, std::monostate>;

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 17) {
    model_.set_ir_version(8);
    auto* id = model_.add_opset_import();
    id->set_domain("");
    id->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }

  ModelBuilder& Input(const std::string& name, int32_t elem, const std::vector<Dim>& dims) {
    auto* tt = model_.mutable_graph()->add_input()->mutable_type()->mutable_tensor_type();
    model_.mutable_graph()->mutable_input()->rbegin()->set_name(name);
    tt->set_elem_type(elem);
    auto* shape = tt->mutable_shape();
    for (const Dim& d : dims) {
      auto* dim = shape->add_dim();
      if (auto* v = std::get_if<int64_t>(&d)) dim->set_dim_value(*v);
      if (auto* p = std::get_if<std::string>(&d)) dim->set_dim_param(*p);
    }
    return *this;
  }
  ModelBuilder& Output(const std::string& name, int32_t elem) {
    auto* out = model_.mutable_graph()->add_output();
    out->set_name(name);
    out->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
    return *this;
  }
  ::onnx::NodeProto* Node(const std::string& op, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return n;
  }
  ModelBuilder& Initializer(::onnx::TensorProto t) {
    *model_.mutable_graph()->add_initializer() = std::move(t);
    return *this;
  }
  std::string Bytes() const { return model_.SerializeAsString(); }

 private:
  ::onnx::ModelProto model_;
};

inline ::onnx::TensorProto I64Tensor(const std::string& name, std::vector<int64_t> dims,
                                     std::vector<int64_t> values) {
  ::onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(::onnx::TensorProto::INT64);
  for (int64_t d : dims) t.add_dims(d);
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

inline ::onnx::TensorProto F32Tensor(const std::string& name, std::vector<int64_t> dims,
                                     std::vector<float> values) {
  ::onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(::onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  for (float v : values) t.add_float_data(v);
  return t;
}

inline void SetInt(::onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}

inline void SetInts(::onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

inline void SetString(::onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(v);
}

inline void SetTensor(::onnx::NodeProto* n, const std::string& name, ::onnx::TensorProto t) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::TENSOR);
  *a->mutable_t() = std::move(t);
}

inline void SetFloat(::onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

inline void SetStrings(::onnx::NodeProto* n, const std::string& name,
                       const std::vector<std::string>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRINGS);
  for (const std::string& x : v) a->add_strings(x);
}

// A subgraph attribute (If's branches): `nodes` computing `outputs` from outer values.
inline ::onnx::GraphProto* SetGraph(::onnx::NodeProto* n, const std::string& name,
                                    const std::vector<std::string>& outputs) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  for (const std::string& o : outputs) a->mutable_g()->add_output()->set_name(o);
  return a->mutable_g();
}

inline ::onnx::NodeProto* AddNode(::onnx::GraphProto* g, const std::string& op,
                                  const std::vector<std::string>& inputs,
                                  const std::vector<std::string>& outputs) {
  auto* n = g->add_node();
  n->set_op_type(op);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

}  // namespace graphjit::onnx::testing

#endif  // GRAPHJIT_TESTS_ONNX_MODEL_BUILDER_H_
