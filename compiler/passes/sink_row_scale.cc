#include "compiler/passes/sink_row_scale.h"

#include <optional>
#include <vector>

#include "compiler/passes/rewriter.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

using ir::OpCode;

// The scaled operand and the factor of `x` = a / s, a * s or s * a, when s is constant
// along a's last axis and does not broadcast a. `x` is a matmul's lhs, so it is a float
// of rank >= 2 (matmul's shape rule), and an s that fits into a also fits into the
// product [.., M, N]: s's last dim is 1, its others are 1 or a's, and a's dims other
// than K are the product's wherever they are not 1.
struct RowScale {
  ValueId a, s;
};

bool ConstantAlongLastAxis(const ir::ValueType& s) {
  return s.rank() == 0 || s.shape.back().AsConstant() == int64_t{1};
}

std::optional<RowScale> AsRowScale(const ir::Graph& g, ValueId x) {
  const ir::Node& n = g.node(x);
  if (n.op != OpCode::kDiv && n.op != OpCode::kMul) return std::nullopt;
  // For div only the divisor can factor out; a product may have it on either side.
  for (int side = 0; side < (n.op == OpCode::kMul ? 2 : 1); ++side) {
    const ValueId a = n.operands[side], s = n.operands[1 - side];
    if (g.node(a).type == n.type && ConstantAlongLastAxis(g.node(s).type)) {
      return RowScale{a, s};
    }
  }
  return std::nullopt;
}

// Whether factoring out of matmul `m` (lhs [.., M, K], result [.., M, N]) does not add
// divisions: see the header.
bool SavesWork(const ir::Graph& g, const ir::Node& m) {
  const std::optional<int64_t> k = g.node(m.operands[0]).type.shape.back().AsConstant();
  const std::optional<int64_t> n = m.type.shape.back().AsConstant();
  if (!n.has_value()) return false;
  return !k.has_value() || *n <= *k;
}

}  // namespace

absl::StatusOr<bool> SinkRowScale(ir::Graph* graph) {
  const ir::Graph& g = *graph;
  const std::vector<std::vector<ValueId>> users = g.Users();
  GraphRewriter rw(g);
  bool changed = false;
  for (ValueId id = 0; id < g.num_nodes(); ++id) {
    const ir::Node& n = g.node(id);
    std::optional<RowScale> scale;
    if (n.op == OpCode::kMatmul && users[n.operands[0]].size() == 1 && SavesWork(g, n)) {
      scale = AsRowScale(g, n.operands[0]);
    }
    if (!scale.has_value()) {
      rw.Copy(id);
      continue;
    }
    const ValueId product = rw.Emit(OpCode::kMatmul, {rw.Get(scale->a), rw.Get(n.operands[1])});
    rw.Map(id, rw.Emit(g.node(n.operands[0]).op, {product, rw.Get(scale->s)}));
    changed = true;
  }
  GJ_ASSIGN_OR_RETURN(*graph, std::move(rw).Finish());
  return changed;
}

}  // namespace graphjit::compiler
