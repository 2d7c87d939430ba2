#include "compiler/lower/fuse_attention.h"

#include <cstring>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "compiler/lower/index_exprs.h"

namespace graphjit::compiler {
namespace {

bool SameExpr(const ExprPtr& a, const ExprPtr& b) {
  if (a == b) return true;
  if (a == nullptr || b == nullptr) return false;
  if (a->kind != b->kind || a->dtype != b->dtype || a->op != b->op || a->index != b->index ||
      a->i_value != b->i_value || std::memcmp(&a->f_value, &b->f_value, sizeof(double)) != 0 ||
      a->operands.size() != b->operands.size()) {
    return false;
  }
  for (size_t i = 0; i < a->operands.size(); ++i) {
    if (!SameExpr(a->operands[i], b->operands[i])) return false;
  }
  return true;
}

bool SameExprs(const std::vector<ExprPtr>& a, const std::vector<ExprPtr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!SameExpr(a[i], b[i])) return false;
  }
  return true;
}

// Loop variables 0 .. count-1, then `more`.
std::vector<ExprPtr> Vars(int count, std::vector<ExprPtr> more = {}) {
  std::vector<ExprPtr> v = LoopVars(count);
  v.insert(v.end(), more.begin(), more.end());
  return v;
}

// The five kernels starting at `at`, and what the fused kernel takes from them.
class Matcher {
 public:
  Matcher(const Program& p, const std::vector<std::set<int>>& readers, int at)
      : p_(p), readers_(readers), at_(at) {}

  std::optional<Kernel> Match() {
    const int size = static_cast<int>(p_.kernels.size());
    if (at_ + 5 > size) return std::nullopt;
    const Kernel& scores = p_.kernels[at_];
    if (scores.kind != KernelKind::kMatmul || scores.order != MatmulOrder::kDot ||
        !scores.store_indices.empty() || scores.loops.size() < 3) {
      return std::nullopt;
    }
    nb_ = static_cast<int>(scores.loops.size()) - 3;
    dtype_ = p_.buffers[scores.out].dtype;
    if (dtype_ != ir::DType::kF32 && dtype_ != ir::DType::kF64) return std::nullopt;
    const int s = scores.out;
    const std::vector<ExprPtr> row_loops(scores.loops.begin(), scores.loops.begin() + nb_ + 2);
    // x_j, inlined into the max and the exp, or materialized first by a pointwise kernel
    // over the row (when it reads another buffer, say a mask, that both would reload).
    int next = at_ + 1;
    ExprPtr x_def;
    int xb = -1;
    if (const Kernel& k = p_.kernels[next];
        k.kind == KernelKind::kPointwise && k.store_indices.empty() &&
        SameExprs(k.loops, row_loops) && p_.buffers[k.out].dtype == dtype_ &&
        ReadsOnlyRow(k.value.get(), s) && Temp(s, {next})) {
      x_def = k.value;
      xb = k.out;
      ++next;
    }
    if (next + 4 > size) return std::nullopt;
    std::optional<ExprPtr> x = RowReduce(p_.kernels[next], ScalarOp::kMax);
    if (!x) return std::nullopt;
    const int mx = p_.kernels[next].out;
    if (x_def != nullptr) {
      if (!SameExpr(*x, Load(xb, dtype_, Vars(nb_ + 2))) || !Temp(xb, {next, next + 1})) {
        return std::nullopt;
      }
    } else if (!Temp(s, {next, next + 1}) || !ReadsOnlyRow(x->get(), s)) {
      return std::nullopt;
    }
    const Kernel& exp = p_.kernels[next + 1];
    if (exp.kind != KernelKind::kPointwise || !exp.store_indices.empty() ||
        !SameExprs(exp.loops, row_loops) || !Temp(mx, {next + 1}) ||
        p_.buffers[exp.out].dtype != dtype_) {
      return std::nullopt;
    }
    const Expr* e = exp.value.get();
    if (e->kind != ExprKind::kOp || e->op != ScalarOp::kExp) return std::nullopt;
    const Expr* sub = e->operands[0].get();
    if (sub->kind != ExprKind::kOp || sub->op != ScalarOp::kSub ||
        !SameExpr(sub->operands[0], *x) ||
        !SameExpr(sub->operands[1], Load(mx, dtype_, RowOf(keepdim_)))) {
      return std::nullopt;
    }
    const int pb = exp.out;
    const Kernel& sum = p_.kernels[next + 2];
    std::optional<ExprPtr> summed = RowReduce(sum, ScalarOp::kAdd);
    if (!summed || !SameExpr(*summed, Load(pb, dtype_, Vars(nb_ + 2))) ||
        !Temp(pb, {next + 2, next + 3})) {
      return std::nullopt;
    }
    const Kernel& pv = p_.kernels[next + 3];
    if (pv.kind != KernelKind::kMatmul || pv.loops.size() != scores.loops.size() ||
        !pv.store_indices.empty() || p_.buffers[pv.out].dtype != dtype_ ||
        !SameExprs(std::vector<ExprPtr>(pv.loops.begin(), pv.loops.begin() + nb_ + 1),
                   std::vector<ExprPtr>(scores.loops.begin(), scores.loops.begin() + nb_ + 1)) ||
        !SameExpr(pv.loops[nb_ + 2], scores.loops[nb_ + 1]) ||
        !SameExpr(pv.lhs, Load(pb, dtype_, Vars(nb_ + 1, {LoopVar(nb_ + 2)}))) ||
        pv.rhs == nullptr || pv.rhs->dtype != dtype_ || pv.out == s || sum.out == s) {
      return std::nullopt;
    }
    // The output strips live in registers: the values' width (a head dim) must be known.
    const Expr* width = pv.loops[nb_ + 1].get();
    if (width->kind != ExprKind::kConst || width->i_value < 1 || width->i_value > 1024) {
      return std::nullopt;
    }
    Kernel fused{KernelKind::kAttention, "", pv.out};
    fused.loops = scores.loops;
    fused.lhs = scores.lhs;
    fused.rhs = scores.rhs;
    fused.value = x_def != nullptr ? x_def : *x;
    fused.scores = s;
    // P @ V's k is the position j, its n the output column e.
    fused.values = RenameLoopVars(pv.rhs, {{nb_ + 2, nb_ + 1}, {nb_ + 1, nb_ + 3}});
    fused.values_width = pv.loops[nb_ + 1];
    fused.store_indices = Vars(nb_ + 1, {LoopVar(nb_ + 3)});
    fused.sum_out = sum.out;
    fused.sum_indices = RowOf(keepdim_);
    dropped_ = {mx, pb};
    if (xb >= 0) dropped_.push_back(xb);
    length_ = next + 4 - at_;
    return fused;
  }

  // How many kernels the match replaces (5, or 6 with a materialized x).
  int length() const { return length_; }
  std::vector<int> dropped() const { return dropped_; }

 private:
  // A reduction `combine` over the row of the scores (batch.., M, then an optional kept
  // dim of 1; the reduction's extent N): its value with the reduction variable renamed to
  // the row's j (loop variable nb + 1).
  std::optional<ExprPtr> RowReduce(const Kernel& k, ScalarOp combine) {
    const Kernel& scores = p_.kernels[at_];
    const int rank = static_cast<int>(k.loops.size());
    if (k.kind != KernelKind::kReduce || k.combine != combine || k.finish_scale != nullptr ||
        !k.store_indices.empty() || (rank != nb_ + 1 && rank != nb_ + 2) ||
        p_.buffers[k.out].dtype != dtype_ || !SameExpr(k.reduce_extent, scores.loops[nb_ + 1])) {
      return std::nullopt;
    }
    const bool keepdim = rank == nb_ + 2;
    if (keepdim && !SameExpr(k.loops.back(), ConstI(1))) return std::nullopt;
    if (combine == ScalarOp::kMax) {
      keepdim_ = keepdim;
    } else if (keepdim != keepdim_) {
      return std::nullopt;
    }
    for (int i = 0; i <= nb_; ++i) {
      if (!SameExpr(k.loops[i], scores.loops[i])) return std::nullopt;
    }
    if (keepdim && UsesLoopVar(k.value.get(), nb_ + 1)) return std::nullopt;
    return RenameLoopVars(k.value, {{rank, nb_ + 1}});
  }

  // The row's (batch.., m) and, with a kept dim, its 0.
  std::vector<ExprPtr> RowOf(bool keepdim) const {
    return Vars(nb_ + 1, keepdim ? std::vector<ExprPtr>{ConstI(0)} : std::vector<ExprPtr>{});
  }

  bool ReadsOnlyRow(const Expr* e, int buffer) const {
    if (e->kind == ExprKind::kLoad && e->index == buffer) {
      return SameExprs(e->operands, Vars(nb_ + 2));
    }
    for (const ExprPtr& o : e->operands) {
      if (!ReadsOnlyRow(o.get(), buffer)) return false;
    }
    return true;
  }

  // A temp read only by the kernels `by`.
  bool Temp(int buffer, std::set<int> by) const {
    return p_.buffers[buffer].kind == BufferKind::kTemp && readers_[buffer] == by;
  }

  const Program& p_;
  const std::vector<std::set<int>>& readers_;
  const int at_;
  int nb_ = 0;
  bool keepdim_ = false;
  ir::DType dtype_ = ir::DType::kF64;
  std::vector<int> dropped_;
  int length_ = 0;
};

}  // namespace

void FuseAttention(Program* program) {
  std::vector<std::set<int>> readers(program->buffers.size());
  for (int i = 0; i < static_cast<int>(program->kernels.size()); ++i) {
    for (int b : KernelLoads(program->kernels[i])) readers[b].insert(i);
  }
  // Matched first, then rebuilt: matchers read the kernels as lowering left them.
  std::vector<std::optional<Kernel>> fused_at(program->kernels.size());
  std::vector<int> length(program->kernels.size(), 1);
  std::set<int> dropped;
  for (int i = 0; i < static_cast<int>(program->kernels.size()); ++i) {
    Matcher matcher(*program, readers, i);
    if ((fused_at[i] = matcher.Match())) {
      for (int b : matcher.dropped()) dropped.insert(b);
      length[i] = matcher.length();
      i += length[i] - 1;
    }
  }
  if (dropped.empty()) return;
  std::vector<Kernel> kernels;
  for (int i = 0; i < static_cast<int>(program->kernels.size()); ++i) {
    if (fused_at[i]) {
      fused_at[i]->name = "k_attention";
      kernels.push_back(std::move(*fused_at[i]));
      i += length[i] - 1;
    } else {
      kernels.push_back(std::move(program->kernels[i]));
    }
  }
  for (int i = 0; i < static_cast<int>(kernels.size()); ++i) {
    kernels[i].name = RenumberedKernelName(kernels[i].name, i);
  }
  program->kernels = std::move(kernels);
  DropBuffers(dropped, program);
}

}  // namespace graphjit::compiler
