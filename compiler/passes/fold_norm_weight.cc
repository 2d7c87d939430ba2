#include "compiler/passes/fold_norm_weight.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "compiler/passes/rewriter.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

using ir::OpCode;

// For mul node `id`: the operand index of a 1-D known weight over the last axis whose
// other operand already has the product's type (so the weight is a pure per-channel
// scale), or -1.
int WeightOperand(const ir::Graph& g, ValueId id, const PassContext& ctx) {
  const ir::Node& mul = g.node(id);
  if (mul.op != OpCode::kMul || mul.type.rank() < 1) return -1;
  for (int w = 0; w < 2; ++w) {
    const ir::ValueType& wt = g.type(mul.operands[w]);
    const ir::ValueType& nt = g.type(mul.operands[1 - w]);
    if (wt.rank() == 1 && wt.shape[0] == mul.type.shape.back() && nt == mul.type &&
        KnownTensor(g, mul.operands[w], ctx)) {
      return w;
    }
  }
  return -1;
}

bool IsFoldableMatmul(const ir::Graph& g, ValueId user, ValueId lhs, const PassContext& ctx) {
  const ir::Node& m = g.node(user);
  if (m.op != OpCode::kMatmul || m.operands[0] != lhs || m.operands[1] == lhs) return false;
  const ir::Node& rhs = g.node(m.operands[1]);
  return rhs.op == OpCode::kParam && rhs.type.rank() == 2 && ctx.params.contains(rhs.name());
}

template <typename T>
void ScaleRowsAs(const runtime::Tensor& W, const runtime::Tensor& w, runtime::Tensor& out) {
  const T* in = W.data<T>();
  const T* scale = w.data<T>();
  T* result = out.data<T>();
  const int64_t rows = W.dim(0), cols = W.dim(1);
  for (int64_t k = 0; k < rows; ++k) {
    for (int64_t j = 0; j < cols; ++j) result[k * cols + j] = in[k * cols + j] * scale[k];
  }
}

// W'[k, j] = w[k] * W[k, j]: one rounding per element, the same as the multiply the graph
// did at run time, just applied to the weight instead of the activation. Floats of one
// dtype multiply in it directly (the warm start's cost is mostly this); others go through
// doubles.
absl::StatusOr<runtime::Tensor> ScaleRows(const runtime::Tensor& W, const runtime::Tensor& w) {
  if (W.dtype() == w.dtype() && (W.dtype() == ir::DType::kF32 || W.dtype() == ir::DType::kF64)) {
    GJ_ASSIGN_OR_RETURN(runtime::Tensor out, runtime::Tensor::Empty(W.dtype(), W.shape()));
    if (W.dtype() == ir::DType::kF32) {
      ScaleRowsAs<float>(W, w, out);
    } else {
      ScaleRowsAs<double>(W, w, out);
    }
    return out;
  }
  std::vector<double> wv = w.ToDoubles(), Wv = W.ToDoubles();
  const int64_t cols = W.dim(1);
  for (int64_t k = 0; k < W.dim(0); ++k) {
    for (int64_t j = 0; j < cols; ++j) Wv[k * cols + j] *= wv[k];
  }
  return runtime::Tensor::FromDoubles(W.dtype(), W.shape(), Wv);
}

}  // namespace

absl::StatusOr<bool> FoldNormWeight(ir::Graph* graph, PassContext* ctx) {
  if (!ctx->params_are_constant) return false;
  const ir::Graph& g = *graph;
  std::vector<std::vector<ValueId>> users = g.Users();
  // The scaled values whose every use is a foldable matmul, with their weight operand.
  absl::flat_hash_map<ValueId, int> foldable;
  for (ValueId id = 0; id < g.num_nodes(); ++id) {
    int w = WeightOperand(g, id, *ctx);
    if (w < 0 || users[id].empty()) continue;
    bool all = true;
    for (ValueId u : users[id]) {
      all &= u < g.num_nodes() && IsFoldableMatmul(g, u, id, *ctx);
    }
    if (all) foldable[id] = w;
  }
  if (foldable.empty()) return false;

  GraphRewriter rw(g);
  absl::flat_hash_map<std::string, ValueId> scaled_params;  // one node per new weight
  for (ValueId id = 0; id < g.num_nodes(); ++id) {
    const ir::Node& n = g.node(id);
    auto it = n.op == OpCode::kMatmul ? foldable.find(n.operands[0]) : foldable.end();
    if (it == foldable.end()) {
      rw.Copy(id);
      continue;
    }
    const ir::Node& mul = g.node(n.operands[0]);
    ValueId normed = mul.operands[1 - it->second];
    auto [w_name, w] = *KnownTensor(g, mul.operands[it->second], *ctx);
    const ir::Node& rhs = g.node(n.operands[1]);
    const runtime::Tensor& W = ctx->params.at(rhs.name());
    std::string name = absl::StrCat(rhs.name(), ".scaled.", w_name);
    if (!ctx->params.contains(name)) {
      GJ_ASSIGN_OR_RETURN(ctx->params[name], ScaleRows(W, w));
    }
    auto [slot, inserted] = scaled_params.try_emplace(name, ir::kInvalidValue);
    if (inserted) {
      slot->second =
          rw.Emit(OpCode::kParam, std::vector<ValueId>{},
                  ir::Attrs{{"name", name}, {"dtype", rhs.type.dtype}, {"shape", rhs.type.shape}});
    }
    rw.Map(id, rw.Emit(OpCode::kMatmul, {rw.Get(normed), slot->second}));
  }
  GJ_ASSIGN_OR_RETURN(*graph, std::move(rw).Finish());
  return true;
}

}  // namespace graphjit::compiler
