// Guards of the compile cache: the checks a call's inputs must pass to be served by a
// compiled entry. Split in two so a hit stays cheap: the input signature (names, dtypes,
// ranks, dims declared equal) is the same for every entry of a cache and is checked
// once per call; what differs between entries is the range each dynamic dim must lie in
// (== 128, >= 2, in [257, 512]) and which dims share a symbol.
#ifndef GRAPHJIT_COMPILER_ENTRIES_GUARDS_H_
#define GRAPHJIT_COMPILER_ENTRIES_GUARDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/entries/policy.h"
#include "frontend/trace_context.h"
#include "runtime/tensor.h"

namespace graphjit::compiler::entries {

// A cheap hash of keys (one multiply per dim).
struct DimKeysHash {
  size_t operator()(const DimKeys& k) const {
    uint64_t h = k.size();
    for (DimKey d : k) h = (h ^ static_cast<uint64_t>(d)) * 0x9e3779b97f4a7c15ull;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

// One dim of an input (or mask): a constant, or the dynamic dim with index `dynamic`.
struct DimGuard {
  int64_t constant = 0;
  int dynamic = -1;
  // The first place (in input order) the dynamic dim appears: InputSignature::Bind takes
  // its value here and compares every later place with it.
  bool binds = false;
};

struct InputGuard {
  std::string name;
  ir::DType dtype = ir::DType::kF64;
  std::vector<DimGuard> dims;
};

// A dynamic dim: a symbol that input dims are bound to, and how its key is chosen.
struct DynamicDim {
  std::string symbol;
  ShapePolicy policy = ShapePolicy::kExact;  // this dim's own key function
  // Declared by the caller: shared by name only, never merged with equal-valued dims.
  bool named = false;
  bool padded() const { return PadsInputs(policy); }
};

// The guards every call of one cache must pass.
class InputSignature {
 public:
  // `inputs` in call order, each dim a constant or a dynamic dim's bare symbol; `masks`
  // are inputs the cache synthesizes (never passed by callers). Every dynamic dim must be
  // a dim of some input; otherwise InvalidArgument says which.
  static absl::StatusOr<InputSignature> Create(const frontend::InputTypes& inputs,
                                               const frontend::InputTypes& masks,
                                               std::vector<DynamicDim> dynamic_dims);

  // A call's inputs in inputs() order.
  using Args = absl::InlinedVector<const runtime::Tensor*, 8>;
  // The call's inputs in inputs() order, or false when `inputs` has other names, dtypes
  // or ranks than this signature (so another signature serves it).
  bool Matches(const runtime::TensorMap& inputs, Args* args) const;
  // The call's inputs in inputs() order by name alone (null where missing, extra inputs
  // ignored), for signatures whose guards must explain what differs.
  void Resolve(const runtime::TensorMap& inputs, Args* args) const;

  // The hot path: checks `args` (one per input(), in order; null if missing) and binds
  // each dynamic dim, the same value wherever it appears. No allocation beyond `values`.
  bool Bind(absl::Span<const runtime::Tensor* const> args, DimValues* values) const;
  // The first guard Bind fails, e.g. `x.dtype == f64 failed: got f32`; "" if none.
  std::string ExplainFailure(absl::Span<const runtime::Tensor* const> args) const;

  const std::vector<InputGuard>& inputs() const { return inputs_; }
  const std::vector<InputGuard>& masks() const { return masks_; }
  const std::vector<DynamicDim>& dynamic_dims() const { return dynamic_dims_; }
  int num_dynamic() const { return static_cast<int>(dynamic_dims_.size()); }
  bool pads() const { return pads_; }  // some dynamic dim is padded
  // Where dynamic dim `k` is read from, e.g. `k_cache.shape[1]`.
  const std::string& DimSource(int k) const { return dim_sources_[k]; }
  // The types to trace an entry with `keys` (constants for keyed dims, the class
  // representative's symbol for symbolic ones), masks appended when `with_masks`.
  // `symbolic_padded` leaves padded dims symbolic (to see which output dims they reach).
  frontend::InputTypes TraceTypes(const DimKeys& keys, bool with_masks,
                                  bool symbolic_padded = false) const;
  // `x: f64[1, 32], k_cache: f64[2, S, 8], ...`.
  std::string ToString() const;

 private:
  std::vector<InputGuard> inputs_;
  std::vector<InputGuard> masks_;
  std::vector<DynamicDim> dynamic_dims_;
  std::vector<std::string> dim_sources_;
  bool pads_ = false;
  // Hashes of the input names, so finding them in a TensorMap hashes no strings.
  std::vector<size_t> name_hashes_;
};

// The guards of one entry: the range each dynamic dim must lie in, and for dims traced
// with another dim's symbol, equality with it.
class EntryGuards {
 public:
  EntryGuards() = default;
  EntryGuards(const InputSignature& signature, const DimKeys& keys);

  bool Check(const DimValues& values) const {
    for (size_t k = 0; k < ranges_.size(); ++k) {
      if (!ranges_[k].Contains(values[k])) return false;
      if (same_as_[k] >= 0 && values[k] != values[same_as_[k]]) return false;
    }
    return true;
  }
  int CountFailures(const DimValues& values) const;
  // The first failed guard, e.g. `k_cache.shape[1] == 128 failed: got 129`; "" if none.
  std::string ExplainFailure(const InputSignature& signature, const DimValues& values) const;
  // `k_cache.shape[1] == 128, x.shape[0] >= 2, y.shape[0] == x.shape[0]`.
  std::string ToString(const InputSignature& signature) const;
  const DimRange& range(int k) const { return ranges_[k]; }

 private:
  std::vector<DimRange> ranges_;
  std::vector<int> same_as_;  // -1, or the dim whose symbol this dim was traced with
};

}  // namespace graphjit::compiler::entries

#endif  // GRAPHJIT_COMPILER_ENTRIES_GUARDS_H_
