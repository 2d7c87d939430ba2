#include "compiler/entries/policy.h"

#include <bit>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/check.h"

namespace graphjit::compiler::entries {
namespace {

struct NamedPolicy {
  ShapePolicy policy;
  absl::string_view name;
};
constexpr NamedPolicy kPolicies[] = {{ShapePolicy::kExact, "exact"},
                                     {ShapePolicy::kPow2, "pow2"},
                                     {ShapePolicy::kMult128, "mult128"},
                                     {ShapePolicy::kSymbolic, "symbolic"},
                                     {ShapePolicy::kAuto, "auto"}};

// Size 0 and 1 are always specialized (as TorchDynamo does): a size-1 dim broadcasts,
// so a graph traced with a symbolic S may assume S >= 2.
DimKey SymbolicOrSmall(int64_t s) { return s >= 2 ? kSymbolicDim : s; }

}  // namespace

absl::string_view PolicyName(ShapePolicy policy) {
  for (const NamedPolicy& p : kPolicies) {
    if (p.policy == policy) return p.name;
  }
  GJ_FATAL() << "unknown policy " << static_cast<int>(policy);
}

absl::StatusOr<ShapePolicy> ParsePolicy(absl::string_view name) {
  std::vector<absl::string_view> names;
  for (const NamedPolicy& p : kPolicies) {
    if (p.name == name) return p.policy;
    names.push_back(p.name);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown shape policy '", name, "'; valid: ", absl::StrJoin(names, ", ")));
}

std::vector<ShapePolicy> AllPolicies() {
  std::vector<ShapePolicy> all;
  for (const NamedPolicy& p : kPolicies) all.push_back(p.policy);
  return all;
}

bool PadsInputs(ShapePolicy policy) {
  return policy == ShapePolicy::kPow2 || policy == ShapePolicy::kMult128;
}

int64_t NextPow2(int64_t s) {
  GJ_CHECK(s >= 0 && s <= (int64_t{1} << 62)) << "dim " << s;
  return static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(s)));
}

int64_t RoundUp128(int64_t s) {
  GJ_CHECK(s >= 0) << "dim " << s;
  return (s + 127) / 128 * 128;
}

DimKey KeyFor(ShapePolicy policy, int64_t s) {
  switch (policy) {
    case ShapePolicy::kExact:
      return s;
    case ShapePolicy::kPow2:
      // 0 is a bucket of its own: padding no rows up to one and masking it would leave a
      // softmax over nothing but -inf (NaN) where the exact result is empty.
      return s == 0 ? 0 : NextPow2(s);
    case ShapePolicy::kMult128:
      return RoundUp128(s);
    case ShapePolicy::kSymbolic:
      return SymbolicOrSmall(s);
    case ShapePolicy::kAuto:
      break;
  }
  GJ_FATAL() << "KeyFor(auto): the auto policy keeps state, use AutoDimState";
}

DimKey AutoDimState::Observe(int64_t s) {
  if (!dynamic_) {
    if (!first_) first_ = s;
    if (*first_ == s) return s;
    dynamic_ = true;
  }
  return SymbolicOrSmall(s);
}

DimRange RangeForKey(ShapePolicy policy, DimKey key) {
  if (IsSymbolicKey(key)) return {2, DimRange{}.hi};
  switch (policy) {
    case ShapePolicy::kPow2:
      // Bucket L serves (L/2, L]; buckets 0 and 1 serve themselves.
      return {key <= 1 ? key : key / 2 + 1, key};
    case ShapePolicy::kMult128:
      return {key == 0 ? 0 : key - 127, key};
    default:
      return {key, key};
  }
}

std::string KeyToString(absl::string_view dim, DimKey key) {
  return IsSymbolicKey(key) ? absl::StrCat(dim, "=sym") : absl::StrCat(dim, "=", key);
}

}  // namespace graphjit::compiler::entries
