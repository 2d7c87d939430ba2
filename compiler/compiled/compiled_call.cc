#include "compiler/compiled/compiled_call.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/compiled/call_frame.h"
#include "compiler/compiled/kernel_set.h"
#include "ir/check.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

constexpr int64_t kUnset = std::numeric_limits<int64_t>::min();

// Whether the bytes of `t` overlap those of any of `inputs`.
bool OverlapsAny(const runtime::Tensor& t, absl::Span<const runtime::Tensor* const> inputs) {
  if (!t.valid() || t.nbytes() == 0) return false;
  const auto* begin = static_cast<const char*>(t.raw_data());
  const char* end = begin + t.nbytes();
  for (const runtime::Tensor* input : inputs) {
    const runtime::Tensor& in = *input;
    if (!in.valid() || in.nbytes() == 0) continue;
    const auto* in_begin = static_cast<const char*>(in.raw_data());
    if (in_begin < end && begin < in_begin + in.nbytes()) return true;
  }
  return false;
}

}  // namespace

CompiledCall::CompiledCall(const CompiledGraph& graph) : graph_(graph) {
  const ir::Graph& g = graph.graph();
  const Program& p = graph.program();
  auto slot_of = [&](const std::string& name) {
    for (size_t s = 0; s < slots_.size(); ++s) {
      if (slots_[s].name == name) return static_cast<int>(s);
    }
    slots_.push_back({name});
    return static_cast<int>(slots_.size()) - 1;
  };
  for (ir::ValueId id : g.Inputs()) {
    const int input = static_cast<int>(input_ids_.size());
    input_ids_.push_back(id);
    input_types_.push_back(g.type(id));
    input_names_.push_back(g.node(id).name());
    const ir::Shape& shape = g.type(id).shape;
    for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
      std::string name;
      if (std::optional<int64_t> c = shape[axis].AsConstant()) {
        dims_.push_back({input, axis, *c, -1});
      } else if (shape[axis].IsSymbol(&name)) {
        const int s = slot_of(name);
        if (slots_[s].input < 0) slots_[s] = {name, input, axis};
        dims_.push_back({input, axis, 0, s});
      } else {
        fast_ = false;  // a dim like S+1: BindInputs solves and checks it
      }
    }
  }
  for (const std::string& s : p.symbols) program_slot_.push_back(slot_of(s));
  // Profiled graphs time every kernel in CompiledGraph::Run, which the full path calls;
  // a graph with regions runs its pieces there too.
  if (graph.env_profile_ != nullptr || graph.control_ != nullptr) fast_ = false;
  values_.assign(slots_.size(), kUnset);
  symbols_.assign(p.symbols.size(), 0);
  for (const ir::Node& n : g.nodes()) {
    // Gather indices fed by an input are range-checked by name (CheckGatherIndices).
    if (n.op == ir::OpCode::kGather && g.node(n.operands[1]).op == ir::OpCode::kInput) {
      fast_ = false;
    }
  }
  needs_bindings_ = !graph.bounds_.empty() || !p.workspace_bytes.IsConstant();
  constant_workspace_bytes_ = p.workspace_bytes.AsConstant();
  args_.assign(p.num_args, nullptr);
  arg_input_.assign(p.num_args, -1);
  constant_output_dims_.assign(p.num_args, std::nullopt);
  size_t next_constant = 0;
  for (size_t a = 0; a < graph.lowered_.args.size(); ++a) {
    const ArgBinding& arg = graph.lowered_.args[a];
    const ir::ValueType& type = g.type(arg.value);
    if (arg.kind == ArgBinding::Kind::kInput) {
      for (size_t i = 0; i < input_ids_.size(); ++i) {
        if (input_ids_[i] == arg.value) arg_input_[a] = static_cast<int>(i);
      }
      GJ_CHECK(arg_input_[a] >= 0) << "input arg '" << arg.name << "' is not a graph input";
    } else if (arg.kind == ArgBinding::Kind::kConstant) {
      args_[a] = const_cast<void*>(graph.constants_[next_constant++].raw_data());
    } else if (arg.kind == ArgBinding::Kind::kParam) {
      auto it = graph.params_.find(arg.name);
      absl::StatusOr<std::vector<int64_t>> dims = ir::EvaluateShape(type.shape, {});
      if (it == graph.params_.end() || !dims.ok() || it->second.dtype() != type.dtype ||
          it->second.shape() != *dims) {
        fast_ = false;  // missing, mistyped or symbolic: the full checks name it per call
      } else {
        args_[a] = const_cast<void*>(it->second.raw_data());
      }
    } else if (arg.kind == ArgBinding::Kind::kOutput) {
      for (const ir::SymExpr& d : type.shape) needs_bindings_ |= !d.IsConstant();
      absl::StatusOr<std::vector<int64_t>> dims = ir::EvaluateShape(type.shape, {});
      if (dims.ok()) constant_output_dims_[a] = *std::move(dims);
    }
  }
  outputs_.resize(g.outputs().size());
  for (const Slot& s : slots_) bound_[s.name] = 0;
  for (const Slot& s : slots_) bound_values_.push_back(&bound_.at(s.name));
}

bool CompiledCall::BindFast(absl::Span<const runtime::Tensor* const> inputs,
                            const ir::Bindings& bindings) {
  if (inputs.size() != input_ids_.size()) return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::ValueType& type = input_types_[i];
    const runtime::Tensor& in = *inputs[i];
    if (!in.valid() || in.dtype() != type.dtype || in.rank() != type.rank()) return false;
  }
  std::fill(values_.begin(), values_.end(), kUnset);
  for (const DimCheck& d : dims_) {
    const int64_t v = inputs[d.input]->shape()[d.axis];
    if (d.slot < 0) {
      if (v != d.constant) return false;
    } else if (values_[d.slot] == kUnset) {
      values_[d.slot] = v;
    } else if (values_[d.slot] != v) {
      return false;
    }
  }
  if (bindings.empty()) {
    // Every slot must come from an input dim (no name lookups).
    return std::find(values_.begin(), values_.end(), kUnset) == values_.end();
  }
  for (size_t s = 0; s < slots_.size(); ++s) {
    auto it = bindings.find(slots_[s].name);
    if (values_[s] == kUnset) {
      if (it == bindings.end()) return false;  // unbound: the full checks say which
      values_[s] = it->second;
    } else if (it != bindings.end() && it->second != values_[s]) {
      return false;  // a binding contradicting an input dim
    }
  }
  return true;
}

void CompiledCall::UpdateBindings() {
  for (size_t s = 0; s < slots_.size(); ++s) *bound_values_[s] = values_[s];
}

absl::Status CompiledCall::RunFull(absl::Span<const runtime::Tensor* const> inputs,
                                   const ir::Bindings& bindings) {
  if (inputs.size() != input_names_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("expected ", input_names_.size(), " inputs (",
                                                   absl::StrJoin(input_names_, ", "), "), got ",
                                                   inputs.size()));
  }
  runtime::TensorMap named;
  for (size_t i = 0; i < inputs.size(); ++i) named[input_names_[i]] = *inputs[i];
  GJ_ASSIGN_OR_RETURN(outputs_, graph_.Run(named, bindings));
  return absl::OkStatus();
}

void CompiledCall::ExchangeOutputs(absl::Span<runtime::Tensor> tensors) {
  GJ_CHECK(tensors.size() <= outputs_.size()) << "more tensors than outputs";
  for (size_t k = 0; k < tensors.size(); ++k) std::swap(outputs_[k], tensors[k]);
}

absl::Status CompiledCall::Run(absl::Span<const runtime::Tensor> inputs,
                               const ir::Bindings& bindings) {
  // A kept scratch list (Run is not reentrant), so no call allocates once it has grown.
  input_pointers_.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) input_pointers_[i] = &inputs[i];
  return Run(absl::MakeConstSpan(input_pointers_), bindings);
}

absl::Status CompiledCall::Run(absl::Span<const runtime::Tensor* const> inputs,
                               const ir::Bindings& bindings) {
  if (!fast_ || !BindFast(inputs, bindings)) return RunFull(inputs, bindings);
  const ir::Graph& g = graph_.graph();
  const Program& p = graph_.program();
  if (needs_bindings_) UpdateBindings();
  const ir::Bindings& bound = bound_;
  GJ_RETURN_IF_ERROR(graph_.bounds_.Check(bound));
  for (size_t j = 0; j < program_slot_.size(); ++j) symbols_[j] = values_[program_slot_[j]];
  const std::vector<ArgBinding>& args = graph_.lowered_.args;
  for (size_t a = 0; a < args.size(); ++a) {
    const ArgBinding& arg = args[a];
    if (arg.kind == ArgBinding::Kind::kInput) {
      args_[a] = const_cast<void*>(inputs[arg_input_[a]]->raw_data());
    } else if (arg.kind == ArgBinding::Kind::kOutput) {
      runtime::Tensor& out = outputs_[arg.output_index];
      if (arg.donor_arg >= 0) {
        out = *inputs[arg_input_[arg.donor_arg]];  // written in place
      } else {
        const ir::ValueType& type = g.type(arg.value);
        const std::optional<std::vector<int64_t>>& constant = constant_output_dims_[a];
        bool same = out.valid() && out.dtype() == type.dtype && out.rank() == type.rank();
        if (constant) {
          same = same && out.shape() == *constant;
        } else {
          for (int d = 0; same && d < type.rank(); ++d) {
            std::optional<int64_t> c = type.shape[d].AsConstant();
            same = out.shape()[d] == (c ? *c : *type.shape[d].Evaluate(bound));
          }
        }
        // The last call's output passed back as an input (say a loop feeding its result
        // back) must not be written while it is read: kernels assume outputs overlap no
        // input but their donor. It gets a fresh tensor instead.
        same = same && !OverlapsAny(out, inputs);
        if (!same) {
          GJ_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ir::EvaluateShape(type.shape, bound));
          GJ_ASSIGN_OR_RETURN(out, runtime::Tensor::Empty(type.dtype, dims));
        }
      }
      args_[a] = out.raw_data();
    }
  }
  GJ_ASSIGN_OR_RETURN(int64_t bytes, constant_workspace_bytes_
                                         ? absl::StatusOr<int64_t>(*constant_workspace_bytes_)
                                         : p.workspace_bytes.Evaluate(bound));
  if (bytes > workspace_capacity_) {
    const int64_t rounded = (bytes + 63) / 64 * 64;
    void* mem = std::aligned_alloc(64, static_cast<size_t>(rounded));
    if (mem == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat("workspace of ", bytes, " bytes"));
    }
    KernelSet::ClearHeader(static_cast<char*>(mem), rounded);
    workspace_ = std::shared_ptr<char>(static_cast<char*>(mem), std::free);
    workspace_capacity_ = rounded;
  }
  graph_.kernels().Run(args_.data(), symbols_.data(), workspace_.get());
  return absl::OkStatus();
}

}  // namespace graphjit::compiler
