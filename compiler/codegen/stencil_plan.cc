#include "compiler/codegen/stencil_plan.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace graphjit::compiler::codegen_internal {

// var's coefficient in `e` where e is linear in var through +, - and products by
// constants ((i3 * 2) + 1: 2); 0 where it is not (or does not mention var).
int64_t Coefficient(const Expr* e, int var) {
  if (e->kind == ExprKind::kLoopVar && e->index == var) return 1;
  if (e->kind != ExprKind::kOp || IsUnary(e->op)) return 0;
  const Expr* x = e->operands[0].get();
  const Expr* y = e->operands[1].get();
  switch (e->op) {
    case ScalarOp::kAdd:
      if (!UsesLoopVar(x, var)) return Coefficient(y, var);
      return UsesLoopVar(y, var) ? 0 : Coefficient(x, var);
    case ScalarOp::kSub:
      return UsesLoopVar(y, var) ? 0 : Coefficient(x, var);
    case ScalarOp::kMul:
      if (x->kind == ExprKind::kConst) std::swap(x, y);
      return y->kind == ExprKind::kConst ? y->i_value * Coefficient(x, var) : 0;
    default:
      return 0;
  }
}

Stencil StencilOf(const Expr* value, int row_var) {
  // Per buffer and index position read at row_var plus an offset: how many loads, and
  // their offsets (the index as text).
  struct Taps {
    int64_t loads = 0;
    absl::flat_hash_set<std::string> rows;
  };
  absl::flat_hash_map<std::pair<int, size_t>, Taps> taps;
  absl::flat_hash_set<const Expr*> seen;  // an expression shared by two uses counts once
  Stencil stencil;
  auto walk = [&](auto&& self, const Expr* e) -> void {
    if (!seen.insert(e).second) return;
    if (e->kind == ExprKind::kOp && IsTranscendental(e->op)) stencil.costly = true;
    if (e->kind == ExprKind::kLoad) {
      for (size_t i = 0; i < e->operands.size(); ++i) {
        if (Coefficient(e->operands[i].get(), row_var) != 1) continue;
        Taps& t = taps[{e->index, i}];
        ++t.loads;
        t.rows.insert(ExprToString(e->operands[i]));
      }
      return;
    }
    for (const ExprPtr& operand : e->operands) self(self, operand.get());
  };
  walk(walk, value);
  for (const auto& [where, t] : taps) {
    stencil.most_taps = std::max(stencil.most_taps, t.loads);
    if (t.rows.size() >= 2) stencil.shared_rows = true;
  }
  return stencil;
}

// How many rows of a stencil EmitPointwiseLanes computes together at O2, so that the rows
// load the vectors they share once: 4 (3 x 3 taps: 18 loads of input rows instead of 36).
// 1 without shared rows, with more than kMaxJammedTaps taps (their weights and loads
// no longer fit the registers together), with a transcendental (exp's constants take the
// registers: the convolution and its x * sigmoid(x) in one kernel, 96 channels of
// 56 x 56, 147 us in fours, 125 one row at a time) and at stride 2, where only one row in
// two is shared. Alternating runs, one row at a time / in pairs / in fours: a 3 x 3 depthwise
// convolution with its relu over 48 channels of 56 x 56 30.4 / 21.5 / 19.2 us, over 144
// of 14 x 14 8.0 / 5.2 / 5.0; 5 x 5 over 72 of 28 x 28 40.3 / 46.7 / 45.3; stride 2
// over mobilenet_v2's 96 of 112 x 112 (in pairs) 211 -> 237.
int RowsSharingLoads(const Stencil& stencil) {
  return stencil.shared_rows && !stencil.costly && stencil.most_taps <= kMaxJammedTaps ? 4 : 1;
}

// How many vectors of `lanes` one evaluation of a stencil with more taps than are jammed
// covers: its whole row of `row_extent` (a constant, else 0), up to 4. As separate
// vectors, a row's trees of 49 products (a 7 x 7 depthwise convolution) share the 49
// broadcast weights, which LLVM keeps in registers across the trees until they spill and
// are broadcast again; one wide vector uses each weight on all its parts at once. One
// thread, 96 channels of 56 x 56, 7 x 7: 509-781 -> 372-437 us (4 vectors of 16).
int VectorsPerRow(const Stencil& stencil, int64_t row_extent, int lanes) {
  if (!stencil.shared_rows || stencil.most_taps <= kMaxJammedTaps || row_extent <= 0) return 1;
  return static_cast<int>(std::clamp<int64_t>((row_extent + lanes - 1) / lanes, 1, 4));
}

// How many rows (of `row_count`, a constant, else 0) of such a stencil one evaluation
// computes where a row of `row_extent` fits one vector (a 7 x 7 depthwise convolution over
// 14 x 14 or 7 x 7 maps): as the parts of one vector of that many vectors, so that each weight
// serves the rows at once and the input rows they share are loaded once (LLVM merges the parts'
// equal loads). Not with a transcendental (its constants take the registers) nor a select (its arms
// branch for all lanes at once).
int RowsAsParts(const Stencil& stencil, int64_t row_extent, int64_t row_count, int lanes,
                const Expr* value) {
  if (!stencil.shared_rows || stencil.costly || stencil.most_taps <= kMaxJammedTaps ||
      row_extent <= 0 || row_extent > lanes) {
    return 1;
  }
  const auto has_select = [](auto&& self, const Expr* e) -> bool {
    if (e->kind == ExprKind::kSelect) return true;
    return std::any_of(e->operands.begin(), e->operands.end(),
                       [&](const ExprPtr& o) { return self(self, o.get()); });
  };
  if (has_select(has_select, value)) return 1;
  // Four rows, or two where four would leave more than a quarter of the rows to go one
  // at a time (7 rows: three). One thread, alternating, one / two / four rows: 7 x 7 over
  // 384 channels of 14 x 14 152-155 / 98-102 / 93-103 us, over 768 of 7 x 7 147-152 /
  // 105-111 / 100-116; 5 x 5 over 576 of 7 x 7 57-58 / 33-41 / 40-41, over 240 of 14 x 14
  // 46-49 / 33-34 / 29.
  return row_count > 0 && (row_count % 4) * 4 > row_count ? 2 : 4;
}

}  // namespace graphjit::compiler::codegen_internal
