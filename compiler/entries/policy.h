// Shape policies of the compile cache: how the value of a dynamic dim (the decode
// layer's cache length S) maps to the key of the compiled entry that serves it.
#ifndef GRAPHJIT_COMPILER_ENTRIES_POLICY_H_
#define GRAPHJIT_COMPILER_ENTRIES_POLICY_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace graphjit::compiler::entries {

enum class ShapePolicy {
  kExact,     // key = S: one compile per distinct value (a static-shape compiler)
  kPow2,      // key = next power of two >= S; inputs padded, padding masked out
  kMult128,   // key = ceil(S / 128) * 128; likewise padded
  kSymbolic,  // key = "S" for S >= 2 (one symbolic graph); 0 and 1 specialized
  kAuto,      // exact until a dim shows a second value, then symbolic (TorchDynamo's
              // automatic dynamic shapes)
};

// "exact", "pow2", "mult128", "symbolic", "auto".
absl::string_view PolicyName(ShapePolicy policy);
// The inverse of PolicyName; InvalidArgument lists the valid names.
absl::StatusOr<ShapePolicy> ParsePolicy(absl::string_view name);
// Every policy, in the order of the study's table (auto last).
std::vector<ShapePolicy> AllPolicies();
// True for the bucketing policies, which pad inputs and pass a mask.
bool PadsInputs(ShapePolicy policy);

// The key of one dynamic dim: a length the entry is compiled for (>= 0), or a negative
// key for an entry compiled with the dim left symbolic. KeyFor and AutoDimState return
// kSymbolicDim; the cache then refines it to SymbolicKey(r): the dim shares the symbol
// of dynamic dim r (duck sizing: unnamed dims of equal value share one symbol).
using DimKey = int64_t;
inline constexpr DimKey kSymbolicDim = -1;
inline bool IsSymbolicKey(DimKey key) { return key < 0; }
inline DimKey SymbolicKey(int rep) { return -1 - static_cast<DimKey>(rep); }
inline int SymbolicRep(DimKey key) { return static_cast<int>(-1 - key); }

// A call's value and key of every dynamic dim, in the signature's order. Inline storage
// covers every input dim of the models here, so a hit allocates nothing.
inline constexpr int kInlineDims = 16;
using DimValues = absl::InlinedVector<int64_t, kInlineDims>;
using DimKeys = absl::InlinedVector<DimKey, kInlineDims>;

// The bucket functions. NextPow2(0) is 1 (the smallest power of two), RoundUp128(0) is 0;
// the pow2 policy keeps 0 a bucket of its own (KeyFor(kPow2, 0) == 0).
int64_t NextPow2(int64_t s);
int64_t RoundUp128(int64_t s);

// The key of dim value `s` under a stateless policy. kAuto depends on what was seen
// before: use AutoDimState for it.
DimKey KeyFor(ShapePolicy policy, int64_t s);

// The history of one dim under kAuto: exact keys until a second distinct value shows up,
// symbolic keys (with 0/1 still specialized) from then on.
class AutoDimState {
 public:
  // The key for `s`, recording `s` as seen.
  DimKey Observe(int64_t s);
  bool dynamic() const { return dynamic_; }

 private:
  std::optional<int64_t> first_;
  bool dynamic_ = false;
};

// The closed range of values an entry with `key` serves (its dim guard).
struct DimRange {
  int64_t lo = 0;
  int64_t hi = std::numeric_limits<int64_t>::max();
  bool Contains(int64_t s) const { return s >= lo && s <= hi; }
  bool unbounded() const { return hi == std::numeric_limits<int64_t>::max(); }
};
DimRange RangeForKey(ShapePolicy policy, DimKey key);

// The length the entry runs at for a call with value `s`: the bucket for padding
// policies, `s` itself otherwise.
inline int64_t RunLength(DimKey key, int64_t s) { return IsSymbolicKey(key) ? s : key; }

// `S=128`, `S=sym`.
std::string KeyToString(absl::string_view dim, DimKey key);

}  // namespace graphjit::compiler::entries

#endif  // GRAPHJIT_COMPILER_ENTRIES_POLICY_H_
