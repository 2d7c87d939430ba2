#include "compiler/autodiff/sgd_step.h"

#include "absl/strings/str_cat.h"
#include "compiler/autodiff/autodiff.h"
#include "ir/builder.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {

absl::StatusOr<SgdStep> BuildSgdStep(const ir::Graph& forward, double learning_rate,
                                     int loss_output) {
  SgdStep step;
  for (ir::ValueId id : forward.Params()) step.params.push_back(forward.node(id).name());
  GJ_ASSIGN_OR_RETURN(ir::Graph grads, BuildGradientGraph(forward, step.params, loss_output));

  // The gradient graph with params turned into inputs of the same name and type.
  ir::GraphBuilder b(forward.name() + "_sgd");
  for (ir::ValueId id = 0; id < grads.num_nodes(); ++id) {
    const ir::Node& n = grads.node(id);
    ir::OpCode op = n.op == ir::OpCode::kParam ? ir::OpCode::kInput : n.op;
    b.Add(op, n.operands, n.attrs);
  }
  const ir::ValueId loss = grads.outputs()[0];
  b.Output(loss);
  const ir::DType dtype = grads.type(loss).dtype;
  ir::ValueId rate = b.Scalar(learning_rate, dtype);
  for (size_t i = 0; i < step.params.size(); ++i) {
    const std::string& name = step.params[i];
    ir::ValueId w = b.graph().FindInput(name);
    if (w == ir::kInvalidValue) {  // the loss does not read it: dce removed it
      const ir::ValueType& t = forward.type(forward.FindParam(name));
      w = b.Input(name, t.dtype, t.shape);
    }
    if (b.type(w).dtype != dtype) {
      return absl::InvalidArgumentError(absl::StrCat("sgd: param '", name, "' is ",
                                                     ir::TypeToString(b.type(w)),
                                                     " but the loss is ", ir::DTypeName(dtype)));
    }
    ir::ValueId update = b.Add(ir::OpCode::kMul, {rate, grads.outputs()[1 + i]});
    b.Output(b.Add(ir::OpCode::kSub, {w, update}));
  }
  GJ_ASSIGN_OR_RETURN(ir::Graph graph, std::move(b).Build());
  step.graph = std::move(graph);
  return step;
}

absl::StatusOr<std::unique_ptr<SgdTrainer>> SgdTrainer::Create(const ir::Graph& forward,
                                                               const runtime::TensorMap& params,
                                                               double learning_rate,
                                                               StepBackend backend) {
  std::unique_ptr<SgdTrainer> t(new SgdTrainer());
  GJ_ASSIGN_OR_RETURN(SgdStep step, BuildSgdStep(forward, learning_rate));
  t->step_ = std::move(step);
  for (const std::string& name : t->step_.params) {
    auto it = params.find(name);
    if (it == params.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("sgd: missing initial value of param '", name, "'"));
    }
    t->params_[name] = it->second.Clone();  // the caller's tensors are never updated
  }
  if (backend == StepBackend::kCompiled) {
    CompileGraphOptions options;
    options.params_are_constant = false;  // the step has no params left, but be explicit
    GJ_ASSIGN_OR_RETURN(t->compiled_, CompiledGraph::Compile(t->step_.graph, {}, options));
  }
  return t;
}

absl::StatusOr<double> SgdTrainer::Step(const runtime::TensorMap& inputs) {
  runtime::TensorMap all = inputs;
  for (const auto& [name, value] : params_) {
    if (all.contains(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("sgd: input '", name, "' has the name of a param"));
    }
    all[name] = value;
  }
  GJ_ASSIGN_OR_RETURN(
      std::vector<runtime::Tensor> out,
      compiled_ != nullptr ? compiled_->Run(all) : runtime::Interpret(step_.graph, all, {}));
  for (size_t i = 0; i < step_.params.size(); ++i) params_[step_.params[i]] = out[1 + i];
  return out[0].ValueAt(0);
}

}  // namespace graphjit::compiler
