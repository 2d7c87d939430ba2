#include "compiler/lower/call_frame.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {

std::vector<runtime::Tensor> ConstantTensors(const ir::Graph& graph, const LoweredGraph& lowered) {
  std::vector<runtime::Tensor> tensors;
  for (const ArgBinding& arg : lowered.args) {
    if (arg.kind != ArgBinding::Kind::kConstant) continue;
    const ir::Node& n = graph.node(arg.value);
    std::vector<int64_t> dims = ir::ValueOrDie(ir::EvaluateShape(n.type.shape, {}));
    tensors.push_back(ir::ValueOrDie(runtime::Tensor::FromDoubles(
        n.type.dtype, dims, n.attrs.Get<std::vector<double>>("value"))));
  }
  return tensors;
}

namespace {

absl::Status CheckGatherIndices(const ir::Graph& graph, const runtime::TensorMap& inputs) {
  for (const ir::Node& n : graph.nodes()) {
    if (n.op != ir::OpCode::kGather) continue;
    const ir::Node& idx = graph.node(n.operands[1]);
    if (idx.op != ir::OpCode::kInput) continue;
    std::optional<int64_t> rows = graph.type(n.operands[0]).shape[0].AsConstant();
    const runtime::Tensor& t = inputs.at(idx.name());
    const int64_t* v = t.data<int64_t>();
    for (int64_t i = 0; rows && i < t.numel(); ++i) {
      if (v[i] < 0 || v[i] >= *rows) {
        return absl::InvalidArgumentError(absl::StrCat("input '", idx.name(), "': gather index ",
                                                       v[i], " at element ", i, " is outside [0, ",
                                                       *rows, ")"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

// Positions bound at call time must keep every access in bounds: compiled code does not
// check as it runs, so a bad P is refused here, as the interpreter's kernels refuse it.
// So is an argmin / argmax over an axis that is empty for these bindings (it has no
// index to return; the shape rule refuses a constant empty axis).
absl::Status CheckDynamicBounds(const ir::Graph& graph, const ir::Bindings& bindings) {
  for (ir::ValueId id = 0; id < graph.num_nodes(); ++id) {
    const ir::Node& n = graph.node(id);
    if (n.op == ir::OpCode::kArgMin || n.op == ir::OpCode::kArgMax) {
      const ir::Shape& in = graph.type(n.operands[0]).shape;
      const int axis = ir::ValueOrDie(
          ir::NormalizeAxis(n.attrs.GetInt("axis"), static_cast<int>(in.size()), ir::OpName(n.op)));
      GJ_ASSIGN_OR_RETURN(int64_t dim, in[axis].Evaluate(bindings));
      if (dim == 0) {
        return absl::InvalidArgumentError(absl::StrCat("%", id, " (", ir::OpName(n.op), "): axis ",
                                                       axis,
                                                       " is empty for these bindings: "
                                                       "there is no index to return"));
      }
      continue;
    }
    if (n.op != ir::OpCode::kKvWrite && n.op != ir::OpCode::kSlice) continue;
    auto eval = [&](const ir::SymExpr& e) { return e.Evaluate(bindings); };
    const ir::Shape& in = graph.type(n.operands[0]).shape;
    absl::StatusOr<int64_t> lo, hi, dim;
    if (n.op == ir::OpCode::kKvWrite) {
      int axis = static_cast<int>(in.size()) - 2;
      lo = eval(n.attrs.GetDim("pos"));
      hi = eval(n.attrs.GetDim("pos") + graph.type(n.operands[1]).shape[axis]);
      dim = eval(in[axis]);
    } else {
      int axis = ir::ValueOrDie(
          ir::NormalizeAxis(n.attrs.GetInt("axis"), static_cast<int>(in.size()), "slice"));
      lo = eval(n.attrs.GetDim("start"));
      hi = eval(n.attrs.GetDim("end"));
      dim = eval(in[axis]);
    }
    for (const auto* v : {&lo, &hi, &dim}) {
      if (!v->ok()) return v->status();
    }
    if (*lo < 0 || *hi < *lo || *hi > *dim) {
      return absl::InvalidArgumentError(absl::StrCat("%", id, " (", ir::OpName(n.op), "): rows [",
                                                     *lo, ", ", *hi, ") are outside [0, ", *dim,
                                                     ") for these bindings"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<CallFrame> PrepareCall(const ir::Graph& graph, const LoweredGraph& lowered,
                                      const runtime::TensorMap& inputs,
                                      const runtime::TensorMap& params,
                                      const std::vector<runtime::Tensor>& constants,
                                      const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(ir::Bindings bound, runtime::BindInputs(graph, inputs, bindings));
  const Program& p = lowered.program;
  CallFrame frame;
  for (const std::string& s : p.symbols) {
    auto it = bound.find(s);
    if (it == bound.end()) {
      return absl::InvalidArgumentError(absl::StrCat("symbol '", s, "' is not bound"));
    }
    frame.symbols.push_back(it->second);
  }
  GJ_RETURN_IF_ERROR(CheckGatherIndices(graph, inputs));
  GJ_RETURN_IF_ERROR(CheckDynamicBounds(graph, bound));
  frame.args.assign(p.num_args, nullptr);
  frame.outputs.resize(graph.outputs().size());
  size_t next_constant = 0;
  for (size_t a = 0; a < lowered.args.size(); ++a) {
    const ArgBinding& arg = lowered.args[a];
    const ir::ValueType& type = graph.type(arg.value);
    switch (arg.kind) {
      case ArgBinding::Kind::kInput:
        frame.args[a] = const_cast<void*>(inputs.at(arg.name).raw_data());
        break;
      case ArgBinding::Kind::kParam: {
        auto it = params.find(arg.name);
        if (it == params.end()) {
          return absl::InvalidArgumentError(absl::StrCat("missing parameter '", arg.name, "'"));
        }
        // A param's dims may mention symbols (bound above), as in the interpreter.
        absl::StatusOr<std::vector<int64_t>> dims = ir::EvaluateShape(type.shape, bound);
        if (it->second.dtype() != type.dtype || !dims.ok() || it->second.shape() != *dims) {
          return absl::InvalidArgumentError(absl::StrCat("parameter '", arg.name, "': expected ",
                                                         ir::TypeToString(type), ", got ",
                                                         it->second.TypeString()));
        }
        frame.args[a] = const_cast<void*>(it->second.raw_data());
        break;
      }
      case ArgBinding::Kind::kConstant:
        frame.args[a] = const_cast<void*>(constants[next_constant++].raw_data());
        break;
      case ArgBinding::Kind::kOutput: {
        runtime::Tensor out;
        if (arg.donor_arg >= 0) {
          // Written in place: the output is the donated input, updated.
          out = inputs.at(lowered.args[arg.donor_arg].name);
        } else {
          GJ_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ir::EvaluateShape(type.shape, bound));
          GJ_ASSIGN_OR_RETURN(out, runtime::Tensor::Empty(type.dtype, dims));
        }
        frame.args[a] = out.raw_data();
        frame.outputs[arg.output_index] = out;
        break;
      }
    }
  }
  // Outputs returned twice share the first copy's tensor.
  for (size_t i = 0; i < frame.outputs.size(); ++i) {
    if (!frame.outputs[i].valid()) return absl::InternalError("output not bound to an arg");
  }
  GJ_ASSIGN_OR_RETURN(int64_t bytes, p.workspace_bytes.Evaluate(bound));
  if (bytes > 0) {
    void* mem = std::aligned_alloc(64, static_cast<size_t>((bytes + 63) / 64 * 64));
    if (mem == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat("workspace of ", bytes, " bytes"));
    }
    frame.workspace = std::shared_ptr<char>(static_cast<char*>(mem), std::free);
  }
  return frame;
}

}  // namespace graphjit::compiler
