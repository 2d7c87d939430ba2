#include "compiler/lower/fuse_epilogues.h"

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/lower/index_exprs.h"
#include "compiler/lower/simplify_index.h"
#include "ir/sym_expr.h"

namespace graphjit::compiler {
namespace {

// `e` with loop variable j replaced by values[j].
ExprPtr Substitute(const ExprPtr& e, const std::vector<ExprPtr>& values) {
  return ReplaceSubexprs(e, [&](const Expr& x) -> ExprPtr {
    const bool bound = x.kind == ExprKind::kLoopVar && x.index < static_cast<int>(values.size());
    return bound ? values[x.index] : nullptr;
  });
}

// A loop extent as a dim (a constant or a program symbol), or nullopt.
std::optional<ir::SymExpr> ExtentDim(const Expr* e, const std::vector<std::string>& symbols) {
  if (e->kind == ExprKind::kConst && e->dtype == ir::DType::kI64) return ir::SymExpr(e->i_value);
  if (e->kind == ExprKind::kSymbol && e->index >= 0 && e->index < static_cast<int>(symbols.size()))
    return ir::SymExpr::Symbol(symbols[e->index]);
  return std::nullopt;
}

// A scattered store's rows (a padded buffer's interior): at least this many elements
// each, or the consumer keeps its kernel. The tiles store each vector whose lanes are in
// one row as a vector and scatter the others lane by lane; rows of 7 to 56 elements (a
// CNN's late stages) put most vectors across a row end, and the scatters cost more there
// than the separate pass they replace (mobilenet_v2: 14 x 14 expansions 394 us fused,
// 171 us as a product and a pass, when every lane off a vector's row was scattered).
constexpr int64_t kMinScatteredRow = 64;

// The length of the runs of consecutive n that a scattered store's last index keeps
// consecutive: W where it is (n % W) + c, else 0.
int64_t RowRun(const std::vector<ExprPtr>& indices, int n) {
  const Expr* last = indices.back().get();
  if (last->kind == ExprKind::kOp && last->op == ScalarOp::kAdd &&
      last->operands[1]->kind == ExprKind::kConst) {
    last = last->operands[0].get();
  }
  if (last->kind != ExprKind::kOp || last->op != ScalarOp::kMod) return 0;
  const Expr* x = last->operands[0].get();
  const Expr* w = last->operands[1].get();
  if (x->kind != ExprKind::kLoopVar || x->index != n || w->kind != ExprKind::kConst) return 0;
  return w->i_value;
}

// The store indices address consecutive elements along loop variable `n`.
bool ContiguousAlong(const std::vector<ExprPtr>& indices, int n) {
  if (indices.empty() || !VarPlusOffset(indices.back().get(), n)) return false;
  for (size_t d = 0; d + 1 < indices.size(); ++d) {
    if (UsesLoopVar(indices[d].get(), n)) return false;
  }
  return true;
}

// What fusing a product with its consumer takes: the consumer's loop variables as
// expressions of the product's (batch.., m, n), and where the consumer stores.
struct Fusion {
  int consumer = -1;
  std::vector<ExprPtr> vars;    // consumer var j at the product's element
  std::vector<ExprPtr> target;  // the consumer's store indices there, simplified
  bool same_loops = false;      // the consumer's loops are the product's batch, m, n
  std::vector<int> hoisted;     // fills of the consumer's output between the two
};

// The kernel after `i` that `i` can take as its epilogue.
std::optional<Fusion> EpilogueOf(const Program& p, int i,
                                 const std::vector<std::set<int>>& readers) {
  const Kernel& k = p.kernels[i];
  if (k.kind != KernelKind::kMatmul || k.order != MatmulOrder::kTiles || k.epilogue ||
      !k.store_indices.empty()) {
    return std::nullopt;
  }
  const int t = k.out;
  const Buffer& temp = p.buffers[t];
  if (temp.kind != BufferKind::kTemp || !ir::IsFloat(temp.dtype) || readers[t].size() != 1) {
    return std::nullopt;
  }
  const int j = *readers[t].begin();
  if (j <= i) return std::nullopt;
  const Kernel& e = p.kernels[j];
  const size_t rank = k.loops.size() - 1;  // batch.., m, n
  if (e.kind != KernelKind::kPointwise || e.value == nullptr || e.value->dtype != temp.dtype ||
      p.buffers[e.out].dtype != temp.dtype || e.out == t || temp.dims.size() != rank) {
    return std::nullopt;
  }
  // The consumer's loops walk T's elements in order, maybe viewed in another shape (a
  // reshape between the product and a convolution's [N, C, H, W]): its variables at the
  // product's element are a reshape index of the product's.
  const std::vector<ExprPtr> extents(k.loops.begin(), k.loops.begin() + rank);
  const std::vector<ExprPtr> product_vars = LoopVars(rank);
  Fusion f;
  f.consumer = j;
  f.same_loops = e.loops.size() == rank;
  for (size_t d = 0; f.same_loops && d < rank; ++d)
    f.same_loops = ExprToString(e.loops[d]) == ExprToString(k.loops[d]);
  if (f.same_loops) {
    f.vars = product_vars;
  } else {
    ir::Shape view, product;
    ir::SymExpr view_size(1), product_size(1);
    for (const ExprPtr& x : e.loops) {
      std::optional<ir::SymExpr> dim = ExtentDim(x.get(), p.symbols);
      if (!dim) return std::nullopt;
      view.push_back(*dim);
      view_size = view_size * *dim;
    }
    for (const ExprPtr& x : extents) {
      std::optional<ir::SymExpr> dim = ExtentDim(x.get(), p.symbols);
      if (!dim) return std::nullopt;
      product.push_back(*dim);
      product_size = product_size * *dim;
    }
    if (!(view_size == product_size)) return std::nullopt;
    f.vars = ReshapeIndex(view, product, product_vars, p.symbols);
  }
  auto at_product = [&](const ExprPtr& x) {
    return SimplifyIndexExpr(Substitute(x, f.vars), extents);
  };
  // T read only at the consumer's own element of it.
  std::vector<std::string> identity;
  for (const ExprPtr& v : product_vars)
    identity.push_back(ExprToString(SimplifyIndexExpr(v, extents)));
  const ExprPtr value = Substitute(e.value, f.vars);
  std::function<bool(const Expr*)> reads_t_at_identity = [&](const Expr* x) {
    if (x->kind == ExprKind::kLoad && x->index == t) {
      if (x->operands.size() != rank) return false;
      for (size_t d = 0; d < rank; ++d) {
        if (ExprToString(SimplifyIndexExpr(x->operands[d], extents)) != identity[d]) return false;
      }
      return true;
    }
    for (const ExprPtr& o : x->operands) {
      if (!reads_t_at_identity(o.get())) return false;
    }
    return true;
  };
  if (!reads_t_at_identity(value.get())) return std::nullopt;
  const std::set<int> loads = KernelLoads(e);
  if (loads.count(e.out) || KernelLoads(k).count(e.out)) return std::nullopt;
  const std::vector<ExprPtr> stores =
      e.store_indices.empty() ? LoopVars(e.loops.size()) : e.store_indices;
  for (const ExprPtr& x : stores) f.target.push_back(at_product(x));
  // Stored contiguously along n, or at f(m) + g(n): a padded buffer's interior, which
  // the tiles scatter to.
  const int m_var = static_cast<int>(rank) - 2, n_var = m_var + 1;
  if (!ContiguousAlong(f.target, n_var) &&
      !ConsecutiveInMemory(f.target, p.buffers[e.out].dims, n_var, extents) &&
      (!SeparableLoad(Load(e.out, temp.dtype, f.target).get(), m_var, n_var) ||
       RowRun(f.target, n_var) < kMinScatteredRow)) {
    return std::nullopt;
  }
  // Kernels between the two: the epilogue now runs before them. A fill of the consumer's
  // output (a pad's border) moves before the product, keeping its order with the store.
  for (int q = i + 1; q < j; ++q) {
    const Kernel& between = p.kernels[q];
    const std::set<int> q_loads = KernelLoads(between);
    if (q_loads.count(e.out)) return std::nullopt;
    for (int w : KernelWrites(between)) {
      if (loads.count(w)) return std::nullopt;
      if (w == e.out) {
        if (!q_loads.empty() || between.kind != KernelKind::kPointwise) return std::nullopt;
        f.hoisted.push_back(q);
      }
    }
  }
  for (int q = 0; q < static_cast<int>(p.kernels.size()); ++q) {
    if (q == i || q == j) continue;
    for (int w : KernelWrites(p.kernels[q])) {
      if (w == t) return std::nullopt;
    }
  }
  return f;
}

}  // namespace

void FuseEpilogues(Program* program) {
  Program& p = *program;
  std::vector<std::set<int>> readers(p.buffers.size());
  for (int i = 0; i < static_cast<int>(p.kernels.size()); ++i) {
    for (int b : KernelLoads(p.kernels[i])) readers[b].insert(i);
  }
  std::set<int> dropped;
  std::vector<bool> removed(p.kernels.size(), false);
  // Kernels moved before the product at position i (fills of its new output).
  std::vector<std::vector<int>> before(p.kernels.size());
  std::vector<bool> moved(p.kernels.size(), false);
  for (int i = 0; i < static_cast<int>(p.kernels.size()); ++i) {
    const std::optional<Fusion> f = EpilogueOf(p, i, readers);
    if (!f || removed[f->consumer] || moved[f->consumer]) continue;
    bool free = true;
    for (int q : f->hoisted) free = free && !removed[q] && !moved[q];
    if (!free) continue;
    for (int q : f->hoisted) {
      moved[q] = true;
      before[i].push_back(q);
    }
    Kernel& k = p.kernels[i];
    const Kernel& e = p.kernels[f->consumer];
    const int t = k.out;
    const ExprPtr sum = Load(e.out, e.value->dtype, f->target);
    k.epilogue = ReplaceSubexprs(Substitute(e.value, f->vars), [&](const Expr& x) {
      return x.kind == ExprKind::kLoad && x.index == t ? sum : nullptr;
    });
    k.out = e.out;
    // The product's own (default) store indices where the consumer's were its defaults
    // over the same loops; else the consumer's, at the product's element.
    k.store_indices = e.store_indices.empty() && f->same_loops ? std::vector<ExprPtr>{} : f->target;
    const size_t underscore = e.name.find('_');
    k.name = absl::StrCat(k.name, underscore == std::string::npos ? "" : e.name.substr(underscore));
    removed[f->consumer] = true;
    dropped.insert(t);
  }
  if (dropped.empty()) return;
  std::vector<Kernel> kernels;
  for (int i = 0; i < static_cast<int>(p.kernels.size()); ++i) {
    for (int q : before[i]) kernels.push_back(std::move(p.kernels[q]));
    if (!removed[i] && !moved[i]) kernels.push_back(std::move(p.kernels[i]));
  }
  for (int i = 0; i < static_cast<int>(kernels.size()); ++i) {
    kernels[i].name = RenumberedKernelName(kernels[i].name, i);
  }
  p.kernels = std::move(kernels);
  DropBuffers(dropped, program);
}

}  // namespace graphjit::compiler
