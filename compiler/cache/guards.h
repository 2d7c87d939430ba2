// Guards of the compile cache: the checks a call's inputs must pass to be served by a
// compiled entry. Split in two so a hit stays cheap: the model's declared inputs (dtype,
// rank, constant dims, each dynamic dim bound consistently across inputs) are the same
// for every entry and are checked once per call; what differs between entries is the
// range each dynamic dim must lie in (== 128, >= 2, in [257, 512]).
#ifndef GRAPHJIT_COMPILER_CACHE_GUARDS_H_
#define GRAPHJIT_COMPILER_CACHE_GUARDS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/cache/policy.h"
#include "frontend/trace_context.h"
#include "runtime/tensor.h"

namespace graphjit::compiler::cache {

// Models with more dynamic dims are refused; a fixed bound keeps keys allocation-free.
inline constexpr int kMaxDynamicDims = 4;
using DimValues = std::array<int64_t, kMaxDynamicDims>;  // unused slots stay 0
using DimKeys = std::array<DimKey, kMaxDynamicDims>;
// Cheaper than hashing the array as bytes; unused slots are 0 and cost one multiply.
struct DimKeysHash {
  size_t operator()(const DimKeys& k) const {
    uint64_t h = 0;
    for (DimKey d : k) h = (h ^ static_cast<uint64_t>(d)) * 0x9e3779b97f4a7c15ull;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

// One declared dim: a constant, or the dynamic dim with index `dynamic`.
struct DimGuard {
  int64_t constant = 0;
  int dynamic = -1;
};

struct InputGuard {
  std::string name;
  ir::DType dtype = ir::DType::kF64;
  std::vector<DimGuard> dims;
};

// The guards every call must pass, from the model's declared input types.
class InputSignature {
 public:
  // `inputs` are the types traced without padding, `padded_inputs` with it; inputs that
  // only the padded trace declares are masks (built by the cache, never passed by the
  // caller). Every dim must be a constant or a bare dynamic dim, and every dynamic dim
  // must be a dim of some input; otherwise InvalidArgument says which.
  static absl::StatusOr<InputSignature> Create(const frontend::InputTypes& inputs,
                                               const frontend::InputTypes& padded_inputs,
                                               const std::vector<std::string>& dynamic_dims);

  // The hot path: checks `args` (one per input(), in order; null if missing) and binds
  // each dynamic dim, the same value wherever it appears. No allocation.
  bool Bind(absl::Span<const runtime::Tensor* const> args, DimValues* values) const;
  // The first guard Bind fails, e.g. `x.dtype == f64 failed: got f32`; "" if none.
  std::string ExplainFailure(absl::Span<const runtime::Tensor* const> args) const;

  const std::vector<InputGuard>& inputs() const { return inputs_; }
  const std::vector<InputGuard>& masks() const { return masks_; }
  const std::vector<std::string>& dynamic_dims() const { return dynamic_dims_; }
  int num_dynamic() const { return static_cast<int>(dynamic_dims_.size()); }
  // Where dynamic dim `k` is read from, e.g. `k_cache.shape[1]`.
  const std::string& DimSource(int k) const { return dim_sources_[k]; }
  // `x: f64[1, 32], k_cache: f64[2, S, 8], ...`.
  std::string ToString() const;

 private:
  std::vector<InputGuard> inputs_;
  std::vector<InputGuard> masks_;
  std::vector<std::string> dynamic_dims_;
  std::vector<std::string> dim_sources_;
};

// The guards of one entry: the range each dynamic dim must lie in.
class EntryGuards {
 public:
  EntryGuards() = default;
  EntryGuards(int num_dynamic, const std::array<DimRange, kMaxDynamicDims>& ranges)
      : num_dynamic_(num_dynamic), ranges_(ranges) {}

  bool Check(const DimValues& values) const {
    for (int k = 0; k < num_dynamic_; ++k) {
      if (!ranges_[k].Contains(values[k])) return false;
    }
    return true;
  }
  int CountFailures(const DimValues& values) const;
  // The first failed guard, e.g. `k_cache.shape[1] == 128 failed: got 129`; "" if none.
  std::string ExplainFailure(const InputSignature& signature, const DimValues& values) const;
  // `k_cache.shape[1] == 128`, `k_cache.shape[1] >= 2`, `k_cache.shape[1] in [257, 512]`.
  std::string ToString(const InputSignature& signature) const;
  const DimRange& range(int k) const { return ranges_[k]; }

 private:
  int num_dynamic_ = 0;
  std::array<DimRange, kMaxDynamicDims> ranges_{};
};

}  // namespace graphjit::compiler::cache

#endif  // GRAPHJIT_COMPILER_CACHE_GUARDS_H_
