// The importer's state while it walks one ONNX graph: what is known of each ONNX value
// (a graph node, a constant, or a folded shape computation), the graph being built, and
// the node being imported, so that op handlers are short and every error names the node.
#ifndef GRAPHJIT_ONNX_CONTEXT_H_
#define GRAPHJIT_ONNX_CONTEXT_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/statusor.h"
#include "ir/builder.h"
#include "onnx/proto_convert.h"
#include "runtime/interpreter.h"

namespace graphjit::onnx {

// What the importer knows of one ONNX value. Known contents (a constant's elements, or a
// shape computation folded at import) stay out of the graph until an op reads them as
// data; Context::Materialize then makes the node.
struct Value {
  int32_t elem_type = 0;  // the ONNX element type
  ir::Shape shape;
  ir::ValueId id = ir::kInvalidValue;  // its node, once there is one
  // A constant (initializer or Constant node): becomes a param of its own name.
  std::optional<runtime::Tensor> constant;
  // Known integer (or bool) elements, row-major, possibly symbolic; the shape is constant.
  std::optional<std::vector<ir::SymExpr>> ints;
  bool graph_input = false;  // an input of the model (not fixed at import)
  // A node of the graph enclosing the region being built (Context::RegionScope), which
  // the region reads only where its loop binds it.
  bool outer_node = false;
};

class Context {
 public:
  Context(ir::GraphBuilder* builder, runtime::TensorMap* params, int64_t opset)
      : b_(builder), params_(params), opset_(opset) {}

  // Values by ONNX name; a value defined while a node is imported is that node's.
  void Define(const std::string& name, Value value) {
    if (node_ != nullptr) producers_[name] = node_;
    values_[name] = std::move(value);
  }
  const Value* Find(const std::string& name) const;
  // The value's node, made on first use: a param for a constant, a constant (or, for
  // symbolic elements, a small computation from the dims) for folded integers.
  absl::StatusOr<ir::ValueId> Materialize(const std::string& name);

  // The node being imported; errors below name it.
  void BeginNode(const pb::NodeProto* node) { node_ = node; }
  const pb::NodeProto& node() const { return *node_; }
  int64_t opset() const { return opset_; }
  // "node 'n' (Relu)" or, for a node without a name, "node with output 'y' (Relu)".
  std::string NodeLabel() const;
  absl::Status Unimplemented(absl::string_view why) const;
  absl::Status Invalid(absl::string_view why) const;

  // A model input (not fixed at import) whose data `name` is computed from, "" if none:
  // the search stops at values known at import (shapes and constants), which depend on
  // dims alone. What a control-flow op whose decision needs data names.
  std::string DataInputBehind(const std::string& name) const;

  // Imports the nodes of a subgraph (a branch or a loop body) into this context, as the
  // importer does the model's (its initializers first), then makes the node being imported
  // current again. Subgraph values see the outer ones by name. Set by the importer, which
  // bounds the nesting.
  using SubgraphImporter = std::function<absl::Status(const pb::GraphProto&)>;
  void SetSubgraphImporter(SubgraphImporter importer) { import_subgraph_ = std::move(importer); }
  absl::Status ImportSubgraph(const pb::GraphProto& graph);

  // While it lives, the context builds a region (ir/regions.h: a loop body) into
  // `region`, a graph of its own, instead of the model's graph: a value defined in it is
  // the region's, an outer value a body reads must be bound first (Bind), and a constant
  // becomes a param of the region. At its end the context's values, params made and
  // builder are what they were before it.
  class RegionScope {
   public:
    RegionScope(Context& ctx, ir::GraphBuilder* region);
    ~RegionScope();
    RegionScope(const RegionScope&) = delete;
    RegionScope& operator=(const RegionScope&) = delete;

   private:
    Context& ctx_;
    ir::GraphBuilder* outer_;
    absl::node_hash_map<std::string, Value> values_;
    absl::flat_hash_map<std::string, ir::ValueId> param_ids_;
    bool in_region_;
  };

  // Whether a RegionScope is building a region now.
  bool in_region() const { return in_region_; }

  // Inputs of the node: optional ones may be absent (missing or named "").
  int num_inputs() const { return node_->input_size(); }
  bool HasInput(int i) const { return i < num_inputs() && !node_->input(i).empty(); }
  absl::StatusOr<const Value*> In(int i) const;
  // InvalidArgument unless the node has between `min` and `max` inputs.
  absl::Status ExpectInputs(int min, int max) const;
  // Input i as a graph node. Its element type must be one graphjit has.
  absl::StatusOr<ir::ValueId> InNode(int i);
  // Input i as an i64 node of indices (INT32 and the other integer types accepted).
  absl::StatusOr<ir::ValueId> InIndexNode(int i);
  // Known integer elements of input i (a shape, axes, pads...); Unimplemented naming the
  // node if they depend on tensor data.
  absl::StatusOr<std::vector<ir::SymExpr>> InInts(int i) const;
  // The same, but every element must be a constant.
  absl::StatusOr<std::vector<int64_t>> InConstInts(int i) const;
  // Elements of a constant input i of any numeric type (scales, a fill value), as doubles;
  // Unimplemented naming the input if it depends on tensor data.
  absl::StatusOr<std::vector<double>> InConstDoubles(int i) const;
  // Known integer elements of a value, if any (constants of at most a few thousand).
  static std::optional<std::vector<ir::SymExpr>> KnownInts(const Value& v);

  // Outputs of the node: `i` may be absent or named "" (not wanted).
  int num_outputs() const { return node_->output_size(); }
  bool WantsOutput(int i) const { return i < num_outputs() && !node_->output(i).empty(); }
  // Output i is `id`; an error if the builder has failed (naming the node). Its ONNX
  // element type is `elem_type`, else that of its dtype, except that an i64 output keeps
  // the node's integer type T: that of its first integer input (data before indices,
  // Where's X). An INT32 output is wrapped to 32 bits unless the op only moves,
  // picks or bounds its input's values (what ONNX's int32 arithmetic does on overflow).
  absl::Status SetOut(int i, ir::ValueId id, std::optional<int32_t> elem_type = std::nullopt);
  // Output i is known integers with a constant shape (folded, no node).
  void SetOutInts(int i, int32_t elem_type, std::vector<int64_t> shape,
                  std::vector<ir::SymExpr> ints);
  void SetOutValue(int i, Value v);

  // Attributes of the node.
  const pb::AttributeProto* Attr(absl::string_view name) const;
  int64_t AttrInt(absl::string_view name, int64_t default_value) const;
  float AttrFloat(absl::string_view name, float default_value) const;
  std::optional<std::vector<int64_t>> AttrInts(absl::string_view name) const;
  std::string AttrString(absl::string_view name, absl::string_view default_value) const;

  // Building: the builder keeps the first error, which SetOut reports.
  ir::GraphBuilder& b() { return *b_; }
  // A broadcasting op (pointwise, where) whose operands have different counts (unbacked
  // symbols, NoteCount) at one position gets an assert_dim on the later operands there: the
  // model says they are equal, the run checks it.
  ir::ValueId Op(ir::OpCode op, absl::Span<const ir::ValueId> operands, ir::Attrs attrs = {});
  // `symbol` is a count a data-dependent op defines (onnx/ops_data_dependent.cc).
  void NoteCount(const std::string& symbol) { counts_.insert(symbol); }
  // A scalar constant of the dtype of `like`.
  ir::ValueId ScalarLike(double value, ir::ValueId like);
  // An i64 [1] node holding the value of `dim` (a symbolic one as the sum of that many ones).
  ir::ValueId DimValue(const ir::SymExpr& dim);
  // The type of a value; after a failed op (kInvalidValue) an empty f32 scalar, so a
  // handler runs on harmlessly until SetOut reports the builder's error.
  const ir::ValueType& type(ir::ValueId id) const;
  absl::Status BuilderStatus() const;

  runtime::TensorMap& params() { return *params_; }

 private:
  // The integer type T of an op computed in i64 (SetOut): INT64 unless an input says.
  int32_t IntegerElemOfNode() const;

  ir::GraphBuilder* b_;
  runtime::TensorMap* params_;
  int64_t opset_;
  const pb::NodeProto* node_ = nullptr;
  // Node-based: a Value* from In() stays valid while outputs are defined.
  absl::node_hash_map<std::string, Value> values_;
  // The node that defined each value (for DataInputBehind).
  absl::flat_hash_map<std::string, const pb::NodeProto*> producers_;
  SubgraphImporter import_subgraph_;
  absl::flat_hash_map<std::string, ir::ValueId> param_ids_;  // params made by Materialize
  bool in_region_ = false;                                   // inside a RegionScope
  absl::flat_hash_set<std::string> counts_;                  // NoteCount's symbols
};

}  // namespace graphjit::onnx

#endif  // GRAPHJIT_ONNX_CONTEXT_H_
