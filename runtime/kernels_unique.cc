// unique and its parts (ir/ops.def): x as [outer, n, inner], slice i is x[:, i, :]. The
// slices' indices are sorted stably by their elements (a lexicographic order in which NaN
// equals NaN and sorts above every number, numpy.unique's), equal neighbours grouped;
// each group is one distinct slice, listed in sorted order or by its first occurrence.
// Each part recomputes the grouping from x: it is a sort of n indices, and it keeps every
// op a function of its operands.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "ir/status_macros.h"
#include "runtime/kernels.h"

namespace graphjit::runtime::kernels {
namespace {

// The distinct slices: per distinct slice (in the output's order) its first index in x
// and its count, and per slice of x its distinct slice's position.
struct Grouping {
  std::vector<int64_t> first;
  std::vector<int64_t> count;
  std::vector<int64_t> inverse;
};

// -1, 0 or 1 as a sorts before, with or after b (NaN equal to NaN, above numbers).
template <typename T>
int Compare(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

template <typename T>
Grouping Group(const Tensor& x, int axis, bool sorted) {
  const int64_t n = x.dim(axis);
  const int64_t outer = Product(x.shape(), 0, axis);
  const int64_t inner = Product(x.shape(), axis + 1, x.rank());
  const T* src = x.data<T>();
  auto compare = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < outer; ++o) {
      const T* row = src + o * n * inner;
      for (int64_t j = 0; j < inner; ++j) {
        if (int c = Compare(row[a * inner + j], row[b * inner + j]); c != 0) return c;
      }
    }
    return 0;
  };
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
  // Groups in sorted order: a stable sort puts each group's first occurrence first.
  Grouping g;
  std::vector<int64_t> group_of(n);
  for (int64_t i = 0; i < n; ++i) {
    if (i == 0 || compare(order[i - 1], order[i]) != 0) {
      g.first.push_back(order[i]);
      g.count.push_back(0);
    }
    group_of[order[i]] = static_cast<int64_t>(g.first.size()) - 1;
    ++g.count.back();
  }
  std::vector<int64_t> position(g.first.size());
  std::iota(position.begin(), position.end(), 0);
  if (!sorted) {  // list the groups by first occurrence
    std::vector<int64_t> by_first(g.first.size());
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(),
              [&](int64_t a, int64_t b) { return g.first[a] < g.first[b]; });
    Grouping reordered;
    for (int64_t k = 0; k < static_cast<int64_t>(by_first.size()); ++k) {
      position[by_first[k]] = k;
      reordered.first.push_back(g.first[by_first[k]]);
      reordered.count.push_back(g.count[by_first[k]]);
    }
    g = std::move(reordered);
  }
  g.inverse.resize(n);
  for (int64_t i = 0; i < n; ++i) g.inverse[i] = position[group_of[i]];
  return g;
}

// The op's axis (normalized: the shape rule has checked it).
int AxisOf(const Prepared& p, const Tensor& x) {
  return ir::ValueOrDie(ir::NormalizeAxis(p.Int("axis"), x.rank(), "unique"));
}

absl::StatusOr<Grouping> GroupOf(const ir::Node& node, const Prepared& p, const Tensor& x,
                                 int axis) {
  const bool sorted = p.attrs().Get<bool>("sorted");
  Grouping g;
  absl::StatusOr<Tensor> done = Dispatch<float, double, int64_t, int32_t, bool>(
      node, x.dtype(), [&](auto tag) -> absl::StatusOr<Tensor> {
        g = Group<decltype(tag)>(x, axis, sorted);
        return Tensor();
      });
  if (!done.ok()) return done.status();
  return g;
}

// The part of x's grouping that `node` asks for, as an i64 vector.
absl::StatusOr<Tensor> Part(const ir::Node& node, absl::Span<const Tensor* const> operands,
                            const ir::Bindings& bindings, std::vector<int64_t> Grouping::* member) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const Tensor& x = *operands[0];
  const Tensor& values = *operands[1];
  const int axis = AxisOf(p, x);
  GJ_ASSIGN_OR_RETURN(Grouping g, GroupOf(node, p, x, axis));
  // The values are x's unique: the same count, else the graph paired them wrongly.
  if (values.dim(axis) != static_cast<int64_t>(g.first.size())) {
    return OpError(node, absl::StrCat("values ", values.TypeString(), " are not the unique of ",
                                      x.TypeString(), ", which has ", g.first.size(),
                                      " distinct slices along axis ", axis));
  }
  const std::vector<int64_t>& v = g.*member;
  GJ_ASSIGN_OR_RETURN(Tensor out, NewResult(p));
  std::copy(v.begin(), v.end(), out.data<int64_t>());
  return out;
}

}  // namespace

absl::StatusOr<Tensor> EvalUnique(const ir::Node& node, absl::Span<const Tensor* const> operands,
                                  const ir::Bindings& bindings) {
  GJ_ASSIGN_OR_RETURN(Prepared p, Prepare(node, operands, bindings));
  const Tensor& x = *operands[0];
  const int axis = AxisOf(p, x);
  GJ_ASSIGN_OR_RETURN(Grouping g, GroupOf(node, p, x, axis));
  return SlicesAt(x, axis, g.first);
}

absl::StatusOr<Tensor> EvalUniqueIndices(const ir::Node& node,
                                         absl::Span<const Tensor* const> operands,
                                         const ir::Bindings& bindings) {
  return Part(node, operands, bindings, &Grouping::first);
}

absl::StatusOr<Tensor> EvalUniqueInverse(const ir::Node& node,
                                         absl::Span<const Tensor* const> operands,
                                         const ir::Bindings& bindings) {
  return Part(node, operands, bindings, &Grouping::inverse);
}

absl::StatusOr<Tensor> EvalUniqueCounts(const ir::Node& node,
                                        absl::Span<const Tensor* const> operands,
                                        const ir::Bindings& bindings) {
  return Part(node, operands, bindings, &Grouping::count);
}

}  // namespace graphjit::runtime::kernels
