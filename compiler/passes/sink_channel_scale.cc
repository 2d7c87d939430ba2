#include "compiler/passes/sink_channel_scale.h"

#include <optional>
#include <vector>

#include "compiler/passes/rewriter.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

using ir::OpCode;

// A product the pass rewrites: matmul(a, reshape(x * s)).
struct ChannelScale {
  ValueId x, s;
  ir::Shape scale_shape;  // s' for the lhs: [batch.., 1, C]
};

std::optional<ChannelScale> Match(const ir::Graph& g, ValueId id,
                                  const std::vector<std::vector<ValueId>>& users) {
  const ir::Node& m = g.node(id);
  if (m.op != OpCode::kMatmul || !ir::IsFloat(m.type.dtype)) return std::nullopt;
  const ValueId r = m.operands[1];
  if (g.node(r).op != OpCode::kReshape || users[r].size() != 1 || m.operands[0] == r) {
    return std::nullopt;
  }
  const ValueId mul = g.node(r).operands[0];
  const ir::Node& mn = g.node(mul);
  if (mn.op != OpCode::kMul || users[mul].size() != 1) return std::nullopt;
  const ir::Shape& rs = g.type(r).shape;
  const ir::Shape& as = g.type(m.operands[0]).shape;
  if (rs.size() < 2 || as.size() < 2) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const ValueId x = mn.operands[side], s = mn.operands[1 - side];
    const ir::ValueType& xt = g.type(x);
    const ir::ValueType& st = g.type(s);
    if (xt != mn.type || st.rank() != xt.rank() || xt.rank() < 3) continue;
    // s: [1 or n, C, 1..]; x: [n, C, spatial..] with constant dims.
    const std::optional<std::vector<int64_t>> xdims = ConstantDims(xt.shape);
    const std::optional<std::vector<int64_t>> sdims = ConstantDims(st.shape);
    if (!xdims || !sdims) continue;  // a symbolic dim
    const std::vector<int64_t>& xd = *xdims;
    const std::vector<int64_t>& sd = *sdims;
    bool per_channel = sd[1] == xd[1] && (sd[0] == 1 || sd[0] == xd[0]);
    int64_t pixels = 1;
    for (int i = 2; i < xt.rank(); ++i) per_channel = per_channel && sd[i] == 1, pixels *= xd[i];
    if (!per_channel) continue;
    // The rhs is [n.., C, P] (its batch dims hold the n images) and the lhs's columns are C.
    const std::optional<std::vector<int64_t>> rdims = ConstantDims(rs);
    if (!rdims) return std::nullopt;
    const std::vector<int64_t>& rd = *rdims;
    int64_t images = 1;
    for (size_t i = 0; i + 2 < rd.size(); ++i) images *= rd[i];
    std::optional<int64_t> k = as.back().AsConstant(), rows = as[as.size() - 2].AsConstant();
    if (rd[rd.size() - 2] != xd[1] || rd.back() != pixels || images != xd[0] || !k || *k != xd[1] ||
        !rows) {
      return std::nullopt;
    }
    if (*rows * sd[0] >= pixels * xd[0]) return std::nullopt;  // scaling a costs more
    ChannelScale out{x, s, {}};
    // [batch.., 1, C]: the rhs's batch dims when each image has its own factors, else [1, C].
    if (sd[0] > 1) {
      for (size_t i = 0; i + 2 < rd.size(); ++i) out.scale_shape.push_back(ir::SymExpr(rd[i]));
    }
    out.scale_shape.push_back(ir::SymExpr(1));
    out.scale_shape.push_back(ir::SymExpr(xd[1]));
    return out;
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<bool> SinkChannelScale(ir::Graph* graph) {
  const ir::Graph& g = *graph;
  const std::vector<std::vector<ValueId>> users = g.Users();
  bool any = false;
  for (ValueId id = 0; id < g.num_nodes() && !any; ++id) any = Match(g, id, users).has_value();
  if (!any) return false;
  GraphRewriter rw(g);
  for (ValueId id = 0; id < g.num_nodes(); ++id) {
    std::optional<ChannelScale> cs = Match(g, id, users);
    if (!cs) {
      rw.Copy(id);
      continue;
    }
    const ir::Node& m = g.node(id);
    const ValueId scale =
        rw.Emit(OpCode::kReshape, {rw.Get(cs->s)}, ir::Attrs{{"shape", cs->scale_shape}});
    const ValueId lhs = rw.Emit(OpCode::kMul, {rw.Get(m.operands[0]), scale});
    const ValueId rhs = rw.Emit(OpCode::kReshape, {rw.Get(cs->x)},
                                ir::Attrs{{"shape", g.type(m.operands[1]).shape}});
    rw.Map(id, rw.Emit(OpCode::kMatmul, {lhs, rhs}));
  }
  GJ_ASSIGN_OR_RETURN(*graph, std::move(rw).Finish());
  return true;
}

}  // namespace graphjit::compiler
