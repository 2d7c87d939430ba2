#include "compiler/compiled/call_frame.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "compiler/compiled/kernel_set.h"
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

// Workspaces up to this size are kept per thread and reused by the next call on that
// thread; larger ones are allocated per call, so a thread never holds a huge one for good.
// A workspace allocated per call is fresh memory from the kernel (glibc maps large blocks
// and unmaps them on free): every page faults again and is zeroed on first touch. For
// the OCR recognizer at W = 640 (a workspace of tens of MB) that cost more per call than
// some of its convolutions, in the kernels that happened to touch the pages first.
constexpr int64_t kKeptWorkspaceBytes = int64_t{256} << 20;

absl::StatusOr<std::shared_ptr<char>> Allocate(int64_t bytes) {
  void* mem = std::aligned_alloc(64, static_cast<size_t>((bytes + 63) / 64 * 64));
  if (mem == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat("workspace of ", bytes, " bytes"));
  }
  KernelSet::ClearHeader(static_cast<char*>(mem), bytes);
  return std::shared_ptr<char>(static_cast<char*>(mem), std::free);
}

// A workspace of at least `bytes`. Calls on one thread run one after another, so the
// thread's kept workspace is free again when the frame that held it is gone (use_count
// 1); a frame still alive (a nested or kept call) gets a workspace of its own. Reusing
// it saves the allocation per call and keeps the workspace warm in the caches.
absl::StatusOr<std::shared_ptr<char>> Workspace(int64_t bytes) {
  if (bytes > kKeptWorkspaceBytes) return Allocate(bytes);
  thread_local std::shared_ptr<char> kept;
  thread_local int64_t kept_bytes = 0;
  if (kept != nullptr && kept.use_count() > 1) return Allocate(bytes);
  if (bytes > kept_bytes) {
    GJ_ASSIGN_OR_RETURN(kept, Allocate(bytes));
    kept_bytes = bytes;
  }
  return kept;
}

// Gather indices that come straight from an input, against the table's rows for this
// call (a symbolic row count included: S = 0 leaves no valid index).
absl::Status CheckGatherIndices(const ir::Graph& graph, const runtime::TensorMap& inputs,
                                const ir::Bindings& bindings) {
  for (const ir::Node& n : graph.nodes()) {
    if (n.op != ir::OpCode::kGather) continue;
    const ir::Node& idx = graph.node(n.operands[1]);
    if (idx.op != ir::OpCode::kInput) continue;
    GJ_ASSIGN_OR_RETURN(const int64_t rows, graph.type(n.operands[0]).shape[0].Evaluate(bindings));
    const runtime::Tensor& t = inputs.at(idx.name());
    const int64_t* v = t.data<int64_t>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (v[i] < 0 || v[i] >= rows) {
        return absl::InvalidArgumentError(absl::StrCat("input '", idx.name(), "': gather index ",
                                                       v[i], " at element ", i, " is outside [0, ",
                                                       rows, ")"));
      }
    }
  }
  return absl::OkStatus();
}

// Whether `t` has `type` for these bindings, checked dim by dim: no vector is built for
// the shapes params have, which every call checks.
bool HasType(const runtime::Tensor& t, const ir::ValueType& type, const ir::Bindings& bound) {
  if (t.dtype() != type.dtype || t.shape().size() != type.shape.size()) return false;
  for (size_t i = 0; i < type.shape.size(); ++i) {
    absl::StatusOr<int64_t> dim = type.shape[i].Evaluate(bound);
    if (!dim.ok() || *dim != t.shape()[i]) return false;
  }
  return true;
}

}  // namespace

DynamicBounds::DynamicBounds(const ir::Graph& graph) {
  for (ir::ValueId id = 0; id < graph.num_nodes(); ++id) {
    const ir::Node& n = graph.node(id);
    if (n.op != ir::OpCode::kArgMin && n.op != ir::OpCode::kArgMax &&
        n.op != ir::OpCode::kKvWrite && n.op != ir::OpCode::kGather && n.op != ir::OpCode::kSlice &&
        n.op != ir::OpCode::kWindow) {
      continue;
    }
    const ir::Shape& in = graph.type(n.operands[0]).shape;
    const int rank = static_cast<int>(in.size());
    if (n.op == ir::OpCode::kArgMin || n.op == ir::OpCode::kArgMax) {
      // An empty axis has no index to return (the shape rule refuses a constant one).
      const int axis =
          ir::ValueOrDie(ir::NormalizeAxis(n.attrs.GetInt("axis"), rank, ir::OpName(n.op)));
      checks_.push_back({id, n.op, 0, 0, in[axis], axis});
    } else if (n.op == ir::OpCode::kKvWrite) {
      const int axis = rank - 2;
      const ir::SymExpr& pos = n.attrs.GetDim("pos");
      checks_.push_back({id, n.op, pos, pos + graph.type(n.operands[1]).shape[axis], in[axis]});
    } else if (n.op == ir::OpCode::kGather) {
      // Computed indices cannot be checked before the run; the kernel clamps them into
      // the table, which needs a row to clamp to.
      checks_.push_back({id, n.op, 0, ir::NumElements(n.type.shape), in[0]});
    } else if (n.op == ir::OpCode::kSlice) {
      const int axis = ir::ValueOrDie(ir::NormalizeAxis(n.attrs.GetInt("axis"), rank, "slice"));
      checks_.push_back({id, n.op, n.attrs.GetDim("start"), n.attrs.GetDim("end"), in[axis]});
    } else if (n.op == ir::OpCode::kWindow) {
      // A symbolic dim may be shorter than the window's span (the shape rule checks
      // constant ones): the window would have a negative count of positions.
      const auto& kernel = n.attrs.Get<std::vector<int64_t>>("kernel");
      const auto& dilations = n.attrs.Get<std::vector<int64_t>>("dilations");
      const int batch = rank - static_cast<int>(kernel.size());
      for (size_t i = 0; i < kernel.size(); ++i) {
        const ir::SymExpr& dim = in[batch + i];
        if (dim.AsConstant()) continue;
        checks_.push_back(
            {id, n.op, 0, dilations[i] * (kernel[i] - 1) + 1, dim, batch + static_cast<int>(i)});
      }
    }
  }
}

absl::Status DynamicBounds::Check(const ir::Bindings& bindings) const {
  for (const Range& r : checks_) {
    if (r.op == ir::OpCode::kArgMin || r.op == ir::OpCode::kArgMax) {
      GJ_ASSIGN_OR_RETURN(const int64_t dim, r.dim.Evaluate(bindings));
      if (dim == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("%", r.id, " (", ir::OpName(r.op), "): axis ", r.axis,
                         " is empty for these bindings: there is no index to return"));
      }
      continue;
    }
    if (r.op == ir::OpCode::kGather) {
      GJ_ASSIGN_OR_RETURN(const int64_t rows, r.dim.Evaluate(bindings));
      GJ_ASSIGN_OR_RETURN(const int64_t elements, r.hi.Evaluate(bindings));
      if (rows == 0 && elements > 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("%", r.id,
                         " (gather): the table has no rows for these bindings, so no "
                         "index is in range"));
      }
      continue;
    }
    if (r.op == ir::OpCode::kWindow) {
      GJ_ASSIGN_OR_RETURN(const int64_t dim, r.dim.Evaluate(bindings));
      GJ_ASSIGN_OR_RETURN(const int64_t span, r.hi.Evaluate(bindings));
      if (dim < span) {
        return absl::InvalidArgumentError(
            absl::StrCat("%", r.id, " (window): dim ", r.axis, " is ", dim,
                         " for these bindings, shorter than the window's span ", span));
      }
      continue;
    }
    GJ_ASSIGN_OR_RETURN(const int64_t lo, r.lo.Evaluate(bindings));
    GJ_ASSIGN_OR_RETURN(const int64_t hi, r.hi.Evaluate(bindings));
    GJ_ASSIGN_OR_RETURN(const int64_t dim, r.dim.Evaluate(bindings));
    if (lo < 0 || hi < lo || hi > dim) {
      return absl::InvalidArgumentError(absl::StrCat("%", r.id, " (", ir::OpName(r.op), "): rows [",
                                                     lo, ", ", hi, ") are outside [0, ", dim,
                                                     ") for these bindings"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<CallFrame> PrepareCall(const ir::Graph& graph, const LoweredGraph& lowered,
                                      const runtime::TensorMap& inputs,
                                      const runtime::TensorMap& params,
                                      const std::vector<runtime::Tensor>& constants,
                                      const ir::Bindings& bindings, const DynamicBounds* bounds) {
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
  GJ_RETURN_IF_ERROR(CheckGatherIndices(graph, inputs, bound));
  GJ_RETURN_IF_ERROR(bounds != nullptr ? bounds->Check(bound) : DynamicBounds(graph).Check(bound));
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
        if (!HasType(it->second, type, bound)) {
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
    GJ_ASSIGN_OR_RETURN(frame.workspace, Workspace(bytes));
  }
  return frame;
}

}  // namespace graphjit::compiler
