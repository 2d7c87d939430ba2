#include "compiler/codegen/tiles_plan.h"

#include <algorithm>
#include <array>
#include <optional>

#include "compiler/codegen/native_code.h"

namespace graphjit::compiler::codegen_internal {
namespace {

// One micro-panel of B (KC x NR) fits L1 beside A's (KC x MR).
constexpr int64_t kPanelBytes = 32 * 1024;
// The packed block of B (KC x NC) stays in L2 while every row block passes over it: 3/4
// of it (384 KiB of Zen 3's 512 KiB, where it was tuned; with Zen 5's 1 MiB, 768 KiB took
// bench_roofline's 1024^3 from 176 to 212 GFLOP/s and 64 x 576 x 3136 from 199 to 217:
// A is packed once per block of B, so fewer blocks pack it fewer times).
int64_t BlockBytes() { return HostL2Bytes() / 4 * 3; }
// The packed row block of A (MC x KC), whose tiles stream from L2 past each panel of B.
constexpr int64_t kRowBlockBytes = 96 * 1024;
// An A of at most this much (constant M and K: a convolution's weights) is packed once
// per call, before any block of B, instead of once per block of B; the blocks of B then
// need not be large to amortize it, and stay this size (in L1 and L2). A large block of B
// written to cold memory on each call cost a 1x1 convolution (48 x 32 @ 32 x 12544) more
// than its FMAs inside a model.
constexpr int64_t kWholeABytes = 256 * 1024;
constexpr int64_t kSmallBlockBytes = 64 * 1024;

// `MR` rows of `V` vectors: the register tile.
struct TileShape {
  int rows;
  int vectors;
};

// Fraction of the computed elements that are real along a dim of extent `extent` (0:
// unknown, counts as no waste) in blocks of `block`.
double Useful(int64_t extent, int64_t block) {
  if (extent <= 0) return 1.0;
  return static_cast<double>(extent) / static_cast<double>((extent + block - 1) / block * block);
}

// `tile`, or one of its widths with fewer rows (down to half) that computes fewer rows past
// M, where a packed rhs fixes the width: the turned products of a CNN's last stage have M
// = 49 positions, which 12-row tiles compute as 60 and 10-row tiles as 50 (resnet18's 7 x
// 7 layers 3.2 -> 2.7 ms). Larger tiles win near ties (each B vector serves more rows):
// 7 rows would compute 49, but not 2% fewer than 10.
TileShape FewestRowsPastM(int64_t m, TileShape tile) {
  TileShape best = tile;
  for (int rows = tile.rows - 1; rows >= tile.rows / 2; --rows) {
    if (Useful(m, rows) > Useful(m, best.rows) + 0.02) best.rows = rows;
  }
  return best;
}

// The tile wasting the fewest lanes on M x N (constants, 0 when not), earlier shapes
// first on ties: 12 x 2 reads the fewest rhs vectors per FMA that still hide the latency.
// `vectors` > 0 takes the shape with that many vectors (a packed rhs's panel width), `rows`
// > 0 the shape with that many rows (a packed lhs's), if there is one.
TileShape ChooseTile(int64_t m, int64_t n, int lanes, int registers, int vectors = 0,
                     int rows = 0) {
  static constexpr std::array<TileShape, 3> kWide = {{{12, 2}, {8, 3}, {6, 4}}};
  static constexpr std::array<TileShape, 3> kNarrow = {{{6, 2}, {4, 3}, {3, 4}}};
  const auto& shapes = registers >= 32 ? kWide : kNarrow;
  TileShape best = shapes[0];
  double best_useful = -1;
  for (const TileShape& t : shapes) {
    if (vectors > 0) {
      if (t.vectors == vectors) return FewestRowsPastM(m, t);
      continue;
    }
    if (rows > 0 && t.rows == rows) return t;
    const double useful = Useful(m, t.rows) * Useful(n, int64_t{t.vectors} * lanes);
    if (useful > best_useful + 0.01) {
      best = t;
      best_useful = useful;
    }
  }
  return best;
}

}  // namespace

int RegistersFor(int vector_bytes) { return vector_bytes == 64 ? 32 : 16; }

int TileRowsFor(int64_t m, int64_t n, int vector_bytes, int64_t element_bytes) {
  const int lanes = static_cast<int>(vector_bytes / element_bytes);
  return ChooseTile(m, n, lanes, RegistersFor(vector_bytes)).rows;
}

TilePlan PlanTiles(int64_t m, int64_t n, int64_t k, int vector_bytes, int packed_vectors,
                   int packed_rows, int64_t element_bytes) {
  const int64_t size = element_bytes;
  const int lanes = static_cast<int>(vector_bytes / size);
  const TileShape tile =
      ChooseTile(m, n, lanes, RegistersFor(vector_bytes), packed_vectors, packed_rows);
  TilePlan p;
  p.rows = tile.rows;
  p.vectors = tile.vectors;
  p.nr = int64_t{p.vectors} * lanes;
  p.kc_max = std::max<int64_t>(lanes, kPanelBytes / (p.nr * size));
  // Blocks of equal size: K = 576 in 170s would end on a block of 66.
  if (k > 0) p.kc_max = (k + (k + p.kc_max - 1) / p.kc_max - 1) / ((k + p.kc_max - 1) / p.kc_max);
  p.tiles_total = m > 0 ? (m + p.rows - 1) / p.rows : 0;
  // A packed at compile time is read in place: never packed, whole or by blocks.
  const bool packed_a = packed_rows > 0 && p.rows == packed_rows;
  p.whole_a =
      !packed_a && p.tiles_total > 0 && k > 0 && p.tiles_total * p.rows * k * size <= kWholeABytes;
  int64_t panels = std::max<int64_t>(
      1, (p.whole_a ? kSmallBlockBytes : BlockBytes()) / (p.kc_max * p.nr * size));
  if (n > 0) panels = std::min(panels, (n + p.nr - 1) / p.nr);
  p.nc_max = panels * p.nr;
  int64_t tiles = std::max<int64_t>(1, kRowBlockBytes / (p.kc_max * p.rows * size));
  if (m > 0) tiles = std::min(tiles, (m + p.rows - 1) / p.rows);
  p.mc_max = tiles * p.rows;
  const int64_t n_rest = n > 0 ? n % p.nr : 0, rest_vectors = (n_rest + lanes - 1) / lanes;
  if (n_rest > 0 && (p.vectors - rest_vectors) * 20 >= (n + p.nr - 1) / p.nr * p.vectors) {
    p.edge_vectors = static_cast<int>(rest_vectors);
  }
  return p;
}

RowRunPlan PlanRunsPerVector(const Expr* rhs, int n, int lanes, int max) {
  int64_t row = 0;     // the shortest row n is taken modulo
  int64_t stride = 1;  // what that remainder is multiplied by (a convolution's stride)
  auto row_of = [&](const Expr* e) -> int64_t {
    if (e->kind != ExprKind::kOp || e->op != ScalarOp::kMod || e->operands.size() != 2 ||
        !UsesLoopVar(e->operands[0].get(), n) || e->operands[1]->kind != ExprKind::kConst) {
      return 0;
    }
    return std::max<int64_t>(0, e->operands[1]->i_value);
  };
  std::vector<const Expr*> todo = {rhs};
  while (!todo.empty()) {
    const Expr* e = todo.back();
    todo.pop_back();
    if (const int64_t w = row_of(e); w > 0 && (row == 0 || w < row)) row = w;
    if (e->kind == ExprKind::kOp && e->op == ScalarOp::kMul && e->operands.size() == 2 &&
        row_of(e->operands[0].get()) > 0 && e->operands[1]->kind == ExprKind::kConst) {
      stride = e->operands[1]->i_value;
    }
    for (const ExprPtr& o : e->operands) todo.push_back(o.get());
  }
  if (row == 0) return {1, 1};
  if (stride != 1 && stride != 2) return {0, 1};
  return {static_cast<int>(std::min<int64_t>(max, (lanes - 1 + row - 1) / row + 1)),
          static_cast<int>(stride)};
}

}  // namespace graphjit::compiler::codegen_internal
