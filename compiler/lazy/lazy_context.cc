#include "compiler/lazy/lazy_context.h"

#include "absl/strings/str_cat.h"
#include "compiler/compiled/graph_key.h"
#include "ir/printer.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {

using frontend::Value;

// What a Value of this context refers to: a computed tensor, or a node of the graph being
// recorded (in epoch `epoch`). Owned by the Value handles, so it dies with the last one.
struct LazyContext::Slot {
  ir::ValueType type;
  std::optional<runtime::Tensor> tensor;
  ir::ValueId node = ir::kInvalidValue;
  int epoch = -1;
};

LazyContext::LazyContext(runtime::TensorMap inputs, runtime::TensorMap params,
                         std::shared_ptr<GraphStore> store, const CompileEnv* env)
    : inputs_(std::move(inputs)),
      params_(std::move(params)),
      builder_(std::make_unique<ir::GraphBuilder>("lazy")),
      store_(store != nullptr ? std::move(store) : GraphStore::Default()),
      env_(env != nullptr ? env : &CompileEnv::FromEnvironment()) {}

LazyContext::~LazyContext() = default;

Value LazyContext::NewValue(std::shared_ptr<Slot> slot) {
  slots_.push_back(slot);
  return Value(this, static_cast<ir::ValueId>(slots_.size() - 1), std::move(slot));
}

Value LazyContext::Tensor(const runtime::Tensor& t) {
  auto slot = std::make_shared<Slot>();
  slot->type = {t.dtype(), ir::ConstShape(t.shape())};
  slot->tensor = t;
  return NewValue(std::move(slot));
}

Value LazyContext::Input(absl::string_view name) {
  auto it = inputs_.find(name);
  if (it == inputs_.end()) {
    RecordError(absl::InvalidArgumentError(absl::StrCat("missing input '", name, "'")));
    return Value();
  }
  return Tensor(it->second);
}

Value LazyContext::Param(absl::string_view name) {
  auto it = params_.find(name);
  if (it == params_.end()) {
    RecordError(absl::InvalidArgumentError(absl::StrCat("missing parameter '", name, "'")));
    return Value();
  }
  return Tensor(it->second);
}

const ir::ValueType& LazyContext::TypeOf(ir::ValueId id) const {
  std::shared_ptr<Slot> slot = slots_[id].lock();
  // A Value handle keeps its slot alive, so a live handle always finds it.
  GJ_CHECK(slot != nullptr) << "lazy value " << id << " used after its last handle died";
  return slot->type;
}

ir::ValueId LazyContext::NodeFor(const std::shared_ptr<Slot>& slot) {
  if (!slot->tensor.has_value()) return slot->node;
  auto [it, inserted] = input_nodes_.try_emplace(slot.get(), ir::kInvalidValue);
  if (inserted) {
    // Inputs are named by order of first use, so equal computations on different data
    // record equal graphs (and share compiled code).
    it->second = builder_->Input(absl::StrCat("in", graph_inputs_.size()), slot->type.dtype,
                                 slot->type.shape);
    graph_inputs_.push_back(slot);
  }
  return it->second;
}

Value LazyContext::Emit(ir::OpCode op, absl::Span<const Value> operands, ir::Attrs attrs) {
  if (!status().ok() || !CheckOperands(op, operands)) return Value();
  std::vector<ir::ValueId> nodes;
  for (const Value& v : operands) {
    std::shared_ptr<Slot> slot = slots_[v.id()].lock();
    GJ_CHECK(slot != nullptr) << "live handle without a slot";
    nodes.push_back(NodeFor(slot));
  }
  ir::ValueId id = builder_->Add(op, nodes, std::move(attrs));
  if (id == ir::kInvalidValue) {
    // Reported here, at the op that failed, not later when a value is materialized.
    RecordError(builder_->status());
    return Value();
  }
  auto slot = std::make_shared<Slot>();
  slot->type = builder_->type(id);
  slot->node = id;
  slot->epoch = epoch_;
  return NewValue(std::move(slot));
}

int LazyContext::pending_ops() const { return builder_->graph().NumComputeNodes(); }

absl::Status LazyContext::Cut() {
  // Outputs: every pending value some handle still holds.
  std::vector<std::shared_ptr<Slot>> live;
  for (const std::weak_ptr<Slot>& weak : slots_) {
    std::shared_ptr<Slot> s = weak.lock();
    if (s != nullptr && !s->tensor.has_value() && s->epoch == epoch_) live.push_back(s);
  }
  GraphBreak record;
  record.ops = builder_->graph().NumComputeNodes();
  record.outputs = static_cast<int>(live.size());
  if (!live.empty()) {
    for (const auto& s : live) builder_->Output(s->node);
    GJ_ASSIGN_OR_RETURN(ir::Graph graph, std::move(*builder_).Build());
    // Inputs are named by order of first use, so equal computations on different data
    // record equal graphs: the same content key, the same code.
    const ContentKey key = GraphContentKey(graph, {}, {});
    auto it = code_.find(key);
    if (it == code_.end()) {
      bool compiled = false;
      GJ_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledGraph> code,
                          store_->GetOrCompile(
                              key,
                              [&] {
                                CompileGraphOptions options;
                                options.env = env_;
                                return CompiledGraph::Compile(graph, {}, options);
                              },
                              &compiled));
      it = code_.emplace(key, std::move(code)).first;
      compiles_ += compiled ? 1 : 0;
      record.compiled = compiled;
    }
    runtime::TensorMap in;
    for (size_t i = 0; i < graph_inputs_.size(); ++i) {
      in[absl::StrCat("in", i)] = *graph_inputs_[i]->tensor;
    }
    GJ_ASSIGN_OR_RETURN(std::vector<runtime::Tensor> out, it->second->Run(in));
    for (size_t i = 0; i < live.size(); ++i) live[i]->tensor = out[i];
  }
  graphs_.push_back(record);
  // Start the next graph; handles that died leave expired slots behind, dropped here.
  ++epoch_;
  builder_ = std::make_unique<ir::GraphBuilder>("lazy");
  graph_inputs_.clear();
  input_nodes_.clear();
  return absl::OkStatus();
}

absl::StatusOr<runtime::Tensor> LazyContext::Materialize(const Value& v) {
  if (!status().ok()) return status();
  if (!v.valid() || v.context() != this) {
    return absl::InvalidArgumentError("materialize: not a valid value of this lazy context");
  }
  std::shared_ptr<Slot> slot = slots_[v.id()].lock();
  GJ_RETURN_IF_ERROR(Cut());
  return *slot->tensor;
}

absl::StatusOr<double> LazyContext::Item(const Value& v) {
  GJ_ASSIGN_OR_RETURN(runtime::Tensor t, Materialize(v));
  if (t.numel() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("item: value has ", t.numel(), " elements (", t.TypeString(), "), not 1"));
  }
  return t.ValueAt(0);
}

}  // namespace graphjit::compiler
