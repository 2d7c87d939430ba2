#include "compiler/passes/align_padded_rows.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "compiler/passes/rewriter.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

using ir::OpCode;

// Rows shorter than this stay as they are: lowering fuses a producer's epilogue into a
// padded buffer's interior only from rows of 64 (kMinScatteredRow in
// compiler/lower/fuse_epilogues.cc); shorter rows are written by a pass of their own, and
// widening them costs more memory than aligning saves (efficientnet_b0 at 56 x 56: each
// row 58 -> 80 elements).
constexpr int64_t kMinAlignedRow = 64;

// Products summing at most this many terms per element are bound by their stores, which
// aligned rows halve; deeper ones (resnet18's 7 x 7 stem, 147 terms) gain nothing from
// aligned stores, and the wider buffer slows whatever reads it (its max pool: +50 us).
constexpr int64_t kMaxStoreBoundDepth = 64;

// Whether `v` is a product of at most kMaxStoreBoundDepth terms per element, through the
// pointwise ops and reshapes of its epilogue (each followed along its operand of `v`'s
// own shape: a bias or a clip bound is broadcast) and its padding along other axes.
bool StoreBoundProduct(const ir::Graph& g, ValueId v) {
  for (int step = 0; step < 8; ++step) {
    const ir::Node& n = g.node(v);
    if (n.op == OpCode::kMatmul) {
      const std::optional<int64_t> depth = g.type(n.operands[0]).shape.back().AsConstant();
      return depth && *depth <= kMaxStoreBoundDepth;
    }
    if (n.op == OpCode::kReshape) {
      v = n.operands[0];
      continue;
    }
    if (n.op == OpCode::kConcat) {  // the padding along another axis: fills around one
      const auto inner = std::find_if(n.operands.begin(), n.operands.end(),
                                      [&](ValueId o) { return g.node(o).op != OpCode::kFull; });
      if (inner == n.operands.end() ||
          std::count_if(n.operands.begin(), n.operands.end(),
                        [&](ValueId o) { return g.node(o).op != OpCode::kFull; }) != 1) {
        return false;
      }
      v = *inner;
      continue;
    }
    if (ir::LoweringOf(n.op) != ir::OpLowering::kPointwise) return false;
    const auto same_shape = std::find_if(n.operands.begin(), n.operands.end(), [&](ValueId o) {
      return g.type(o).shape == n.type.shape;
    });
    if (same_shape == n.operands.end()) return false;
    v = *same_shape;
  }
  return false;
}

// The row padding of `id` when it is concat([full(l), x, full(r)]) along the last axis
// (r may be absent) and worth aligning on vectors of `lanes`: {l, r}, or nullopt.
struct RowPads {
  int64_t left, right;
};
std::optional<RowPads> AlignablePads(const ir::Graph& g, ValueId id, int64_t lanes,
                                     const std::vector<std::vector<ValueId>>& users) {
  const ir::Node& n = g.node(id);
  if (lanes < 1 || n.op != OpCode::kConcat || !ir::IsFloat(n.type.dtype) || n.type.rank() < 2) {
    return {};
  }
  int64_t axis = n.attrs.GetInt("axis");
  if (axis < 0) axis += n.type.rank();
  if (axis != n.type.rank() - 1 || n.operands.size() < 2 || n.operands.size() > 3) return {};
  auto fill_width = [&](ValueId v) -> std::optional<int64_t> {
    const ir::Node& f = g.node(v);
    if (f.op != OpCode::kFull) return std::nullopt;
    return f.type.shape.back().AsConstant();
  };
  const std::optional<int64_t> left = fill_width(n.operands[0]);
  if (!left || *left % lanes == 0 || fill_width(n.operands[1])) return {};
  std::optional<int64_t> right = int64_t{0};
  if (n.operands.size() == 3) right = fill_width(n.operands[2]);
  const std::optional<int64_t> width = g.type(n.operands[1]).shape.back().AsConstant();
  if (!right || !width || *width < std::max(lanes, kMinAlignedRow)) return {};
  if (!StoreBoundProduct(g, n.operands[1])) return {};
  // Read only by a convolution or a pool (its taps or windows): a view of the wider
  // buffer serves them, where an output or any other reader would need a copy.
  if (users[id].empty() || !std::all_of(users[id].begin(), users[id].end(), [&](ValueId u) {
        return u < g.num_nodes() &&
               (g.node(u).op == OpCode::kSlice || g.node(u).op == OpCode::kWindow);
      })) {
    return {};
  }
  return RowPads{*left, *right};
}

int64_t Lanes(const ir::Graph& g, ValueId id, const PassContext& ctx) {
  return ctx.tile_vector_bytes / ir::DTypeSize(g.node(id).type.dtype);
}

}  // namespace

absl::StatusOr<bool> AlignPaddedRows(ir::Graph* graph, PassContext* ctx) {
  if (ctx->tile_vector_bytes <= 0) return false;
  const ir::Graph& g = *graph;
  const std::vector<std::vector<ValueId>> users = g.Users();
  bool any = false;
  for (ValueId id = 0; id < g.num_nodes() && !any; ++id) {
    any = AlignablePads(g, id, Lanes(g, id, *ctx), users).has_value();
  }
  if (!any) return false;
  GraphRewriter rw(g);
  for (ValueId id = 0; id < g.num_nodes(); ++id) {
    const int64_t lanes = Lanes(g, id, *ctx);
    const std::optional<RowPads> pads = AlignablePads(g, id, lanes, users);
    if (!pads) {
      rw.Copy(id);
      continue;
    }
    const ir::Node& n = g.node(id);
    const ValueId x = n.operands[1];
    const int64_t width = *g.type(x).shape.back().AsConstant();
    const int64_t before = (pads->left + lanes - 1) / lanes * lanes;
    const int64_t shift = before - pads->left;
    const int64_t row = before + width + pads->right;
    const int64_t after = (row + lanes - 1) / lanes * lanes - before - width;
    // A fill of `w` columns with operand `from`'s value (the borders may differ; with
    // no right border, the added columns take the left's).
    auto fill = [&](int64_t w, ValueId from) {
      ir::Shape s = n.type.shape;
      s.back() = ir::SymExpr(w);
      return rw.Emit(OpCode::kFull, {},
                     ir::Attrs{{"value", g.node(from).attrs.GetFloat("value")},
                               {"dtype", n.type.dtype},
                               {"shape", s}});
    };
    std::vector<ValueId> parts = {fill(before, n.operands[0]), rw.Get(x)};
    if (after > 0)
      parts.push_back(fill(after, n.operands.back() == x ? n.operands[0] : n.operands.back()));
    const ValueId wide =
        rw.Emit(OpCode::kConcat, parts, ir::Attrs{{"axis", n.attrs.GetInt("axis")}});
    rw.Map(id, rw.Emit(OpCode::kSlice, {wide},
                       ir::Attrs{{"axis", int64_t{-1}},
                                 {"start", ir::SymExpr(shift)},
                                 {"end", ir::SymExpr(shift + pads->left + width + pads->right)}}));
  }
  GJ_ASSIGN_OR_RETURN(*graph, std::move(rw).Finish());
  return true;
}

}  // namespace graphjit::compiler
