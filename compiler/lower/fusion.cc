#include "compiler/lower/fusion.h"

#include <algorithm>
#include <optional>

#include "compiler/lower/kernel_ir.h"

namespace graphjit::compiler {
namespace {

using ir::OpCode;
using ir::ValueId;

// See Decide: the arithmetic per element past which a producer is not inlined into a
// transpose that moves its last axis (a 7 x 7 depthwise convolution is ~100).
constexpr int kTransposedInlineCost = 16;

bool IsLayout(OpCode op) {
  return op == OpCode::kTranspose || op == OpCode::kReshape || op == OpCode::kExpand ||
         op == OpCode::kSlice || op == OpCode::kConcat || op == OpCode::kWindow;
}

// Whether user `u` (num_nodes() for a graph output) is a window reading each element of
// its operand more than once (more than one position per window).
bool IsOverlappingWindow(const ir::Graph& g, ValueId u) {
  if (u >= g.num_nodes() || g.node(u).op != OpCode::kWindow) return false;
  for (int64_t k : g.node(u).attrs.Get<std::vector<int64_t>>("kernel")) {
    if (k > 1) return true;
  }
  return false;
}

// How many single-user pointwise steps the uses of a value may take to meet (see
// MeetInOneConsumer): hardswish's x * (clip(x + 3) / 6) takes 3.
constexpr int kMaxMeetingSteps = 4;

bool IsElementwise(const ir::Graph& g, ValueId v) {
  return ScalarOpFor(g.node(v).op).has_value() || g.node(v).op == OpCode::kCast;
}

}  // namespace

FusionPolicy::FusionPolicy(const ir::Graph& graph) : g_(graph), users_(graph.Users()) {
  is_output_.assign(graph.num_nodes(), false);
  for (ValueId out : graph.outputs()) is_output_[out] = true;
  cost_.assign(graph.num_nodes(), 0);
}

int FusionPolicy::Cost(ValueId id, const std::vector<int>& buffer_of) const {
  const ir::Node& n = g_.node(id);
  if (buffer_of[id] >= 0) return 0;
  std::optional<ScalarOp> scalar = ScalarOpFor(n.op);
  int own = IsLayout(n.op) || ir::IsSourceOp(n.op) || n.op == OpCode::kCast ? 0
            : scalar.has_value()                                            ? ScalarOpCost(*scalar)
                                                                            : 1;
  for (ValueId v : n.operands) own += cost_[v];
  return own;
}

bool FusionPolicy::RhsTransposed(ValueId mm, const std::vector<int>& buffer_of) const {
  ValueId v = g_.node(mm).operands[1];
  while (buffer_of[v] < 0 && IsLayout(g_.node(v).op)) {
    if (g_.node(v).op == OpCode::kTranspose) return true;
    v = g_.node(v).operands[0];
  }
  return false;
}

bool FusionPolicy::MeetInOneConsumer(ValueId id) const {
  // Each user's path: the user, then while a node is elementwise with one user (not an
  // output), that user.
  auto path = [&](ValueId u) {
    std::vector<ValueId> p = {u};
    while (static_cast<int>(p.size()) <= kMaxMeetingSteps && p.back() < g_.num_nodes() &&
           IsElementwise(g_, p.back()) && users_[p.back()].size() == 1 && !is_output_[p.back()]) {
      p.push_back(users_[p.back()][0]);
    }
    return p;
  };
  std::vector<std::vector<ValueId>> paths;
  for (ValueId u : users_[id]) paths.push_back(path(u));
  // The meeting node: the first of one path on every other path, itself elementwise, and
  // every node before it on each path elementwise (so it reads `id` at its own index) and
  // cheap: a transcendental's constants (exp's polynomial) beside a costly producer's
  // (a depthwise convolution's nine weights) overflow the vector registers, and the kernel
  // spills. One 3 x 3 depthwise convolution over 96 channels of 56 x 56 and its
  // x * sigmoid(x): 37 + 62 us as two kernels, 125 us as one.
  for (ValueId meet : paths[0]) {
    if (meet >= g_.num_nodes() || !IsElementwise(g_, meet)) return false;
    for (const auto& p : paths) {
      for (ValueId v : p) {
        if (v == meet) break;
        const std::optional<ScalarOp> op = ScalarOpFor(g_.node(v).op);
        if (op && IsTranscendental(*op)) return false;
      }
    }
    const bool on_all = std::all_of(paths.begin(), paths.end(), [&](const auto& p) {
      return std::find(p.begin(), p.end(), meet) != p.end();
    });
    if (on_all) return true;
  }
  return false;
}

bool FusionPolicy::Decide(ValueId id, const std::vector<int>& buffer_of) {
  cost_[id] = Cost(id, buffer_of);
  const ir::Node& n = g_.node(id);
  if (ir::LoweringOf(n.op) == ir::OpLowering::kKernel || is_output_[id]) return true;
  // A window re-reads its operand once per window position: the operand's arithmetic
  // would repeat that often, and a padding concat's selects would run per position
  // instead of once per element. A buffer read by plain loads is cheaper from 2 on.
  for (ValueId u : users_[id]) {
    if (IsOverlappingWindow(g_, u) && (cost_[id] > 0 || n.op == OpCode::kConcat)) {
      return true;
    }
  }
  // A padded buffer widened so its rows' interiors start on vectors (align_padded_rows:
  // concat -> slice -> the convolution reading it): the concat is the buffer, the slice
  // a view of it, whatever the slice's users would otherwise have materialized.
  if (n.op == OpCode::kConcat && users_[id].size() == 1 &&
      g_.node(users_[id][0]).op == OpCode::kSlice) {
    const std::vector<ValueId>& readers = users_[users_[id][0]];
    if (readers.size() > 1 || std::any_of(readers.begin(), readers.end(),
                                          [&](ValueId u) { return IsOverlappingWindow(g_, u); })) {
      return true;
    }
  }
  if (cost_[id] <= 1) return false;
  // Not an output (returned above), so every user is a node.
  if (users_[id].size() > 1 && !MeetInOneConsumer(id)) return true;
  // Costly arithmetic whose one user moves its last axis (NCHW to NHWC): inlined, the
  // kernel would run along the transposed order, scattering each vector's stores (or
  // gathering every operand); materialized, it runs along its own rows and the transpose
  // is a copy.
  if (cost_[id] >= kTransposedInlineCost) {
    const ir::Node& u = g_.node(users_[id][0]);
    if (u.op == OpCode::kTranspose) {
      const std::vector<int64_t> perm = u.attrs.Get<std::vector<int64_t>>("perm");
      if (!perm.empty() && perm.back() != static_cast<int64_t>(perm.size()) - 1) return true;
    }
  }
  for (ValueId u : users_[id]) {
    if (g_.node(u).op != OpCode::kMatmul) continue;
    const bool is_lhs = g_.node(u).operands[0] == id;
    // An inlined matmul operand is re-evaluated per output element, except the lhs of an
    // n-innermost (axpy) matmul, evaluated once per (m, k). A transposed rhs makes the
    // loop order k innermost.
    if (!is_lhs || RhsTransposed(u, buffer_of)) return true;
  }
  return false;
}

}  // namespace graphjit::compiler
