#include "compiler/autodiff/autodiff.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/autodiff/grad_rules.h"
#include "compiler/passes/dce.h"
#include "ir/builder.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

using autodiff_internal::GradEmitter;
using ir::ValueId;

// Appends every node of `graph` to `b`, so each keeps its id.
absl::Status CopyNodes(const ir::Graph& graph, ir::GraphBuilder* b) {
  for (ValueId id = 0; id < graph.num_nodes(); ++id) {
    const ir::Node& n = graph.node(id);
    if (b->Add(n.op, n.operands, n.attrs) != id) {
      return b->status().ok() ? absl::InternalError("autodiff: node ids shifted while copying")
                              : b->status();
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ir::Graph> BuildAndPrune(ir::GraphBuilder b) {
  GJ_ASSIGN_OR_RETURN(ir::Graph g, std::move(b).Build());
  if (absl::StatusOr<bool> pruned = Dce(&g); !pruned.ok()) return pruned.status();
  return g;
}

absl::StatusOr<ValueId> FindSource(const ir::Graph& graph, const std::string& name) {
  ValueId id = graph.FindParam(name);
  if (id == ir::kInvalidValue) id = graph.FindInput(name);
  if (id == ir::kInvalidValue) {
    std::vector<std::string> names;
    for (const ir::Node& n : graph.nodes()) {
      if (n.op == ir::OpCode::kParam || n.op == ir::OpCode::kInput) names.push_back(n.name());
    }
    return absl::InvalidArgumentError(absl::StrCat("autodiff: no param or input named '", name,
                                                   "' (have: ", absl::StrJoin(names, ", "), ")"));
  }
  if (!ir::IsFloat(graph.type(id).dtype)) {
    return absl::InvalidArgumentError(absl::StrCat("autodiff: '", name, "' is ",
                                                   ir::TypeToString(graph.type(id)),
                                                   "; only f32 and f64 values have gradients"));
  }
  return id;
}

class Differentiator {
 public:
  Differentiator(const ir::Graph& forward, ValueId loss, std::vector<ValueId> wrt)
      : f_(forward), loss_(loss), wrt_(std::move(wrt)), b_(forward.name() + "_grad"), e_(&b_) {}

  absl::StatusOr<ir::Graph> Run() {
    MarkNeeded();
    GJ_RETURN_IF_ERROR(CopyNodes(f_, &b_));
    std::vector<std::vector<ValueId>> contributions(f_.num_nodes());
    std::vector<ValueId> grad(f_.num_nodes(), ir::kInvalidValue);
    contributions[loss_].push_back(e_.Scalar(1.0, f_.type(loss_).dtype));
    // Reverse topological order: when a node is reached, every user has contributed.
    for (ValueId id = loss_; id >= 0; --id) {
      if (!needed_[id] || contributions[id].empty()) continue;
      ValueId g = contributions[id][0];
      for (size_t i = 1; i < contributions[id].size(); ++i) g = e_.Add(g, contributions[id][i]);
      grad[id] = g;
      const ir::Node& n = f_.node(id);
      std::vector<bool> wanted;
      for (ValueId v : n.operands) wanted.push_back(needed_[v]);
      std::vector<ValueId> grads = autodiff_internal::OperandGradients(e_, f_, id, g, wanted);
      if (!b_.status().ok()) return b_.status();
      for (size_t i = 0; i < grads.size(); ++i) {
        if (grads[i] == ir::kInvalidValue) continue;
        ValueId operand = n.operands[i];
        if (e_.type(grads[i]) != f_.type(operand)) {
          return absl::InternalError(
              absl::StrCat("autodiff: the rule of %", id, " (", ir::OpName(n.op), ") gave ",
                           ir::TypeToString(e_.type(grads[i])), " for operand ", i, " of type ",
                           ir::TypeToString(f_.type(operand))));
        }
        contributions[operand].push_back(grads[i]);
      }
    }
    b_.Output(loss_);
    for (ValueId w : wrt_) {
      b_.Output(grad[w] != ir::kInvalidValue ? grad[w] : e_.Full(0.0, f_.type(w)));
    }
    return BuildAndPrune(std::move(b_));
  }

 private:
  // needed_[v]: v is float, depends on a `wrt` value through float values, and reaches
  // the loss. Only these get gradients.
  void MarkNeeded() {
    const int n = f_.num_nodes();
    std::vector<bool> depends(n, false), reaches(n, false);
    for (ValueId w : wrt_) depends[w] = true;
    for (ValueId id = 0; id < n; ++id) {
      const ir::Node& node = f_.node(id);
      if (!ir::IsFloat(node.type.dtype)) continue;
      for (ValueId v : node.operands) depends[id] = depends[id] || depends[v];
    }
    reaches[loss_] = true;
    for (ValueId id = loss_; id >= 0; --id) {
      if (!reaches[id]) continue;
      for (ValueId v : f_.node(id).operands) reaches[v] = true;
    }
    needed_.assign(n, false);
    for (ValueId id = 0; id < n; ++id) {
      needed_[id] = depends[id] && reaches[id] && ir::IsFloat(f_.type(id).dtype);
    }
  }

  const ir::Graph& f_;
  ValueId loss_;
  std::vector<ValueId> wrt_;
  ir::GraphBuilder b_;
  GradEmitter e_;
  std::vector<bool> needed_;
};

}  // namespace

absl::StatusOr<ir::Graph> BuildGradientGraph(const ir::Graph& forward,
                                             absl::Span<const std::string> wrt, int loss_output) {
  const int num_outputs = static_cast<int>(forward.outputs().size());
  if (loss_output < 0 || loss_output >= num_outputs) {
    return absl::InvalidArgumentError(absl::StrCat("autodiff: loss output ", loss_output,
                                                   " does not exist (graph '", forward.name(),
                                                   "' has ", num_outputs, " outputs)"));
  }
  for (ValueId id = 0; id < forward.num_nodes(); ++id) {
    // A loop's trips would need their values kept for the backward pass: not done, and
    // no gradient is better than a silently zero one.
    if (!forward.node(id).regions.empty()) {
      return absl::UnimplementedError(
          absl::StrCat("autodiff: %", id, " (", ir::OpName(forward.node(id).op),
                       ") is control flow with regions, which autodiff does not differentiate"));
    }
  }
  const ValueId loss = forward.outputs()[loss_output];
  const ir::ValueType& loss_type = forward.type(loss);
  if (loss_type.rank() != 0 || !ir::IsFloat(loss_type.dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("autodiff: the loss must be a scalar f32 or f64, got ",
                     ir::TypeToString(loss_type), " (sum it first: SumOutputToScalar)"));
  }
  std::vector<ValueId> ids;
  for (const std::string& name : wrt) {
    GJ_ASSIGN_OR_RETURN(ValueId id, FindSource(forward, name));
    ids.push_back(id);
  }
  return Differentiator(forward, loss, std::move(ids)).Run();
}

std::vector<std::string> DifferentiableSources(const ir::Graph& graph) {
  std::vector<std::string> names;
  for (const ir::Node& n : graph.nodes()) {
    bool source = n.op == ir::OpCode::kParam || n.op == ir::OpCode::kInput;
    if (source && ir::IsFloat(n.type.dtype)) names.push_back(n.name());
  }
  return names;
}

absl::StatusOr<ir::Graph> SumOutputToScalar(const ir::Graph& graph, int output) {
  if (output < 0 || output >= static_cast<int>(graph.outputs().size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("output ", output, " of graph '", graph.name(), "' does not exist"));
  }
  ir::GraphBuilder b(graph.name());
  GJ_RETURN_IF_ERROR(CopyNodes(graph, &b));
  ValueId v = graph.outputs()[output];
  for (int rank = graph.type(v).rank(); rank > 0; --rank) {
    v = b.Add(ir::OpCode::kReduceSum, {v}, ir::Attrs{{"axis", int64_t{0}}, {"keepdim", false}});
  }
  b.Output(v);
  return BuildAndPrune(std::move(b));
}

}  // namespace graphjit::compiler
