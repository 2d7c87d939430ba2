#include "compiler/passes/concat_weights.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/passes/rewriter.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

using ir::OpCode;

// Whether node `id` is a matmul whose weight is a known 2-D parameter of constant shape.
bool IsKnownWeightMatmul(const ir::Graph& g, ValueId id, const PassContext& ctx) {
  const ir::Node& m = g.node(id);
  if (m.op != OpCode::kMatmul || m.operands[0] == m.operands[1]) return false;
  const ir::Node& w = g.node(m.operands[1]);
  if (w.op != OpCode::kParam || w.type.rank() != 2 || !w.type.shape[0].IsConstant() ||
      !w.type.shape[1].IsConstant()) {
    return false;
  }
  auto it = ctx.params.find(w.name());
  return it != ctx.params.end() && it->second.dtype() == w.type.dtype &&
         it->second.shape() ==
             std::vector<int64_t>{*w.type.shape[0].AsConstant(), *w.type.shape[1].AsConstant()};
}

// [W1 | .. | Wn]: row k is row k of each weight in turn (the bytes, any dtype).
absl::StatusOr<runtime::Tensor> Concat(const std::vector<runtime::Tensor>& weights) {
  const int64_t rows = weights[0].dim(0);
  int64_t cols = 0;
  for (const runtime::Tensor& w : weights) cols += w.dim(1);
  GJ_ASSIGN_OR_RETURN(runtime::Tensor out,
                      runtime::Tensor::Empty(weights[0].dtype(), {rows, cols}));
  const int64_t element = ir::DTypeSize(out.dtype());
  auto* to = static_cast<char*>(out.raw_data());
  for (int64_t k = 0; k < rows; ++k) {
    for (const runtime::Tensor& w : weights) {
      const int64_t bytes = w.dim(1) * element;
      std::memcpy(to, static_cast<const char*>(w.raw_data()) + k * bytes, bytes);
      to += bytes;
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<bool> ConcatWeights(ir::Graph* graph, PassContext* ctx) {
  if (!ctx->params_are_constant) return false;
  const ir::Graph& g = *graph;
  // Per lhs, its matmuls through distinct known weights, in graph order (parameter names
  // are unique, so a weight is its node).
  absl::flat_hash_map<ValueId, std::vector<ValueId>> groups;
  for (ValueId id = 0; id < g.num_nodes(); ++id) {
    if (!IsKnownWeightMatmul(g, id, *ctx)) continue;
    std::vector<ValueId>& members = groups[g.node(id).operands[0]];
    const ValueId weight = g.node(id).operands[1];
    if (std::none_of(members.begin(), members.end(),
                     [&](ValueId m) { return g.node(m).operands[1] == weight; })) {
      members.push_back(id);  // a weight twice is CSE's to merge, not to concatenate
    }
  }
  absl::flat_hash_map<ValueId, const std::vector<ValueId>*> group_of_first;
  for (const auto& [lhs, members] : groups) {
    if (members.size() >= 2) group_of_first[members.front()] = &members;
  }
  if (group_of_first.empty()) return false;

  GraphRewriter rw(g);
  for (ValueId id = 0; id < g.num_nodes(); ++id) {
    if (rw.IsMapped(id)) continue;  // a later member, already a slice
    auto it = group_of_first.find(id);
    if (it == group_of_first.end()) {
      rw.Copy(id);
      continue;
    }
    const std::vector<ValueId>& members = *it->second;
    std::vector<std::string> weight_names;
    std::vector<runtime::Tensor> weights;  // copies share the data; the map may rehash
    for (ValueId m : members) {
      weight_names.push_back(g.node(g.node(m).operands[1]).name());
      weights.push_back(ctx->params.at(weight_names.back()));
    }
    const std::string name = absl::StrCat("concat(", absl::StrJoin(weight_names, ","), ")");
    if (!ctx->params.contains(name)) {
      GJ_ASSIGN_OR_RETURN(ctx->params[name], Concat(weights));
    }
    const ir::Node& first_weight = g.node(g.node(id).operands[1]);
    const int64_t columns = ctx->params.at(name).dim(1);
    const ValueId weight =
        rw.Emit(OpCode::kParam, std::vector<ValueId>{},
                ir::Attrs{{"name", name},
                          {"dtype", first_weight.type.dtype},
                          {"shape", ir::Shape{first_weight.type.shape[0], ir::SymExpr(columns)}}});
    const ValueId product = rw.Emit(OpCode::kMatmul, {rw.Get(g.node(id).operands[0]), weight});
    int64_t start = 0;
    for (size_t i = 0; i < members.size(); ++i) {
      const int64_t end = start + weights[i].dim(1);
      rw.Map(members[i], rw.Emit(OpCode::kSlice, {product},
                                 ir::Attrs{{"axis", int64_t{-1}},
                                           {"start", ir::SymExpr(start)},
                                           {"end", ir::SymExpr(end)}}));
      start = end;
    }
  }
  GJ_ASSIGN_OR_RETURN(*graph, std::move(rw).Finish());
  return true;
}

}  // namespace graphjit::compiler
