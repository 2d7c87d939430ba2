// The graph-break demo of lecture 12 (demo 3): iterate y <- tanh(y @ W) until the
// largest squared change is below a tolerance. The data-dependent stopping test cuts the
// lazy graph every iteration; the same loop with a fixed count traces into one graph, and
// the loop with its stopping test as one structured while (frontend/control_flow.h)
// traces into one graph whose trips run in compiled code.
#ifndef GRAPHJIT_STUDIES_LAZY_DEMO_H_
#define GRAPHJIT_STUDIES_LAZY_DEMO_H_

#include <vector>

#include "absl/status/statusor.h"
#include "compiler/lazy/lazy_context.h"

namespace graphjit::studies {

struct LazyDemoResult {
  int iterations = 0;
  std::vector<compiler::GraphBreak> graphs;  // every cut, the final materialization last
  int compiles = 0;                          // native compiles the lazy run needed
  double max_abs_diff = 0;                   // vs the same iterations computed eagerly
  double lazy_seconds = 0;                   // the whole lazy loop, compiles included
  // The same number of iterations traced into one (unrolled) graph.
  int unrolled_ops = 0;
  int unrolled_compiles = 0;
  double unrolled_compile_seconds = 0;
  double unrolled_run_seconds = 0;
  double unrolled_max_abs_diff = 0;
  // The stopping test inside the graph: one while op (frontend::While) traced once.
  int while_iterations = 0;  // trips the compiled loop ran
  int while_ops = 0;         // compute nodes of the traced graph (the loop is one)
  int while_compiled = 0;    // graphs compiled for it (the loop's cond and body)
  double while_compile_seconds = 0;
  double while_run_seconds = 0;
  double while_max_abs_diff = 0;  // vs the same iterations computed eagerly
  bool while_same_bits_as_lazy = false;
};

// y: 4x32 and W: 32x32 (N(0,1) * 0.5/sqrt(32)) from std::mt19937_64(2); stops when
// max((y_new - y)^2) < tolerance or after max_iterations.
// Compiles under `env` (null: compiler::CompileEnv::FromEnvironment()).
absl::StatusOr<LazyDemoResult> RunLazyDemo(int max_iterations = 200, double tolerance = 1e-12,
                                           const compiler::CompileEnv* env = nullptr);

}  // namespace graphjit::studies

#endif  // GRAPHJIT_STUDIES_LAZY_DEMO_H_
