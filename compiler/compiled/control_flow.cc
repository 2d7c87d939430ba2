#include "compiler/compiled/control_flow.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "compiler/compiled/compiled_call.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/orc/phase_timings.h"
#include "ir/builder.h"
#include "ir/status_macros.h"
#include "runtime/eager.h"

namespace graphjit::compiler {

// A straight-line stretch of the graph, compiled on its own: its inputs are the values
// defined before it (named `v<id>`), its outputs the values it defines that later steps
// or the graph's outputs read. Sources it reads (params, constants) are its own nodes.
struct ControlFlow::Piece {
  std::unique_ptr<CompiledGraph> code;
  std::vector<ir::ValueId> inputs;
  std::vector<ir::ValueId> outputs;
};

// A while node and its compiled regions; `*_operand[i]` is the operand that compiled
// region input i takes (the compiled graph's input order is by name).
struct ControlFlow::Loop {
  ir::ValueId node = ir::kInvalidValue;
  int64_t carried = 0;
  int64_t max_trips = 0;
  std::unique_ptr<CompiledGraph> cond, body;
  std::vector<int> cond_operand, body_operand;
  // The loop_result nodes reading this loop: (node, carried index).
  std::vector<std::pair<ir::ValueId, int64_t>> results;
};

// An if node and its compiled branches; `operand[i]` is the operand (after the
// condition) that compiled branch input i takes, per branch.
struct ControlFlow::Branch {
  ir::ValueId node = ir::kInvalidValue;
  std::unique_ptr<CompiledGraph> code[2];
  std::vector<int> operand[2];
};

// A scan node and its compiled body; the loop_result and scan_output nodes reading it.
struct ControlFlow::ScanLoop {
  ir::ValueId node = ir::kInvalidValue;
  int64_t carried = 0, scanned = 0;
  std::unique_ptr<CompiledGraph> body;
  std::vector<int> body_operand;
  std::vector<std::pair<ir::ValueId, int64_t>> results;  // (node, carried index)
  std::vector<std::pair<ir::ValueId, int64_t>> outputs;  // (node, per-row index)
};

namespace {

std::string PieceInputName(ir::ValueId id) { return absl::StrCat("v", id); }

bool IsRegionOp(ir::OpCode op) { return ir::LoweringOf(op) == ir::OpLowering::kRegion; }

// A node that ends a piece: control flow, or a data-dependent op.
bool IsStepOp(ir::OpCode op) { return IsRegionOp(op) || ir::IsRuntimeOp(op); }

// For each input of compiled region `code` (in its call order), the operand it takes: the
// region's inputs take the operands in graph order, matched by name.
absl::StatusOr<std::vector<int>> OperandOrder(const ir::Graph& region, const CompiledGraph& code) {
  absl::flat_hash_map<std::string, int> index;
  const std::vector<ir::ValueId> inputs = region.Inputs();
  for (size_t k = 0; k < inputs.size(); ++k) {
    index[region.node(inputs[k]).name()] = static_cast<int>(k);
  }
  std::vector<int> order;
  for (ir::ValueId id : code.graph().Inputs()) {
    auto it = index.find(code.graph().node(id).name());
    if (it == index.end()) {
      return absl::InternalError(absl::StrCat("region ", region.name(), ": compiled input '",
                                              code.graph().node(id).name(), "' is not its input"));
    }
    order.push_back(it->second);
  }
  return order;
}

// The graph of piece `nodes` (ids of `g`, in order): see Piece.
absl::StatusOr<ir::Graph> PieceGraph(const ir::Graph& g, const std::vector<ir::ValueId>& nodes,
                                     const std::vector<bool>& in_piece,
                                     const std::vector<std::vector<ir::ValueId>>& users,
                                     std::vector<ir::ValueId>* inputs,
                                     std::vector<ir::ValueId>* outputs) {
  ir::GraphBuilder b(absl::StrCat(g.name(), ".piece", nodes.front()));
  std::vector<ir::ValueId> map(g.num_nodes(), ir::kInvalidValue);
  auto get = [&](ir::ValueId v) {
    if (map[v] != ir::kInvalidValue) return map[v];
    const ir::Node& n = g.node(v);
    if (ir::IsSourceOp(n.op) && n.op != ir::OpCode::kInput) {
      map[v] = b.Add(n.op, {}, n.attrs);  // a param by name, a constant as it is
    } else {
      inputs->push_back(v);
      map[v] = b.Input(PieceInputName(v), n.type.dtype, n.type.shape);
    }
    return map[v];
  };
  for (ir::ValueId id : nodes) {
    const ir::Node& n = g.node(id);
    std::vector<ir::ValueId> operands;
    for (ir::ValueId v : n.operands) operands.push_back(get(v));
    map[id] = b.Add(n.op, operands, n.attrs);
  }
  for (ir::ValueId id : nodes) {
    bool read_later = false;
    for (ir::ValueId u : users[id]) read_later |= u >= g.num_nodes() || !in_piece[u];
    if (read_later) {
      outputs->push_back(id);
      b.Output(map[id]);
    }
  }
  return std::move(b).Build();
}

}  // namespace

ControlFlow::~ControlFlow() = default;

absl::StatusOr<std::unique_ptr<ControlFlow>> ControlFlow::Compile(
    const ir::Graph& graph, const runtime::TensorMap& params, const CompileGraphOptions& options) {
  std::unique_ptr<ControlFlow> cf(new ControlFlow());
  cf->graph_ = graph;
  const std::vector<std::vector<ir::ValueId>> users = graph.Users();
  std::vector<bool> in_piece(graph.num_nodes(), false);
  std::vector<ir::ValueId> stretch;
  absl::flat_hash_map<ir::ValueId, int> loop_of, scan_of;
  auto close_piece = [&]() -> absl::Status {
    if (stretch.empty()) return absl::OkStatus();
    Piece piece;
    GJ_ASSIGN_OR_RETURN(ir::Graph g,
                        PieceGraph(graph, stretch, in_piece, users, &piece.inputs, &piece.outputs));
    for (ir::ValueId id : stretch) in_piece[id] = false;
    stretch.clear();
    if (piece.outputs.empty()) return absl::OkStatus();  // nothing reads it
    GJ_ASSIGN_OR_RETURN(piece.code, CompiledGraph::Compile(g, params, options));
    cf->steps_.push_back({Step::kPiece, static_cast<int>(cf->pieces_.size())});
    cf->pieces_.push_back(std::move(piece));
    return absl::OkStatus();
  };
  for (ir::ValueId id = 0; id < graph.num_nodes(); ++id) {
    const ir::Node& n = graph.node(id);
    if (ir::IsSourceOp(n.op)) continue;
    if (!IsStepOp(n.op)) {
      stretch.push_back(id);
      in_piece[id] = true;
      continue;
    }
    GJ_RETURN_IF_ERROR(close_piece());
    if (ir::IsRuntimeOp(n.op)) {
      cf->steps_.push_back({Step::kRuntime, id});
      continue;
    }
    if (n.op == ir::OpCode::kLoopResult || n.op == ir::OpCode::kScanOutput) {
      const int64_t index = n.attrs.GetInt("index");
      if (auto it = scan_of.find(n.operands[0]); it != scan_of.end()) {
        auto& list = n.op == ir::OpCode::kLoopResult ? cf->scans_[it->second].results
                                                     : cf->scans_[it->second].outputs;
        list.emplace_back(id, index);
      } else {
        cf->loops_[loop_of.at(n.operands[0])].results.emplace_back(id, index);
      }
      continue;
    }
    if (n.op == ir::OpCode::kScan) {
      ScanLoop scan;
      scan.node = id;
      scan.carried = n.attrs.GetInt("carried");
      scan.scanned = n.attrs.GetInt("scanned");
      GJ_ASSIGN_OR_RETURN(scan.body, CompiledGraph::Compile(*n.regions[0], params, options));
      GJ_ASSIGN_OR_RETURN(scan.body_operand, OperandOrder(*n.regions[0], *scan.body));
      scan_of[id] = static_cast<int>(cf->scans_.size());
      cf->steps_.push_back({Step::kScan, static_cast<int>(cf->scans_.size())});
      cf->scans_.push_back(std::move(scan));
      continue;
    }
    if (n.op == ir::OpCode::kIf) {
      Branch branch;
      branch.node = id;
      for (int b = 0; b < 2; ++b) {
        GJ_ASSIGN_OR_RETURN(branch.code[b], CompiledGraph::Compile(*n.regions[b], params, options));
        GJ_ASSIGN_OR_RETURN(branch.operand[b], OperandOrder(*n.regions[b], *branch.code[b]));
      }
      cf->steps_.push_back({Step::kIf, static_cast<int>(cf->branches_.size())});
      cf->branches_.push_back(std::move(branch));
      continue;
    }
    Loop loop;
    loop.node = id;
    loop.carried = n.attrs.GetInt("carried");
    loop.max_trips = n.attrs.Has("max_trips") ? n.attrs.GetInt("max_trips")
                                              : std::numeric_limits<int64_t>::max();
    GJ_ASSIGN_OR_RETURN(loop.cond, CompiledGraph::Compile(*n.regions[0], params, options));
    GJ_ASSIGN_OR_RETURN(loop.body, CompiledGraph::Compile(*n.regions[1], params, options));
    GJ_ASSIGN_OR_RETURN(loop.cond_operand, OperandOrder(*n.regions[0], *loop.cond));
    GJ_ASSIGN_OR_RETURN(loop.body_operand, OperandOrder(*n.regions[1], *loop.body));
    loop_of[id] = static_cast<int>(cf->loops_.size());
    cf->steps_.push_back({Step::kLoop, static_cast<int>(cf->loops_.size())});
    cf->loops_.push_back(std::move(loop));
  }
  GJ_RETURN_IF_ERROR(close_piece());
  for (ir::ValueId id = 0; id < graph.num_nodes(); ++id) {
    const ir::OpCode op = graph.node(id).op;
    if (!ir::IsSourceOp(op) || op == ir::OpCode::kInput) continue;
    bool outside = false;
    for (ir::ValueId u : users[id]) {
      outside |= u >= graph.num_nodes() || IsStepOp(graph.node(u).op);
    }
    if (outside) cf->outer_sources_.push_back(id);
  }
  return cf;
}

absl::StatusOr<std::vector<runtime::Tensor>> ControlFlow::Run(
    const runtime::TensorMap& inputs, const ir::Bindings& bindings,
    const runtime::TensorMap& params) const {
  GJ_ASSIGN_OR_RETURN(ir::Bindings bound, runtime::BindInputs(graph_, inputs, bindings));
  std::vector<runtime::Tensor> values(graph_.num_nodes());
  // The inputs as given; the params and constants read outside the pieces (by a loop or
  // a branch, or as outputs: the pieces hold their own), made now (symbolic shapes).
  for (ir::ValueId id : graph_.Inputs()) values[id] = inputs.at(graph_.node(id).name());
  for (ir::ValueId id : outer_sources_) {
    const ir::Node& n = graph_.node(id);
    if (n.op == ir::OpCode::kParam) {
      auto it = params.find(n.name());
      if (it == params.end()) {
        return absl::InvalidArgumentError(absl::StrCat("missing parameter '", n.name(), "'"));
      }
      values[id] = it->second;
    } else {
      GJ_ASSIGN_OR_RETURN(values[id], runtime::EvalNode(n, {}, bound));
    }
  }
  for (const Step& step : steps_) {
    if (step.kind == Step::kLoop) {
      GJ_RETURN_IF_ERROR(RunLoop(loops_[step.index], values, bound));
      continue;
    }
    if (step.kind == Step::kIf) {
      GJ_RETURN_IF_ERROR(RunBranch(branches_[step.index], values, bound));
      continue;
    }
    if (step.kind == Step::kScan) {
      GJ_RETURN_IF_ERROR(RunScan(scans_[step.index], values, bound));
      continue;
    }
    if (step.kind == Step::kRuntime) {
      const ir::Node& n = graph_.node(step.index);
      std::vector<const runtime::Tensor*> args;
      for (ir::ValueId v : n.operands) args.push_back(&values[v]);
      absl::StatusOr<runtime::Tensor> out = runtime::EvalNode(n, args, bound);
      if (!out.ok()) {
        return absl::Status(out.status().code(),
                            absl::StrCat("%", step.index, ": ", out.status().message()));
      }
      runtime::BindDefinedSymbol(n, *out, &bound);
      values[step.index] = *std::move(out);
      continue;
    }
    const Piece& piece = pieces_[step.index];
    runtime::TensorMap named;
    for (ir::ValueId v : piece.inputs) named[PieceInputName(v)] = values[v];
    GJ_ASSIGN_OR_RETURN(std::vector<runtime::Tensor> out, piece.code->Run(named, bound));
    for (size_t k = 0; k < out.size(); ++k) values[piece.outputs[k]] = std::move(out[k]);
  }
  std::vector<runtime::Tensor> outputs;
  for (ir::ValueId v : graph_.outputs()) outputs.push_back(values[v]);
  return outputs;
}

absl::Status ControlFlow::RunLoop(const Loop& loop, std::vector<runtime::Tensor>& values,
                                  const ir::Bindings& bound) const {
  const ir::Node& n = graph_.node(loop.node);
  // The carried values are this loop's own buffers (the operands may be the caller's
  // inputs or weights, which the body's code must not write); the invariants are read
  // where they are.
  std::vector<runtime::Tensor> state;
  for (size_t k = 0; k < n.operands.size(); ++k) {
    const runtime::Tensor& operand = values[n.operands[k]];
    state.push_back(static_cast<int64_t>(k) < loop.carried ? operand.Clone() : operand);
  }
  std::vector<const runtime::Tensor*> cond_in, body_in;
  for (int k : loop.cond_operand) cond_in.push_back(&state[k]);
  for (int k : loop.body_operand) body_in.push_back(&state[k]);
  CompiledCall cond(*loop.cond), body(*loop.body);
  for (int64_t trip = 0; trip < loop.max_trips; ++trip) {
    if (absl::Status s = cond.Run(cond_in, bound); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("while %", loop.node, " cond: ", s.message()));
    }
    if (!cond.outputs()[0].data<bool>()[0]) break;
    if (absl::Status s = body.Run(body_in, bound); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("while %", loop.node, " body: ", s.message()));
    }
    // The next carried values become the state; the old state's buffers are where the
    // body writes the trip after (same shapes: CompiledCall reuses them).
    body.ExchangeOutputs(absl::MakeSpan(state.data(), loop.carried));
  }
  values[loop.node] = state[0];
  for (const auto& [id, index] : loop.results) values[id] = state[index];
  return absl::OkStatus();
}

absl::Status ControlFlow::RunBranch(const Branch& branch, std::vector<runtime::Tensor>& values,
                                    const ir::Bindings& bound) const {
  const ir::Node& n = graph_.node(branch.node);
  const runtime::Tensor& pred = values[n.operands[0]];
  const int b = pred.data<bool>()[0] ? 0 : 1;
  const CompiledGraph& code = *branch.code[b];
  runtime::TensorMap named;
  const std::vector<ir::ValueId> inputs = code.graph().Inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    named[code.graph().node(inputs[i]).name()] = values[n.operands[1 + branch.operand[b][i]]];
  }
  absl::StatusOr<std::vector<runtime::Tensor>> out = code.Run(named, bound);
  if (!out.ok()) {
    return absl::Status(out.status().code(),
                        absl::StrCat("if %", branch.node, " ", b == 0 ? "then" : "else", ": ",
                                     out.status().message()));
  }
  values[branch.node] = std::move((*out)[0]);
  return absl::OkStatus();
}

absl::Status ControlFlow::RunScan(const ScanLoop& scan, std::vector<runtime::Tensor>& values,
                                  const ir::Bindings& bound) const {
  const ir::Node& n = graph_.node(scan.node);
  const int64_t length = values[n.operands[scan.carried]].dim(0);
  // The operands the body takes: the carried values (this scan's own buffers), a row of
  // each scanned input (copied into a buffer per input), the invariants where they are.
  std::vector<runtime::Tensor> state(n.operands.size());
  for (size_t k = 0; k < n.operands.size(); ++k) {
    const runtime::Tensor& operand = values[n.operands[k]];
    if (static_cast<int64_t>(k) < scan.carried) {
      state[k] = operand.Clone();
    } else if (static_cast<int64_t>(k) < scan.carried + scan.scanned) {
      std::vector<int64_t> row(operand.shape().begin() + 1, operand.shape().end());
      GJ_ASSIGN_OR_RETURN(state[k], runtime::Tensor::Zeros(operand.dtype(), row));
    } else {
      state[k] = operand;
    }
  }
  std::vector<runtime::Tensor> stacked;
  for (const auto& [id, index] : scan.outputs) {
    const ir::ValueType& t = graph_.type(id);
    GJ_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ir::EvaluateShape(t.shape, bound));
    GJ_ASSIGN_OR_RETURN(runtime::Tensor all, runtime::Tensor::Zeros(t.dtype, shape));
    stacked.push_back(std::move(all));
  }
  std::vector<const runtime::Tensor*> in;
  for (int k : scan.body_operand) in.push_back(&state[k]);
  CompiledCall body(*scan.body);
  for (int64_t t = 0; t < length; ++t) {
    for (int64_t k = scan.carried; k < scan.carried + scan.scanned; ++k) {
      const runtime::Tensor& xs = values[n.operands[k]];
      std::memcpy(state[k].raw_data(),
                  static_cast<const char*>(xs.raw_data()) + t * state[k].nbytes(),
                  state[k].nbytes());
    }
    if (absl::Status s = body.Run(in, bound); !s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat("scan %", scan.node, " body, row ", t, ": ", s.message()));
    }
    for (size_t j = 0; j < scan.outputs.size(); ++j) {
      const runtime::Tensor& y = body.outputs()[scan.carried + scan.outputs[j].second];
      std::memcpy(static_cast<char*>(stacked[j].raw_data()) + t * y.nbytes(), y.raw_data(),
                  y.nbytes());
    }
    body.ExchangeOutputs(absl::MakeSpan(state.data(), scan.carried));
  }
  values[scan.node] = state[0];
  for (const auto& [id, index] : scan.results) values[id] = state[index];
  for (size_t j = 0; j < scan.outputs.size(); ++j) values[scan.outputs[j].first] = stacked[j];
  return absl::OkStatus();
}

std::vector<std::pair<std::string, const CompiledGraph*>> ControlFlow::Compiled() const {
  std::vector<std::pair<std::string, const CompiledGraph*>> out;
  for (const Step& step : steps_) {
    if (step.kind == Step::kPiece) {
      out.emplace_back(absl::StrCat("piece ", step.index), pieces_[step.index].code.get());
    } else if (step.kind == Step::kLoop) {
      const Loop& l = loops_[step.index];
      out.emplace_back(absl::StrCat("while %", l.node, " cond"), l.cond.get());
      out.emplace_back(absl::StrCat("while %", l.node, " body"), l.body.get());
    } else if (step.kind == Step::kIf) {
      const Branch& b = branches_[step.index];
      out.emplace_back(absl::StrCat("if %", b.node, " then"), b.code[0].get());
      out.emplace_back(absl::StrCat("if %", b.node, " else"), b.code[1].get());
    } else if (step.kind == Step::kScan) {
      const ScanLoop& s = scans_[step.index];
      out.emplace_back(absl::StrCat("scan %", s.node, " body"), s.body.get());
    }
  }
  return out;
}

int ControlFlow::num_loops() const { return static_cast<int>(loops_.size()); }

int ControlFlow::num_compiled() const {
  int n = 0;
  auto count = [](const CompiledGraph& g) {
    return g.control_flow() != nullptr ? g.control_flow()->num_compiled() : 1;
  };
  for (const Piece& p : pieces_) n += count(*p.code);
  for (const Loop& l : loops_) n += count(*l.cond) + count(*l.body);
  for (const Branch& b : branches_) n += count(*b.code[0]) + count(*b.code[1]);
  for (const ScanLoop& s : scans_) n += count(*s.body);
  return n;
}

void ControlFlow::AddTimings(PhaseTimings* timings) const {
  for (const Piece& p : pieces_) *timings += p.code->timings();
  for (const Loop& l : loops_) {
    *timings += l.cond->timings();
    *timings += l.body->timings();
  }
  for (const Branch& b : branches_) {
    *timings += b.code[0]->timings();
    *timings += b.code[1]->timings();
  }
  for (const ScanLoop& s : scans_) *timings += s.body->timings();
}

}  // namespace graphjit::compiler
