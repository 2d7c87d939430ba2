// build_kernels: lowering's first step, the graph's nodes as the kernels of a program.
#ifndef GRAPHJIT_COMPILER_LOWER_BUILD_KERNELS_H_
#define GRAPHJIT_COMPILER_LOWER_BUILD_KERNELS_H_

#include "absl/status/statusor.h"
#include "compiler/lower/lower.h"
#include "compiler/lower/matmul_strategy.h"
#include "ir/graph.h"

namespace graphjit::compiler {

// One walk over an optimized graph, in order: a buffer per input, param and large
// constant, then a kernel for each value that gets a buffer (FusionPolicy decides; every
// other value is inlined into its consumers as an expression), then a copy for each output
// not written as itself. The program's temps have no workspace offsets yet
// (PlanWorkspace) and its index expressions are as built (SimplifyKernelIndices).
// `products` picks the kernels of large products (matmul_strategy.h).
absl::StatusOr<LoweredGraph> BuildKernels(const ir::Graph& graph,
                                          ProductKernels products = ProductKernels::kAuto);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_BUILD_KERNELS_H_
