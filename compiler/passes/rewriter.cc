#include "compiler/passes/rewriter.h"

#include "absl/strings/str_cat.h"
#include "ir/check.h"

namespace graphjit::compiler {

GraphRewriter::GraphRewriter(const ir::Graph& source)
    : source_(source), builder_(source.name()), map_(source.num_nodes(), ir::kInvalidValue) {}

ValueId GraphRewriter::Get(ValueId old_id) const {
  GJ_CHECK(old_id >= 0 && old_id < static_cast<ValueId>(map_.size()))
      << "value %" << old_id << " is not a value of the source graph";
  // A value mapped to a failed Emit is kInvalidValue: the builder then refuses its users
  // too, and Finish() reports the first error.
  GJ_CHECK(map_[old_id] != ir::kInvalidValue || !builder_.status().ok())
      << "value %" << old_id << " used before it was rewritten";
  return map_[old_id];
}

ValueId GraphRewriter::Copy(ValueId old_id) {
  const ir::Node& n = source_.node(old_id);
  std::vector<ValueId> operands;
  operands.reserve(n.operands.size());
  for (ValueId v : n.operands) operands.push_back(Get(v));
  ValueId id = builder_.Add(n.op, operands, n.attrs, n.regions);  // regions are shared
  Map(old_id, id);
  return id;
}

ValueId GraphRewriter::Emit(ir::OpCode op, std::initializer_list<ValueId> operands,
                            ir::Attrs attrs) {
  return builder_.Add(op, absl::Span<const ValueId>(operands.begin(), operands.size()),
                      std::move(attrs));
}

ValueId GraphRewriter::Emit(ir::OpCode op, const std::vector<ValueId>& operands, ir::Attrs attrs,
                            std::vector<std::shared_ptr<const ir::Graph>> regions) {
  return builder_.Add(op, operands, std::move(attrs), std::move(regions));
}

ValueId GraphRewriter::Scalar(double value, ir::DType dtype) {
  return builder_.Scalar(value, dtype);
}

absl::StatusOr<ir::Graph> GraphRewriter::Finish() && {
  for (ValueId out : source_.outputs()) {
    if (!IsMapped(out)) {
      return absl::InternalError(absl::StrCat("rewrite left output %", out, " unmapped"));
    }
    builder_.Output(Get(out));
  }
  return std::move(builder_).Build();
}

std::optional<double> ScalarConstantValue(const ir::Graph& graph, ValueId id) {
  const ir::Node& n = graph.node(id);
  if (n.op == ir::OpCode::kFull) return n.attrs.GetFloat("value");
  if (n.op == ir::OpCode::kConstant) {
    const auto& values = n.attrs.Get<std::vector<double>>("value");
    if (values.size() == 1) return values[0];
  }
  return std::nullopt;
}

std::optional<std::vector<int64_t>> ConstantDims(const ir::Shape& shape) {
  std::vector<int64_t> dims;
  for (const ir::SymExpr& d : shape) {
    std::optional<int64_t> c = d.AsConstant();
    if (!c) return std::nullopt;
    dims.push_back(*c);
  }
  return dims;
}

std::optional<std::vector<int64_t>> KnownParamDims(const ir::Graph& g, ValueId id,
                                                   const PassContext& ctx) {
  const ir::Node& n = g.node(id);
  if (n.op != ir::OpCode::kParam) return std::nullopt;
  std::optional<std::vector<int64_t>> dims = ConstantDims(n.type.shape);
  if (!dims) return std::nullopt;
  auto it = ctx.params.find(n.name());
  if (it == ctx.params.end() || it->second.dtype() != n.type.dtype || it->second.shape() != *dims) {
    return std::nullopt;
  }
  return dims;
}

bool IsKnownTensor(const ir::Graph& g, ValueId id, const PassContext& ctx) {
  const ir::Node& n = g.node(id);
  return (n.op == ir::OpCode::kParam && ctx.params.contains(n.name())) ||
         (n.op == ir::OpCode::kConstant && NumElements(n.type.shape).IsConstant());
}

std::optional<std::pair<std::string, runtime::Tensor>> KnownTensor(const ir::Graph& g, ValueId id,
                                                                   const PassContext& ctx) {
  if (!IsKnownTensor(g, id, ctx)) return std::nullopt;
  const ir::Node& n = g.node(id);
  if (n.op == ir::OpCode::kParam) return std::make_pair(n.name(), ctx.params.at(n.name()));
  std::vector<int64_t> dims;
  for (const ir::SymExpr& d : n.type.shape) dims.push_back(*d.AsConstant());
  absl::StatusOr<runtime::Tensor> t =
      runtime::Tensor::FromDoubles(n.type.dtype, dims, n.attrs.Get<std::vector<double>>("value"));
  if (!t.ok()) return std::nullopt;
  return std::make_pair(absl::StrCat("const", id), *t);
}

}  // namespace graphjit::compiler
