#include "compiler/passes/fold_channel_affine.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/passes/rewriter.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

using ir::OpCode;
using ir::SymExpr;

// Per-channel values: along one axis of a result (length C), or one value for every
// element (axis -1).
struct Channels {
  int axis = -1;
  std::vector<double> values = {0.0};

  // The values along `axis` with `length` channels (a single value repeated).
  std::vector<double> Along(int length) const {
    return axis < 0 ? std::vector<double>(length, values[0]) : values;
  }
};

// A known tensor `id` as per-channel values of a result of type `out`, or nullopt when it
// varies along more than one axis (or along one that broadcasts). The shape is checked
// before the values are read: weights are large.
std::optional<Channels> ChannelsOf(const ir::Graph& g, ValueId id, const ir::ValueType& out,
                                   const PassContext& ctx) {
  const ir::ValueType& type = g.type(id);
  if (!IsKnownTensor(g, id, ctx) || type.rank() > out.rank()) return std::nullopt;
  Channels c;
  for (int a = 0; a < type.rank(); ++a) {
    if (type.shape[a] == SymExpr(1)) continue;
    const int axis = a + out.rank() - type.rank();
    // The channels become a constant of that many values: a symbolic count (a param
    // [S] of a graph compiled for every S) would not type against the result.
    if (c.axis >= 0 || type.shape[a] != out.shape[axis] || !type.shape[a].IsConstant()) {
      return std::nullopt;
    }
    c.axis = axis;
  }
  auto known = KnownTensor(g, id, ctx);
  if (!known) return std::nullopt;
  c.values = known->second.ToDoubles();
  // An infinity or NaN would turn the folded shift into NaN where the chain gave +-inf.
  if (c.values.empty() ||
      !std::all_of(c.values.begin(), c.values.end(), [](double v) { return std::isfinite(v); })) {
    return std::nullopt;
  }
  return c;
}

// One add / sub / mul / div of a value by per-channel known values.
struct Step {
  ValueId value = ir::kInvalidValue;  // the other operand, of the result's type
  OpCode op = OpCode::kAdd;
  bool known_first = false;  // known - value (sub only)
  Channels known;
};

std::optional<Step> StepOf(const ir::Graph& g, ValueId id, const PassContext& ctx) {
  const ir::Node& n = g.node(id);
  if ((n.op != OpCode::kAdd && n.op != OpCode::kSub && n.op != OpCode::kMul &&
       n.op != OpCode::kDiv) ||
      !ir::IsFloat(n.type.dtype)) {
    return std::nullopt;
  }
  for (int k = 0; k < 2; ++k) {
    const ValueId value = n.operands[1 - k];
    if (g.type(value) != n.type || IsKnownTensor(g, value, ctx)) continue;
    if (n.op == OpCode::kDiv && k == 0) continue;  // known / value is not affine in value
    std::optional<Channels> known = ChannelsOf(g, n.operands[k], n.type, ctx);
    if (!known) continue;
    // x / 0 is +-inf or NaN per element, which no x * a + b reproduces.
    if (n.op == OpCode::kDiv && !std::all_of(known->values.begin(), known->values.end(),
                                             [](double v) { return v != 0.0; })) {
      continue;
    }
    return Step{value, n.op, k == 0, *std::move(known)};
  }
  return std::nullopt;
}

// x * a + b for the chain ending at a node, over its base x.
struct Chain {
  ValueId base = ir::kInvalidValue;
  int length = 0;
  int axis = -1;
  std::vector<double> a = {1.0}, b = {0.0};
};

// Applies `step` to `chain` (a and b per channel); false when their axes differ.
bool Extend(const Step& step, Chain* chain) {
  const Channels& k = step.known;
  if (chain->axis >= 0 && k.axis >= 0 && chain->axis != k.axis) return false;
  if (chain->axis < 0 && k.axis >= 0) {
    chain->a = std::vector<double>(k.values.size(), chain->a[0]);
    chain->b = std::vector<double>(k.values.size(), chain->b[0]);
    chain->axis = k.axis;
  }
  const std::vector<double> kv = k.Along(static_cast<int>(chain->a.size()));
  for (size_t c = 0; c < chain->a.size(); ++c) {
    double& a = chain->a[c];
    double& b = chain->b[c];
    switch (step.op) {
      case OpCode::kAdd:
        b += kv[c];
        break;
      case OpCode::kSub:
        if (step.known_first) {
          a = -a;
          b = kv[c] - b;
        } else {
          b -= kv[c];
        }
        break;
      case OpCode::kMul:
        a *= kv[c];
        b *= kv[c];
        break;
      default:  // kDiv, by the known values
        a /= kv[c];
        b /= kv[c];
        break;
    }
  }
  ++chain->length;
  return true;
}

bool All(const std::vector<double>& values, double v) {
  return std::all_of(values.begin(), values.end(), [v](double x) { return x == v; });
}

// The matmul by a known weight whose rows (a weight on the left: W @ p, as an imported
// Conv) or columns (on the right: p @ W, as a Gemm) are the channels of `base` (along
// `axis`; -1: every element); nullopt if there is none. The matmul (and the reshape
// between) must have no other use.
struct ChannelMatmul {
  ValueId reshape = ir::kInvalidValue;  // or kInvalidValue when base is the matmul
  ValueId matmul = ir::kInvalidValue;
  int weight = 0;  // the operand: 0 (its rows are the channels) or 1 (its columns)
};

// Whether `axis` of `shape` (a reshape of `out`) holds the elements of `out`'s axis
// `out_axis`: the same length, and the same number of elements before and after it.
bool SameAxis(const ir::Shape& shape, int axis, const ir::Shape& out, int out_axis) {
  auto elements = [](const ir::Shape& s, int begin, int end) {
    return ir::NumElements(ir::Shape(s.begin() + begin, s.begin() + end));
  };
  const int rank = static_cast<int>(shape.size()), out_rank = static_cast<int>(out.size());
  return shape[axis] == out[out_axis] && elements(shape, 0, axis) == elements(out, 0, out_axis) &&
         elements(shape, axis + 1, rank) == elements(out, out_axis + 1, out_rank);
}

std::optional<ChannelMatmul> ChannelMatmulOf(const ir::Graph& g,
                                             const std::vector<std::vector<ValueId>>& users,
                                             ValueId base, int axis, const PassContext& ctx) {
  ChannelMatmul r;
  ValueId m = base;
  if (g.node(base).op == OpCode::kReshape) {
    r.reshape = base;
    m = g.node(base).operands[0];
    if (users[m].size() != 1) return std::nullopt;
  }
  const ir::Node& mm = g.node(m);
  if (mm.op != OpCode::kMatmul || users[base].size() != 1 || mm.type.rank() < 2 ||
      mm.operands[0] == mm.operands[1]) {
    return std::nullopt;
  }
  const int out_rank = mm.type.rank();
  for (int k = 0; k < 2; ++k) {
    auto weight = KnownTensor(g, mm.operands[k], ctx);
    if (!weight || weight->second.rank() < 2 || IsKnownTensor(g, mm.operands[1 - k], ctx)) continue;
    const runtime::Tensor& w = weight->second;
    bool batched = false;  // a weight per batch is not per channel
    for (int d = 0; d + 2 < w.rank(); ++d) batched = batched || w.dim(d) != 1;
    if (batched ||
        (axis >= 0 && !SameAxis(g.type(base).shape, axis, mm.type.shape, out_rank - 2 + k))) {
      continue;
    }
    r.matmul = m;
    r.weight = k;
    return r;
  }
  return std::nullopt;
}

// W with its rows (axis -2) or columns (axis -1) scaled by `scale` (one value: all).
absl::StatusOr<runtime::Tensor> ScaleAxis(const runtime::Tensor& w,
                                          const std::vector<double>& scale, bool columns) {
  std::vector<double> values = w.ToDoubles();
  const int64_t rows = w.dim(w.rank() - 2), cols = w.dim(w.rank() - 1);
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t n = static_cast<int64_t>(i);
    const int64_t c = columns ? n % cols : (n / cols) % rows;
    values[i] *= scale.size() == 1 ? scale[0] : scale[c];
  }
  return runtime::Tensor::FromDoubles(w.dtype(), w.shape(), values);
}

// A constant of per-channel `values` that broadcasts along `axis` of a rank-`rank`
// result (a scalar when every channel has the same value).
ValueId EmitChannels(GraphRewriter& rw, const std::vector<double>& values, int axis, int rank,
                     ir::DType dtype) {
  if (axis < 0 || All(values, values[0])) return rw.Scalar(values[0], dtype);
  ir::Shape shape(rank - axis, SymExpr(1));
  shape[0] = SymExpr(static_cast<int64_t>(values.size()));
  return rw.Emit(OpCode::kConstant, std::vector<ValueId>{},
                 ir::Attrs{{"value", values}, {"dtype", dtype}, {"shape", shape}});
}

}  // namespace

absl::StatusOr<bool> FoldChannelAffine(ir::Graph* graph, PassContext* ctx) {
  if (!ctx->params_are_constant) return false;
  const ir::Graph& g = *graph;
  const std::vector<std::vector<ValueId>> users = g.Users();
  std::vector<std::optional<Chain>> chains(g.num_nodes());
  std::vector<bool> continued(g.num_nodes(), false);
  for (ValueId id = 0; id < g.num_nodes(); ++id) {
    std::optional<Step> step = StepOf(g, id, *ctx);
    if (!step) continue;
    Chain chain;
    const ValueId v = step->value;
    const bool inner = chains[v].has_value() && users[v].size() == 1;
    if (inner) chain = *chains[v];
    if (!inner || !Extend(*step, &chain)) {
      chain = Chain{.base = v};
      Extend(*step, &chain);
    } else {
      continued[v] = true;
    }
    chains[id] = std::move(chain);
  }

  // The chains to rewrite, by their last node, with the matmul to fold into if any.
  std::vector<std::optional<ChannelMatmul>> into(g.num_nodes());
  std::vector<bool> rewrite(g.num_nodes(), false);
  bool any = false;
  for (ValueId id = 0; id < g.num_nodes(); ++id) {
    if (!chains[id] || continued[id]) continue;
    const Chain& c = *chains[id];
    if (!All(c.a, 1.0)) into[id] = ChannelMatmulOf(g, users, c.base, c.axis, *ctx);
    // Worth it when the weight takes the multiply, or the chain gets shorter.
    const int kept = (All(c.a, 1.0) ? 0 : 1) + (All(c.b, 0.0) ? 0 : 1);
    rewrite[id] = into[id].has_value() || kept < c.length;
    any = any || rewrite[id];
  }
  if (!any) return false;

  GraphRewriter rw(g);
  for (ValueId id = 0; id < g.num_nodes(); ++id) {
    if (!rewrite[id]) {
      rw.Copy(id);
      continue;
    }
    const Chain& c = *chains[id];
    const ir::DType dtype = g.type(id).dtype;
    const int rank = g.type(id).rank();
    ValueId x = rw.Get(c.base);
    if (into[id]) {
      const ir::Node& mm = g.node(into[id]->matmul);
      const int k = into[id]->weight;
      auto [w_name, w] = *KnownTensor(g, mm.operands[k], *ctx);
      // A new name: the pass may run again on a graph whose params include its own.
      std::string name = absl::StrCat(w_name, ".affine", id);
      for (int n = 2; ctx->params.contains(name); ++n) {
        name = absl::StrCat(w_name, ".affine", id, "_", n);
      }
      GJ_ASSIGN_OR_RETURN(ctx->params[name], ScaleAxis(w, c.a, /*columns=*/k == 1));
      const ir::ValueType& wt = g.type(mm.operands[k]);
      ValueId scaled = rw.Emit(OpCode::kParam, std::vector<ValueId>{},
                               ir::Attrs{{"name", name}, {"dtype", wt.dtype}, {"shape", wt.shape}});
      ValueId p = rw.Get(mm.operands[1 - k]);
      x = k == 0 ? rw.Emit(OpCode::kMatmul, {scaled, p}) : rw.Emit(OpCode::kMatmul, {p, scaled});
      if (into[id]->reshape != ir::kInvalidValue) {
        x = rw.Emit(OpCode::kReshape, {x}, g.node(into[id]->reshape).attrs);
      }
    } else if (!All(c.a, 1.0)) {
      x = rw.Emit(OpCode::kMul, {x, EmitChannels(rw, c.a, c.axis, rank, dtype)});
    }
    if (!All(c.b, 0.0)) x = rw.Emit(OpCode::kAdd, {x, EmitChannels(rw, c.b, c.axis, rank, dtype)});
    rw.Map(id, x);
  }
  GJ_ASSIGN_OR_RETURN(*graph, std::move(rw).Finish());
  return true;
}

}  // namespace graphjit::compiler
