// Padding for the bucketing policies: inputs zero-padded up to the bucket, an additive
// mask that hides the padding, outputs cut back to the real length.
#ifndef GRAPHJIT_COMPILER_ENTRIES_PADDING_H_
#define GRAPHJIT_COMPILER_ENTRIES_PADDING_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/entries/guards.h"
#include "runtime/tensor.h"

namespace graphjit::compiler::entries {

// A copy of `t` resized to `shape` (same rank): the common leading block is copied, the
// rest is zero. Used both to pad (every dim grows) and to cut back (every dim shrinks).
absl::StatusOr<runtime::Tensor> Resize(const runtime::Tensor& t, const std::vector<int64_t>& shape);

// The concrete shape of `dims` with dynamic dim k at `lengths[k]`.
std::vector<int64_t> ShapeAt(const std::vector<DimGuard>& dims, const DimValues& lengths);

// The additive mask `guard` declares, at `lengths`: 0 where every dynamic index is below
// its real length `real[k]`, -inf elsewhere (the kmask of docs/spec/decode_layer.md).
absl::StatusOr<runtime::Tensor> MakeMask(const InputGuard& guard, const DimValues& real,
                                         const DimValues& lengths);

}  // namespace graphjit::compiler::entries

#endif  // GRAPHJIT_COMPILER_ENTRIES_PADDING_H_
