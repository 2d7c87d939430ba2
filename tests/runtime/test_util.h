// Shared helpers of the runtime tests: random tensors and shapes, running one op through
// EvalNode, comparing against double references, and the registry of ops with tests.
#ifndef GRAPHJIT_TESTS_RUNTIME_TEST_UTIL_H_
#define GRAPHJIT_TESTS_RUNTIME_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ir/graph.h"
#include "runtime/eager.h"
#include "runtime/tensor.h"

namespace graphjit::runtime::testutil {

using ir::OpCode;
using Dims = std::vector<int64_t>;

// Ops whose kernels have a reference test; filled at static-initialization time by
// COVERS_OPS next to the tests, checked by coverage_test.cc.
inline std::set<OpCode>& CoveredOps() {
  static std::set<OpCode>* ops = new std::set<OpCode>();
  return *ops;
}
inline bool CoverOps(std::initializer_list<OpCode> ops) {
  CoveredOps().insert(ops.begin(), ops.end());
  return true;
}

// A node carrying only what EvalNode reads: the op and its attributes.
inline ir::Node MakeNode(OpCode op, ir::Attrs attrs = {}) {
  ir::Node n;
  n.op = op;
  n.attrs = std::move(attrs);
  return n;
}

inline absl::StatusOr<Tensor> EvalOp(OpCode op, std::vector<const Tensor*> operands,
                                     ir::Attrs attrs = {}, const ir::Bindings& bindings = {}) {
  return EvalNode(MakeNode(op, std::move(attrs)), operands, bindings);
}

inline std::string DimsString(const Dims& d) {
  return absl::StrCat("[", absl::StrJoin(d, ", "), "]");
}

inline int64_t Numel(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

// Row-major strides.
inline Dims Strides(const Dims& shape) {
  Dims s(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = stride;
    stride *= shape[i];
  }
  return s;
}

// The multi-index of flat element `flat` of `shape`.
inline Dims Unravel(int64_t flat, const Dims& shape) {
  Dims idx(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    idx[i] = shape[i] == 0 ? 0 : flat % shape[i];
    flat = shape[i] == 0 ? 0 : flat / shape[i];
  }
  return idx;
}

// The flat index in a tensor of `shape` that numpy broadcasting maps output index `out`
// to (right-aligned; size-1 dims read index 0).
inline int64_t BroadcastIndex(const Dims& out, const Dims& shape) {
  int64_t flat = 0;
  const size_t offset = out.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    flat = flat * shape[i] + (shape[i] == 1 ? 0 : out[offset + i]);
  }
  return flat;
}

inline Dims BroadcastDims(const Dims& a, const Dims& b) {
  Dims out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    out[out.size() - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

// A random shape of rank [min_rank, max_rank] with dims in [1, max_dim]; about one dim in
// four is 1.
inline Dims RandomShape(std::mt19937_64& rng, int min_rank, int max_rank, int64_t max_dim) {
  int rank = std::uniform_int_distribution<int>(min_rank, max_rank)(rng);
  Dims d(rank);
  for (int64_t& x : d) {
    x = std::uniform_int_distribution<int>(0, 3)(rng) == 0
            ? 1
            : std::uniform_int_distribution<int64_t>(1, max_dim)(rng);
  }
  return d;
}

// A shape that broadcasts to `out`: some leading dims dropped, some dims set to 1.
inline Dims BroadcastableTo(std::mt19937_64& rng, const Dims& out) {
  size_t drop = std::uniform_int_distribution<size_t>(0, out.size())(rng);
  if (std::uniform_int_distribution<int>(0, 1)(rng) == 0) drop = 0;
  Dims d(out.begin() + drop, out.end());
  for (int64_t& x : d) {
    if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) x = 1;
  }
  return d;
}

// Uniform values in [lo, hi) (floats), integers in [lo, hi] (i64), or fair coins (bool).
inline Tensor Random(std::mt19937_64& rng, DType dtype, const Dims& shape, double lo = -1,
                     double hi = 1) {
  std::vector<double> v(Numel(shape));
  for (double& x : v) {
    if (dtype == DType::kI64) {
      x = static_cast<double>(std::uniform_int_distribution<int64_t>(
          static_cast<int64_t>(lo), static_cast<int64_t>(hi))(rng));
    } else if (dtype == DType::kBool) {
      x = std::uniform_int_distribution<int>(0, 1)(rng);
    } else {
      x = std::uniform_real_distribution<double>(lo, hi)(rng);
    }
  }
  absl::StatusOr<Tensor> t = Tensor::FromDoubles(dtype, shape, v);
  EXPECT_TRUE(t.ok()) << t.status();
  return *std::move(t);
}

inline Tensor FromValues(DType dtype, const Dims& shape, const std::vector<double>& v) {
  absl::StatusOr<Tensor> t = Tensor::FromDoubles(dtype, shape, v);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : Tensor();
}

// The stated tolerances: relative 1e-12 (f64) and 1e-5 (f32), against max(1, |ref|) so
// results near zero (after cancellation) are not held to a relative bound of 0; other
// dtypes must match exactly.
inline double Tolerance(DType dtype) {
  return dtype == DType::kF64 ? 1e-12 : dtype == DType::kF32 ? 1e-5 : 0.0;
}

inline bool Close(double got, double want, double tol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::abs(got - want) <= tol * std::max(1.0, std::abs(want));
}

// Expects `got` (a kernel result) to have `dtype` and `shape` and to match `want`.
inline void ExpectTensor(const absl::StatusOr<Tensor>& got, DType dtype, const Dims& shape,
                         const std::vector<double>& want, const std::string& what) {
  ASSERT_TRUE(got.ok()) << what << ": " << got.status();
  ASSERT_EQ(got->dtype(), dtype) << what;
  ASSERT_EQ(got->shape(), shape) << what << ": got " << got->TypeString();
  ASSERT_EQ(static_cast<size_t>(got->numel()), want.size()) << what;
  const double tol = Tolerance(dtype);
  int reported = 0;
  for (int64_t i = 0; i < got->numel(); ++i) {
    double g = got->ValueAt(i);
    if (!Close(g, want[i], tol) && reported++ < 5) {
      ADD_FAILURE() << what << ": element " << i << " " << DimsString(Unravel(i, shape)) << " is "
                    << g << ", want " << want[i];
    }
  }
}

inline const char* Name(DType d) { return ir::DTypeName(d).data(); }

}  // namespace graphjit::runtime::testutil

#define GJ_COVERS_OPS_CAT2(a, b) a##b
#define GJ_COVERS_OPS_CAT(a, b) GJ_COVERS_OPS_CAT2(a, b)
// At namespace scope: records that the tests next to it cover the kernels of these ops,
// e.g. COVERS_OPS(OpCode::kAdd, OpCode::kSub).
#define COVERS_OPS(...)                                                         \
  [[maybe_unused]] static const bool GJ_COVERS_OPS_CAT(covers_ops_, __LINE__) = \
      ::graphjit::runtime::testutil::CoverOps({__VA_ARGS__})

#endif  // GRAPHJIT_TESTS_RUNTIME_TEST_UTIL_H_
