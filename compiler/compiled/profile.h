// Per-kernel profiling of a compiled graph: which kernel holds a step back, and how far
// each is from streaming its bytes. Times come from the host driver timing each kernel
// call (compiler/compiled/kernel_set.h); bytes from the traffic analysis (analysis/bytes_moved.h)
// at the call's symbol values, so bytes and GB/s are what each kernel must move, not what
// the caches saw.
//
// Two ways in: ProfileKernels (graphjit-dump --profile) times repeated calls of one
// input set; GRAPHJIT_PROFILE=1 makes every CompiledGraph time all of its calls and print
// this table to stderr when it is destroyed.
#ifndef GRAPHJIT_COMPILER_COMPILED_PROFILE_H_
#define GRAPHJIT_COMPILER_COMPILED_PROFILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/lower/kernel_ir.h"
#include "ir/sym_expr.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {

class CompiledGraph;  // compiler/compiled/compiled_graph.h

struct KernelProfileRow {
  std::string name;    // the kernel's name in the program (e.g. "k2_matmul")
  double seconds = 0;  // per call: the median over the timed calls (mean from sums)
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  double gb_per_second() const;  // (read + written) / seconds
};

struct KernelProfile {
  std::string graph;
  int calls = 0;                          // timed calls
  std::vector<KernelProfileRow> kernels;  // one row per kernel, program order
  double seconds() const;                 // sum of the rows: the kernels of one call
};

// Runs `graph` `warmup` + `calls` times on `inputs` (donated inputs are updated in place,
// as by Run) and reports the median time of each kernel over the last `calls`.
absl::StatusOr<KernelProfile> ProfileKernels(const CompiledGraph& graph,
                                             const runtime::TensorMap& inputs,
                                             const ir::Bindings& bindings, int calls,
                                             int warmup = 3);

// A profile from per-kernel seconds summed over `calls` calls (means per call), with bytes
// evaluated at `symbols` (the program symbols' values).
KernelProfile MakeProfile(const Program& program, const std::vector<double>& total_seconds,
                          int calls, const ir::Bindings& symbols);

// The table: kernel, us per call, bytes, GB/s, share of the step, slowest first marked.
std::string FormatProfile(const KernelProfile& profile);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_COMPILED_PROFILE_H_
