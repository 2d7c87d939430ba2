// GraphRewriter: the common machinery of graph passes. A pass walks the source graph in
// order and, for each node, either copies it (operands remapped) or emits replacement
// nodes and maps the old value to the new one; Finish() wires the outputs and verifies.
#ifndef GRAPHJIT_COMPILER_PASSES_REWRITER_H_
#define GRAPHJIT_COMPILER_PASSES_REWRITER_H_

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/passes/pass_context.h"
#include "ir/builder.h"
#include "ir/graph.h"

namespace graphjit::compiler {

using ir::ValueId;

class GraphRewriter {
 public:
  explicit GraphRewriter(const ir::Graph& source);

  const ir::Graph& source() const { return source_; }
  // The new value standing for old value `old_id` (which must already be mapped; mapped
  // to a failed Emit it is kInvalidValue, which the builder refuses in turn).
  ValueId Get(ValueId old_id) const;
  bool IsMapped(ValueId old_id) const { return map_[old_id] != ir::kInvalidValue; }
  void Map(ValueId old_id, ValueId new_id) { map_[old_id] = new_id; }
  // Copies old node `old_id` (operands remapped), maps it and returns the new value.
  ValueId Copy(ValueId old_id);
  // Appends a new node (type inferred; a failure is kept and reported by Finish()).
  ValueId Emit(ir::OpCode op, std::initializer_list<ValueId> operands, ir::Attrs attrs = {});
  ValueId Emit(ir::OpCode op, const std::vector<ValueId>& operands, ir::Attrs attrs = {},
               std::vector<std::shared_ptr<const ir::Graph>> regions = {});
  // A scalar constant of `dtype`.
  ValueId Scalar(double value, ir::DType dtype);
  // The type of a new value. The reference points into the new graph's node list, which
  // the next Emit or Copy may reallocate: copy what must outlive that.
  const ir::ValueType& type(ValueId new_id) const { return builder_.type(new_id); }
  const ir::Graph& graph() const { return builder_.graph(); }

  // The new graph with the source's outputs (mapped), verified; or the first error.
  absl::StatusOr<ir::Graph> Finish() &&;

 private:
  const ir::Graph& source_;
  ir::GraphBuilder builder_;
  std::vector<ValueId> map_;
};

// The constant scalar value of a `constant` node with one element or a `full` node, if
// `id` is one.
std::optional<double> ScalarConstantValue(const ir::Graph& graph, ValueId id);

// The value of `id` when a pass may read it now: a parameter with a value in ctx.params
// (its name), or a constant with a constant shape (named `const<id>`).
std::optional<std::pair<std::string, runtime::Tensor>> KnownTensor(const ir::Graph& graph,
                                                                   ValueId id,
                                                                   const PassContext& ctx);
// The dims of `shape` when every one is a constant.
std::optional<std::vector<int64_t>> ConstantDims(const ir::Shape& shape);
// The dims of parameter `id` when they are constants and ctx.params holds a value of its
// declared dtype and dims (so a pass may read and transform it); nullopt otherwise.
std::optional<std::vector<int64_t>> KnownParamDims(const ir::Graph& graph, ValueId id,
                                                   const PassContext& ctx);
// Whether KnownTensor finds `id`, without reading its values (weights are large).
bool IsKnownTensor(const ir::Graph& graph, ValueId id, const PassContext& ctx);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_REWRITER_H_
