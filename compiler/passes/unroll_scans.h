// unroll_scans: a scan over a short known number of rows becomes straight-line code.
#ifndef GRAPHJIT_COMPILER_PASSES_UNROLL_SCANS_H_
#define GRAPHJIT_COMPILER_PASSES_UNROLL_SCANS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// Scans of more rows than this stay loops (their code would grow with the length).
inline constexpr int64_t kMaxUnrolledRows = 128;

// Replaces each scan whose length is a constant from 1 to kMaxUnrolledRows by its body
// once per row: row t of each scanned input a slice, the carried values threaded through,
// the per-row values concatenated. What a compiled loop pays per trip (a call of the
// body's code, the row and result copies) goes, and the steps' kernels fuse as any
// graph's do; a symbolic length (one compile for every length) keeps the loop. Returns
// whether anything was unrolled.
absl::StatusOr<bool> UnrollScans(ir::Graph* graph);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_UNROLL_SCANS_H_
