// Control flow. If takes the branch its known condition names. Loop and Scan are
// unrolled, their bodies imported once per iteration with the carried values bound, when
// the number of iterations is known at import (a constant trip count and conditions that
// fold, or a scanned axis of constant length). A Loop whose trip count or condition
// depends on data (iterate until converged), or that runs more trips than are unrolled,
// becomes one `while` op (ir/regions.h) whose body region is the Loop's body imported
// once: compiled, its trips run in native code. A decision that needs tensor data
// elsewhere names the model input it depends on ("input 'X' must be known at import"),
// so that ImportSpecialized fixes that input and imports again; one on dims undecided for
// every size is refused without naming an input, so that the model is imported at its
// call's shapes.
#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "onnx/op_helpers.h"
#include "onnx/ops.h"

namespace graphjit::onnx {
namespace {

using ir::OpCode;
using ir::Shape;
using ir::SymExpr;
using ir::ValueId;

// Iterations beyond this are refused rather than unrolled (each is a copy of the body).
constexpr int64_t kMaxIterations = 4096;

absl::StatusOr<const pb::GraphProto*> GraphAttr(const Context& ctx, const char* name) {
  const pb::AttributeProto* a = ctx.Attr(name);
  if (a == nullptr || a->type() != pb::AttributeProto::GRAPH) {
    return ctx.Invalid(absl::StrCat("has no graph attribute ", name));
  }
  return &a->g();
}

// The error for a decision (`what`, on value `name`) that is not known at import.
absl::Status Undecided(const Context& ctx, const std::string& what, const std::string& name) {
  const std::string input = ctx.DataInputBehind(name);
  if (!input.empty()) {
    return ctx.Unimplemented(absl::StrCat(what, " '", name,
                                          "' depends on tensor data (graphjit decides it at "
                                          "import): input '",
                                          input, "' must be known at import"));
  }
  return ctx.Unimplemented(absl::StrCat(what, " '", name,
                                        "' depends on the model's dims and is not decided for "
                                        "every size, or on data computed in the graph"));
}

// The single known integer of input `i` (a condition, a trip count), or nullopt.
absl::StatusOr<std::optional<int64_t>> KnownScalar(const Context& ctx, int i) {
  GJ_ASSIGN_OR_RETURN(const Value* v, ctx.In(i));
  const std::optional<std::vector<SymExpr>> known = Context::KnownInts(*v);
  if (!known) return std::optional<int64_t>();
  if (known->size() != 1) {
    return ctx.Invalid(absl::StrCat("input '", ctx.node().input(i), "' has ", known->size(),
                                    " elements, expected one"));
  }
  return (*known)[0].AsConstant();
}

// The names `g` reads that it does not define (its enclosing graphs'), in order of first
// use, its nested graphs' included; `defined` holds the names visible as its own.
void OuterNames(const pb::GraphProto& g, std::set<std::string> defined,
                std::vector<std::string>* names) {
  for (const auto& in : g.input()) defined.insert(in.name());
  for (const auto& init : g.initializer()) defined.insert(init.name());
  for (const pb::NodeProto& node : g.node()) {
    for (const std::string& in : node.input()) {
      if (!in.empty() && !defined.contains(in) &&
          std::find(names->begin(), names->end(), in) == names->end()) {
        names->push_back(in);
      }
    }
    for (const pb::AttributeProto& a : node.attribute()) {
      if (a.type() == pb::AttributeProto::GRAPH) OuterNames(a.g(), defined, names);
      for (const pb::GraphProto& sub : a.graphs()) OuterNames(sub, defined, names);
    }
    for (const std::string& out : node.output()) defined.insert(out);
  }
}

// The outer values a region (a loop body, a branch) reads that are nodes of the enclosing
// graph, appended to `operands` (and their names to `captured`, their element types to
// `elems`): the region takes them as inputs. Known values (constants, folded integers)
// are made again inside the region instead.
absl::Status CaptureOuterValues(Context& ctx, const std::vector<std::string>& outer,
                                std::vector<std::string>* captured, std::vector<ValueId>* operands,
                                std::vector<int32_t>* elems) {
  for (const std::string& name : outer) {
    const Value* v = ctx.Find(name);
    if (v == nullptr) {
      return ctx.Invalid(absl::StrCat("a subgraph reads undefined '", name, "'"));
    }
    if (v->constant.has_value() || v->ints.has_value()) continue;
    GJ_ASSIGN_OR_RETURN(ValueId id, ctx.Materialize(name));
    captured->push_back(name);
    operands->push_back(id);
    elems->push_back(v->elem_type);
  }
  return ctx.BuilderStatus();
}

// A bool or integer scalar (or one-element tensor) as bool[].
ValueId ScalarBool(Context& ctx, ValueId v) {
  if (ctx.type(v).rank() > 0) v = Reshape(ctx, v, {});
  if (ctx.type(v).dtype != ir::DType::kBool) {
    v = ctx.Op(OpCode::kCast, {v}, {{"dtype", ir::DType::kBool}});
  }
  return v;
}

// A graph node as a Value (for binding a slice to a body input).
Value NodeValue(Context& ctx, ValueId id, int32_t elem_type) {
  Value v;
  v.elem_type = elem_type;
  v.shape = ctx.type(id).shape;
  v.id = id;
  return v;
}

// Binds `value` to a body input (a copy: it is the body's, not a model input).
void Bind(Context& ctx, const std::string& name, Value value) {
  value.graph_input = false;
  ctx.Define(name, std::move(value));
}

// Whether model input `name` is small enough for ImportSpecialized to fix.
bool SmallInput(const Context& ctx, const std::string& name) {
  const Value* v = ctx.Find(name);
  if (v == nullptr) return false;
  int64_t n = 1;
  for (const SymExpr& d : v->shape) {
    const std::optional<int64_t> c = d.AsConstant();
    if (!c) return false;
    n *= *c;
  }
  return n <= 64;
}

// An If on data: both branches imported, each output where(cond, then, else). ONNX ops
// have no side effects, so computing the branch not taken changes nothing but time;
// branches whose outputs differ in dtype or shape are refused.
absl::Status IfAsSelect(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId cond, ctx.InNode(0));
  if (ctx.type(cond).rank() > 0) cond = Reshape(ctx, cond, {});
  if (ctx.type(cond).dtype != ir::DType::kBool) {
    cond = ctx.Op(OpCode::kCast, {cond}, {{"dtype", ir::DType::kBool}});
  }
  std::vector<std::vector<std::string>> names(2);
  int b = 0;
  for (const char* name : {"then_branch", "else_branch"}) {
    GJ_ASSIGN_OR_RETURN(const pb::GraphProto* g, GraphAttr(ctx, name));
    if (g->output_size() != ctx.num_outputs()) {
      return ctx.Invalid(absl::StrCat("its ", name, " has ", g->output_size(),
                                      " outputs, the node ", ctx.num_outputs()));
    }
    GJ_RETURN_IF_ERROR(ctx.ImportSubgraph(*g));
    for (int i = 0; i < g->output_size(); ++i) names[b].push_back(g->output(i).name());
    ++b;
  }
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    if (!ctx.WantsOutput(i)) continue;
    for (int k = 0; k < 2; ++k) {
      if (ctx.Find(names[k][i]) == nullptr) {
        return ctx.Invalid(absl::StrCat("branch output '", names[k][i], "' is not computed"));
      }
    }
    GJ_ASSIGN_OR_RETURN(ValueId then_id, ctx.Materialize(names[0][i]));
    GJ_ASSIGN_OR_RETURN(ValueId else_id, ctx.Materialize(names[1][i]));
    if (!(ctx.type(then_id) == ctx.type(else_id))) {
      return ctx.Unimplemented(absl::StrCat(
          "its branches give output ", i, " as ", ir::TypeToString(ctx.type(then_id)), " and ",
          ir::TypeToString(ctx.type(else_id)),
          " and the condition depends on data (both branches are computed and one selected)"));
    }
    const int32_t elem = ctx.Find(names[0][i])->elem_type;
    GJ_RETURN_IF_ERROR(ctx.SetOut(i, ctx.Op(OpCode::kWhere, {cond, then_id, else_id}), elem));
  }
  return absl::OkStatus();
}

// Whether a branch is cheap enough to compute whether taken or not (a few elementwise or
// layout nodes): such an If selects; a costlier one branches.
bool CheapBranch(const pb::GraphProto& g) {
  if (g.node_size() > 8) return false;
  for (const pb::NodeProto& n : g.node()) {
    for (const char* op : {"MatMul", "Gemm", "Conv", "ConvTranspose", "Einsum", "Loop", "Scan",
                           "If", "LSTM", "GRU", "RNN"}) {
      if (n.op_type() == op) return false;
    }
  }
  return true;
}

// An If on data as `if` ops (ir/regions.h): each branch imported once as a region under a
// RegionScope, the outer values the branches read (nodes of the enclosing graph) as
// operands; one if per output, whose compiled code runs only the taken branch.
absl::Status IfAsBranch(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(ValueId cond, ctx.InNode(0));
  cond = ScalarBool(ctx, cond);
  const pb::GraphProto* branches[2];
  std::vector<std::string> outer;
  for (int b = 0; b < 2; ++b) {
    GJ_ASSIGN_OR_RETURN(branches[b], GraphAttr(ctx, b == 0 ? "then_branch" : "else_branch"));
    if (branches[b]->output_size() != ctx.num_outputs()) {
      return ctx.Invalid(absl::StrCat("its ", b == 0 ? "then_branch" : "else_branch", " has ",
                                      branches[b]->output_size(), " outputs, the node ",
                                      ctx.num_outputs()));
    }
    OuterNames(*branches[b], {}, &outer);
  }
  std::vector<ValueId> operands = {cond};
  std::vector<std::string> captured;
  std::vector<int32_t> elems;
  GJ_RETURN_IF_ERROR(CaptureOuterValues(ctx, outer, &captured, &operands, &elems));
  std::vector<ir::ValueType> types;  // read now: in a RegionScope the graph is the region's
  for (ValueId v : operands) types.push_back(ctx.type(v));
  std::vector<ir::Graph> regions;
  std::vector<int32_t> out_elems(ctx.num_outputs(), 0);
  for (int b = 0; b < 2; ++b) {
    ir::GraphBuilder rb(b == 0 ? "then" : "else");
    {
      Context::RegionScope scope(ctx, &rb);
      const std::vector<ValueId> a = RegionInputs(rb, {types.begin() + 1, types.end()});
      for (size_t j = 0; j < captured.size(); ++j) {
        Bind(ctx, captured[j], NodeValue(ctx, a[j], elems[j]));
      }
      GJ_RETURN_IF_ERROR(ctx.ImportSubgraph(*branches[b]));
      for (int i = 0; i < ctx.num_outputs(); ++i) {
        const std::string& name = branches[b]->output(i).name();
        if (ctx.Find(name) == nullptr) {
          return ctx.Invalid(absl::StrCat("branch output '", name, "' is not computed"));
        }
        if (b == 0) out_elems[i] = ctx.Find(name)->elem_type;
        GJ_ASSIGN_OR_RETURN(ValueId out, ctx.Materialize(name));
        rb.Output(out);
      }
    }
    GJ_ASSIGN_OR_RETURN(ir::Graph g, std::move(rb).Build());
    regions.push_back(std::move(g));
  }
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    if (!ctx.WantsOutput(i)) continue;
    const ir::ValueType& t = regions[0].type(regions[0].outputs()[i]);
    const ir::ValueType& e = regions[1].type(regions[1].outputs()[i]);
    if (!(t == e)) {
      return ctx.Unimplemented(absl::StrCat("its branches give output ", i, " as ",
                                            ir::TypeToString(t), " and ", ir::TypeToString(e),
                                            " and the condition depends on data"));
    }
    std::vector<std::shared_ptr<const ir::Graph>> one;
    for (const ir::Graph& g : regions) {
      ir::Graph copy = g;
      copy.set_outputs({g.outputs()[i]});
      one.push_back(std::make_shared<const ir::Graph>(std::move(copy)));
    }
    const ValueId id = ctx.b().Add(OpCode::kIf, operands, {{"dtype", t.dtype}, {"shape", t.shape}},
                                   std::move(one));
    GJ_RETURN_IF_ERROR(ctx.SetOut(i, id, out_elems[i]));
  }
  return absl::OkStatus();
}

absl::Status If(Context& ctx) {
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  GJ_ASSIGN_OR_RETURN(const Value* cond, ctx.In(0));
  const std::optional<std::vector<SymExpr>> known = Context::KnownInts(*cond);
  if (known && known->size() != 1) {
    return ctx.Invalid(
        absl::StrCat("the condition has ", known->size(), " elements, expected one"));
  }
  const std::optional<int64_t> taken = known ? (*known)[0].AsConstant() : std::nullopt;
  if (!taken) {
    // A condition on dims, or on a small model input (a sample rate, a flag), is decided
    // by importing at the call's shapes or fixing that input (ImportSpecialized): one
    // branch imported. One on data - a large input's, or a loop body's convergence test -
    // selects between both branches when they are cheap, and branches otherwise.
    const std::string input = ctx.DataInputBehind(ctx.node().input(0));
    if (!ctx.in_region() && (input.empty() || SmallInput(ctx, input))) {
      return Undecided(ctx, "the condition", ctx.node().input(0));
    }
    GJ_ASSIGN_OR_RETURN(const pb::GraphProto* then_branch, GraphAttr(ctx, "then_branch"));
    GJ_ASSIGN_OR_RETURN(const pb::GraphProto* else_branch, GraphAttr(ctx, "else_branch"));
    if (CheapBranch(*then_branch) && CheapBranch(*else_branch)) return IfAsSelect(ctx);
    return IfAsBranch(ctx);
  }
  const char* const name = *taken != 0 ? "then_branch" : "else_branch";
  GJ_ASSIGN_OR_RETURN(const pb::GraphProto* g, GraphAttr(ctx, name));
  if (g->output_size() != ctx.num_outputs()) {
    return ctx.Invalid(absl::StrCat("its ", name, " has ", g->output_size(), " outputs, the node ",
                                    ctx.num_outputs()));
  }
  GJ_RETURN_IF_ERROR(ctx.ImportSubgraph(*g));
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    const Value* v = ctx.Find(g->output(i).name());
    if (v == nullptr) {
      return ctx.Invalid(
          absl::StrCat("output '", g->output(i).name(), "' of its ", name, " is not computed"));
    }
    ctx.SetOutValue(i, *v);
  }
  return absl::OkStatus();
}

// Per-iteration values stacked along a new `axis` (in reverse order if `reverse`).
absl::StatusOr<ValueId> Stack(Context& ctx, std::vector<ValueId> steps, int64_t axis,
                              bool reverse) {
  if (reverse) std::reverse(steps.begin(), steps.end());
  const int rank = ctx.type(steps[0]).rank();
  GJ_ASSIGN_OR_RETURN(int at, NormAxis(ctx, axis, rank + 1));
  for (ValueId& v : steps) {
    Shape shape = ctx.type(v).shape;
    shape.insert(shape.begin() + at, SymExpr(1));
    v = Reshape(ctx, v, shape);
  }
  if (steps.size() == 1) return steps[0];
  return ctx.Op(OpCode::kConcat, steps, {{"axis", int64_t{at}}});
}

// `x` with dim `from` moved to `to` (the others in order).
ValueId MoveAxis(Context& ctx, ValueId x, int from, int to) {
  if (from == to) return x;
  std::vector<int64_t> perm;
  for (int d = 0; d < ctx.type(x).rank(); ++d) {
    if (d != from) perm.push_back(d);
  }
  perm.insert(perm.begin() + to, from);
  return ctx.Op(OpCode::kTranspose, {x}, {{"perm", perm}});
}

// A Scan whose scanned length is symbolic (or long) as one scan op (ir/regions.h): the
// scanned inputs moved to dim 0 (and reversed where scanned backwards), the body imported
// once as the region under a RegionScope (outer values it reads as invariants), the
// stacked outputs moved to their axes (and reversed).
absl::Status ScanAsLoop(Context& ctx, const pb::GraphProto& body, int n, int m, int k,
                        const std::vector<int64_t>& in_axes, const std::vector<int64_t>& in_dirs,
                        const std::vector<int64_t>& out_axes,
                        const std::vector<int64_t>& out_dirs) {
  std::vector<ValueId> operands;
  std::vector<int32_t> elems;
  for (int i = 0; i < n; ++i) {
    GJ_ASSIGN_OR_RETURN(ValueId v, ctx.InNode(i));
    GJ_ASSIGN_OR_RETURN(const Value* in, ctx.In(i));
    operands.push_back(v);
    elems.push_back(in->elem_type);
  }
  const bool counter = n == 0;  // a scan carries at least one value: a dummy count
  if (counter) {
    operands.push_back(ctx.Op(OpCode::kFull, {},
                              {{"value", 0.0}, {"dtype", ir::DType::kI64}, {"shape", Shape{}}}));
    elems.push_back(pb::TensorProto::INT64);
  }
  const int carried = static_cast<int>(operands.size());
  for (int j = 0; j < m; ++j) {
    GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(n + j));
    GJ_ASSIGN_OR_RETURN(const Value* in, ctx.In(n + j));
    GJ_ASSIGN_OR_RETURN(int axis, NormAxis(ctx, in_axes[j], ctx.type(x).rank()));
    x = MoveAxis(ctx, x, axis, 0);
    if (in_dirs[j] != 0) x = ReverseRows(ctx, x);
    operands.push_back(x);
    elems.push_back(in->elem_type);
  }
  std::vector<std::string> outer, captured;
  OuterNames(body, {}, &outer);
  GJ_RETURN_IF_ERROR(CaptureOuterValues(ctx, outer, &captured, &operands, &elems));
  std::vector<ir::ValueType> types;  // what the body takes: a row of each scanned input
  for (ValueId v : operands) types.push_back(ctx.type(v));
  for (int j = 0; j < m; ++j) types[carried + j].shape.erase(types[carried + j].shape.begin());
  ir::GraphBuilder rb("body");
  std::vector<ir::ValueType> rows;  // the per-row outputs' types and element types
  std::vector<int32_t> row_elems;
  {
    Context::RegionScope scope(ctx, &rb);
    const std::vector<ValueId> a = RegionInputs(rb, types);
    auto bind = [&](const std::string& name, size_t i) {
      Bind(ctx, name, NodeValue(ctx, a[i], elems[i]));
    };
    for (int i = 0; i < n; ++i) bind(body.input(i).name(), i);
    for (int j = 0; j < m; ++j) bind(body.input(n + j).name(), carried + j);
    for (size_t c = 0; c < captured.size(); ++c) bind(captured[c], carried + m + c);
    GJ_RETURN_IF_ERROR(ctx.ImportSubgraph(body));
    if (counter) rb.Output(rb.Add(OpCode::kAdd, {a[0], rb.Scalar(1, ir::DType::kI64)}));
    for (int i = 0; i < n + k; ++i) {
      const std::string& name = body.output(i).name();
      if (ctx.Find(name) == nullptr) {
        return ctx.Invalid(absl::StrCat("body output '", name, "' is not computed"));
      }
      GJ_ASSIGN_OR_RETURN(ValueId out, ctx.Materialize(name));
      if (i < n && !(rb.type(out) == types[i])) {
        return ctx.Unimplemented(
            absl::StrCat("its state '", body.input(i).name(), "' is ", ir::TypeToString(types[i]),
                         " in and ", ir::TypeToString(rb.type(out)),
                         " out of the body: a carried value must keep its shape"));
      }
      if (i >= n) {
        rows.push_back(rb.type(out));
        row_elems.push_back(ctx.Find(name)->elem_type);
      }
      rb.Output(out);
    }
  }
  GJ_ASSIGN_OR_RETURN(ir::Graph region, std::move(rb).Build());
  const ValueId scan =
      ctx.b().Add(OpCode::kScan, operands, {{"carried", int64_t{carried}}, {"scanned", int64_t{m}}},
                  {std::make_shared<const ir::Graph>(std::move(region))});
  for (int i = 0; i < n && i < ctx.num_outputs(); ++i) {
    if (!ctx.WantsOutput(i)) continue;
    const ValueId v =
        i == 0 ? scan : ctx.Op(OpCode::kLoopResult, {scan, operands[i]}, {{"index", int64_t{i}}});
    GJ_RETURN_IF_ERROR(ctx.SetOut(i, v, elems[i]));
  }
  const SymExpr length = ctx.type(operands[carried]).shape[0];
  for (int j = 0; j < k && n + j < ctx.num_outputs(); ++j) {
    if (!ctx.WantsOutput(n + j)) continue;
    Shape shape = rows[j].shape;
    shape.insert(shape.begin(), length);
    ValueId y = ctx.Op(OpCode::kScanOutput, {scan},
                       {{"index", int64_t{j}}, {"dtype", rows[j].dtype}, {"shape", shape}});
    if (out_dirs[j] != 0) y = ReverseRows(ctx, y);
    GJ_ASSIGN_OR_RETURN(int axis, NormAxis(ctx, out_axes[j], static_cast<int>(shape.size())));
    y = MoveAxis(ctx, y, 0, axis);
    GJ_RETURN_IF_ERROR(ctx.SetOut(n + j, y, row_elems[j]));
  }
  return absl::OkStatus();
}

absl::Status Scan(Context& ctx) {
  if (ctx.opset() < 9) return ctx.Unimplemented("Scan before opset 9 (with a batch axis)");
  GJ_ASSIGN_OR_RETURN(const pb::GraphProto* body, GraphAttr(ctx, "body"));
  const int m = static_cast<int>(ctx.AttrInt("num_scan_inputs", 0));
  if (m < 1 || m > ctx.num_inputs()) {
    return ctx.Invalid(absl::StrCat("num_scan_inputs ", m, " with ", ctx.num_inputs(), " inputs"));
  }
  const int n = ctx.num_inputs() - m;
  const int k = body->output_size() - n;
  if (body->input_size() != n + m || k < 0 || ctx.num_outputs() > n + k) {
    return ctx.Invalid(absl::StrCat("its body has ", body->input_size(), " inputs and ",
                                    body->output_size(), " outputs for ", n, " states and ", m,
                                    " scanned inputs"));
  }
  auto attr_or = [&](const char* name, int size) {
    std::vector<int64_t> v = ctx.AttrInts(name).value_or(std::vector<int64_t>(size, 0));
    return v;
  };
  const std::vector<int64_t> in_axes = attr_or("scan_input_axes", m);
  const std::vector<int64_t> in_dirs = attr_or("scan_input_directions", m);
  const std::vector<int64_t> out_axes = attr_or("scan_output_axes", k);
  const std::vector<int64_t> out_dirs = attr_or("scan_output_directions", k);
  if (static_cast<int>(in_axes.size()) != m || static_cast<int>(in_dirs.size()) != m ||
      static_cast<int>(out_axes.size()) != k || static_cast<int>(out_dirs.size()) != k) {
    return ctx.Invalid("scan axes or directions of the wrong length");
  }
  std::vector<Value> states;
  for (int i = 0; i < n; ++i) {
    GJ_ASSIGN_OR_RETURN(const Value* v, ctx.In(i));
    states.push_back(*v);
  }
  std::vector<ValueId> xs;
  std::vector<int> axes;
  std::vector<int32_t> elems;
  int64_t steps = -1;
  for (int j = 0; j < m; ++j) {
    GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(n + j));
    GJ_ASSIGN_OR_RETURN(int axis, NormAxis(ctx, in_axes[j], ctx.type(x).rank()));
    const std::optional<int64_t> length = ctx.type(x).shape[axis].AsConstant();
    if (!length || *length > kMaxIterations) {
      return ScanAsLoop(ctx, *body, n, m, k, in_axes, in_dirs, out_axes, out_dirs);
    }
    if (steps >= 0 && *length != steps) {
      return ctx.Invalid(absl::StrCat("scanned inputs of lengths ", steps, " and ", *length));
    }
    steps = *length;
    xs.push_back(x);
    axes.push_back(axis);
    GJ_ASSIGN_OR_RETURN(const Value* v, ctx.In(n + j));
    elems.push_back(v->elem_type);
  }

  std::vector<std::vector<ValueId>> outs(k);
  for (int64_t t = 0; t < steps; ++t) {
    for (int i = 0; i < n; ++i) Bind(ctx, body->input(i).name(), states[i]);
    for (int j = 0; j < m; ++j) {
      const int64_t at = in_dirs[j] != 0 ? steps - 1 - t : t;
      Shape shape = ctx.type(xs[j]).shape;
      shape.erase(shape.begin() + axes[j]);
      ValueId slice =
          ctx.Op(OpCode::kSlice, {xs[j]},
                 {{"axis", int64_t{axes[j]}}, {"start", SymExpr(at)}, {"end", SymExpr(at + 1)}});
      Bind(ctx, body->input(n + j).name(), NodeValue(ctx, Reshape(ctx, slice, shape), elems[j]));
    }
    GJ_RETURN_IF_ERROR(ctx.BuilderStatus());
    GJ_RETURN_IF_ERROR(ctx.ImportSubgraph(*body));
    for (int i = 0; i < n + k; ++i) {
      const std::string& name = body->output(i).name();
      const Value* v = ctx.Find(name);
      if (v == nullptr)
        return ctx.Invalid(absl::StrCat("body output '", name, "' is not computed"));
      if (i < n) {
        states[i] = *v;
      } else {
        GJ_ASSIGN_OR_RETURN(ValueId id, ctx.Materialize(name));
        outs[i - n].push_back(id);
      }
    }
  }
  for (int i = 0; i < n; ++i) ctx.SetOutValue(i, states[i]);
  for (int i = 0; i < k && n + i < ctx.num_outputs(); ++i) {
    if (!ctx.WantsOutput(n + i)) continue;
    if (outs[i].empty()) return ctx.Unimplemented("a Scan of no iterations (empty scan outputs)");
    GJ_ASSIGN_OR_RETURN(ValueId y, Stack(ctx, outs[i], out_axes[i], out_dirs[i] != 0));
    GJ_RETURN_IF_ERROR(ctx.SetOut(n + i, y, ctx.Find(body->output(n + i).name())->elem_type));
  }
  return absl::OkStatus();
}

// The Loop as one while op: carried (the iteration number, the condition, the Loop's
// carried values), invariants (the trip count, the outer values the body reads). The
// cond region is `cond && i < M`, the body region the Loop's body with `i + 1`.
absl::Status LoopAsWhile(Context& ctx, const pb::GraphProto& body, int n) {
  if (body.output_size() > 1 + n) {
    return ctx.Unimplemented(
        "a Loop whose trip count or condition depends on data, with scan outputs (their "
        "length is known only once it has run)");
  }
  std::optional<int64_t> known_trips;
  if (ctx.HasInput(0)) {
    GJ_ASSIGN_OR_RETURN(known_trips, KnownScalar(ctx, 0));
  }
  if (known_trips && *known_trips < 0) {
    return ctx.Invalid(absl::StrCat("the trip count is ", *known_trips));
  }
  // The operands, with the types and ONNX element types the regions' inputs take.
  std::vector<ValueId> operands;
  std::vector<int32_t> elems;
  operands.push_back(ctx.Op(OpCode::kFull, {},
                            {{"value", 0.0}, {"dtype", ir::DType::kI64}, {"shape", ir::Shape{}}}));
  elems.push_back(pb::TensorProto::INT64);
  if (ctx.HasInput(1)) {
    GJ_ASSIGN_OR_RETURN(ValueId c, ctx.InNode(1));
    operands.push_back(ScalarBool(ctx, c));
  } else {
    operands.push_back(ctx.Op(
        OpCode::kFull, {}, {{"value", 1.0}, {"dtype", ir::DType::kBool}, {"shape", ir::Shape{}}}));
  }
  elems.push_back(pb::TensorProto::BOOL);
  for (int k = 0; k < n; ++k) {
    GJ_ASSIGN_OR_RETURN(ValueId v, ctx.InNode(2 + k));
    GJ_ASSIGN_OR_RETURN(const Value* in, ctx.In(2 + k));
    operands.push_back(v);
    elems.push_back(in->elem_type);
  }
  const int carried = 2 + n;
  int trips = -1;  // the operand holding M
  if (ctx.HasInput(0) && !known_trips) {
    GJ_ASSIGN_OR_RETURN(ValueId m, ctx.InIndexNode(0));
    trips = static_cast<int>(operands.size());
    operands.push_back(ctx.type(m).rank() > 0 ? Reshape(ctx, m, {}) : m);
    elems.push_back(pb::TensorProto::INT64);
  }
  std::vector<std::string> captured;
  std::vector<std::string> outer;
  std::set<std::string> defined;
  OuterNames(body, defined, &outer);
  GJ_RETURN_IF_ERROR(CaptureOuterValues(ctx, outer, &captured, &operands, &elems));
  std::vector<ir::ValueType> types;
  for (ValueId v : operands) types.push_back(ctx.type(v));

  ir::GraphBuilder cond_b("cond");
  const std::vector<ValueId> c = RegionInputs(cond_b, types);
  ValueId go = c[1];
  // A known trip count is the while's max_trips (exact: torch writes INT64_MAX for "no
  // limit", which a float constant would round); one computed from data is compared here.
  if (trips >= 0) {
    go = cond_b.Add(OpCode::kMinimum, {go, cond_b.Add(OpCode::kLt, {c[0], c[trips]})});
  }
  cond_b.Output(go);
  GJ_ASSIGN_OR_RETURN(ir::Graph cond, std::move(cond_b).Build());

  ir::GraphBuilder body_b("body");
  {
    Context::RegionScope scope(ctx, &body_b);
    const std::vector<ValueId> a = RegionInputs(body_b, types);
    auto bind = [&](const std::string& name, int k) {
      Bind(ctx, name, NodeValue(ctx, a[k], elems[k]));
    };
    for (int k = 0; k < carried; ++k) bind(body.input(k).name(), k);
    for (size_t j = 0; j < captured.size(); ++j) {
      bind(captured[j], static_cast<int>(operands.size() - captured.size() + j));
    }
    GJ_RETURN_IF_ERROR(ctx.ImportSubgraph(body));
    body_b.Output(body_b.Add(OpCode::kAdd, {a[0], body_b.Scalar(1, ir::DType::kI64)}));
    for (int k = 0; k < 1 + n; ++k) {
      const std::string& name = body.output(k).name();
      if (ctx.Find(name) == nullptr) {
        return ctx.Invalid(absl::StrCat("body output '", name, "' is not computed"));
      }
      GJ_ASSIGN_OR_RETURN(ValueId out, ctx.Materialize(name));
      if (k == 0) out = ScalarBool(ctx, out);
      if (!(body_b.type(out) == types[1 + k])) {
        return ctx.Unimplemented(absl::StrCat(
            "its carried value '", body.input(1 + k).name(), "' is ",
            ir::TypeToString(types[1 + k]), " in and ", ir::TypeToString(body_b.type(out)),
            " out of the body: a carried value must keep its shape"));
      }
      body_b.Output(out);
    }
  }
  GJ_ASSIGN_OR_RETURN(ir::Graph body_graph, std::move(body_b).Build());
  ir::Attrs attrs{{"carried", int64_t{carried}}};
  if (known_trips) attrs.Set("max_trips", *known_trips);
  const ValueId loop = ctx.b().Add(OpCode::kWhile, operands, std::move(attrs),
                                   {std::make_shared<const ir::Graph>(std::move(cond)),
                                    std::make_shared<const ir::Graph>(std::move(body_graph))});
  for (int k = 0; k < n && k < ctx.num_outputs(); ++k) {
    if (!ctx.WantsOutput(k)) continue;
    const ValueId result =
        ctx.Op(OpCode::kLoopResult, {loop, operands[2 + k]}, {{"index", int64_t{2 + k}}});
    GJ_RETURN_IF_ERROR(ctx.SetOut(k, result, elems[2 + k]));
  }
  return absl::OkStatus();
}

absl::Status Loop(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(const pb::GraphProto* body, GraphAttr(ctx, "body"));
  if (ctx.num_inputs() < 2) return ctx.Invalid("has fewer than 2 inputs (M, cond)");
  const int n = ctx.num_inputs() - 2;
  const int k = body->output_size() - 1 - n;
  if (body->input_size() != n + 2 || k < 0 || ctx.num_outputs() > n + k) {
    return ctx.Invalid(absl::StrCat("its body has ", body->input_size(), " inputs and ",
                                    body->output_size(), " outputs for ", n, " carried values"));
  }
  std::optional<int64_t> trips;
  if (ctx.HasInput(0)) {
    GJ_ASSIGN_OR_RETURN(trips, KnownScalar(ctx, 0));
    if (!trips && k == 0) return LoopAsWhile(ctx, *body, n);
    if (!trips) return Undecided(ctx, "the trip count", ctx.node().input(0));
    if (*trips < 0) return ctx.Invalid(absl::StrCat("the trip count is ", *trips));
  }
  int64_t cond = 1;
  if (ctx.HasInput(1)) {
    GJ_ASSIGN_OR_RETURN(std::optional<int64_t> c, KnownScalar(ctx, 1));
    if (!c && k == 0) return LoopAsWhile(ctx, *body, n);
    if (!c) return Undecided(ctx, "the condition", ctx.node().input(1));
    cond = *c;
  }
  if (k == 0 && (!trips || *trips > kMaxIterations) && cond != 0) {
    // Unbounded or long: unrolling would not end or would copy the body too often.
    return LoopAsWhile(ctx, *body, n);
  }
  std::vector<Value> carried;
  for (int i = 0; i < n; ++i) {
    GJ_ASSIGN_OR_RETURN(const Value* v, ctx.In(2 + i));
    carried.push_back(*v);
  }
  std::vector<std::vector<ValueId>> outs(k);
  for (int64_t t = 0; cond != 0 && (!trips || t < *trips); ++t) {
    if (t >= kMaxIterations) {
      return ctx.Unimplemented(
          absl::StrCat("more than ", kMaxIterations, " iterations (graphjit unrolls loops)"));
    }
    Value iteration, cond_in;
    iteration.elem_type = pb::TensorProto::INT64;
    iteration.ints = std::vector<SymExpr>{SymExpr(t)};
    cond_in.elem_type = pb::TensorProto::BOOL;
    cond_in.ints = std::vector<SymExpr>{SymExpr(int64_t{1})};
    Bind(ctx, body->input(0).name(), iteration);
    Bind(ctx, body->input(1).name(), cond_in);
    for (int i = 0; i < n; ++i) Bind(ctx, body->input(2 + i).name(), carried[i]);
    GJ_RETURN_IF_ERROR(ctx.ImportSubgraph(*body));
    for (int i = 0; i < 1 + n + k; ++i) {
      const std::string& name = body->output(i).name();
      const Value* v = ctx.Find(name);
      if (v == nullptr)
        return ctx.Invalid(absl::StrCat("body output '", name, "' is not computed"));
      if (i == 0) {
        const std::optional<std::vector<SymExpr>> known = Context::KnownInts(*v);
        const std::optional<int64_t> c =
            known && known->size() == 1 ? (*known)[0].AsConstant() : std::nullopt;
        // A condition the body computes from data: the loop runs as a while (the nodes
        // unrolled so far are unused and dropped by the passes).
        if (!c && k == 0) return LoopAsWhile(ctx, *body, n);
        if (!c) return Undecided(ctx, "the loop's condition", name);
        cond = *c;
      } else if (i <= n) {
        carried[i - 1] = *v;
      } else {
        GJ_ASSIGN_OR_RETURN(ValueId id, ctx.Materialize(name));
        outs[i - 1 - n].push_back(id);
      }
    }
  }
  for (int i = 0; i < n; ++i) ctx.SetOutValue(i, carried[i]);
  for (int i = 0; i < k && n + i < ctx.num_outputs(); ++i) {
    if (!ctx.WantsOutput(n + i)) continue;
    if (outs[i].empty()) return ctx.Unimplemented("a Loop of no iterations (empty scan outputs)");
    GJ_ASSIGN_OR_RETURN(ValueId y, Stack(ctx, outs[i], 0, false));
    GJ_RETURN_IF_ERROR(ctx.SetOut(n + i, y, ctx.Find(body->output(1 + n + i).name())->elem_type));
  }
  return absl::OkStatus();
}

}  // namespace

void AddControlOps(OpTable* t) {
  (*t)["If"] = If;
  (*t)["Loop"] = Loop;
  (*t)["Scan"] = Scan;
}

}  // namespace graphjit::onnx
