// Shared by the fuzz targets: a reader that turns the fuzzer's bytes into choices, and
// deterministic tensors for a graph's inputs and params. See tests/fuzz/README.md.
#ifndef GRAPHJIT_TESTS_FUZZ_FUZZ_UTIL_H_
#define GRAPHJIT_TESTS_FUZZ_FUZZ_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "ir/graph.h"
#include "ir/printer.h"
#include "ir/sym_expr.h"
#include "runtime/interpreter.h"
#include "runtime/tensor.h"

namespace graphjit::fuzz {

// Choices from the fuzzer's bytes; when they run out every choice is 0, so any input,
// even an empty one, is a complete program of choices.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  // A value in [0, n) (n >= 1).
  uint64_t Below(uint64_t n) {
    if (n <= 1) return 0;
    uint64_t v = 0;
    for (uint64_t range = 1; range < n && range != 0; range <<= 8) {
      v = (v << 8) | Byte();
    }
    return v % n;
  }
  bool Bool() { return Below(2) == 1; }
  template <typename T>
  const T& Pick(const std::vector<T>& items) {
    return items[Below(items.size())];
  }
  bool empty() const { return pos_ >= size_; }
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// A failed property: prints what and the graph, then aborts (libFuzzer saves the input;
// the replay test fails).
[[noreturn]] inline void Fail(const std::string& what, const ir::Graph* graph = nullptr) {
  std::fprintf(stderr, "FUZZ PROPERTY FAILED: %s\n", what.c_str());
  if (graph != nullptr) std::fprintf(stderr, "%s\n", ir::PrintGraph(*graph).c_str());
  std::abort();
}

// How the values of an input are drawn.
enum class ValueKind {
  kNormal,  // floats N(0, 1) with a few specials (inf, nan, huge); i64 in [-4, 4]; bools
  kIndex,   // i64 in [0, bound) (gather and scatter_add indices, cross_entropy targets)
};

// Deterministic values for `type` under `bindings` (nullopt if a dim cannot be evaluated
// or the tensor has more than `max_elements`).
inline std::optional<runtime::Tensor> MakeTensor(const ir::ValueType& type,
                                                 const ir::Bindings& bindings, uint64_t seed,
                                                 ValueKind kind = ValueKind::kNormal,
                                                 int64_t bound = 1,
                                                 int64_t max_elements = 1 << 16) {
  absl::StatusOr<std::vector<int64_t>> dims = ir::EvaluateShape(type.shape, bindings);
  if (!dims.ok()) return std::nullopt;
  int64_t n = 1;
  for (int64_t d : *dims) {
    if (d < 0 || (d > 0 && n > max_elements / d)) return std::nullopt;
    n *= d;
  }
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  static const double kSpecials[] = {INFINITY, -INFINITY, NAN, 1e300, -1e300, 3e9, -2.5, 0.5};
  std::vector<double> values(static_cast<size_t>(n));
  for (double& v : values) {
    switch (type.dtype) {
      case ir::DType::kF32:
      case ir::DType::kF64:
        v = rng() % 16 == 0 ? kSpecials[rng() % 8] : normal(rng);
        break;
      case ir::DType::kI64:
      case ir::DType::kI32:
        v = kind == ValueKind::kIndex ? static_cast<double>(rng() % std::max<int64_t>(bound, 1))
                                      : static_cast<double>(static_cast<int64_t>(rng() % 9) - 4);
        break;
      case ir::DType::kBool:
        v = static_cast<double>(rng() % 2);
        break;
    }
  }
  absl::StatusOr<runtime::Tensor> t = runtime::Tensor::FromDoubles(type.dtype, *dims, values);
  if (!t.ok()) return std::nullopt;
  return *std::move(t);
}

// The element count of every node under `bindings` fits in `max_elements` (so a fuzzed
// graph cannot ask for gigabytes), and every dim evaluates.
inline bool ShapesAreSmall(const ir::Graph& graph, const ir::Bindings& bindings,
                           int64_t max_elements) {
  for (const ir::Node& n : graph.nodes()) {
    absl::StatusOr<std::vector<int64_t>> dims = ir::EvaluateShape(n.type.shape, bindings);
    if (!dims.ok()) return false;
    int64_t count = 1;
    for (int64_t d : *dims) {
      if (d < 0 || (d > 0 && count > max_elements / d)) return false;
      count *= d;
    }
  }
  return true;
}

// Symbols bound to small values for a fuzzed graph's run: `call` binds each symbol to
// 0..4 (from `seed`) except the counts data-dependent nodes define (`counts`), which
// their runs bind; `sizes` also takes each count at 64, for ShapesAreSmall.
struct RunBindings {
  ir::Bindings call, sizes;
  std::set<std::string> counts;
};
inline RunBindings SmallBindings(const ir::Graph& graph, uint64_t seed) {
  RunBindings b;
  b.counts = graph.DefinedSymbols();
  int k = 0;
  for (const std::string& s : graph.Symbols()) {
    const auto value = static_cast<int64_t>((seed >> (3 * k++)) % 5);
    if (!b.counts.contains(s)) b.call[s] = value;
    b.sizes[s] = b.counts.contains(s) ? 64 : value;
  }
  return b;
}

// Whether `out` has type `declared` under `b.call`; a dim sized by a count is taken as the
// run made it.
inline bool HasDeclaredType(const runtime::Tensor& out, ir::ValueType declared,
                            const RunBindings& b) {
  for (int a = 0; a < declared.rank() && a < out.rank(); ++a) {
    std::set<std::string> mentioned;
    declared.shape[a].CollectSymbols(&mentioned);
    for (const std::string& s : mentioned) {
      if (b.counts.contains(s)) declared.shape[a] = out.dim(a);
    }
  }
  absl::StatusOr<std::vector<int64_t>> dims = ir::EvaluateShape(declared.shape, b.call);
  return dims.ok() && out.dtype() == declared.dtype && out.shape() == *dims;
}

// Two results agree: same dtype and shape; integers and bools exactly (unless
// `integers_exact` is false: then integers are compared like floats); floats within
// `tol * (1 + |a|)`, NaN where the other is NaN, infinities equal. With `magnitude` (the
// same output computed from the absolute values, see MagnitudeGraph and Absolute in
// tests/fuzz/differential_tolerance.h), floats are within
// `tol * (1 + max(|a|, |magnitude|))`, and an element whose magnitude is not finite is
// not compared: its sums overflowed on the way, so their order decides the result.
inline std::optional<std::string> Compare(const runtime::Tensor& want, const runtime::Tensor& got,
                                          double tol, const runtime::Tensor* magnitude = nullptr,
                                          bool integers_exact = true) {
  if (want.dtype() != got.dtype() || want.shape() != got.shape()) {
    return "type " + got.TypeString() + ", expected " + want.TypeString();
  }
  const bool exact =
      !ir::IsFloat(want.dtype()) && (integers_exact || want.dtype() == ir::DType::kBool);
  for (int64_t i = 0; i < want.numel(); ++i) {
    double w = want.ValueAt(i), v = got.ValueAt(i);
    double scale = std::abs(w);
    if (!exact && magnitude != nullptr) {
      const double m = std::abs(magnitude->ValueAt(i));
      if (!std::isfinite(m)) continue;
      scale = std::max(scale, m);
    }
    bool ok = exact           ? w == v
              : std::isnan(w) ? std::isnan(v)
              : std::isinf(w) ? w == v
                              : std::abs(w - v) <= tol * (1 + scale);
    if (!ok) {
      // All 17 digits: the failures are usually in the last ones.
      return absl::StrFormat("element %d is %.17g, expected %.17g (tolerance %g)", i, v, w,
                             tol * (1 + scale));
    }
  }
  return std::nullopt;
}

}  // namespace graphjit::fuzz

#endif  // GRAPHJIT_TESTS_FUZZ_FUZZ_UTIL_H_
