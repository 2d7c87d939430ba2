#include "compiler/passes/orient_products.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/passes/rewriter.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

using ir::OpCode;

// Products below this many multiply-adds stay generated loops whichever way round
// (kExternMatmulMinMacs in compiler/lower/matmul_strategy.h, which passes do not include).
constexpr int64_t kMinMacs = 4096;

// A 1 x 1 convolution over at most this many positions (a CNN's 7 x 7 stage: 49) runs
// turned: its weights become panels packed at compile time (as the lhs they were packed
// again on every call, 0.9-1.6 MB streamed from memory per layer) and its few columns no
// longer leave a vector mostly empty (49 of 64 lanes); the transpose of its input is a
// small copy and a pass that follows reads the turned result at little cost. Alternated
// with the pass off (`graphjit-dump --profile`, one thread): a 160 -> 960 expansion at
// 7 x 7 108 -> 68 us; shufflenet_v2_x1_0 -9%, efficientnet_b0, mobilenet_v2, regnet,
// mobilenet_v3_small, resnet50 -5%, googlenet level. At 14 x 14 (196 columns) the product
// gained 18% but the pass reading it turned took 8 -> 71 us: activations with more columns
// (turned for all of them: shufflenet_v2_x1_0 1.90 -> 2.42 ms, mnasnet0_5 2.0 -> 2.7)
// stay as they are.
constexpr int64_t kMaxTurnedActivationColumns = 64;

// The permutation swapping the last two of `rank` axes.
std::vector<int64_t> SwapLastTwo(int rank) {
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return perm;
}

// Whether `v` is sliding windows (im2col's patches), through reshapes.
bool IsWindow(const ir::Graph& g, ValueId v) {
  while (g.node(v).op == OpCode::kReshape) v = g.node(v).operands[0];
  return g.node(v).op == OpCode::kWindow;
}

// Whether matmul `id` should run the other way round: its lhs a known parameter of
// constant shape, its rhs's column count a constant below the lhs's row count.
bool ShouldOrient(const ir::Graph& g, ValueId id, const PassContext& ctx) {
  const ir::Node& m = g.node(id);
  if (m.op != OpCode::kMatmul || m.operands[0] == m.operands[1]) return false;
  if (!ir::IsFloat(g.node(m.operands[0]).type.dtype)) return false;
  const std::optional<std::vector<int64_t>> known = KnownParamDims(g, m.operands[0], ctx);
  if (!known) return false;
  const std::vector<int64_t>& shape = *known;
  const ir::Shape& xs = g.node(m.operands[1]).type.shape;
  std::optional<int64_t> n = xs.back().AsConstant();
  // Windows (a convolution's patches), which lowering materializes anyway and then
  // materializes turned at the same cost; an activation (a 1 x 1 convolution's input)
  // only with few columns (see kMaxTurnedActivationColumns).
  if (!IsWindow(g, m.operands[1]) && !(n && *n <= kMaxTurnedActivationColumns)) return false;
  const int64_t rows = shape[shape.size() - 2], depth = shape.back();
  return n && *n >= 2 && *n < rows && rows * *n * depth >= kMinMacs;
}

// Copies element `from` of `src` to element `to` of `dst`, of `element` bytes: a word copy
// for 4 and 8 bytes (a memcpy call per element made packing resnet18's turned weights take
// 31 ms of its compile).
inline void CopyElement(const char* src, int64_t from, char* dst, int64_t to, int64_t element) {
  switch (element) {
    case 4:
      reinterpret_cast<uint32_t*>(dst)[to] = reinterpret_cast<const uint32_t*>(src)[from];
      return;
    case 8:
      reinterpret_cast<uint64_t*>(dst)[to] = reinterpret_cast<const uint64_t*>(src)[from];
      return;
    default:
      std::memcpy(dst + to * element, src + from * element, element);
  }
}

// `w` [b.., M, K] as panels of `nr` of its rows: [b.., ceil(M / nr), K, nr] with
// panel p, row k, lane j holding w[p * nr + j, k] (zero past M): the tiles' packed rhs.
absl::StatusOr<runtime::Tensor> PackPanels(const runtime::Tensor& w, int64_t nr) {
  std::vector<int64_t> shape = w.shape();
  const int rank = static_cast<int>(shape.size());
  const int64_t rows = shape[rank - 2], cols = shape[rank - 1];
  const int64_t panels = (rows + nr - 1) / nr;
  shape[rank - 2] = panels;
  shape.push_back(nr);
  GJ_ASSIGN_OR_RETURN(runtime::Tensor out, runtime::Tensor::Zeros(w.dtype(), shape));
  const int64_t element = ir::DTypeSize(w.dtype());
  const int64_t matrices = w.numel() / (rows * cols);
  const auto* from = static_cast<const char*>(w.raw_data());
  auto* to = static_cast<char*>(out.raw_data());
  for (int64_t b = 0; b < matrices; ++b) {
    const char* src = from + b * rows * cols * element;
    char* dst = to + b * panels * cols * nr * element;
    // Panel by panel, so the writes run in order (the reads then stride by K).
    for (int64_t p = 0; p < panels; ++p) {
      const int64_t lanes = std::min(nr, rows - p * nr);
      for (int64_t c = 0; c < cols; ++c) {
        for (int64_t j = 0; j < lanes; ++j) {
          CopyElement(src, (p * nr + j) * cols + c, dst, (p * cols + c) * nr + j, element);
        }
      }
    }
  }
  return out;
}

// W^T [b.., K, M] read out of W packed into the tiles' panels of two vectors of rows:
//   slice(reshape(transpose(panels, K before the panel axis), [b.., K, panels * nr]), :M)
// which the tiles read in place (compiler/codegen/codegen_tiles.cc), so the weights are
// packed once, here, not on every call.
absl::StatusOr<ValueId> PanelsAsTransposed(GraphRewriter* rw, const ir::Node& w, int vector_bytes,
                                           PassContext* ctx) {
  const int64_t nr = 2 * vector_bytes / ir::DTypeSize(w.type.dtype);
  const std::string name = absl::StrCat("panels", nr, "(", w.name(), ")");
  if (!ctx->params.contains(name)) {
    GJ_ASSIGN_OR_RETURN(ctx->params[name], PackPanels(ctx->params.at(w.name()), nr));
  }
  const int rank = w.type.rank();
  const int64_t rows = *w.type.shape[rank - 2].AsConstant();
  const int64_t depth = *w.type.shape[rank - 1].AsConstant();
  const int64_t panels = (rows + nr - 1) / nr;
  ir::Shape packed(w.type.shape.begin(), w.type.shape.end() - 2);
  packed.insert(packed.end(), {ir::SymExpr(panels), ir::SymExpr(depth), ir::SymExpr(nr)});
  const ValueId p =
      rw->Emit(OpCode::kParam, std::vector<ValueId>{},
               ir::Attrs{{"name", name}, {"dtype", w.type.dtype}, {"shape", std::move(packed)}});
  std::vector<int64_t> perm(rank + 1);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[rank - 2], perm[rank - 1]);
  const ValueId t = rw->Emit(OpCode::kTranspose, {p}, ir::Attrs{{"perm", perm}});
  ir::Shape flat(w.type.shape.begin(), w.type.shape.end() - 2);
  flat.insert(flat.end(), {ir::SymExpr(depth), ir::SymExpr(panels * nr)});
  ValueId wt = rw->Emit(OpCode::kReshape, {t}, ir::Attrs{{"shape", std::move(flat)}});
  if (panels * nr != rows) {
    wt = rw->Emit(
        OpCode::kSlice, {wt},
        ir::Attrs{{"axis", int64_t{-1}}, {"start", ir::SymExpr(0)}, {"end", ir::SymExpr(rows)}});
  }
  return wt;
}

}  // namespace

absl::StatusOr<bool> OrientProducts(ir::Graph* graph, PassContext* ctx) {
  if (!ctx->params_are_constant || ctx->tile_vector_bytes <= 0) return false;
  const ir::Graph& g = *graph;
  bool any = false;
  for (ValueId id = 0; id < g.num_nodes() && !any; ++id) any = ShouldOrient(g, id, *ctx);
  if (!any) return false;
  GraphRewriter rw(g);
  for (ValueId id = 0; id < g.num_nodes(); ++id) {
    if (!ShouldOrient(g, id, *ctx)) {
      rw.Copy(id);
      continue;
    }
    const ir::Node& m = g.node(id);
    const ir::Node& w = g.node(m.operands[0]);
    GJ_ASSIGN_OR_RETURN(const ValueId wt, PanelsAsTransposed(&rw, w, ctx->tile_vector_bytes, ctx));
    const ValueId x = rw.Get(m.operands[1]);
    const int x_rank = g.node(m.operands[1]).type.rank();
    const ValueId xt = rw.Emit(OpCode::kTranspose, {x}, ir::Attrs{{"perm", SwapLastTwo(x_rank)}});
    const ValueId yt = rw.Emit(OpCode::kMatmul, {xt, wt});
    rw.Map(id, rw.Emit(OpCode::kTranspose, {yt}, ir::Attrs{{"perm", SwapLastTwo(m.type.rank())}}));
  }
  GJ_ASSIGN_OR_RETURN(*graph, std::move(rw).Finish());
  return true;
}

}  // namespace graphjit::compiler
